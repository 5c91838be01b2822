package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/internal/testutil"
	"github.com/cdcetl/cdcetl/writer"
)

func caseConfig(t *testing.T, path string) (Config, string) {
	t.Helper()
	schemaText, kv, err := testutil.ReadCase(path)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := decode.Lookup(filepath.Base(filepath.Dir(path)))
	s, err := arrowconv.ParseColumns(schemaText)
	if err != nil {
		t.Fatal(err)
	}
	fkv := map[string]string{}
	for k, v := range kv {
		if !strings.HasPrefix(k, "cdcetl.") {
			fkv[k] = v
		}
	}
	o, err := decode.ParseOptions(f, fkv, false)
	if err != nil {
		t.Fatal(err)
	}
	// cdcetl's own settings, as the CLI applies them.
	if kv["cdcetl.semantics"] == "producer" {
		o.Producer, o.CaseInsensitive = true, true
	}
	if tz := kv["cdcetl.source-time-zone"]; tz != "" {
		if o.SourceTZ, err = time.LoadLocation(tz); err != nil {
			t.Fatal(err)
		}
	}
	if c := kv["cdcetl.column-case"]; c != "" {
		o.CaseInsensitive = c == "insensitive"
	}
	if err := o.Check(f); err != nil {
		t.Fatal(err)
	}
	return Config{DecodingOptions: DecodingOptions{Format: f, Schema: s, Options: o}, RunOptions: RunOptions{Workers: 2, BatchRows: 3}}, strings.TrimSuffix(path, ".case") + ".jsonl"
}

// readParquetRows reads a Parquet file back with pqarrow (see
// testutil.ReadParquet) and renders its rows as --to print does.
func readParquetRows(t *testing.T, path string) ([]string, *arrow.Schema) {
	t.Helper()
	rows, schema, err := testutil.ReadParquet(path, testutil.ReadMem)
	if err != nil {
		t.Fatal(err)
	}
	return rows, schema
}

// TestParquetMatchesPrint converts every golden case that succeeds to both
// print and Parquet, reads the Parquet back with pqarrow and compares the
// rows value for value.
func TestParquetMatchesPrint(t *testing.T) {
	cases, _ := filepath.Glob(filepath.Join(testutil.Root(), "testdata", "*", "*.case"))
	ran := 0
	for _, c := range cases {
		cfg, input := caseConfig(t, c)
		// The expectation is the printed rows with timestamps narrowed to
		// their declared precision: Flink keeps every nanosecond it parsed,
		// a Parquet TIMESTAMP(3) column holds milliseconds.
		var printed bytes.Buffer
		p := writer.NewPrint(&printed, cfg.Schema.ArrowSchema())
		cfg.Batches = func(ctx context.Context, rec arrow.RecordBatch) error {
			narrowTimestamps(cfg.Schema, rec)
			return p.Write(ctx, rec)
		}
		_, err := Run(context.Background(), cfg, []string{input})
		p.Close()
		cfg.Batches = nil
		if err != nil {
			continue // error cases have no Parquet to compare
		}
		name := filepath.Base(filepath.Dir(c)) + "/" + filepath.Base(c)
		t.Run(name, func(t *testing.T) {
			out := t.TempDir()
			cfg.To, cfg.OutDir = ToParquet, out
			cfg.Force = true // each codec rewrites the same outputs
			for _, comp := range []string{"snappy", "zstd", "gzip", "none"} {
				cfg.Parquet.Compression = comp
				cfg.Parquet.PlainStrings = comp == "zstd" // one pass with PLAIN strings and integers
				cfg.Parquet.PlainIntegers = comp == "zstd"
				cfg.Parquet.RowGroupRows = 2
				if _, err := Run(context.Background(), cfg, []string{input}); err != nil {
					t.Fatal(err)
				}
				got, _ := readParquetRows(t, filepath.Join(out, filepath.Base(input)+".parquet"))
				want := strings.Split(strings.TrimSuffix(printed.String(), "\n"), "\n")
				if printed.Len() == 0 {
					want = nil
				}
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("%s: Parquet rows differ from printed rows:\n%s", comp, testutil.Diff(strings.Join(want, "\n"), strings.Join(got, "\n")))
				}
			}
			leftovers, _ := filepath.Glob(filepath.Join(out, ".*"))
			if len(leftovers) > 0 {
				t.Errorf("temporary files left: %v", leftovers)
			}
		})
		ran++
	}
	if ran < 10 {
		t.Fatalf("only %d cases compared", ran)
	}
}

// narrowTimestamps truncates top-level TIMESTAMP(p) values in place to the
// unit of a Parquet column of precision p (floor): milliseconds up to 3;
// the Arrow unit (µs up to 6, ns above) already is the Parquet one above.
func narrowTimestamps(s *arrowconv.Schema, rec arrow.RecordBatch) {
	for i, c := range s.Columns {
		if (c.Type.Kind != arrowconv.Timestamp && c.Type.Kind != arrowconv.TimestampLTZ) || c.Type.Precision > 3 {
			continue
		}
		const unit = 1000 // µs per ms
		vals := rec.Column(i + 1).(*array.Timestamp).TimestampValues()
		for k, v := range vals {
			r := int64(v) % unit
			if r < 0 {
				r += unit
			}
			vals[k] = arrow.Timestamp(int64(v) - r)
		}
	}
}

// TestParquetLogicalTypes checks the Parquet types pqarrow sees.
func TestParquetLogicalTypes(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	os.WriteFile(in, []byte(`{"a":1,"ts0":"2020-01-01 00:00:00.123456789","ts6":"2020-01-01 00:00:00.123456789","ts9":"2020-01-01 00:00:00.123456789","l3":"2020-01-01 00:00:00.5Z","d1":"1.5","d2":"-12345678901.25","d3":"-1234567890123456789012.5","dt":"2020-02-29","tm":"23:59:59"}`+"\n"), 0o644)
	s, err := arrowconv.ParseColumns("a TINYINT, s SMALLINT, ts0 TIMESTAMP(0), ts6 TIMESTAMP(6), ts9 TIMESTAMP(9), l3 TIMESTAMP_LTZ(3), d1 DECIMAL(5, 2), d2 DECIMAL(18, 2), d3 DECIMAL(30, 3), dt DATE, tm TIME(0), arr ARRAY<STRING>, m MAP<STRING, BIGINT>, r ROW<x INT>")
	if err != nil {
		t.Fatal(err)
	}
	f, _ := decode.Lookup("json")
	cfg := Config{DecodingOptions: DecodingOptions{Format: f, Schema: s}, OutputOptions: OutputOptions{To: ToParquet, OutDir: filepath.Join(dir, "out")}}
	if _, err := Run(context.Background(), cfg, []string{in}); err != nil {
		t.Fatal(err)
	}
	rows, schema := readParquetRows(t, filepath.Join(dir, "out", "in.jsonl.parquet"))
	want := map[string]string{
		"_rowkind": "utf8", "a": "int8", "s": "int16",
		"ts0": "timestamp[ms]", "ts6": "timestamp[us]", "ts9": "timestamp[ns]", "l3": "timestamp[ms, tz=UTC]",
		"d1": "decimal(5, 2)", "d2": "decimal(18, 2)", "d3": "decimal(30, 3)", "dt": "date32", "tm": "time32[ms]",
		"arr": "list<element: utf8, nullable>", "m": "map<utf8, int64, items_nullable>", "r": "struct<x: int32 nullable>",
	}
	for _, fld := range schema.Fields() {
		if got := fld.Type.String(); want[fld.Name] != got {
			t.Errorf("%s: Parquet read back as %s, want %s", fld.Name, got, want[fld.Name])
		}
	}
	wantRow := "+I[1, null, 2020-01-01T00:00:00.123, 2020-01-01T00:00:00.123456, 2020-01-01T00:00:00.123456789, 2020-01-01T00:00:00.500Z, 1.50, -12345678901.25, -1234567890123456789012.500, 2020-02-29, 23:59:59, null, null, null]"
	if len(rows) != 1 || rows[0] != wantRow {
		t.Errorf("rows = %v\nwant %s", rows, wantRow)
	}
}
