package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/cdcetl/cdcetl/pipeline"
)

const showUsage = `Usage: cdcetl show [flags] OUT TABLE

Prints the rows of TABLE (NAMESPACE.NAME, as the source names it) that a
conversion loaded into OUT, as --to print prints them: a Parquet output
directory's changelog in input order (--current: its --materialize
snapshot), or an Iceberg warehouse's table as iceberg-go reads it, deletes
applied (an upsert table is its current state). --files prints the
Parquet files that hold those rows instead, for any Parquet reader:

  duckdb -c "SELECT * FROM read_parquet([$(cdcetl show lake inventory.products --files | sed "s/.*/'&'/" | paste -sd,)], union_by_name=true)"

Flags:
  --current       the table's current state
  --limit N       at most N rows
  --files         the Parquet files that hold the rows, one per line (an
                  Iceberg table's current data files; refused when it has
                  delete files)
  --catalog URI   the warehouse's catalog, as convert --catalog
`

func runShow(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o pipeline.ShowOptions
	fs := flag.NewFlagSet("show", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.BoolVar(&o.Current, "current", false, "")
	fs.IntVar(&o.Limit, "limit", 0, "")
	fs.BoolVar(&o.Files, "files", false, "")
	fs.StringVar(&o.Catalog, "catalog", "", "")
	pos, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, showUsage)
		return errHelp
	}
	if err != nil {
		return flagError(fs, err)
	}
	if len(pos) != 2 {
		return usagef("show takes OUT and TABLE (NAMESPACE.NAME): cdcetl show out inventory.products")
	}
	if o.Limit < 0 {
		return usagef("--limit %d: want 0 (all) or more", o.Limit)
	}
	o.Dir, o.Table = pos[0], pos[1]
	_, err = pipeline.Show(ctx, o, stdout)
	return err
}
