// Command gen writes a generated products changelog (see package cdcgen):
//
//	go run ./internal/cdcgen/gen -format canal-json -mb 1024 > canal.jsonl
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/cdcetl/cdcetl/internal/cdcgen"
)

func main() {
	format := flag.String("format", "canal-json", "canal-json, maxwell-json, ogg-json or debezium-json")
	mb := flag.Int("mb", 64, "approximate output size in MiB")
	seed := flag.Uint64("seed", 1, "random seed")
	schema := flag.Bool("schema", false, "print the matching --schema and exit")
	tables := flag.Int("tables", 1, "tables the messages are spread over (products_00, ...; shape products)")
	run := flag.Int("run", 0, "with -tables: the tables in turn, this many messages each (0: at random)")
	shape := flag.String("shape", "products", "products, envelope (full producer envelopes, every metadata column) or wide (60 columns, half NULL)")
	flag.Parse()
	g, err := cdcgen.NewShape(*format, *shape, *seed)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if *schema {
		fmt.Println(cdcgen.SchemaForShape(*format, *shape))
		return
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	if p, ok := g.(*cdcgen.Generator); ok {
		p.Tables, p.Run = *tables, *run
	}
	var buf []byte
	for n := 0; n < *mb<<20; {
		buf = append(g.Next(buf[:0]), '\n')
		w.Write(buf)
		n += len(buf)
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
