package pipeline

// The stream sink: printed rows, CDC JSON on stdout and Config.Batches go
// to one ordered stream, the batches of input i before those of input
// i+1, whatever order the workers finish in.

import (
	"bufio"
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/internal/outdir"
	"github.com/cdcetl/cdcetl/reader"
	"github.com/cdcetl/cdcetl/writer"
)

// streamSink is the sink of a run without an output directory. Each input
// writes through a chanWriter into its own channel of the stream; the
// stream's drainer writes the channels in input order.
type streamSink struct {
	r  *run
	st *stream // nil once closed
}

func (s *streamSink) prepare(ctx context.Context, files []reader.File) error {
	st, err := s.openStream(ctx, len(files))
	s.st = st
	return err
}

// writer is the input's way into its channel; it makes no file.
func (s *streamSink) writer(_ context.Context, fr *fileRun, tr *tableRun) (writer.Writer, string, error) {
	return chanWriter{ch: s.st.files[fr.turn], tr: tr}, "", nil
}

// finishing ends the input's channel: the drainer goes on to the next.
func (s *streamSink) finishing(fr *fileRun, _ Stats, err error) (func(), error) {
	close(s.st.files[fr.turn])
	return func() {}, err
}

func (*streamSink) recover(context.Context, string, *outdir.Journal) error { return nil }
func (*streamSink) settle(context.Context, *fileRun, *Stats, bool) error   { return nil }
func (*streamSink) replaces() bool                                         { return false }
func (*streamSink) ordered() bool                                          { return true }

// done drains what is queued, every input having ended (those that
// failed under KeepGoing too: the others' rows all stand), and closes the
// stream's writers.
func (s *streamSink) done(context.Context) error {
	st := s.st
	s.st = nil
	return st.close(nil)
}

// close, after a failed run, drops what is queued and aborts the writers.
func (s *streamSink) close() error {
	if s.st == nil {
		return nil
	}
	st := s.st
	s.st = nil
	return st.close(errStreamAborted)
}

var errStreamAborted = errors.New("the run failed")

// chanWriter sends an input's batches (of table tr; nil: the one schema)
// into the input's channel of the stream.
type chanWriter struct {
	ch chan<- taggedRec
	tr *tableRun
}

func (w chanWriter) Write(ctx context.Context, rec arrow.RecordBatch) error {
	rec.Retain() // the caller releases its own reference
	select {
	case w.ch <- taggedRec{tr: w.tr, rec: rec}:
		return nil
	case <-ctx.Done():
		rec.Release()
		return ctx.Err()
	}
}

func (chanWriter) Close() error { return nil }
func (chanWriter) Abort() error { return nil }

// stream is the one ordered output of a run without an output
// directory: batches of input i are written before those of input i+1,
// each input having a channel that one goroutine drains in order.
type stream struct {
	files  []chan taggedRec
	w      writer.Writer
	routed *tableStreams
	done   chan error
	cancel context.CancelFunc
}

// openStream starts the drainer, on its own context: the run's errgroup
// cancels its context as soon as Wait returns, when batches may still be
// queued for it.
func (s *streamSink) openStream(ctx context.Context, n int) (*stream, error) {
	r := s.r
	cfg := r.cfg
	st := &stream{files: make([]chan taggedRec, n), done: make(chan error, 1)}
	for i := range st.files {
		st.files[i] = make(chan taggedRec, 4)
	}
	if r.router != nil && cfg.Batches == nil {
		st.routed = &tableStreams{cfg: cfg, bw: bufio.NewWriterSize(cfg.Stdout, 1<<16), by: map[int]writer.Writer{}}
	} else {
		var err error
		if st.w, err = newStreamWriter(cfg); err != nil {
			return nil, err
		}
	}
	dctx, cancel := context.WithCancel(ctx)
	st.cancel = cancel
	r.atEnd(cancel)
	go func() { st.done <- drain(dctx, st.w, st.routed, st.files) }()
	return st, nil
}

// close waits for the drainer and closes the stream's writer (aborts it,
// when the run failed: err); it returns the run's error, or the
// stream's.
func (st *stream) close(err error) error {
	if err != nil {
		st.cancel()
	}
	serr := <-st.done
	switch {
	case st.routed != nil:
		if cerr := st.routed.close(); err == nil {
			err = serr
			if err == nil {
				err = cerr
			}
		}
	case err == nil:
		err = serr
		if err == nil {
			err = st.w.Close()
		} else {
			st.w.Abort()
		}
	default:
		st.w.Abort()
	}
	return err
}

// drain writes the streams in order, releasing each batch; routed
// batches go to their table's writer in tables.
func drain(ctx context.Context, w writer.Writer, tables *tableStreams, streams []chan taggedRec) error {
	var first error
	put := func(t taggedRec) {
		if first == nil {
			if t.tr != nil && tables != nil {
				first = tables.write(ctx, t.tr, t.rec)
			} else {
				first = w.Write(ctx, t.rec)
			}
		}
		t.rec.Release()
	}
	for _, ch := range streams {
		for {
			select {
			case t, ok := <-ch:
				if !ok {
					goto next
				}
				put(t)
			case <-ctx.Done():
				// Workers stop sending once ctx is done; drop what is queued.
				for {
					select {
					case t, ok := <-ch:
						if !ok {
							goto next
						}
						t.rec.Release()
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

// tableStreams prints, or re-encodes to one stream, the rows of many tables:
// one writer per table snapshot over one buffered stdout, so lines stay in
// order.
type tableStreams struct {
	cfg *Config
	bw  *bufio.Writer
	by  map[int]writer.Writer
}

func (s *tableStreams) write(ctx context.Context, tr *tableRun, rec arrow.RecordBatch) error {
	w := s.by[tr.id]
	if w == nil {
		if s.cfg.To == ToPrint {
			w = writer.NewPrintShared(s.bw, tr.schema.ArrowSchema(), tr.prefix)
		} else {
			enc, err := decode.NewEncoder(s.cfg.Target, tr.schema, s.cfg.TargetOptions, s.cfg.Encode)
			if err != nil {
				return err
			}
			w = writer.NewCDCJSONStream(s.bw, enc)
		}
		s.by[tr.id] = w
	}
	return w.Write(ctx, rec)
}

func (s *tableStreams) close() error {
	for _, w := range s.by {
		if err := w.Close(); err != nil {
			return err
		}
	}
	return s.bw.Flush()
}

// funcWriter adapts Config.Batches to a writer.
type funcWriter func(ctx context.Context, rec arrow.RecordBatch) error

func (f funcWriter) Write(ctx context.Context, rec arrow.RecordBatch) error { return f(ctx, rec) }

func (f funcWriter) Close() error { return nil }

func (f funcWriter) Abort() error { return nil }

// newStreamWriter is the writer of a stream of one schema.
func newStreamWriter(cfg *Config) (writer.Writer, error) {
	if cfg.Batches != nil {
		return funcWriter(cfg.Batches), nil
	}
	if cfg.To == ToPrint {
		return writer.NewPrint(cfg.Stdout, cfg.Schema.ArrowSchema()), nil
	}
	if cfg.Target != nil {
		enc, err := decode.NewEncoder(cfg.Target, cfg.Schema, cfg.TargetOptions, cfg.Encode)
		if err != nil {
			return nil, err
		}
		return writer.NewCDCJSONStream(bufio.NewWriterSize(cfg.Stdout, 1<<16), enc), nil
	}
	return nil, fmt.Errorf("pipeline: unsupported output %q", cfg.To)
}
