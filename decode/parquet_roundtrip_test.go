package decode

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/internal/testutil"
	"github.com/cdcetl/cdcetl/writer"
)

// nanoTimestamps sets every timestamp of t to precision 9: Parquet keeps
// TIMESTAMP(p) at p digits, and this test compares values exactly.
func nanoTimestamps(t arrowconv.Type) arrowconv.Type {
	switch t.Kind {
	case arrowconv.Timestamp, arrowconv.TimestampLTZ:
		t.Precision = 9
	case arrowconv.Array, arrowconv.Map, arrowconv.Multiset:
		if t.Elem != nil {
			e := nanoTimestamps(*t.Elem)
			t.Elem = &e
		}
		if t.Value != nil {
			v := nanoTimestamps(*t.Value)
			t.Value = &v
		}
	case arrowconv.Row:
		fs := make([]arrowconv.Field, len(t.Fields))
		for i, f := range t.Fields {
			fs[i] = arrowconv.Field{Name: f.Name, Type: nanoTimestamps(f.Type)}
		}
		t.Fields = fs
	}
	return t
}

// TestParquetRoundTripProperty: random schemas (every type, nested two
// deep) and rows, split into random batches, written to Parquet with random
// row-group sizes, codecs and string encodings, read back by arrow-go's
// pqarrow (a reader independent of the writer): the same rows, printed.
func TestParquetRoundTripProperty(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 5).Draw(t, "columns")
		var cols []string
		var fields []arrowconv.Field
		for i := 0; i < n; i++ {
			typ := nanoTimestamps(genType(t, 2, fmt.Sprintf("col%d", i)))
			fields = append(fields, arrowconv.Field{Name: fmt.Sprintf("c%d", i), Type: typ})
			cols = append(cols, fmt.Sprintf("c%d %s", i, typ))
		}
		s, err := arrowconv.ParseColumns(strings.Join(cols, ", "))
		if err != nil {
			t.Fatalf("%v: %s", err, strings.Join(cols, ", "))
		}
		var lines [][]byte
		for i, m := 0, rapid.IntRange(0, 12).Draw(t, "rows"); i < m; i++ {
			var parts []string
			for _, f := range fields {
				parts = append(parts, fmt.Sprintf("%q:%s", f.Name, genJSON(t, f.Type, fmt.Sprintf("r%d.%s", i, f.Name))))
			}
			lines = append(lines, []byte("{"+strings.Join(parts, ",")+"}"))
		}
		js, _ := Lookup("json")
		batches := batchesOf(t, js, s, Options{}, lines, "rows")
		want := printRows(t, batches)

		path := filepath.Join(dir, "p.parquet")
		w, err := writer.NewParquet(path, s, writer.ParquetOptions{
			Compression:   rapid.SampledFrom([]string{"snappy", "zstd", "gzip", "none"}).Draw(t, "codec"),
			RowGroupRows:  rapid.IntRange(1, 6).Draw(t, "rowGroupRows"),
			PlainStrings:  rapid.Bool().Draw(t, "plainStrings"),
			PlainIntegers: rapid.Bool().Draw(t, "plainIntegers"),
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range batches {
			if err := w.Write(context.Background(), rec); err != nil {
				t.Fatal(err)
			}
			rec.Release()
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		got := readParquetPrinted(t, path)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("schema %s\nParquet rows:\n%s\nwant:\n%s", strings.Join(cols, ", "), strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// readParquetPrinted reads a file back with pqarrow (see
// testutil.ReadParquet) and prints its rows as printRows does.
func readParquetPrinted(t *rapid.T, path string) []string {
	rows, _, err := testutil.ReadParquet(path, testutil.ReadMem)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
