package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"golang.org/x/sync/errgroup"

	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/internal/outdir"
	"github.com/cdcetl/cdcetl/internal/setting"
	"github.com/cdcetl/cdcetl/objstore"
	"github.com/cdcetl/cdcetl/reader"
)

// A run in stages, each one way: start (the inputs of this shard, the
// sink, the router), open the output directory (lock, clean-up after a
// killed run, journal), plan the inputs (what the journal has, stems,
// the pending file), convert (the pool: feeder, workers, one assembler
// per input, in order to the sink or the stream), then the verdict.

// runFiles converts files into out (cfg.OutDir is out's Path).
func runFiles(ctx context.Context, cfg Config, files []reader.File, out outdir.Dir) (_ Stats, err error) {
	cfg.defaults()
	defer func() { err = explainDiskFull(err, cfg.OutDir) }()
	r := &run{cfg: &cfg, out: out, ctx: ctx, jobs: make(chan chunkJob, cfg.Workers), tokens: make(chan struct{}, 2*cfg.Workers+1)}
	defer r.cleanUp()
	if files, err = r.start(files); err != nil {
		return Stats{}, setup(err)
	}
	if err := r.openOutput(); err != nil {
		return Stats{}, setup(err)
	}
	p, err := r.plan(files)
	if err != nil {
		return r.total, err
	}
	if err := r.writePending(p); err != nil {
		return Stats{}, setup(err)
	}
	err = r.convert(p)
	return r.total, err
}

// atEnd runs f when the run ends, after what was added later.
func (r *run) atEnd(f func()) { r.cleanups = append(r.cleanups, f) }

func (r *run) cleanUp() {
	for _, f := range slices.Backward(r.cleanups) {
		f()
	}
}

// start checks the inputs against the run's settings, keeps this shard's,
// and opens the sink and the router.
func (r *run) start(files []reader.File) ([]reader.File, error) {
	cfg := r.cfg
	if err := outdir.CheckInputMoves(files, cfg.moveDirs()); err != nil {
		return nil, err
	}
	if cfg.Shard.Sharded() {
		release, err := claimTempTag(cfg.Shard.Tag())
		if err != nil {
			return nil, err
		}
		r.atEnd(release)
		mine := files[:0:0]
		for _, f := range files {
			if cfg.Shard.Owns(f.Rel) {
				mine = append(mine, f)
			}
		}
		r.total.OtherShards = len(files) - len(mine)
		files = mine
	}
	if remote := r.out.Remote(); remote != "" && cfg.To == ToIceberg {
		// iceberg-go's S3 client takes the AWS configuration from the
		// context: the same deadlines and retries as cdcetl's own.
		ctx, err := objstore.WithAWSConfig(r.ctx, remote)
		if err != nil {
			return nil, err
		}
		r.ctx = ctx
	}
	var err error
	if r.sink, err = newSink(r.ctx, r); err != nil {
		return nil, err
	}
	r.atEnd(func() { r.sink.close() })
	if cfg.OutDir != "" {
		if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
			return nil, err
		}
	}
	cfg.dirs = outdir.NewTableDirs(cfg.OutDir)
	if cfg.DeadLetterDir == "" && cfg.OutDir != "" {
		cfg.DeadLetterDir = outdir.DeadLetterDir(cfg.OutDir)
	}
	if cfg.Schema == nil {
		if r.router, err = newRouter(cfg); err != nil {
			return nil, err
		}
	}
	if cfg.Format != nil && cfg.Format.FiltersTables() && cfg.Options.DatabaseInclude == "" && cfg.Options.TableInclude == "" {
		r.tables = &decode.TableSet{}
	}
	return files, nil
}

// openOutput takes the output directory's lock, cleans up after killed
// runs and opens the journal (with no output directory, nothing).
func (r *run) openOutput() error {
	cfg := r.cfg
	if cfg.OutDir == "" {
		return nil
	}
	// Another cdcetl writing here (a watcher, say) goes first: cleaning
	// temporary files and appending the journal are not shared. Shards
	// share the directory, each with a journal and pending file of its
	// own.
	lk, err := outdir.LockDir(r.ctx, cfg.OutDir, cfg.Shard)
	if err != nil {
		return err
	}
	r.atEnd(lk.Release)
	// Leftovers of killed runs first, then the journal.
	if err := outdir.CleanTempOf(cfg.OutDir, lk.MayClean); err != nil {
		return err
	}
	if r.journal, err = outdir.OpenJournal(cfg.OutDir, lk.Tag()); err != nil {
		return err
	}
	r.atEnd(func() { r.journal.Close() })
	if cfg.Materialize {
		if err := recoverCurrent(cfg.OutDir); err != nil {
			return err
		}
	}
	pendings, err := filepath.Glob(filepath.Join(cfg.OutDir, "_cdcetl_pending*.jsonl"))
	if err != nil {
		return err
	}
	for _, p := range pendings {
		name := filepath.Base(p)
		if tag, ok := outdir.TagOfName(name, outdir.PendingName); !ok || !lk.MayClean(tag) {
			continue
		}
		if err := r.sink.recover(r.ctx, name, r.journal); err != nil {
			return err
		}
		if err := outdir.RecoverPending(cfg.OutDir, name, r.journal); err != nil {
			return err
		}
	}
	lk.ReleaseIdle()
	conv := cfg.Conversion()
	r.fingerprint = conv.Fingerprint
	if !cfg.Force {
		if err := r.journal.CheckConversion(conv); err != nil {
			return err
		}
	}
	return r.journal.Adopt(conv)
}

// inputPlan is what a run converts: the inputs the journal does not
// have, each with its identity, output stem and place among the inputs
// given (skipped ones included).
type inputPlan struct {
	files []reader.File
	keys  []outdir.InputKey
	stems []string
	order []int
}

// plan decides which inputs to convert: with a journal, those it does
// not have (the others are skipped, and disposed of as OnSuccess says)
// and, with DedupInputs, not holding another's bytes.
func (r *run) plan(files []reader.File) (*inputPlan, error) {
	cfg := r.cfg
	p := &inputPlan{}
	seen := map[int64][]*runInput{} // DedupInputs: this run's inputs by size
	for i, f := range files {
		k := outdir.InputKey{Path: outdir.InputPath(f)}
		if r.journal != nil {
			skip, err := r.skipConverted(i, f)
			if err != nil || skip {
				if err != nil {
					return nil, err
				}
				continue
			}
			if k.Gen, err = outdir.Generation(r.journal, k.Path, f); err != nil {
				return nil, setup(err)
			}
			if cfg.DedupInputs {
				fs, dup, err := r.dedupInput(f, k, i, seen)
				if err != nil {
					return nil, err
				}
				if dup {
					r.total.Skipped++
					r.total.PerFile = append(r.total.PerFile, fs)
					continue
				}
			}
		}
		p.files = append(p.files, f)
		p.keys = append(p.keys, k)
		p.order = append(p.order, i)
	}
	if err := r.sink.prepare(r.ctx, p.files); err != nil {
		return nil, setup(err)
	}
	alloc := outdir.NewAllocator(r.journal)
	for i, f := range p.files {
		p.stems = append(p.stems, alloc.Stem(p.keys[i], outdir.BaseStem(f.Rel)))
	}
	return p, nil
}

// skipConverted reports whether the journal has input i, f, converted
// with this conversion (unless Force), and then disposes of it.
func (r *run) skipConverted(i int, f reader.File) (bool, error) {
	if r.cfg.Force {
		return false, nil
	}
	e, done, err := r.journal.Done(outdir.InputPath(f), f, r.fingerprint)
	if err != nil {
		return false, setup(fmt.Errorf("%s: %w", f.Path, err))
	}
	if !done {
		return false, nil
	}
	r.total.Skipped++
	fs := FileStats{idx: i, Path: f.Path, Status: "skipped", Outputs: e.Outputs}
	fs.Disposed, fs.MovedTo, err = r.disposeConverted(e, f)
	var de *dispositionError
	if reason, ok := deferred(err); ok {
		fs.Deferred, err = reason, nil
		r.total.Warnings = append(r.total.Warnings, fmt.Sprintf("%s: converted before, but not %s now: %s", f.Path, actionWord(r.cfg.OnSuccess), reason))
	} else if errors.As(err, &de) {
		r.notDisposed(&fs, f.Path, de)
		err = nil
	}
	if err != nil {
		return false, err
	}
	r.total.PerFile = append(r.total.PerFile, fs)
	return true, nil
}

// writePending records the stems the run is about to write, before any
// output: a run killed at any moment is cleaned up by the next.
func (r *run) writePending(p *inputPlan) error {
	cfg := r.cfg
	if cfg.OutDir == "" || len(p.files) == 0 {
		return nil
	}
	var planned []outdir.PendingStem
	for _, stem := range p.stems {
		ps := outdir.PendingStem{Stem: stem, Routed: cfg.Schema == nil, Partitioned: cfg.hive()}
		if _, dead, _ := r.cfg.outputNames(stem); dead != "" && !within(cfg.OutDir, dead) {
			ps.Dead = dead
		}
		planned = append(planned, ps)
	}
	pending := outdir.TaggedName(outdir.PendingName, cfg.Shard.Tag())
	if err := outdir.WritePending(cfg.OutDir, pending, planned); err != nil {
		return err
	}
	if err := r.out.Started(r.ctx); err != nil {
		return err
	}
	r.atEnd(func() {
		if cfg.OutDir != "" && !r.unsettled {
			os.Remove(filepath.Join(cfg.OutDir, pending))
		}
	})
	return nil
}

// convert runs the pool over the planned inputs: a feeder cuts them into
// chunks, workers decode them, and one assembler per input writes its
// batches in order, to the sink or, without an output directory, to the
// one stream.
func (r *run) convert(p *inputPlan) error {
	cfg := r.cfg
	if cfg.Progress != nil {
		for _, f := range p.files {
			cfg.Progress.Total.Add(f.Size)
		}
	}
	outer := r.ctx // the errgroup's is cancelled when Wait returns
	g, ctx := errgroup.WithContext(outer)
	r.g, r.ctx = g, ctx
	for w := 0; w < cfg.Workers; w++ {
		g.Go(func() error { return r.worker(ctx) })
	}
	g.Go(func() error {
		defer close(r.jobs)
		for i, f := range p.files {
			fr := &fileRun{
				inputRun: inputRun{idx: p.order[i], turn: i, file: f, key: p.keys[i], stem: p.stems[i]},
				feedRun:  feedRun{results: make(chan chunkResult, cap(r.tokens)), fed: make(chan int, 1), stop: make(chan struct{})},
			}
			if r.router == nil {
				// Writers are made before any chunk is read, so an
				// unwritable output stops the run before work is done.
				w, out, err := r.sink.writer(ctx, fr, nil)
				if err != nil {
					return err
				}
				if fr.w = w; out != "" {
					fr.outputs = []string{out}
				}
			}
			g.Go(func() error { return r.assemble(ctx, fr) })
			if err := r.feed(ctx, fr); err != nil {
				return err
			}
		}
		return nil
	})
	err := g.Wait()
	r.ctx = outer
	sort.Slice(r.total.PerFile, func(a, b int) bool { return r.total.PerFile[a].idx < r.total.PerFile[b].idx })
	if r.tables != nil && r.tables.Len() > 1 {
		r.total.Warnings = append(r.total.Warnings, fmt.Sprintf("%[1]s messages of %[2]d tables (%[3]s) were all decoded with one schema: pick one with %[4]s %[1]s.table.include=REGEX (and database.include)", r.cfg.Format.Name, r.tables.Len(), r.tables, setting.Option))
	}
	if err == nil {
		err = r.sink.done(outer)
	}
	return r.verdict(err)
}

// verdict adds to the run's error what its inputs came to: ErrPartial
// when some failed (KeepGoing), ErrNotDisposed when some were not moved
// or deleted.
func (r *run) verdict(err error) error {
	if err != nil || len(r.failed)+len(r.undisposed) == 0 {
		return err
	}
	var errs []error
	if len(r.failed) > 0 {
		errs = append(append(errs, ErrPartial), r.failed...)
	}
	if len(r.undisposed) > 0 {
		errs = append(append(errs, ErrNotDisposed), r.undisposed...)
	}
	return errors.Join(errs...)
}
