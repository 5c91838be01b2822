// Package pipeline is cdcetl's library façade: it expands the inputs, runs
// a pool of workers (one file each) that decode CDC JSON into Arrow record
// batches, and hands the batches to writers — one output file per input
// file, or one ordered stream (stdout) for all of them.
//
// Data errors (a message that cannot be decoded) are the file's result:
// with ignore-parse-errors they are counted, otherwise the run stops with a
// *decode.Error naming file and line. System errors always stop the run.
package pipeline

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"golang.org/x/sync/errgroup"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/reader"
	"github.com/cdcetl/cdcetl/writer"
)

// Output kinds besides the format names.
const (
	ToPrint   = "print"
	ToParquet = "parquet"
)

// Config is one conversion.
type Config struct {
	Format  *decode.Format
	Schema  *arrowconv.Schema
	Options decode.Options
	// To is "print", "parquet", or a format name for re-encoding.
	To string
	// OutDir receives one output per input file; empty means Stdout
	// (print and re-encoding only).
	OutDir string
	Stdout io.Writer
	// Batches, when set, receives the batches of all files in order instead
	// of a writer (library use). It must not keep rec after returning
	// unless it calls Retain.
	Batches func(ctx context.Context, rec arrow.RecordBatch) error
	// Workers is the number of files converted at once (default NumCPU).
	Workers int
	// BatchRows is the number of rows per record batch (default 16384).
	BatchRows int
	// MaxLine is the longest message accepted (default reader.DefaultMaxLine).
	MaxLine int
	// Parquet holds Parquet writer settings.
	Parquet writer.ParquetOptions
	// Target is the format re-encoded to when To names a format; its
	// options (TargetOptions) and cdcetl's extensions (Encode) apply.
	Target        *decode.Format
	TargetOptions decode.Options
	Encode        decode.EncodeOptions
	// Compression of re-encoded files: none, gzip or zstd.
	JSONCompression string
	// Mem allocates Arrow memory (default memory.DefaultAllocator).
	Mem memory.Allocator
	// Version is recorded in output files.
	Version string
}

// Stats counts what a run did. Lines = Messages + Blank + DDL + Filtered +
// Dropped, where Messages are the lines that produced their rows.
type Stats struct {
	Files    int
	Lines    int64
	Messages int64
	Blank    int64
	DDL      int64
	Filtered int64
	Dropped  int64
	Rows     [4]int64 // by row kind
	Bytes    int64
}

func (s *Stats) add(o Stats) {
	s.Files += o.Files
	s.Lines += o.Lines
	s.Messages += o.Messages
	s.Blank += o.Blank
	s.DDL += o.DDL
	s.Filtered += o.Filtered
	s.Dropped += o.Dropped
	s.Bytes += o.Bytes
	for i := range s.Rows {
		s.Rows[i] += o.Rows[i]
	}
}

// TotalRows is the number of rows of all kinds.
func (s Stats) TotalRows() int64 { return s.Rows[0] + s.Rows[1] + s.Rows[2] + s.Rows[3] }

func (c *Config) defaults() {
	if c.Workers <= 0 {
		c.Workers = runtime.NumCPU()
	}
	if c.BatchRows <= 0 {
		c.BatchRows = 16384
	}
	if c.Mem == nil {
		c.Mem = memory.DefaultAllocator
	}
	if c.Stdout == nil {
		c.Stdout = os.Stdout
	}
}

// Run converts every file under paths.
func Run(ctx context.Context, cfg Config, paths []string) (Stats, error) {
	cfg.defaults()
	files, err := reader.Walk(paths)
	if err != nil {
		return Stats{}, err
	}
	if cfg.OutDir == "" && cfg.To == ToParquet && cfg.Batches == nil {
		return Stats{}, errors.New("pipeline: parquet output needs an output directory (-o DIR)")
	}
	if cfg.OutDir != "" {
		if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
			return Stats{}, fmt.Errorf("pipeline: %w", err)
		}
	}
	var total Stats
	var mu sync.Mutex
	// The drainer stops on its own context: errgroup cancels ctx as soon as
	// Wait returns, when batches may still be queued for it.
	dctx, dcancel := context.WithCancel(ctx)
	defer dcancel()
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(cfg.Workers)

	// With one shared stream, batches of file i are written before those of
	// file i+1: each file gets a channel and one goroutine drains them in
	// order. Files are started in order, so the file being drained always
	// has a worker and the bounded channels give backpressure.
	var streams []chan arrow.RecordBatch
	var sink writer.Writer
	var sinkDone chan error
	if cfg.OutDir == "" {
		streams = make([]chan arrow.RecordBatch, len(files))
		for i := range streams {
			streams[i] = make(chan arrow.RecordBatch, 4)
		}
		sink, err = newStreamWriter(&cfg)
		if err != nil {
			return Stats{}, err
		}
		sinkDone = make(chan error, 1)
		go func() { sinkDone <- drain(dctx, sink, streams) }()
	}
	started := 0
	for i, f := range files {
		if ctx.Err() != nil {
			break
		}
		started++
		g.Go(func() error {
			var out func(arrow.RecordBatch) error
			var w writer.Writer
			if streams != nil {
				ch := streams[i]
				defer close(ch)
				out = func(rec arrow.RecordBatch) error {
					select {
					case ch <- rec:
						return nil
					case <-ctx.Done():
						rec.Release()
						return ctx.Err()
					}
				}
			} else {
				var err error
				w, err = newFileWriter(&cfg, f)
				if err != nil {
					return err
				}
				out = func(rec arrow.RecordBatch) error {
					defer rec.Release()
					return w.Write(ctx, rec)
				}
			}
			st, err := convertFile(ctx, &cfg, f, out)
			if w != nil {
				if err != nil {
					w.Abort()
				} else if cerr := w.Close(); cerr != nil {
					err = cerr
				}
			}
			mu.Lock()
			total.add(st)
			mu.Unlock()
			return err
		})
	}
	// A file never started leaves its channel open; the drainer then stops
	// on the cancelled context instead.
	err = g.Wait()
	if err == nil && started < len(files) {
		err = context.Cause(ctx)
	}
	if err != nil {
		dcancel()
	}
	if streams != nil {
		serr := <-sinkDone
		if err == nil {
			err = serr
			if err == nil {
				err = sink.Close()
			} else {
				sink.Abort()
			}
		} else {
			sink.Abort()
		}
	}
	return total, err
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

// convertFile decodes one file, passing full batches to out.
func convertFile(ctx context.Context, cfg *Config, f reader.File, out func(arrow.RecordBatch) error) (Stats, error) {
	st := Stats{Files: 1}
	lines, err := reader.Open(f.Path, f.Path, cfg.MaxLine)
	if err != nil {
		return st, err
	}
	defer lines.Close()
	b := arrowconv.NewBuilder(cfg.Mem, cfg.Schema)
	defer b.Release()
	dec, err := decode.New(cfg.Format, cfg.Schema, cfg.Options, b)
	if err != nil {
		return st, err
	}
	abs, _ := filepath.Abs(f.Path)
	dec.SetFile(decode.FileInfo{Path: abs, Name: filepath.Base(f.Path), Size: f.Size, ModTime: f.ModTime})
	flush := func() error {
		rec := b.Flush()
		if rec == nil {
			return nil
		}
		kinds := writer.RowKinds(rec)
		for _, k := range kinds {
			st.Rows[k]++
		}
		return out(rec)
	}
	for lines.Next() {
		msg := lines.Bytes()
		st.Lines++
		st.Bytes += int64(len(msg)) + 1
		res, err := dec.Decode(msg)
		if err != nil {
			p := lines.Pos()
			return st, decode.Locate(err, p.File, p.Line, p.Offset)
		}
		switch res.Outcome {
		case decode.Emitted:
			st.Messages++
		case decode.Blank:
			st.Blank++
		case decode.SkippedDDL:
			st.DDL++
		case decode.Filtered:
			st.Filtered++
		case decode.Dropped:
			st.Dropped++
		}
		if b.Len() >= cfg.BatchRows {
			if err := flush(); err != nil {
				return st, err
			}
			if err := ctx.Err(); err != nil {
				return st, err
			}
		}
	}
	if err := lines.Err(); err != nil {
		return st, err
	}
	return st, flush()
}

// funcWriter adapts Config.Batches to a writer.
type funcWriter func(ctx context.Context, rec arrow.RecordBatch) error

func (f funcWriter) Write(ctx context.Context, rec arrow.RecordBatch) error { return f(ctx, rec) }
func (f funcWriter) Close() error                                           { return nil }
func (f funcWriter) Abort() error                                           { return nil }

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

func newFileWriter(cfg *Config, f reader.File) (writer.Writer, error) {
	rel := f.Rel
	for _, ext := range []string{".gz", ".zst"} {
		rel = strings.TrimSuffix(rel, ext)
	}
	switch cfg.To {
	case ToParquet:
		opts := cfg.Parquet
		opts.Metadata = map[string]string{
			"cdcetl.source":  f.Path,
			"cdcetl.format":  cfg.Format.Name,
			"cdcetl.version": cfg.Version,
			"cdcetl.created": time.Now().UTC().Format(time.RFC3339),
		}
		return writer.NewParquet(filepath.Join(cfg.OutDir, rel+".parquet"), cfg.Schema, opts)
	case ToPrint:
		return nil, errors.New("pipeline: print output goes to stdout; drop -o")
	}
	if cfg.Target != nil {
		suffix, err := writer.JSONSuffix(cfg.JSONCompression)
		if err != nil {
			return nil, err
		}
		enc, err := decode.NewEncoder(cfg.Target, cfg.Schema, cfg.TargetOptions, cfg.Encode)
		if err != nil {
			return nil, err
		}
		return writer.NewCDCJSONFile(filepath.Join(cfg.OutDir, rel+suffix), enc, cfg.JSONCompression)
	}
	return nil, fmt.Errorf("pipeline: unsupported output %q", cfg.To)
}
