package testutil

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/writer"
)

// PrintedRows renders the rows of rec as --to print does ("+I[1, a]"), one
// string per row (a value may hold a newline, so printed text is not split).
// Column 0 is the row kind: dictionary-encoded as cdcetl builds it, or
// plain strings as read back from Parquet.
func PrintedRows(rec arrow.RecordBatch) []string {
	fmts := make([]func([]byte, arrow.Array, int) []byte, rec.NumCols())
	for c := 1; c < len(fmts); c++ {
		fmts[c] = writer.ValueFormatter(rec.Schema().Field(c).Type)
	}
	kind := func(line []byte, i int) []byte { return append(line, rec.Column(0).(*array.String).Value(i)...) }
	if _, ok := rec.Column(0).(*array.Dictionary); ok {
		kinds := writer.RowKinds(rec)
		kind = func(line []byte, i int) []byte { return append(line, arrowconv.RowKind(kinds[i]).String()...) }
	}
	var rows []string
	for i := 0; i < int(rec.NumRows()); i++ {
		line := append(kind(nil, i), '[')
		for c := 1; c < len(fmts); c++ {
			if c > 1 {
				line = append(line, ", "...)
			}
			line = fmts[c](line, rec.Column(c), i)
		}
		rows = append(rows, string(line)+"]")
	}
	return rows
}

// ReadParquet reads a Parquet file with arrow-go's pqarrow (a reader
// independent of cdcetl's writer) and returns its rows as PrintedRows
// renders them, and its Arrow schema.
// ReadMem is the allocator for reading Parquet back in tests. It is Go's
// garbage-collected one, not a checked one: arrow-go v18.8.0's
// DELTA_BINARY_PACKED decoder never frees a 64-byte block per column chunk
// (delta_bit_packing.go, initBlock), which a checked allocator reports as a
// leak of the reader, not of the files or of cdcetl.
var ReadMem memory.Allocator = memory.DefaultAllocator

func ReadParquet(path string, mem memory.Allocator) ([]string, *arrow.Schema, error) {
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, nil, fmt.Errorf("testutil: %w", err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 1000}, mem)
	if err != nil {
		return nil, nil, fmt.Errorf("testutil: %w", err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		return nil, nil, fmt.Errorf("testutil: %w", err)
	}
	defer tbl.Release()
	tr := array.NewTableReader(tbl, 1000)
	defer tr.Release()
	var rows []string
	for tr.Next() {
		rows = append(rows, PrintedRows(tr.RecordBatch())...)
	}
	return rows, tbl.Schema(), nil
}

// ReadColumns reads a Parquet file with pqarrow and returns its column
// names and, per row, each column's value as --to print renders it
// (column 0 the row kind).
func ReadColumns(path string) ([]string, [][]string, error) {
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, nil, fmt.Errorf("testutil: %w", err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 1000}, ReadMem)
	if err != nil {
		return nil, nil, fmt.Errorf("testutil: %w", err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		return nil, nil, fmt.Errorf("testutil: %w", err)
	}
	defer tbl.Release()
	var names []string
	for _, f := range tbl.Schema().Fields() {
		names = append(names, f.Name)
	}
	tr := array.NewTableReader(tbl, 1000)
	defer tr.Release()
	var rows [][]string
	for tr.Next() {
		rec := tr.RecordBatch()
		fmts := make([]func([]byte, arrow.Array, int) []byte, rec.NumCols())
		for c := range fmts {
			fmts[c] = writer.ValueFormatter(rec.Schema().Field(c).Type)
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			row := make([]string, rec.NumCols())
			for c := range row {
				row[c] = string(fmts[c](nil, rec.Column(c), i))
			}
			rows = append(rows, row)
		}
	}
	return names, rows, nil
}
