package cdcetl

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// TestExampleProgram: the program in examples/parquet, a module of its
// own as a user's program is, builds against this module and writes a
// Parquet file that arrow-go reads back with the sample's rows.
func TestExampleProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a second module (about 10 s)")
	}
	out := filepath.Join(t.TempDir(), "p.parquet")
	in, _ := filepath.Abs(filepath.Join("testdata", "samples", "canal", "2020-05-13", "part-0.jsonl"))
	cmd := exec.Command("go", "run", ".", "canal-json", "id BIGINT, name STRING, weight DECIMAL(10, 3)", in, out)
	cmd.Dir = filepath.Join("examples", "parquet")
	msg, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run examples/parquet: %v\n%s", err, msg)
	}
	f, err := file.OpenParquetFile(out, false)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pqarrow.NewFileReader(f, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := r.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	var got []string
	tr := array.NewTableReader(tbl, 0)
	defer tr.Release()
	for tr.Next() {
		rec := tr.RecordBatch()
		for i := range int(rec.NumRows()) {
			var vals []string
			for c := range int(rec.NumCols()) {
				vals = append(vals, rec.Column(c).ValueStr(i))
			}
			got = append(got, strings.Join(vals, ","))
		}
	}
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := NewReader(strings.NewReader(string(data)), Decoding{Format: "canal-json", Schema: "id BIGINT, name STRING, weight DECIMAL(10, 3)"})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	var want []string
	for rr.Next() {
		rec := rr.RecordBatch()
		for i := range int(rec.NumRows()) {
			var vals []string
			for c := range int(rec.NumCols()) {
				vals = append(vals, rec.Column(c).ValueStr(i))
			}
			want = append(want, strings.Join(vals, ","))
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || len(want) == 0 || !strings.Contains(string(msg), fmt.Sprintf("%d rows written", len(want))) {
		t.Fatalf("read back\n%v\nwant\n%v\n(%s)", got, want, msg)
	}
}
