package pipeline

import (
	"context"

	"github.com/cdcetl/cdcetl/internal/outdir"
	"github.com/cdcetl/cdcetl/reader"
)

// runToBucket is Run with OutDir a bucket URL: the run works in the
// bucket's staging directory, and the bucket puts what it finishes in
// place (outdir.Bucket).
func runToBucket(ctx context.Context, cfg Config, files []reader.File) (Stats, error) {
	// An Iceberg table's data files go up with its commits (lake.publish);
	// the journal and dead letters through the bucket.
	b, err := outdir.OpenBucket(ctx, cfg.OutDir, cfg.Shard, cfg.To == ToIceberg)
	if err != nil {
		return Stats{}, setup(err)
	}
	cfg.OutDir = b.Path()
	st, err := runFiles(b.Context(), cfg, files, b)
	wctx := context.WithoutCancel(ctx)
	if lerr := b.Lost(); lerr != nil {
		// Another process has the lock: write nothing more, and leave
		// nothing behind here either.
		b.Abandon(wctx)
		return st, lerr
	}
	if cerr := b.Close(wctx); err == nil {
		err = cerr
	}
	return st, err
}
