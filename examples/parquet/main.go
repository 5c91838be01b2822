// Command parquet converts a file of CDC messages into one Parquet file
// through cdcetl's Go API: cdcetl.NewReader decodes the messages into an
// Arrow RecordReader, and arrow-go's pqarrow writes it.
//
//	go run . canal-json "id BIGINT, name STRING" changes.jsonl changes.parquet
package main

import (
	"fmt"
	"log"
	"os"

	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/cdcetl/cdcetl"
)

func main() {
	if len(os.Args) != 5 {
		log.Fatal("usage: parquet FORMAT SCHEMA IN.jsonl OUT.parquet")
	}
	in, err := os.Open(os.Args[3])
	check(err)
	defer in.Close()
	rr, err := cdcetl.NewReader(in, cdcetl.Decoding{Format: os.Args[1], Schema: os.Args[2]}, cdcetl.WithName(os.Args[3]))
	check(err)
	defer rr.Release()
	out, err := os.Create(os.Args[4])
	check(err)
	w, err := pqarrow.NewFileWriter(rr.Schema(), out, nil, pqarrow.DefaultWriterProps())
	check(err)
	for rr.Next() {
		check(w.WriteBuffered(rr.RecordBatch()))
	}
	check(rr.Err())
	check(w.Close()) // closes out, too
	fmt.Printf("%d rows written to %s\n", rr.Counts().Rows, os.Args[4])
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
