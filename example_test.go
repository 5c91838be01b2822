package cdcetl_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cdcetl/cdcetl"
	"github.com/cdcetl/cdcetl/writer"
)

// Decodes Canal messages with a Flink schema into Arrow record batches and
// prints their rows as Flink's print connector does.
func ExampleNewReader() {
	messages := strings.NewReader(`{"data":[{"id":"111","name":"scooter","weight":"5.18"}],"type":"INSERT","database":"inventory","table":"products","es":1589373560000,"ts":1589373560798}
{"data":[{"id":"111","name":"scooter","weight":"5.17"}],"old":[{"weight":"5.18"}],"type":"UPDATE","database":"inventory","table":"products","es":1589373562000,"ts":1589373562798}
{"data":[{"id":"111","name":"scooter","weight":"5.17"}],"type":"DELETE","database":"inventory","table":"products","es":1589373563000,"ts":1589373563798}`)
	rr, err := cdcetl.NewReader(messages, cdcetl.Decoding{
		Format: "canal-json",
		Schema: "id BIGINT, name STRING, weight DECIMAL(10, 2), `table` STRING METADATA FROM 'table' VIRTUAL",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rr.Release()
	p := writer.NewPrint(os.Stdout, rr.Schema())
	for rr.Next() {
		if err := p.Write(context.Background(), rr.RecordBatch()); err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := rr.Err(); err != nil {
		fmt.Println(err)
		return
	}
	p.Close()
	fmt.Println(rr.Schema().Field(0).Name, rr.Counts().Rows, "rows")
	// Output:
	// +I[111, scooter, 5.18, products]
	// -U[111, scooter, 5.18, products]
	// +U[111, scooter, 5.17, products]
	// -D[111, scooter, 5.17, products]
	// _rowkind 4 rows
}

// A message that cannot be decoded stops the reader with an error that
// names its line; with the format's ignore-parse-errors option, as in
// Flink, a value that does not convert becomes NULL and a message that is
// no JSON object is dropped, both counted.
func ExampleNewReader_errors() {
	input := `{"data":[{"id":"1"}],"type":"INSERT"}
{"data":[{"id":"x"}],"type":"INSERT"}
{"data":[{"id":"3"}],"type":"INSERT"`
	for _, skip := range []string{"false", "true"} {
		rr, err := cdcetl.NewReader(strings.NewReader(input), cdcetl.Decoding{
			Format:  "canal-json",
			Schema:  "id BIGINT",
			Options: map[string]string{"canal-json.ignore-parse-errors": skip},
		}, cdcetl.WithName("orders.jsonl"))
		if err != nil {
			fmt.Println(err)
			return
		}
		for rr.Next() {
		}
		c := rr.Counts()
		fmt.Printf("ignore-parse-errors=%s: %d rows, %d values nulled, %d messages dropped\n", skip, c.Rows, c.Nulled, c.Dropped)
		if rr.Err() != nil {
			fmt.Println(rr.Err())
		}
		rr.Release()
	}
	// Output:
	// ignore-parse-errors=false: 0 rows, 0 values nulled, 0 messages dropped
	// orders.jsonl:2:16: data[0].id: cannot convert "x" to BIGINT
	// ignore-parse-errors=true: 2 rows, 1 values nulled, 1 messages dropped
}

// Converts the shipped sample archive to Parquet files, one per input, as
// 'cdcetl convert --ddl testdata/samples/canal-products.sql -o DIR' does;
// a second run finds nothing new to convert (the output's journal).
func ExampleConvert() {
	ddl, err := os.ReadFile(filepath.Join("testdata", "samples", "canal-products.sql"))
	if err != nil {
		fmt.Println(err)
		return
	}
	out, _ := os.MkdirTemp("", "cdcetl-example")
	defer os.RemoveAll(out)
	job := cdcetl.Job{
		Inputs:   []string{filepath.Join("testdata", "samples", "canal")},
		Decoding: cdcetl.Decoding{DDL: string(ddl)},
		Output:   out,
	}
	for range 2 {
		st, err := cdcetl.Convert(context.Background(), job)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%d inputs converted, %d already, %d rows\n", st.Files, st.Skipped, st.TotalRows())
	}
	files, _ := filepath.Glob(filepath.Join(out, "2020-05-13", "*.parquet"))
	for _, f := range files {
		fmt.Println(filepath.Base(f))
	}
	// Output:
	// 2 inputs converted, 0 already, 11 rows
	// 0 inputs converted, 2 already, 0 rows
	// part-0.jsonl.parquet
	// part-1.jsonl.parquet
}

// Without a schema, Convert detects each input's format, gives every
// source table a table of its own and infers its columns; here into an
// Iceberg warehouse of upsert tables (the current row per primary key).
func ExampleConvert_iceberg() {
	warehouse, _ := os.MkdirTemp("", "cdcetl-lake")
	defer os.RemoveAll(warehouse)
	st, err := cdcetl.Convert(context.Background(), cdcetl.Job{
		Inputs:    []string{filepath.Join("testdata", "samples", "canal")},
		To:        cdcetl.ToIceberg,
		Output:    warehouse,
		TableMode: "upsert",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d inputs, %d rows\n", st.Files, st.TotalRows())
	_, err = os.Stat(filepath.Join(warehouse, "inventory", "products", "metadata", "version-hint.text"))
	fmt.Println("table inventory.products:", err == nil)
	// Output:
	// 2 inputs, 12 rows
	// table inventory.products: true
}
