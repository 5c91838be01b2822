package lake

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/partition"
	"github.com/cdcetl/cdcetl/writer"
)

// sameSpec reports whether a table's spec is the one fields ask for.
func sameSpec(spec iceberg.PartitionSpec, sc *iceberg.Schema, fields []partition.Field) bool {
	if spec.NumFields() != len(fields) {
		return false
	}
	i := 0
	for _, pf := range spec.Fields() {
		f := fields[i]
		i++
		src, ok := sc.FindFieldByID(pf.SourceID())
		if !ok || src.Name != f.Column || !pf.Transform.Equals(f.IcebergTransform()) {
			return false
		}
	}
	return true
}

// NewPartitioned splits rows by the table's partition spec into a data
// file per partition; open makes a partition's file, given its directory
// ("id_bucket=3"). colOf gives the record column of a table column. Each
// file's partition values are registered for its commit.
func (t *Table) NewPartitioned(colOf func(name string) int, open func(dir string) (partition.File, string, error)) (*partition.Writer, error) {
	t.mu.Lock()
	spec := t.tbl.Spec()
	sc := t.tbl.Schema()
	t.mu.Unlock()
	cols, err := partition.Bind(spec, sc, colOf)
	if err != nil {
		return nil, fmt.Errorf("iceberg table %s: %w", t.Name(), err)
	}
	return partition.New(cols, partition.Options{
		Open: func(dir string, _ int) (partition.File, string, error) { return open(dir) },
		Done: func(path string, values map[int]any) { t.partOf.Store(path, values) },
	}), nil
}

// dataFile describes a data file for a manifest: its metrics from its
// footer, and its partition values from the writer (iceberg-go infers
// them only for order-preserving transforms, never for bucket).
func (t *Table) dataFile(ctx context.Context, path string) (iceberg.DataFile, error) {
	fs, err := t.tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	meta := t.tbl.Metadata()
	spec := meta.PartitionSpec()
	vals, partitioned := t.partOf.Load(path)
	if !partitioned || spec.NumFields() == 0 {
		return tableFileToDataFile(ctx, fs, path, t, spec)
	}
	df, err := tableFileToDataFile(ctx, fs, path, t, *iceberg.UnpartitionedSpec)
	if err != nil {
		return nil, err
	}
	return inPartition(df, spec, vals.(map[int]any))
}

// inPartition is df (described without partitions) in spec's partition
// of the given values, its metrics kept.
func inPartition(df iceberg.DataFile, spec iceberg.PartitionSpec, vals map[int]any) (iceberg.DataFile, error) {
	b, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData, df.FilePath(), iceberg.ParquetFile, vals, nil, nil, df.Count(), df.FileSizeBytes())
	if err != nil {
		return nil, err
	}
	b.ColumnSizes(df.ColumnSizes()).ValueCounts(df.ValueCounts()).NullValueCounts(df.NullValueCounts()).
		LowerBoundValues(df.LowerBoundValues()).UpperBoundValues(df.UpperBoundValues())
	if s := df.SplitOffsets(); len(s) > 0 {
		b.SplitOffsets(s)
	}
	return b.Build(), nil
}

// PartitionedDelta is an input's upsert delta of a partitioned table: a
// Delta per partition. Every partition field is of a key column, so a
// key's rows all fall in one partition, and its equality deletes (which
// apply within their partition) find the key's earlier rows.
type PartitionedDelta struct {
	*partition.Writer
	deltas []*Delta
}

// NewPartitionedDelta splits rows by the table's spec into a Delta per
// partition; open makes a partition's data file (see NewDelta for s and
// opts).
func (t *Table) NewPartitionedDelta(colOf func(name string) int, open func(dir string) (*writer.Parquet, string, error), s *arrowconv.Schema, opts writer.ParquetOptions) (*PartitionedDelta, error) {
	if err := t.KeyPartitioned(s.PrimaryKey); err != nil {
		return nil, err
	}
	pd := &PartitionedDelta{}
	pw, err := t.NewPartitioned(colOf, func(dir string) (partition.File, string, error) {
		w, path, err := open(dir)
		if err != nil {
			return nil, "", err
		}
		d, err := t.NewDelta(w, path, s, opts)
		if err != nil {
			w.Abort()
			return nil, "", err
		}
		pd.deltas = append(pd.deltas, d)
		return d, path, nil
	})
	if err != nil {
		return nil, err
	}
	pd.Writer = pw
	return pd, nil
}

// KeyPartitioned checks that every partition field of the table is of a
// column of key: upsert needs a key's rows in one partition.
func (t *Table) KeyPartitioned(key []string) error {
	t.mu.Lock()
	spec := t.tbl.Spec()
	sc := t.tbl.Schema()
	t.mu.Unlock()
	for _, pf := range spec.Fields() {
		src, ok := sc.FindFieldByID(pf.SourceID())
		if ok && !slices.Contains(key, src.Name) {
			return fmt.Errorf("iceberg table %s: upsert needs every partition field to be of a primary key column (a key's rows must stay in one partition for its deletes to find them), and %s is of %s: partition by %s, or load a changelog table", t.Name(), pf.Name, src.Name, strings.Join(key, ", "))
		}
	}
	return nil
}

// Truncate tells every partition's delta where the input truncates the
// table.
func (p *PartitionedDelta) Truncate(line int64) error {
	for _, d := range p.deltas {
		if err := d.Truncate(line); err != nil {
			return err
		}
	}
	return nil
}

// Deltas are the partitions' deltas.
func (p *PartitionedDelta) Deltas() []*Delta { return p.deltas }

// Files are every partition's data and delete files.
func (p *PartitionedDelta) Files() []string {
	var out []string
	for _, d := range p.deltas {
		out = append(out, d.Files()...)
	}
	return out
}

// Abort removes every partition's files.
func (p *PartitionedDelta) Abort() error {
	for _, d := range p.deltas {
		d.Abort()
	}
	return nil
}
