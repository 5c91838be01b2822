package pipeline

import (
	"context"

	"github.com/cdcetl/cdcetl/internal/outdir"
	"github.com/cdcetl/cdcetl/reader"
	"github.com/cdcetl/cdcetl/writer"
)

var (
	_ sink = (*fileSink)(nil)
	_ sink = (*lakeSink)(nil)
	_ sink = (*streamSink)(nil)
)

// newSink opens the sink of r's output.
func newSink(ctx context.Context, r *run) (sink, error) {
	if r.cfg.OutDir == "" {
		return &streamSink{r: r}, nil
	}
	if r.cfg.To != ToIceberg {
		return &fileSink{r: r}, nil
	}
	s := &lakeSink{r: r}
	if err := s.openLake(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

func (*fileSink) close() error { return nil }

func (s *fileSink) done(ctx context.Context) error {
	if err := s.writeSuccessFiles(ctx); err != nil {
		return err
	}
	if s.r.cfg.Materialize && s.r.journal != nil {
		return s.materializeTables(ctx)
	}
	return nil
}

func (*fileSink) replaces() bool { return false }

func (*fileSink) ordered() bool { return false }

func (s *fileSink) writer(ctx context.Context, fr *fileRun, tr *tableRun) (writer.Writer, string, error) {
	cfg := s.r.cfg
	if tr == nil {
		return s.newFileWriter(fr, "", fr.stem, cfg.Schema, cfg.Format, cfg.OnlyTable)
	}
	return s.newFileWriter(fr, tr.dir, outdir.RoutedStem(fr.stem), tr.schema, fr.format, &tr.key)
}

func (*fileSink) recover(context.Context, string, *outdir.Journal) error { return nil }

func (*fileSink) finishing(_ *fileRun, _ Stats, err error) (func(), error) {
	return func() {}, err
}

func (s *fileSink) settle(_ context.Context, fr *fileRun, _ *Stats, _ bool) error {
	s.resolveHive(fr)
	return nil
}

func (*fileSink) prepare(context.Context, []reader.File) error { return nil }
