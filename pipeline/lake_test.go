package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go/table"

	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/infer"
	"github.com/cdcetl/cdcetl/internal/cdcgen"
	"github.com/cdcetl/cdcetl/lake"
)

// canonical turns a column into comparable text per row: the types
// Iceberg stores differently (TINYINT as int, milliseconds as
// microseconds, the row kind as plain strings) are cast to one form first.
func canonical(t *testing.T, arr arrow.Array) []string {
	t.Helper()
	var to arrow.DataType
	switch dt := arr.DataType().(type) {
	case *arrow.DictionaryType:
		to = dt.ValueType
	case *arrow.Int8Type, *arrow.Int16Type:
		to = arrow.PrimitiveTypes.Int32
	case *arrow.TimestampType:
		if dt.Unit != arrow.Microsecond {
			to = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: dt.TimeZone}
		}
	case *arrow.Time32Type:
		to = arrow.FixedWidthTypes.Time64us
	case *arrow.Time64Type:
		if dt.Unit != arrow.Microsecond {
			to = arrow.FixedWidthTypes.Time64us
		}
	}
	if to != nil {
		out, err := compute.CastArray(context.Background(), arr, compute.UnsafeCastOptions(to))
		if err != nil {
			t.Fatalf("cast %s to %s: %v", arr.DataType(), to, err)
		}
		defer out.Release()
		arr = out
	}
	s := make([]string, arr.Len())
	for i := range s {
		if arr.IsNull(i) {
			s[i] = "NULL"
		} else {
			s[i] = arr.ValueStr(i)
		}
	}
	return s
}

// rowsOf renders every row of rec as "col=value" pairs in column-name
// order, the columns absent from rec as NULL when they are in cols.
func rowsOf(t *testing.T, rec arrow.RecordBatch, cols []string) []string {
	t.Helper()
	byName := map[string][]string{}
	for i, f := range rec.Schema().Fields() {
		byName[f.Name] = canonical(t, rec.Column(i))
	}
	out := make([]string, rec.NumRows())
	for r := range out {
		var b strings.Builder
		for _, c := range cols {
			v := "NULL"
			if vs, ok := byName[c]; ok {
				v = vs[r]
			}
			fmt.Fprintf(&b, "%s=%s|", c, v)
		}
		out[r] = b.String()
	}
	return out
}

// scanTable reads a table back with iceberg-go's scanner (which applies
// deletes), as canonical rows over its current columns.
func scanTable(t *testing.T, tbl *table.Table) (cols, rows []string) {
	t.Helper()
	for _, f := range tbl.Schema().Fields() {
		cols = append(cols, f.Name)
	}
	slices.Sort(cols)
	_, it, err := tbl.Scan().ToArrowRecords(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, rowsOf(t, rec, cols)...)
		rec.Release()
	}
	slices.Sort(rows)
	return cols, rows
}

// parquetRows reads the Parquet files under dir (a routed table's
// directory, its versions' subdirectories excluded) as canonical rows.
func parquetRows(t *testing.T, dir string, cols []string) []string {
	t.Helper()
	var rows []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if d.IsDir() && p != dir && isVersionDir(d.Name()) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".parquet") {
			return nil
		}
		rdr, err := file.OpenParquetFile(p, false)
		if err != nil {
			t.Fatal(err)
		}
		defer rdr.Close()
		fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		tb, err := fr.ReadTable(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer tb.Release()
		tr := array.NewTableReader(tb, 1<<20)
		defer tr.Release()
		for tr.Next() {
			rows = append(rows, rowsOf(t, tr.RecordBatch(), cols)...)
		}
		return nil
	})
	slices.Sort(rows)
	return rows
}

// TestIcebergChangelogMatchesParquet converts a mixed archive of every
// format to Iceberg tables and to routed Parquet, and checks that each
// table, read back with iceberg-go's scanner, holds exactly the rows of
// the Parquet outputs; a rerun commits nothing twice.
func TestIcebergChangelogMatchesParquet(t *testing.T) {
	for _, format := range []string{"canal-json", "maxwell-json", "ogg-json", "debezium-json"} {
		t.Run(format, func(t *testing.T) {
			in := t.TempDir()
			var paths []string
			for _, f := range cdcgen.Archive(format, 40) {
				p := filepath.Join(in, f.Name)
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, f.Data, 0o644); err != nil {
					t.Fatal(err)
				}
				paths = append(paths, p)
			}
			pq, wh := t.TempDir(), t.TempDir()
			opts := decode.Options{Producer: true, CaseInsensitive: true}
			if _, err := Run(context.Background(), Config{Options: opts, To: ToParquet, OutDir: pq, Workers: 2}, paths); err != nil {
				t.Fatal(err)
			}
			st, err := Run(context.Background(), Config{Options: opts, To: ToIceberg, OutDir: wh, Workers: 2}, paths)
			if err != nil {
				t.Fatal(err)
			}
			check := func() int {
				l, err := lake.Open(context.Background(), wh, "")
				if err != nil {
					t.Fatal(err)
				}
				defer l.Close()
				tables := 0
				seen := map[string]bool{}
				for _, fs := range st.PerFile {
					for _, ts := range fs.Tables {
						if seen[ts.Dir] {
							continue
						}
						seen[ts.Dir] = true
						tables++
						k := tableKeyOf(t, filepath.Join(wh, ts.Dir))
						ns, name := lakeIdent(k, ts.Dir)
						tbl, err := l.Catalog().LoadTable(context.Background(), table.Identifier{ns, name})
						if err != nil {
							t.Fatalf("%s: %v", ts.Dir, err)
						}
						cols, got := scanTable(t, tbl)
						want := parquetRows(t, filepath.Join(pq, ts.Dir), cols)
						if len(want) == 0 {
							t.Fatalf("%s: no Parquet rows", ts.Dir)
						}
						if !slices.Equal(got, want) {
							t.Errorf("%s: iceberg has %d rows, parquet %d; first difference:\n%s", ts.Dir, len(got), len(want), firstDiff(got, want))
						}
					}
				}
				return tables
			}
			if n := check(); n < 2 {
				t.Fatalf("only %d tables", n)
			}
			// A rerun with --force converts again and commits nothing.
			if _, err := Run(context.Background(), Config{Options: opts, To: ToIceberg, OutDir: wh, Workers: 2, Force: true}, paths); err != nil {
				t.Fatal(err)
			}
			check()
		})
	}
}

// tableKeyOf reads a routed table's key back from its schema file.
func tableKeyOf(t *testing.T, dir string) TableKey {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, SchemaFile))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := infer.LoadTable(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return tb.Key
}

func firstDiff(a, b []string) string {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return "iceberg: " + a[i] + "\nparquet: " + b[i]
		}
	}
	if len(a) > len(b) {
		return "iceberg extra: " + a[len(b)]
	}
	if len(b) > len(a) {
		return "parquet extra: " + b[len(a)]
	}
	return ""
}
