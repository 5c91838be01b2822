package cdcetl

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/internal/cdcgen"
	"github.com/cdcetl/cdcetl/pipeline"
	"github.com/cdcetl/cdcetl/writer"
)

// printAll prints every batch of rr as Flink's print connector does.
func printAll(t *testing.T, rr *Reader) string {
	t.Helper()
	var buf bytes.Buffer
	p := writer.NewPrint(&buf, rr.Schema())
	for rr.Next() {
		if err := p.Write(context.Background(), rr.RecordBatch()); err != nil {
			t.Fatal(err)
		}
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestReaderAgreesWithConvert: for every format and data shape, the
// Reader's rows are the rows 'cdcetl convert --to print' prints for the
// same file, with every metadata column of the shape declared; in batches
// of any size, gzip or not.
func TestReaderAgreesWithConvert(t *testing.T) {
	for _, format := range cdcgen.Formats {
		for _, shape := range cdcgen.Shapes {
			t.Run(format+"/"+shape, func(t *testing.T) {
				g, err := cdcgen.NewShape(format, shape, 7)
				if err != nil {
					t.Fatal(err)
				}
				var data []byte
				for range 300 {
					data = append(g.Next(data), '\n')
				}
				d := Decoding{Format: format, Schema: cdcgen.SchemaForShape(format, shape)}
				if shape == "products" {
					// Where each row came from, too.
					d.Schema += ", `_file` STRING METADATA FROM 'file.name' VIRTUAL, `_line` BIGINT METADATA FROM 'file.line' VIRTUAL"
				}
				checkReaderAgrees(t, data, d)
			})
		}
	}
	// Plain JSON rows (the generator writes only the CDC formats).
	t.Run("json", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 300))
		var data []byte
		for i := range 300 {
			data = fmt.Appendf(data, `{"id":%d,"name":"item \"%d\"\n","weight":%d.%02d,"quantity":%s,"in_stock":%t}`+"\n",
				i, rng.IntN(1000), rng.IntN(1000), rng.IntN(100), []string{"null", "7", "-12"}[rng.IntN(3)], rng.IntN(2) == 0)
		}
		checkReaderAgrees(t, data, Decoding{Format: "json", Schema: "id BIGINT, name STRING, weight DECIMAL(10, 2), quantity INT, in_stock BOOLEAN, " +
			"`_line` BIGINT METADATA FROM 'file.line' VIRTUAL"})
	})
}

// checkReaderAgrees fails when the Reader's rows of data (300 messages)
// differ from what convert prints for the same file, in batches of any
// size, gzip or not.
func checkReaderAgrees(t *testing.T, data []byte, d Decoding) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	cfg, err := Job{Inputs: []string{path}, Decoding: d, Stdout: &want}.Config()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pipeline.Run(context.Background(), cfg, []string{path}); err != nil {
		t.Fatal(err)
	}
	if want.Len() == 0 {
		t.Fatal("convert printed nothing")
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(data)
	zw.Close()
	for _, c := range []struct {
		in   []byte
		rows int
	}{{data, 16384}, {data, 7}, {gz.Bytes(), 1}} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		rr, err := NewReader(bytes.NewReader(c.in), d, WithBatchRows(c.rows), WithAllocator(mem), WithName("in.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		if got := printAll(t, rr); got != want.String() {
			t.Fatalf("batch rows %d: the reader's rows differ from convert's:\n%s", c.rows, firstDiff(got, want.String()))
		}
		if n := rr.Counts().Messages; n != 300 {
			t.Errorf("%d messages counted, want 300", n)
		}
		rr.Release()
		mem.AssertSize(t, 0)
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\n got  %s\n want %s", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(al), len(bl))
}

// TestReaderBatches: batches hold at most the rows asked for, and a
// batch kept with Retain outlives the next call of Next.
func TestReaderBatches(t *testing.T) {
	data := cdcgen.Lines("canal-json", 3, 64<<10)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	rr, err := NewReader(bytes.NewReader(data), Decoding{Format: "canal-json", Schema: cdcgen.SchemaFor("canal-json")}, WithBatchRows(100), WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	var kept []int64
	total := int64(0)
	for rr.Next() {
		rec := rr.RecordBatch()
		if rec.NumRows() > 100+2 { // a message's rows stay together (an update's two)
			t.Fatalf("a batch of %d rows, want at most 100 (and a message's rows)", rec.NumRows())
		}
		total += rec.NumRows()
		rec.Retain()
		kept = append(kept, rec.NumRows())
		defer rec.Release()
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	if total != rr.Counts().Rows || len(kept) < 2 {
		t.Fatalf("%d rows in %d batches, counted %d", total, len(kept), rr.Counts().Rows)
	}
	if rr.Next() {
		t.Fatal("Next after the end")
	}
	rr.Release()
}

// TestReaderStopsAtError: the first message that cannot be decoded
// stops the reader with a *decode.Error at its line, and the reader's
// memory is freed.
func TestReaderStopsAtError(t *testing.T) {
	in := "{\"data\":[{\"id\":\"1\"}],\"type\":\"INSERT\"}\n\n{\"data\":[{\"id\":\"2\"}],\"type\":\"INSERT\"}\n{oops\n{\"data\":[{\"id\":\"4\"}],\"type\":\"INSERT\"}\n"
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	rr, err := NewReader(strings.NewReader(in), Decoding{Format: "canal-json", Schema: "id BIGINT"}, WithName("x.jsonl"), WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	if rr.Next() {
		t.Fatal("a batch before the error")
	}
	var de *decode.Error
	if !errors.As(rr.Err(), &de) || de.File != "x.jsonl" || de.Line != 4 {
		t.Fatalf("error %v, want a *decode.Error at x.jsonl line 4", rr.Err())
	}
	if c := rr.Counts(); c.Messages != 4 || c.Blank != 1 {
		t.Fatalf("counts %+v", c)
	}
	rr.Release()
	mem.AssertSize(t, 0)
}

// TestDecodingRules: a Decoding is checked as the command line checks
// its flags.
func TestDecodingRules(t *testing.T) {
	for _, c := range []struct {
		d    Decoding
		want string // "" means valid
	}{
		{Decoding{Format: "canal-json", Schema: "id BIGINT"}, ""},
		{Decoding{Schema: "id BIGINT"}, "needs a Format"},
		{Decoding{Format: "canal", Schema: "id BIGINT"}, "unknown format"},
		{Decoding{Format: "canal-json", Schema: "id BIGINT", DDL: "CREATE TABLE t (id BIGINT)"}, "not both"},
		{Decoding{Format: "canal-json", Schema: "id BIGNUM"}, "Schema"},
		{Decoding{DDL: "CREATE TABLE t (id BIGINT) WITH ('format' = 'maxwell-json')"}, ""},
		{Decoding{DDL: "CREATE TABLE t (id BIGINT) WITH ('format' = 'maxwell-json', 'cdcetl.semantic' = 'producer')"}, "unknown WITH key 'cdcetl.semantic'"},
		{Decoding{Format: "canal-json", Schema: "id BIGINT", Semantics: "exact"}, "want flink or producer"},
		{Decoding{Format: "canal-json", Schema: "id BIGINT", SourceTimeZone: "Europe/Berlin"}, "only under producer semantics"},
		{Decoding{Format: "canal-json", Schema: "id BIGINT", Semantics: "producer", SourceTimeZone: "Mars/Base"}, "IANA"},
		{Decoding{Format: "canal-json", Schema: "id BIGINT", ColumnCase: "upper"}, "want sensitive or insensitive"},
		{Decoding{Format: "canal-json", Schema: "id BIGINT", Options: map[string]string{"canal-json.ignore-parse-errors": "maybe"}}, "ignore-parse-errors"},
		{Decoding{Semantics: "flink"}, "needs a Schema"},
		{Decoding{}, ""},
		{Decoding{Format: "debezium-json", Schema: "id BIGINT, ts TIMESTAMP_LTZ(3) METADATA FROM 'source.timestamp' VIRTUAL"}, ""},
		{Decoding{Format: "canal-json", Schema: "id BIGINT, ts TIMESTAMP_LTZ(3) METADATA FROM 'source.timestamp' VIRTUAL"}, "unknown metadata key 'source.timestamp'"},
	} {
		_, err := c.d.resolve()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", c.d, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: error %v, want one saying %q", c.d, err, c.want)
		}
	}
}

// TestJobRules: a Job is checked before it runs.
func TestJobRules(t *testing.T) {
	in := []string{"testdata"}
	schema := Decoding{Format: "canal-json", Schema: "id BIGINT, PRIMARY KEY (id) NOT ENFORCED"}
	for _, c := range []struct {
		j    Job
		want string
	}{
		{Job{Inputs: in}, ""},
		{Job{}, "needs Inputs"},
		{Job{Inputs: in, To: ToParquet}, "Job.Output: Parquet output needs an output directory"},
		{Job{Inputs: in, Output: "o", To: ToPrint}, "Job.Output: printed rows go to standard output"},
		{Job{Inputs: in, Output: "o", TableMode: "upsert"}, "Job.TableMode: applies only to Iceberg output"},
		{Job{Inputs: in, Output: "o", To: ToIceberg, TableMode: "merge"}, "want changelog or upsert"},
		{Job{Inputs: in, Output: "o", To: ToIceberg, TableMode: "upsert", KeepGoing: true}, "KeepGoing"},
		{Job{Inputs: in, Output: "o", To: ToIceberg, Decoding: schema}, "Job.Table: Iceberg output with a schema needs the table"},
		{Job{Inputs: in, Output: "o", To: ToIceberg, Decoding: schema, Table: "shop.orders"}, ""},
		{Job{Inputs: in, Output: "o", To: ToIceberg, Table: "shop.orders"}, "Job.Table: names the one table of a conversion with a schema"},
		{Job{Inputs: in, Output: "o", To: ToIceberg, Decoding: schema, Table: "orders"}, "namespace.name"},
		{Job{Inputs: in, Output: "o", Materialize: true, Decoding: Decoding{Format: "canal-json", Schema: "id BIGINT"}, Table: "a.b"}, "primary key"},
		{Job{Inputs: in, Output: "o", PartitionBy: "day(ts)", Decoding: schema}, "no column ts"},
		{Job{Inputs: in, Output: "o", PartitionBy: "frob(id)"}, "PartitionBy"},
		{Job{Inputs: in, Output: "o", To: ToIceberg, Decoding: schema, Table: "a.b", TableMode: "upsert", PartitionBy: "bucket(4, id)"}, ""},
		{Job{Inputs: in, To: "debezium-json", Decoding: schema}, ""},
		{Job{Inputs: in, To: "avro", Decoding: schema}, "want parquet"},
		{Job{Inputs: in, Output: "o", Decoding: Decoding{Format: "canal-json", Schema: "id BIGINT", Options: map[string]string{"format-version": "2"}}}, "belongs to no decoding format"},
		{Job{Inputs: in, Output: "o", To: ToIceberg, Decoding: Decoding{Options: map[string]string{"format-version": "2"}}}, ""},
		{Job{Inputs: in, Output: "o", PartitionBy: "id", Decoding: Decoding{Format: "canal-json", Schema: "id BIGINT", Options: map[string]string{"sink.rolling-policy.file-size": "1 mb"}}}, ""},
		{Job{Inputs: in, Output: "o", PartitionBy: "id", Decoding: Decoding{Format: "canal-json", Schema: "id BIGINT", Options: map[string]string{"sink.rolling-policy.file-size": "lots"}}}, "want a size"},
	} {
		_, err := c.j.Config()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", c.j, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: error %v, want one saying %q", c.j, err, c.want)
		}
	}
}
