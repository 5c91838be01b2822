package lake

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go"

	"github.com/cdcetl/cdcetl/partition"
	"github.com/cdcetl/cdcetl/writer"
)

// partitionSpec builds the spec of fields over schema sc.
func partitionSpec(fields []partition.Field, sc *iceberg.Schema) (iceberg.PartitionSpec, error) {
	var pfs []iceberg.PartitionField
	for i, f := range fields {
		src, ok := sc.FindFieldByName(f.Column)
		if !ok {
			return iceberg.PartitionSpec{}, fmt.Errorf("--partition-by %s: the table has no column %s", f, f.Column)
		}
		tr := f.IcebergTransform()
		if !tr.CanTransform(src.Type) {
			return iceberg.PartitionSpec{}, fmt.Errorf("--partition-by %s: column %s is %s, which %s cannot partition", f, f.Column, src.Type, f.Transform)
		}
		pfs = append(pfs, iceberg.PartitionField{SourceIDs: []int{src.ID}, FieldID: 1000 + i, Name: f.Name(), Transform: tr})
	}
	return iceberg.NewPartitionSpec(pfs...), nil
}

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
func (t *Table) NewPartitioned(colOf func(name string) int, open func(dir string) (*writer.Parquet, string, error)) (*partition.Writer, error) {
	t.mu.Lock()
	spec := t.tbl.Spec()
	sc := t.tbl.Schema()
	t.mu.Unlock()
	var cols []partition.Column
	for _, pf := range spec.Fields() {
		src, ok := sc.FindFieldByID(pf.SourceID())
		if !ok {
			return nil, fmt.Errorf("iceberg table %s: partition source %d is no column", t.Name(), pf.SourceID())
		}
		c := colOf(src.Name)
		if c < 0 {
			return nil, fmt.Errorf("iceberg table %s: partition column %s is not among the rows' columns", t.Name(), src.Name)
		}
		cols = append(cols, partition.Column{Col: c, Transform: pf.Transform, ID: pf.FieldID, Name: pf.Name, Result: pf.Transform.ResultType(src.Type)})
	}
	return partition.New(cols, partition.Options{
		Open: func(dir string, _ int) (*writer.Parquet, string, error) { return open(dir) },
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
	b, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData, df.FilePath(), iceberg.ParquetFile, vals.(map[int]any), nil, nil, df.Count(), df.FileSizeBytes())
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
