package pipeline

import (
	"bytes"
	"context"
	"path/filepath"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/reader"
	"github.com/cdcetl/cdcetl/writer"
)

// The worker pool: a feeder cuts files into chunks, workers decode chunks,
// and one assembler per file restores the order and writes.

// run is the shared state of one Run.
type run struct {
	cfg     *Config
	jobs    chan chunkJob
	tokens  chan struct{} // one per chunk in flight
	mu      sync.Mutex
	total   Stats
	journal *Journal
	// fingerprint is the run's Conversion fingerprint, recorded with every
	// journal entry.
	fingerprint string
	failed      []error
	// unsettled: an output was committed but not journaled; the pending
	// file must outlive the run.
	unsettled bool
	// tables holds the canal tables sampled, when no filter is set (else
	// nil).
	tables *decode.TableSet
}

// tableSamples is how many messages of each chunk are sampled for their
// table.
const tableSamples = 64

func (r *run) addTable(name string) {
	r.mu.Lock()
	r.tables.Add(name)
	r.mu.Unlock()
}

// fileRun is one input file on its way through the pool.
type fileRun struct {
	idx     int
	file    reader.File
	key     inputKey // the input: absolute path and generation
	stem    string   // of its outputs
	outputs []string // relative to OutDir
	dead    *writer.DeadLetters
	sha     string
	feedErr error
	info    decode.FileInfo
	results chan chunkResult // unordered; never blocks (one slot per token)
	fed     chan int         // the number of chunks, once all are fed
	w       writer.Writer    // file output, or nil
	stream  chan arrow.RecordBatch
	recycle func([]byte)
	// nonNull[c] is set once physical column c (schema index) held a value;
	// first is the file's first message that gave rows.
	nonNull []bool
	first   []byte
}

type chunkJob struct {
	f   *fileRun
	seq int
	ch  reader.Chunk
}

type chunkResult struct {
	seq  int
	recs []arrow.RecordBatch
	st   Stats
	err  error
	dead []writer.DeadLetter
	// first is a copy of the file's first message that gave rows (chunk 0
	// only), for the warning about columns no message has.
	first []byte
}

// feed cuts a file into chunks and queues them for the workers.
func (r *run) feed(ctx context.Context, fr *fileRun) error {
	chunks, err := reader.OpenChunks(fr.file.Path, fr.file.Path, r.cfg.ChunkSize, r.cfg.MaxLine)
	if err != nil {
		return r.feedFailed(fr, err)
	}
	defer chunks.Close()
	abs, _ := filepath.Abs(fr.file.Path)
	fr.info = decode.FileInfo{Path: abs, Name: filepath.Base(fr.file.Path), Size: fr.file.Size, ModTime: fr.file.ModTime}
	fr.recycle = chunks.Recycle
	seq := 0
	for {
		select {
		case r.tokens <- struct{}{}:
		case <-ctx.Done():
			// The assembler must see the file as failed, not as complete.
			fr.feedErr = ctx.Err()
			fr.fed <- -1
			return ctx.Err()
		}
		ch, ok := chunks.Next()
		if !ok {
			<-r.tokens
			break
		}
		select {
		case r.jobs <- chunkJob{fr, seq, ch}:
		case <-ctx.Done():
			fr.feedErr = ctx.Err()
			fr.fed <- -1
			return ctx.Err()
		}
		seq++
	}
	if err := chunks.Err(); err != nil {
		return r.feedFailed(fr, err)
	}
	fr.sha = chunks.Hash()
	fr.fed <- seq
	return nil
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

// worker decodes chunks with its own decoder until the jobs run out.
func (r *run) worker(ctx context.Context) error {
	cfg := r.cfg
	b := arrowconv.NewBuilder(cfg.Mem, cfg.Schema)
	defer b.Release()
	dec, err := decode.New(cfg.Format, cfg.Schema, cfg.Options, b)
	if err != nil {
		return err
	}
	for job := range r.jobs {
		res := chunkResult{seq: job.seq}
		if err := ctx.Err(); err != nil {
			// Cancelled: keep taking jobs so the feeder is never stuck,
			// but do no work.
			res.err = err
			job.f.results <- res
			continue
		}
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
		job.ch.Lines(func(msg []byte, pos reader.Pos) bool {
			res.st.Lines++
			res.st.Bytes += int64(len(msg)) + 1
			out, err := dec.Decode(msg)
			if err != nil {
				de := decode.Locate(err, pos.File, pos.Line, pos.Offset)
				if de.Hint == "" {
					de.Hint = decode.Hint(cfg.Format, cfg.Options, msg, err)
				}
				res.err = de
				// The file fails: this chunk's rows are not written.
				if rec := b.Flush(); rec != nil {
					rec.Release()
				}
				return false
			}
			if sampled < tableSamples && r.tables != nil && out.Outcome == decode.Emitted && out.Rows > 0 {
				// A few row messages per chunk say whether canal messages of
				// several tables share this one schema.
				sampled++
				if name := decode.TableOf(msg); name != "" {
					r.addTable(name)
				}
			}
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
			if b.Len() >= cfg.BatchRows {
				flush()
			}
			return true
		})
		flush()
		if p := cfg.Progress; p != nil {
			p.Bytes.Add(int64(len(job.ch.Data)))
			p.Rows.Add(res.st.TotalRows())
		}
		job.f.recycle(job.ch.Data)
		job.f.results <- res // buffered: one slot per token, never blocks
	}
	return nil
}

// assemble puts a file's chunk results back in order and writes them.
func (r *run) assemble(ctx context.Context, fr *fileRun) (err error) {
	var st Stats
	st.Files = 1
	defer func() { err = r.finish(fr, st, err) }()
	pending := map[int]chunkResult{}
	next, total := 0, -1
	release := func(res chunkResult) {
		for _, rec := range res.recs {
			rec.Release()
		}
	}
	defer func() {
		for _, res := range pending {
			release(res)
		}
	}()
	for total < 0 || next < total {
		select {
		case res := <-fr.results:
			pending[res.seq] = res
		case n := <-fr.fed:
			if n < 0 {
				return fr.feedErr
			}
			total = n
			continue
		case <-ctx.Done():
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
				if err := r.write(ctx, fr, rec); err != nil {
					release(chunkResult{recs: res.recs[i+1:]})
					return err
				}
			}
		}
	}
	return nil
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

// write hands one batch to the file's writer or the shared stream; the
// batch is released (or passed on) either way.
func (r *run) write(ctx context.Context, fr *fileRun, rec arrow.RecordBatch) error {
	if fr.stream != nil {
		select {
		case fr.stream <- rec:
			return nil
		case <-ctx.Done():
			rec.Release()
			return ctx.Err()
		}
	}
	defer rec.Release()
	return fr.w.Write(ctx, rec)
}

// drain writes the streams in order, releasing each batch.
func drain(ctx context.Context, w writer.Writer, streams []chan arrow.RecordBatch) error {
	var first error
	for _, ch := range streams {
		for {
			select {
			case rec, ok := <-ch:
				if !ok {
					goto next
				}
				if first == nil {
					first = w.Write(ctx, rec)
				}
				rec.Release()
			case <-ctx.Done():
				// Workers stop sending once ctx is done; drop what is queued.
				for {
					select {
					case rec, ok := <-ch:
						if !ok {
							goto next
						}
						rec.Release()
					default:
						if first == nil {
							first = ctx.Err()
						}
						return first
					}
				}
			}
		}
	next:
	}
	return first
}
