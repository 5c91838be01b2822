package pipeline

import (
	"context"

	"github.com/cdcetl/cdcetl/internal/outdir"
	"github.com/cdcetl/cdcetl/lake"
	"github.com/cdcetl/cdcetl/reader"
	"github.com/cdcetl/cdcetl/writer"
)

// sink is where the rows of a run with an output directory go, one kind
// per implementation: files (Parquet, Hive-partitioned Parquet, re-encoded
// CDC JSON; fileSink) or Iceberg tables (lakeSink). A run picks its sink
// once, at start (newSink), and from then on never asks which kind it
// writes. Printed rows and Config.Batches go to one ordered stream
// instead (RunFiles' drain), with a fileSink that makes no files.
//
// The run calls, in this order: recover for each pending file a killed
// run left; prepare with the inputs to convert; for each input, writer
// for each of its tables, then finishing once its rows are written
// (before its writers close) and settle once they closed (before its
// journal entry); done after the last input; close at the end.
type sink interface {
	recover(ctx context.Context, pending string, j *outdir.Journal) error
	prepare(ctx context.Context, files []reader.File) error
	// writer makes the writer of an input's rows of one table (tr nil:
	// the one table of a conversion with a Schema) and returns its
	// output, relative to OutDir.
	writer(ctx context.Context, fr *fileRun, tr *tableRun) (writer.Writer, string, error)
	// finishing: the input's rows are written, or it failed (err); it
	// returns the input's error now. The returned func runs once the
	// input is finished, whatever happened.
	finishing(fr *fileRun, st Stats, err error) (func(), error)
	// settle: the input's writers closed (committed: an output of it is
	// in place).
	settle(ctx context.Context, fr *fileRun, st *Stats, committed bool) error
	// replaces reports whether the sink itself replaces the rows of an
	// input converted again (a table does); otherwise the run removes the
	// earlier outputs the new conversion did not make again.
	replaces() bool
	done(ctx context.Context) error
	close() error
}

var (
	_ sink = (*fileSink)(nil)
	_ sink = (*lakeSink)(nil)
)

// newSink opens the sink of r's output.
func newSink(ctx context.Context, r *run) (sink, error) {
	if r.cfg.To != ToIceberg {
		return &fileSink{r: r}, nil
	}
	s := &lakeSink{r: r}
	if err := s.openLake(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// fileSink writes one file per input and table (hive.go: per partition),
// and the current-state snapshots (materialize.go).
type fileSink struct{ r *run }

func (*fileSink) recover(context.Context, string, *outdir.Journal) error { return nil }
func (*fileSink) prepare(context.Context, []reader.File) error           { return nil }
func (*fileSink) finishing(_ *fileRun, _ Stats, err error) (func(), error) {
	return func() {}, err
}
func (*fileSink) replaces() bool { return false }
func (*fileSink) close() error   { return nil }

func (s *fileSink) writer(ctx context.Context, fr *fileRun, tr *tableRun) (writer.Writer, string, error) {
	cfg := s.r.cfg
	if tr == nil {
		return s.r.newFileWriter(fr, "", fr.stem, cfg.Schema, cfg.Format, cfg.OnlyTable)
	}
	return s.r.newFileWriter(fr, tr.dir, outdir.RoutedStem(fr.stem), tr.schema, fr.format, &tr.key)
}

func (s *fileSink) settle(_ context.Context, fr *fileRun, _ *Stats, _ bool) error {
	s.r.resolveHive(fr)
	return nil
}

func (s *fileSink) done(ctx context.Context) error {
	if err := s.r.writeSuccessFiles(ctx); err != nil {
		return err
	}
	if s.r.cfg.Materialize && s.r.journal != nil {
		return s.r.materializeTables(ctx)
	}
	return nil
}

// lakeSink loads Iceberg tables (lake.go, lakegroup.go, keys.go): each
// input's rows become data files committed, in input order, by commit
// groups.
type lakeSink struct {
	r *run
	// lake is the catalog.
	lake *lake.Lake
	// turns[i] is closed once input i (in conversion order) is finished:
	// commits follow the changelog's order.
	turns []chan struct{}
	// group holds the inputs waiting for their commit group.
	group *lakeGroup
}

func (s *lakeSink) recover(ctx context.Context, pending string, j *outdir.Journal) error {
	return recoverLake(ctx, s.r.cfg.OutDir, pending, j, s.lake)
}

func (s *lakeSink) prepare(ctx context.Context, files []reader.File) error {
	r := s.r
	if r.cfg.TableMode == lake.ModeUpsert && r.router != nil && len(files) > 0 {
		if err := s.decideKeys(ctx, files); err != nil {
			return err
		}
	}
	s.group = &lakeGroup{}
	s.turns = make([]chan struct{}, len(files))
	for i := range s.turns {
		s.turns[i] = make(chan struct{})
	}
	return nil
}

func (s *lakeSink) writer(ctx context.Context, fr *fileRun, tr *tableRun) (writer.Writer, string, error) {
	if tr == nil {
		return s.newLakeWriter(ctx, fr, nil, s.r.cfg.Schema)
	}
	return s.newLakeWriter(ctx, fr, tr, tr.schema)
}

func (s *lakeSink) finishing(fr *fileRun, st Stats, err error) (func(), error) {
	r := s.r
	// Inputs finish in their order (a later input's commit would
	// otherwise apply before an earlier one's).
	if fr.turn > 0 {
		select {
		case <-s.turns[fr.turn-1]:
		case <-r.ctx.Done():
			if err == nil {
				err = r.ctx.Err()
			}
		}
	}
	if err != nil || s.needsTable(fr, st) {
		// The inputs before this one go in first: they stand whatever
		// becomes of it, and it may read what they leave.
		s.flushLake()
	}
	if err == nil {
		err = s.truncateDeltas(fr, st)
	}
	return func() { s.giveTurn(fr) }, err
}

func (s *lakeSink) settle(ctx context.Context, fr *fileRun, st *Stats, committed bool) error {
	if committed || len(st.Truncates) > 0 {
		return s.stageLake(ctx, fr, st)
	}
	return nil
}

func (*lakeSink) replaces() bool { return true }

func (s *lakeSink) done(ctx context.Context) error {
	if s.r.cfg.NoMaintain || s.r.total.Committed == 0 {
		return nil
	}
	return s.maintainLakes(ctx)
}

func (s *lakeSink) close() error { return s.lake.Close() }
