package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/cdcetl/cdcetl/pipeline"
	"github.com/cdcetl/cdcetl/writer"
)

const inspectUsage = `Usage: cdcetl inspect [flags] PATH...

PATH is a file, a directory or a bucket URL (s3://, gs://, azblob://).

Reads every input whole and tells, per file and source table, the detected
format, messages, rows by kind, control messages by type, the first and
last event time and source position; and per table the schema a conversion
without --schema infers (a Flink CREATE TABLE ready for --ddl, each
column's evidence as its COMMENT) and any drift, with the line where it
happened.

Flags:
  --format NAME          the input format (default: detected per input)
  --option KEY=VALUE     a format option, as in Flink DDL (repeatable)
  --include-table REGEX  only tables whose "namespace.table" matches whole
  --exclude-table REGEX  not those
  --ddl-out DIR          write one <namespace>.<table>.sql per table (for
                         convert --ddl, or convert --ddl-dir DIR)
  --json                 print the same as JSON
  --workers N            inputs read at once (default: cores)
  --max-line-size N      longest message accepted, in bytes
`

func runInspect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o convertOpts
	var ddlOut string
	var asJSON bool
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	readFlags(fs, &o)
	fs.StringVar(&ddlOut, "ddl-out", "", "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.Var(&o.primaryKeys, "primary-key", "")
	fs.Var(&o.columnTypes, "column-type", "")
	paths, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, inspectUsage)
		return errHelp
	}
	if err != nil {
		return flagError(fs, err)
	}
	cfg, paths, err := readConfig(&o, paths)
	if err != nil {
		return err
	}
	ins, err := pipeline.Inspect(ctx, cfg, paths)
	if err != nil {
		return err
	}
	if ddlOut != "" {
		if err := os.MkdirAll(ddlOut, 0o755); err != nil {
			return usagef("--ddl-out: %w", err)
		}
		for _, t := range ins.Tables {
			if err := writer.WriteAtomic(filepath.Join(ddlOut, pipeline.DDLFileName(t.Namespace, t.Name)), []byte(t.DDL)); err != nil {
				return err
			}
		}
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(ins)
	}
	printInspection(stdout, ins)
	if ddlOut != "" {
		fmt.Fprintf(stderr, "cdcetl: wrote %d CREATE TABLE files to %s (convert --ddl-dir %s pins them)\n", len(ins.Tables), ddlOut, ddlOut)
	}
	return nil
}

func printInspection(w io.Writer, ins *pipeline.Inspection) {
	filesOf := map[string]int{}
	for _, f := range ins.Files {
		how := f.Detected
		if how == "" {
			how = "--format"
		}
		fmt.Fprintf(w, "== %s: %s (%s), %d lines\n", f.Path, f.Format, how, f.Lines)
		for _, t := range f.Tables {
			fmt.Fprintf(w, "  %s\n", t)
			filesOf[t.Table]++
		}
	}
	for _, t := range ins.Tables {
		fmt.Fprintf(w, "\n== table %s: %d inputs, schema version %d, outputs in %s\n", t.Table, filesOf[t.Table], t.Version, t.Dir)
		fmt.Fprint(w, t.DDL)
		for _, c := range t.Changes {
			fmt.Fprintf(w, "-- drift at %s:%d: %s\n", c.File, c.Line, c.Change)
		}
	}
	if len(ins.Tables) == 0 {
		fmt.Fprintln(w, "no tables: the inputs hold no rows (only control messages: DDL, transaction markers, heartbeats), so a conversion writes nothing")
	}
}
