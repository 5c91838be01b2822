package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/cdcetl/cdcetl/audit"
	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/internal/outdir"
	"github.com/cdcetl/cdcetl/reader"
)

// Audit reads the archive under paths (files, directories, buckets; any
// mix of formats, detected per input as conversion does unless
// cfg.Format is set) in archive order and checks it for gaps, duplicates
// and order (package audit). Of cfg it uses Format, FormatOptions, the
// table filters, Workers, ChunkSize and MaxLine. An input that cannot be
// read, or whose format cannot be told, is reported as a gap, not an
// error: the audit goes on with the others.
func Audit(ctx context.Context, cfg Config, paths []string, opts audit.Options) (*audit.Report, error) {
	cfg.defaults()
	if cfg.ChunkSize <= 0 {
		cfg.ChunkSize = reader.DefaultChunkSize
	}
	if cfg.MaxLine <= 0 {
		cfg.MaxLine = reader.DefaultMaxLine
	}
	files, err := outdir.Find(ctx, paths, nil)
	if err != nil {
		return nil, setup(err)
	}
	a := audit.New(opts)
	jobs := make(chan auditJob)
	results := make(chan auditPart, cfg.Workers)
	// tokens bound the chunks read and not yet applied.
	tokens := make(chan struct{}, 2*cfg.Workers)
	var wg sync.WaitGroup
	for range cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var w auditWorker
			for j := range jobs {
				results <- w.chunk(&cfg, j)
			}
		}()
	}
	readErr := make(chan error, 1)
	go func() {
		defer func() {
			close(jobs)
			wg.Wait()
			close(results)
		}()
		seq := 0
		send := func(p auditPart) bool { // a part with no chunk: a file's start or end
			select {
			case tokens <- struct{}{}:
			case <-ctx.Done():
				return false
			}
			p.seq = seq
			seq++
			results <- p
			return true
		}
		var total int64
		for _, f := range files {
			total += f.Size
		}
		for i, f := range files {
			if !auditFile(ctx, &cfg, f, i, total, &seq, tokens, jobs, send) {
				readErr <- ctx.Err()
				return
			}
		}
		readErr <- nil
	}()
	pending := map[int]auditPart{}
	next := 0
	var facts decode.Facts
	var ev audit.Event
	for p := range results {
		pending[p.seq] = p
		for q, ok := pending[next]; ok; q, ok = pending[next] {
			delete(pending, next)
			next++
			<-tokens
			q.apply(a, &ev, &facts)
		}
	}
	if err := <-readErr; err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return a.Report(), nil
}

// auditJob is a chunk of an input for a worker.
type auditJob struct {
	seq           int
	file          int
	format        *decode.Format
	schemaInclude bool
	ch            reader.Chunk
	chunks        *reader.Chunks
	// archiveBytes, with the archive's first chunk: the bytes of every
	// input, for a guess of how many messages it holds.
	archiveBytes int64
}

// auditPart is what the sequencer applies in archive order: an input's
// start (path and format), a chunk's records, or an input's end (its
// line count, or why it could not be read).
type auditPart struct {
	seq    int
	file   int
	expect int // with a file's first chunk: the messages the archive's rest likely holds
	// afterAsOf counts the chunk's messages after Config.AsOf.
	afterAsOf int64
	start     *auditStart
	recs      []auditRec
	arena     []byte
	end       bool
	lines     int64
	failed    error
}

type auditStart struct {
	path, format string
}

// auditRec is one message's evidence, its bytes in the part's arena.
type auditRec struct {
	line                                               int64
	unreadable                                         bool
	op, marker                                         byte
	hasXid, hasXOffset, commit                         bool
	changes                                            int32
	control                                            string
	milli, xid, xoffset, binlogPos, total, coll, count int64
	ident                                              uint64
	ns, table, pos, stream, gtid, binlog, txn, mid, mc span
}

// span is a slice of a part's arena; off -1 is nil.
type span struct{ off, n int32 }

func (p *auditPart) put(b []byte) span {
	if b == nil {
		return span{-1, 0}
	}
	s := span{int32(len(p.arena)), int32(len(b))}
	p.arena = append(p.arena, b...)
	return s
}

func (p *auditPart) get(s span) []byte {
	if s.off < 0 {
		return nil
	}
	return p.arena[s.off : s.off+s.n : s.off+s.n]
}

func (p *auditPart) apply(a *audit.Auditor, ev *audit.Event, x *decode.Facts) {
	switch {
	case p.start != nil:
		a.AddFile(p.start.path, p.start.format)
		return
	case p.end:
		if p.failed != nil {
			a.Unreadable(p.file, p.lines+1, "input not read from here on: "+p.failed.Error())
		}
		a.EndFile(p.file, p.lines)
		return
	}
	// Batches of identities are looked up ahead, so their misses overlap.
	const batch = 128
	var ids [batch]uint64
	if p.expect > 0 {
		a.Expect(p.expect)
	}
	a.AfterCut(p.afterAsOf)
	for i := range p.recs {
		if i%batch == 0 {
			n := 0
			for _, r := range p.recs[i:min(i+batch, len(p.recs))] {
				if r.ident != 0 {
					ids[n] = r.ident
					n++
				}
			}
			a.Warm(ids[:n])
		}
		r := &p.recs[i]
		if r.unreadable {
			a.Unreadable(p.file, r.line, "a message that is not one JSON value")
			continue
		}
		*x = decode.Facts{Valid: true, Position: p.get(r.pos), Stream: p.get(r.stream), GTID: p.get(r.gtid),
			Xid: r.xid, XOffset: r.xoffset, HasXid: r.hasXid, HasXOffset: r.hasXOffset, Commit: r.commit,
			BinlogFile: p.get(r.binlog), BinlogPos: r.binlogPos, TxnID: p.get(r.txn), TxnTotal: r.total, TxnCollection: r.coll,
			Marker: r.marker, MarkerID: p.get(r.mid), MarkerCount: r.count, MarkerCollections: p.get(r.mc)}
		*ev = audit.Event{File: p.file, Line: r.line, NS: p.get(r.ns), Table: p.get(r.table), Op: r.op, Changes: int(r.changes),
			Control: r.control, Milli: r.milli, Ident: r.ident, Facts: x}
		a.Add(ev)
	}
}

// auditFile reads input i: its start, its chunks to the workers, its end.
// It returns false when the context ended.
func auditFile(ctx context.Context, cfg *Config, f reader.File, i int, total int64, seq *int, tokens chan struct{}, jobs chan<- auditJob, send func(auditPart) bool) bool {
	chunks, err := reader.OpenFileChunks(f, f.Path, cfg.ChunkSize, cfg.MaxLine)
	if err != nil {
		return send(auditPart{file: i, start: &auditStart{f.Path, "unread"}}) && send(auditPart{file: i, end: true, failed: err})
	}
	defer chunks.Close()
	chunks.SetContext(ctx)
	ch, ok := chunks.Next()
	format, schemaInclude := cfg.Format, cfg.OptionsFor(cfg.Format).SchemaInclude
	var detectErr error
	if format == nil {
		var lines [][]byte
		if ok {
			ch.Lines(func(l []byte, _ reader.Pos) bool {
				if !blank(l) {
					lines = append(lines, l)
				}
				return len(lines) < detectLines
			})
		}
		if len(lines) == 0 && ok {
			// The first chunk is blank: the input's first messages, if any.
			var err error
			if lines, err = firstLines(cfg, f, detectLines); err != nil {
				lines = nil
			}
		}
		if len(lines) == 0 {
			format, _ = decode.Lookup("json") // empty or blank: nothing to tell
		} else if format, schemaInclude, _, detectErr = decode.Detect(lines, 1); detectErr != nil {
			format = nil
		}
	}
	name := "unknown format"
	if format != nil {
		name = format.Name
	}
	if !send(auditPart{file: i, start: &auditStart{f.Path, name}}) {
		return false
	}
	if detectErr != nil {
		if ok {
			chunks.Recycle(ch.Data)
		}
		return send(auditPart{file: i, end: true, failed: fmt.Errorf("%w", detectErr)})
	}
	var lines int64
	for ok {
		lines = int64(ch.FirstLine-1) + int64(bytes.Count(ch.Data, []byte{'\n'}))
		if n := len(ch.Data); n > 0 && ch.Data[n-1] != '\n' {
			lines++ // the last line has no newline
		}
		select {
		case tokens <- struct{}{}:
		case <-ctx.Done():
			chunks.Recycle(ch.Data)
			return false
		}
		j := auditJob{seq: *seq, file: i, format: format, schemaInclude: schemaInclude, ch: ch, chunks: chunks}
		if *seq == 1 { // the first file's first chunk (its start part is seq 0)
			j.archiveBytes = total
		}
		*seq++
		jobs <- j
		ch, ok = chunks.Next()
	}
	if err := chunks.Err(); err != nil {
		if errors.Is(err, context.Canceled) || ctx.Err() != nil {
			return false
		}
		return send(auditPart{file: i, end: true, lines: lines, failed: err})
	}
	return send(auditPart{file: i, end: true, lines: lines})
}

// auditWorker reads the evidence of a chunk's messages.
type auditWorker struct {
	o decode.Observation
	x decode.Facts
}

func (w *auditWorker) chunk(cfg *Config, j auditJob) auditPart {
	p := auditPart{seq: j.seq, file: j.file, arena: make([]byte, 0, len(j.ch.Data)/8)}
	filter := cfg.IncludeTable != nil || cfg.ExcludeTable != nil || cfg.OnlyTable != nil
	var cut []byte // --as-of's position
	if cfg.AsOf != nil {
		cut = []byte(cfg.AsOf.Position)
	}
	j.ch.Lines(func(l []byte, pos reader.Pos) bool {
		l = bytes.TrimPrefix(l, []byte("\xef\xbb\xbf"))
		if len(bytes.TrimSpace(l)) == 0 {
			return true
		}
		o, x := &w.o, &w.x
		j.format.ObserveFacts(j.schemaInclude, l, o, x)
		if !x.Valid {
			p.recs = append(p.recs, auditRec{line: int64(pos.Line), unreadable: true})
			return true
		}
		if a := cfg.AsOf; a != nil {
			if !a.Time.IsZero() && o.Event && o.Milli > a.Time.UnixMilli() || a.Time.IsZero() && x.Position != nil && bytes.Compare(x.Position, cut) > 0 {
				p.afterAsOf++
				return true
			}
		}
		if filter && !tableFilter(cfg, string(o.NS), string(o.Table)) {
			return true
		}
		r := auditRec{line: int64(pos.Line), op: o.Op, changes: int32(o.Changes), control: o.Control, milli: o.Milli,
			ident:  audit.Identify(x.Stream, o.NS, o.Table, x.Position, o.Op, o.Images),
			hasXid: x.HasXid, hasXOffset: x.HasXOffset, commit: x.Commit, xid: x.Xid, xoffset: x.XOffset,
			binlogPos: x.BinlogPos, total: x.TxnTotal, coll: x.TxnCollection, marker: x.Marker, count: x.MarkerCount}
		r.ns, r.table, r.pos, r.stream, r.gtid = p.put(o.NS), p.put(o.Table), p.put(x.Position), p.put(x.Stream), p.put(x.GTID)
		r.binlog, r.txn, r.mid, r.mc = p.put(x.BinlogFile), p.put(x.TxnID), p.put(x.MarkerID), p.put(x.MarkerCollections)
		p.recs = append(p.recs, r)
		return true
	})
	if n := len(j.ch.Data); j.archiveBytes > int64(n) && n > 0 {
		p.expect = int(float64(len(p.recs)) / float64(n) * float64(j.archiveBytes))
	}
	j.chunks.Recycle(j.ch.Data)
	return p
}
