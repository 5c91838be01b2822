package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/infer"
	"github.com/cdcetl/cdcetl/internal/outdir"
	"github.com/cdcetl/cdcetl/reader"
	"github.com/cdcetl/cdcetl/writer"
)

// The worker pool: a feeder cuts files into chunks, workers decode chunks,
// and one assembler per file restores the order and writes.

// tableSamples is how many messages of each chunk are sampled for their
// table.
const tableSamples = 64

// feed cuts a file into chunks and queues them for the workers. In a
// routed conversion it first gives the file its tables (prepare), and when
// the file was decoded optimistically it waits for the verdict and, when
// the attempt stopped, reads the file again in full for its schemas and
// converts it once more.
func (r *run) feed(ctx context.Context, fr *fileRun) error {
	chunks, err := reader.OpenFileChunks(fr.file, fr.file.Path, r.cfg.ChunkSize, r.cfg.MaxLine)
	if err != nil {
		return r.feedFailed(fr, err)
	}
	defer chunks.Close()
	chunks.SetContext(ctx)
	fr.info = decode.FileInfo{Path: outdir.InputPath(fr.file), Name: outdir.InputName(fr.file), Size: fr.file.Size, ModTime: fr.file.ModTime}
	fr.recycle = chunks.Recycle
	var ahead []reader.Chunk // chunks read before feeding (routed: for the schemas)
	if r.router != nil && fr.tables == nil {
		for len(ahead) < 2 {
			select {
			case r.tokens <- struct{}{}:
			case <-ctx.Done():
				fr.feedErr = ctx.Err()
				fr.fed <- -1
				return ctx.Err()
			}
			ch, ok := chunks.Next()
			if !ok {
				<-r.tokens
				break
			}
			ahead = append(ahead, ch)
		}
		if err := chunks.Err(); err != nil {
			releaseAhead(r, chunks, ahead)
			return r.feedFailed(fr, err)
		}
		if err := r.prepare(fr, ahead, len(ahead) > 1); err != nil {
			releaseAhead(r, chunks, ahead)
			return r.feedFailed(fr, err)
		}
	}
	seq := 0
feeding:
	for {
		var ch reader.Chunk
		if len(ahead) > 0 {
			ch, ahead = ahead[0], ahead[1:] // its token is held already
		} else {
			select {
			case r.tokens <- struct{}{}:
			case <-fr.stop:
				break feeding
			case <-ctx.Done():
				// The assembler must see the file as failed, not as complete.
				fr.feedErr = ctx.Err()
				fr.fed <- -1
				return ctx.Err()
			}
			var ok bool
			if ch, ok = chunks.Next(); !ok {
				<-r.tokens
				break
			}
		}
		select {
		case r.jobs <- chunkJob{fr, seq, ch}:
		case <-fr.stop:
			chunks.Recycle(ch.Data)
			<-r.tokens
			releaseAhead(r, chunks, ahead)
			break feeding
		case <-ctx.Done():
			fr.feedErr = ctx.Err()
			fr.fed <- -1
			return ctx.Err()
		}
		seq++
		fr.sent = seq
	}
	if err := chunks.Err(); err != nil {
		return r.feedFailed(fr, err)
	}
	fr.sha = chunks.Hash()
	fr.readSize, fr.readMod = chunks.Extent()
	if fr.readMod < 0 {
		fr.readMod = 0
		if fr.readSize == fr.file.Size {
			fr.readMod = fr.file.ModTime // an object, as listed
		}
	}
	fr.fed <- seq
	if !fr.strict {
		return nil
	}
	// The optimistic attempt: wait for its verdict.
	var verdict error
	select {
	case verdict = <-fr.verdict:
		if verdict == nil {
			r.noteChanges(fr.pending)
			r.router.observe(fr.tables)
			return nil
		}
	case <-ctx.Done():
		return ctx.Err()
	}
	if errors.Is(verdict, errNewTable) && !fr.sampled {
		// Tables in runs (a snapshot, an export sorted by table): the
		// first chunk had only the first of them. Each table's first
		// sampleBytes, found by routing alone, is evidence enough to try
		// strictly once more; reading all of the input for its evidence
		// took as long as converting it.
		ev, err := sampleNewTables(ctx, r.cfg, fr)
		if err == nil && ev != nil {
			snap, changes, err := r.router.merge(r.cfg, ev, fr.file.Path)
			if err == nil {
				for k, tr := range fr.tables {
					if snap[k] == nil {
						snap[k] = tr // the first chunk's: its evidence did not change
					}
				}
				chunks.Close()
				n := r.again(ctx, fr, snap, true)
				n.undo, n.pending = fr.undo, append(fr.pending, changes...)
				return r.feed(ctx, n)
			}
		}
		// An error here is the full reading's to report.
	}
	// The samples' evidence is undone: the full reading's is all of it.
	r.router.restore(fr.undo)
	ev, err := inferFile(ctx, r.cfg, fr.file, fr.idx, fr.format, fr.schemaInclude)
	if err != nil {
		return r.feedFailed(r.again(ctx, fr, nil, false), err)
	}
	snap, changes, err := r.router.merge(r.cfg, ev, fr.file.Path)
	if err != nil {
		return r.feedFailed(r.again(ctx, fr, nil, false), err)
	}
	r.noteChanges(changes)
	chunks.Close() // this attempt's buffers go before the next one's come
	return r.feed(ctx, r.again(ctx, fr, snap, false))
}

// again is another attempt at fr's input, with the tables snap, and its
// own assembler; strict makes it optimistic again (after sampleNewTables).
func (r *run) again(ctx context.Context, fr *fileRun, snap map[infer.Key]*tableRun, strict bool) *fileRun {
	n := &fileRun{
		inputRun:  inputRun{idx: fr.idx, turn: fr.turn, file: fr.file, key: fr.key, stem: fr.stem},
		feedRun:   feedRun{results: make(chan chunkResult, cap(r.tokens)), fed: make(chan int, 1), stop: make(chan struct{})},
		routedRun: routedRun{format: fr.format, schemaInclude: fr.schemaInclude, tables: snap},
	}
	if snap == nil {
		n.tables = fr.tables // the input fails as it is; this attempt reports it
	}
	if strict {
		n.strict, n.sampled, n.verdict = true, true, make(chan error, 1)
	}
	r.g.Go(func() error { return r.assemble(ctx, n) })
	return n
}

func releaseAhead(r *run, chunks *reader.Chunks, ahead []reader.Chunk) {
	for _, ch := range ahead {
		chunks.Recycle(ch.Data)
		<-r.tokens
	}
}

// prepare gives a routed input its format and its tables: the evidence of
// its first chunk (of all of it, when it has one chunk or goes to one
// stream) merged into the run's tables. more says the input has more
// chunks: then this is the optimistic attempt.
func (r *run) prepare(fr *fileRun, ahead []reader.Chunk, more bool) error {
	cfg := r.cfg
	if len(ahead) == 0 {
		fr.format, fr.tables = cfg.Format, map[infer.Key]*tableRun{}
		if fr.format == nil {
			fr.format, _ = decode.Lookup("json") // an empty input: no rows, no format to tell
		}
		return nil
	}
	format, schemaInclude, err := detect(cfg, fr.file, ahead[0])
	if err != nil {
		return err
	}
	fr.format, fr.schemaInclude = format, schemaInclude
	var ev *infer.FileEvidence
	if more && r.sink.ordered() {
		// One stream cannot take rows back: no optimistic attempt.
		if ev, err = inferFile(r.ctx, cfg, fr.file, fr.idx, format, schemaInclude); err != nil {
			return err
		}
		more = false
	} else {
		ev = infer.NewFileEvidence(format.Name, fr.idx, infer.Options{SchemaInclude: schemaInclude})
		// A sample of the first chunk: what the strict attempt misses, it
		// catches, and the input is read again for all of its evidence.
		seen := 0
		ahead[0].Lines(func(l []byte, pos reader.Pos) bool {
			ev.Observe(l, pos.Line)
			seen += len(l) + 1
			return !more || seen < sampleBytes
		})
	}
	var undo *routerState
	if more {
		undo = r.router.save()
	}
	snap, changes, err := r.router.merge(cfg, ev, fr.file.Path)
	if err != nil {
		return err
	}
	fr.tables, fr.strict = snap, more
	if more {
		fr.verdict = make(chan error, 1)
		fr.undo, fr.pending = undo, changes
	} else {
		r.noteChanges(changes)
	}
	return nil
}

// noteChanges records schema changes for the report.
func (r *run) noteChanges(changes []infer.Change) {
	if len(changes) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range changes {
		r.total.SchemaChanges = append(r.total.SchemaChanges, SchemaChange{Table: c.Table.String(), File: c.File, Line: c.Line, Change: c.What, Version: c.Version})
	}
}

// feedFailed hands a read error to the file's assembler. With KeepGoing
// it is the file's failure; otherwise it stops the run.
func (r *run) feedFailed(fr *fileRun, err error) error {
	fr.feedErr = err
	fr.fed <- -1
	if r.cfg.KeepGoing {
		return nil
	}
	return err
}

// worker decodes chunks with its own decoder (or, routed, decoders by
// table) until the jobs run out.
func (r *run) worker(ctx context.Context) error {
	cfg := r.cfg
	var b *arrowconv.Builder
	var dec decode.Decoder
	if cfg.Schema != nil {
		b = arrowconv.NewBuilder(cfg.Mem, cfg.Schema)
		defer b.Release()
		var err error
		if dec, err = decode.New(cfg.Format, cfg.Schema, cfg.Options, b); err != nil {
			return err
		}
	}
	var rd routedDecoders
	defer rd.release()
	for job := range r.jobs {
		res := chunkResult{seq: job.seq}
		if err := ctx.Err(); err != nil {
			// Cancelled: keep taking jobs so the feeder is never stuck,
			// but do no work.
			res.err = err
			job.f.results <- res
			continue
		}
		if job.f.tables != nil {
			r.routedChunk(job, &rd, &res)
		} else {
			r.plainChunk(job, b, dec, &res)
		}
		if p := cfg.Progress; p != nil {
			p.Bytes.Add(int64(len(job.ch.Data)))
			p.Rows.Add(res.st.TotalRows())
		}
		job.f.recycle(job.ch.Data)
		job.f.results <- res // buffered: one slot per token, never blocks
	}
	return nil
}

// plainChunk decodes a chunk with the run's one schema.
func (r *run) plainChunk(job chunkJob, b *arrowconv.Builder, dec decode.Decoder, res *chunkResult) {
	cfg := r.cfg
	dec.SetFile(job.f.info)
	flush := func() {
		if rec := b.Flush(); rec != nil {
			for _, k := range writer.RowKinds(rec) {
				res.st.Rows[k]++
			}
			res.recs = append(res.recs, rec)
		}
	}
	sampled := 0
	var sampledTable lastTable
	filtering := cfg.IncludeTable != nil || cfg.ExcludeTable != nil || cfg.OnlyTable != nil
	var keep filterCache
	asOf := cfg.asOfFilter()
	job.ch.Lines(func(msg []byte, pos reader.Pos) bool {
		res.st.Lines++
		res.st.Bytes += int64(len(msg)) + 1
		if asOf != nil && len(msg) > 0 && asOf.skip(cfg.Format, cfg.Options.SchemaInclude, msg, &res.st) {
			return true
		}
		if filtering && len(msg) > 0 && !keep.take(cfg, msg) {
			res.st.Filtered++
			return true
		}
		dec.SetLine(int64(pos.Line))
		out, err := dec.Decode(msg)
		if err != nil {
			res.err = locate(cfg.Format, cfg.Options, err, pos, msg)
			// The file fails: this chunk's rows are not written.
			if rec := b.Flush(); rec != nil {
				rec.Release()
			}
			return false
		}
		if sampled < tableSamples && r.tables != nil && out.Outcome == decode.Emitted && out.Rows > 0 {
			// A few row messages per chunk say whether messages of
			// several tables share this one schema: the table decoding
			// read (Canal's is at the end of the message, a walk back to
			// find again), taken when it is not the last one taken.
			sampled++
			if ns, tbl, esc, ok := dec.Routed(); ok && (!sampledTable.same(ns, tbl, ok) || esc) {
				if n, t, ok := decode.Route(cfg.Format, cfg.Options.SchemaInclude, msg); ok {
					r.addTable(n + "." + t)
				}
			}
		}
		r.account(job, res, out, pos, msg)
		if b.Len() >= cfg.BatchRows {
			flush()
		}
		return true
	})
	flush()
}

// locate positions a decode error and gives it its hint.
func locate(f *decode.Format, opts decode.Options, err error, pos reader.Pos, msg []byte) error {
	de := decode.Locate(err, pos.File, pos.Line, pos.Offset)
	if de.Hint == "" {
		de.Hint = decode.Hint(f, opts, msg, err)
	}
	return de
}

// errNewTable stops an optimistic attempt at a table its first chunk did
// not have.
var errNewTable = errors.New("a table the input's first chunk did not have")

// routedChunk decodes a chunk whose messages go to their tables'
// decoders.
func (r *run) routedChunk(job chunkJob, rd *routedDecoders, res *chunkResult) {
	cfg := r.cfg
	fr := job.f
	open := map[*tableDecoder]*tableRun{} // decoders with rows not yet flushed
	var cur *tableDecoder
	var curTr *tableRun // open[cur]
	ordered := r.sink.ordered()
	flush := func(td *tableDecoder, tr *tableRun) {
		if rec := td.b.Flush(); rec != nil {
			for _, k := range writer.RowKinds(rec) {
				res.st.Rows[k]++
			}
			res.tagged = append(res.tagged, taggedRec{tr, rec})
		}
	}
	var last routeCache
	seen := false
	known := map[string]map[string]routeCache{}
	// resolve makes last the table of a message whose envelope names
	// (ns, tbl): a lookup only when they differ from the last message's.
	// It returns false when the chunk fails.
	resolve := func(ns, tbl []byte, esc, named, guess bool, pos reader.Pos) bool {
		named = named && (len(ns) > 0 || len(tbl) > 0)
		if seen && named == last.named && bytes.Equal(ns, last.ns) && bytes.Equal(tbl, last.tbl) {
			return true
		}
		if named && !esc {
			// The chunk's tables so far, by their raw names (indexing with
			// string(b) does not allocate).
			if c, ok := known[string(ns)][string(tbl)]; ok {
				last, seen = c, true
				return true
			}
			defer func() {
				if res.err == nil && seen {
					if known[string(ns)] == nil {
						known[string(ns)] = map[string]routeCache{}
					}
					known[string(ns)][string(tbl)] = last
				}
			}()
		}
		last = routeCache{named: named, ns: ns, tbl: tbl, tr: r.router.none}
		seen = true
		if !named && fr.tables[infer.Unnamed] != nil {
			// A message that names no table: infer.Unnamed's rows, when
			// the input has any (else heartbeats and markers, decoded by
			// none; one that has rows after all stops the attempt below).
			last.tr = fr.tables[infer.Unnamed]
		}
		if named {
			k := routeKey(ns, tbl, esc)
			switch {
			case !tableFilter(cfg, k.Namespace, k.Name):
				last.tr = nil // filtered
				return true
			case fr.tables[k] == nil && guess:
				seen = false
				return false // a wrong guess: the caller routes exactly
			case fr.tables[k] == nil:
				seen = false
				res.err = decode.Locate(fmt.Errorf("%w: %s", errNewTable, k), pos.File, pos.Line, pos.Offset)
				return false
			}
			last.tr = fr.tables[k]
		}
		td, err := rd.get(cfg, last.tr, fr.format, fr.schemaInclude, fr.strict)
		if err != nil {
			res.err = err
			return false
		}
		last.td = td
		return true
	}
	// routeFirst routes a message before decoding it: by a cheap guess,
	// which decoding checks, or when the guess names no table of the
	// input, exactly.
	guesser := decode.Guesser{Format: fr.format, SchemaInclude: fr.schemaInclude}
	routeFirst := func(msg []byte, pos reader.Pos) bool {
		ns, tbl, esc, named := guesser.Guess(msg)
		if resolve(ns, tbl, esc, named, true, pos) {
			return true
		}
		if res.err != nil {
			return false
		}
		ns, tbl, esc, named = decode.RouteRaw(fr.format, fr.schemaInclude, msg)
		return resolve(ns, tbl, esc, named, false, pos)
	}
	// Guessing that a message is of the last one's table, decoding it and
	// checking what decoding read (Decoder.Routed) costs nothing when the
	// guess holds (runs of one table, one-table inputs); when guesses miss,
	// they are tried ever more rarely and each message is routed first
	// (decode.RouteRaw), which is checked the same way.
	skip, backoff := 0, 1
	asOf := cfg.asOfFilter()
	job.ch.Lines(func(msg []byte, pos reader.Pos) bool {
		res.st.Lines++
		res.st.Bytes += int64(len(msg)) + 1
		if len(msg) == 0 {
			res.st.Blank++
			return true
		}
		if asOf != nil && asOf.skip(fr.format, fr.schemaInclude, msg, &res.st) {
			return true
		}
		guessed := false
		if seen && last.tr != nil && skip == 0 {
			guessed = true
		} else {
			if skip > 0 {
				skip--
			}
			if !routeFirst(msg, pos) {
				return false
			}
		}
		var tr *tableRun
		var td *tableDecoder
		var out decode.Result
		for attempt := 0; ; attempt++ {
			if last.tr == nil {
				res.st.Filtered++
				return true
			}
			tr, td = last.tr, last.td
			// A message of the last one's table (most) finds it open
			// already: no map write per message.
			if cur != td || curTr != tr {
				if ordered && cur != nil && cur != td {
					flush(cur, open[cur]) // one stream: the input's order across tables
					delete(open, cur)
				}
				if cur != td {
					td.dec.SetFile(fr.info)
				}
				cur, curTr, open[td] = td, tr, tr
			}
			mark := td.b.Mark()
			var err error
			td.dec.SetLine(int64(pos.Line))
			out, err = td.dec.Decode(msg)
			if err != nil || out.Outcome == decode.Dropped {
				if guessed {
					// Perhaps only the guess was wrong: route it first.
					td.b.Rollback(mark)
					guessed, skip, backoff = false, backoff, min(backoff*2, 256)
					if !routeFirst(msg, pos) {
						return false
					}
					continue
				}
				if err != nil {
					res.err = locate(fr.format, td.opts, err, pos, msg)
					return false
				}
				break // dropped (ignore-parse-errors), from the right table
			}
			ns, tbl, esc, named := td.dec.Routed()
			prev := last
			if !resolve(ns, tbl, esc, named, false, pos) {
				return false
			}
			if last.td == prev.td && last.tr == prev.tr {
				if guessed {
					backoff = 1
				}
				break // decoded by its own table's decoder
			}
			// Decoding read another table than the guess or the route
			// (more after the JSON object, a repeated key): again, with
			// the decoder of the table decoding read.
			td.b.Rollback(mark)
			if guessed {
				skip, backoff = backoff, min(backoff*2, 256)
			}
			guessed = false
			if attempt > 0 {
				res.err = decode.Locate(fmt.Errorf("cannot tell the message's table"), pos.File, pos.Line, pos.Offset)
				return false
			}
		}
		if tr == r.router.none && out.Rows > 0 {
			// Rows of a message that names no table, and the input's
			// tables have no infer.Unnamed yet: its evidence is needed.
			td.b.Rollback(0)
			res.err = decode.Locate(fmt.Errorf("%w: %s", errNewTable, infer.Unnamed), pos.File, pos.Line, pos.Offset)
			return false
		}
		r.account(job, res, out, pos, msg)
		if td.b.Len() >= rd.batchRows(cfg.BatchRows) {
			flush(td, tr)
		}
		return true
	})
	for td, tr := range open {
		if res.err != nil {
			if rec := td.b.Flush(); rec != nil {
				rec.Release() // the input fails (or is tried again): nothing of it is written
			}
			continue
		}
		flush(td, tr)
	}
}

// routeCache is the table of the last message a chunk routed.
type routeCache struct {
	named   bool
	ns, tbl []byte // raw, as in the message
	tr      *tableRun
	td      *tableDecoder
}

// account counts a decoded message's outcome and keeps its dead letters.
func (r *run) account(job chunkJob, res *chunkResult, out decode.Result, pos reader.Pos, msg []byte) {
	switch out.Outcome {
	case decode.Emitted:
		res.st.Messages++
		if res.first == nil && job.seq == 0 && out.Rows > 0 {
			res.first = bytes.Clone(msg)
		}
	case decode.Blank:
		res.st.Blank++
	case decode.SkippedDDL:
		res.st.DDL++
	case decode.Filtered:
		res.st.Filtered++
	case decode.Control:
		res.st.Control++
		if out.Truncate {
			res.st.Truncates = append(res.st.Truncates, Truncate{Table: out.Table, File: pos.File, Line: pos.Line, Position: out.Position})
		}
	case decode.Dropped:
		res.st.Dropped++
		if r.keepDead() {
			dl := deadLetter(out.Err, pos, "message", msg)
			dl.RowsKept = out.Rows
			res.dead = append(res.dead, dl)
		}
	}
	res.st.Nulled += int64(len(out.Nulled))
	res.st.ZeroDates += int64(out.ZeroDates)
	if r.keepDead() {
		for _, e := range out.Nulled {
			res.dead = append(res.dead, deadLetter(e, pos, "value", msg))
		}
	}
}

// assemble puts a file's chunk results back in order and writes them.
func (r *run) assemble(ctx context.Context, fr *fileRun) (err error) {
	var st Stats
	st.Files = 1
	defer func() { err = r.finish(fr, st, err) }()
	pending := map[int]chunkResult{}
	next, total := 0, -1
	defer func() {
		if err != nil {
			r.drain(ctx, fr, pending, next, total)
		}
	}()
	for total < 0 || next < total {
		select {
		case res := <-fr.results:
			pending[res.seq] = res
		case n := <-fr.fed:
			if n < 0 {
				total = fr.sent
				return fr.feedErr
			}
			total = n
			continue
		case <-ctx.Done():
			if total < 0 {
				// The feeder may still be setting fr up (prepare): finish
				// reads what it sets. Every way out of feed says fed.
				if n := <-fr.fed; n < 0 {
					total = fr.sent
				} else {
					total = n
				}
			}
			return ctx.Err()
		}
		for {
			res, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			<-r.tokens
			st.add(res.st)
			st.Files = 1
			if len(res.dead) > 0 {
				if err := r.addDead(fr, res.dead); err != nil {
					release(res)
					return err
				}
				st.DeadLetters += int64(len(res.dead))
			}
			if res.err != nil {
				release(res)
				return res.err
			}
			if res.first != nil {
				fr.first = res.first
			}
			for i, rec := range res.recs {
				fr.noteValues(rec)
				if err := r.write(ctx, fr, taggedRec{rec: rec}); err != nil {
					release(chunkResult{recs: res.recs[i+1:]})
					return err
				}
			}
			for i, t := range res.tagged {
				if err := r.write(ctx, fr, t); err != nil {
					release(chunkResult{tagged: res.tagged[i+1:]})
					return err
				}
			}
		}
	}
	return nil
}

// release frees a chunk result's batches.
func release(res chunkResult) {
	for _, rec := range res.recs {
		rec.Release()
	}
	for _, t := range res.tagged {
		t.rec.Release()
	}
}

// drain is an assembler's end when its input failed: the feeder stops,
// and every chunk result still pending or in flight is freed with its
// token (otherwise the tokens are gone and the run stalls). received is
// the number of results taken so far, total the number of chunks fed
// (-1 while unknown).
func (r *run) drain(ctx context.Context, fr *fileRun, pending map[int]chunkResult, received, total int) {
	close(fr.stop)
	for seq, res := range pending {
		release(res)
		<-r.tokens
		delete(pending, seq)
		received++
	}
	for total < 0 || received < total {
		select {
		case res := <-fr.results:
			release(res)
			<-r.tokens
			received++
		case n := <-fr.fed:
			total = n
			if n < 0 {
				total = fr.sent
			}
		case <-ctx.Done():
			return // the run is over: nobody waits for tokens
		}
	}
}

// noteValues records which columns of rec hold a value (NullN is kept by
// every Arrow array: no scan).
func (fr *fileRun) noteValues(rec arrow.RecordBatch) {
	if fr.nonNull == nil {
		fr.nonNull = make([]bool, rec.NumCols()-1)
	}
	n := int(rec.NumRows())
	for c := range fr.nonNull {
		if !fr.nonNull[c] && rec.Column(c+1).NullN() < n {
			fr.nonNull[c] = true
		}
	}
}

// write hands one batch to the file's writer (routed: its table's, made
// on first use) or the shared stream; the batch is released (or passed on)
// either way.
func (r *run) write(ctx context.Context, fr *fileRun, t taggedRec) error {
	if t.tr != nil {
		fr.countTable(t)
	}
	defer t.rec.Release()
	if t.tr == nil {
		return fr.w.Write(ctx, t.rec)
	}
	w := fr.writers[t.tr.id]
	if w == nil {
		var out string
		var err error
		if w, out, err = r.sink.writer(ctx, fr, t.tr); err != nil {
			return err
		}
		if fr.writers == nil {
			fr.writers = map[int]writer.Writer{}
		}
		fr.writers[t.tr.id] = w
		fr.touched = append(fr.touched, t.tr)
		if out != "" {
			fr.outputs = append(fr.outputs, out)
			fr.tableStats[t.tr.id].Outputs = []string{out}
		}
	}
	if err := w.Write(ctx, t.rec); err != nil {
		return err
	}
	return fr.boundWriters(w)
}

// routedBudget is the memory an input's table writers may hold together
// (row groups under way); past it, the largest ends its row group early.
// An archive of many tables would otherwise hold a row group per table.
// 16 MiB, not more: the rest of a routed run's live heap (20 tables'
// page buffers and dictionaries, the chunks in flight) sits close to the
// soft memory limit, and at 32 MiB the collector ran 320 times in a
// 2 GiB run of 20 tables instead of 44 (1.46x slower at two workers).
const routedBudget = 16 << 20

// rowGroupFlusher is a writer holding a row group in memory (Parquet).
type rowGroupFlusher interface {
	Buffered() int
	FlushRowGroup() error
}

// boundWriters keeps an input's table writers within routedBudget, and
// the room they keep within routedRoom; cur is the writer just written.
func (fr *fileRun) boundWriters(cur writer.Writer) error {
	if len(fr.writers) < 2 {
		return nil // one writer: its row group size bounds it
	}
	// Only the writer just written and the ones this changes are measured
	// again: walking every writer's columns after each batch was a fortieth
	// of a 20-table run's cache misses.
	if fr.loads == nil {
		fr.loads = map[writer.Writer]writerLoad{}
	}
	flushers, keepers := true, true
	for _, w := range fr.writers {
		l, ok := fr.loads[w]
		if !ok || w == cur {
			l = measureLoad(w)
			fr.loads[w] = l
		}
		flushers, keepers = flushers && l.flusher, keepers && l.keeper
	}
	for flushers {
		total, most, largest := fr.heaviest(nil, func(l writerLoad) int { return l.buffered })
		if largest == nil || total <= routedBudget {
			break
		}
		if err := largest.(rowGroupFlusher).FlushRowGroup(); err != nil {
			return err
		}
		fr.loads[largest] = measureLoad(largest)
		if fr.loads[largest].buffered >= most {
			break // nothing more to give back
		}
	}
	if !keepers {
		return nil
	}
	// Each writer keeps the room of the largest row group it took. When
	// the tables come in runs (a snapshot, an export sorted by table),
	// every table's run leaves its writer that room: the room of the
	// writer that keeps the most, other than the one being written, is
	// given back.
	total, _, largest := fr.heaviest(cur, func(l writerLoad) int { return l.retained })
	if largest == nil || total <= routedRoom {
		return nil
	}
	if err := largest.(roomKeeper).Shrink(); err != nil {
		return err
	}
	fr.loads[largest] = measureLoad(largest)
	return nil
}

func measureLoad(w writer.Writer) writerLoad {
	var l writerLoad
	if f, ok := w.(rowGroupFlusher); ok {
		l.buffered, l.flusher = f.Buffered(), true
	}
	if k, ok := w.(roomKeeper); ok {
		l.retained, l.keeper = k.Retained(), true
	}
	return l
}

// heaviest sums measure over the writers' loads and returns the writer
// measuring most, skip left out (nil when none but skip measures above 0).
func (fr *fileRun) heaviest(skip writer.Writer, measure func(writerLoad) int) (total, most int, largest writer.Writer) {
	for _, w := range fr.writers {
		m := measure(fr.loads[w])
		total += m
		if w != skip && m > most {
			most, largest = m, w
		}
	}
	return total, most, largest
}

// roomKeeper is a writer whose buffers keep room between row groups
// (Parquet).
type roomKeeper interface {
	Retained() int
	Shrink() error
}

// routedRoom is the room an input's table writers may keep together: as
// much as they may hold. Three times as much was no faster with tables
// interleaved, and 1.14x slower (one worker, 20 tables in runs of 50,000
// messages) with 30-60 MiB more peak RSS: room kept by the writers of
// tables whose runs had ended grew the heap, and a larger heap is more
// fresh pages to fault in.
const routedRoom = routedBudget

// countTable counts a routed batch's rows for its table's stats.
func (fr *fileRun) countTable(t taggedRec) {
	if fr.tableStats == nil {
		fr.tableStats = map[int]*TableStats{}
	}
	ts := fr.tableStats[t.tr.id]
	if ts == nil {
		ts = &TableStats{Table: t.tr.key.String(), Dir: t.tr.dir}
		fr.tableStats[t.tr.id] = ts
	}
	for _, k := range writer.RowKinds(t.rec) {
		ts.Rows[k]++
	}
}

// asOfFilter is a worker's filter for cfg.AsOf (nil: none).
func (c *Config) asOfFilter() *asOfFilter {
	if c.AsOf == nil {
		return nil
	}
	return &asOfFilter{a: c.AsOf, pos: []byte(c.AsOf.Position)}
}
