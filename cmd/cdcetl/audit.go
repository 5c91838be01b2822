package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/cdcetl/cdcetl/audit"
	"github.com/cdcetl/cdcetl/pipeline"
	"github.com/cdcetl/cdcetl/writer"
)

const auditUsage = `Usage: cdcetl audit [flags] PATH...

Reads an archive (files, directories, buckets; formats detected per input
unless --format says) in order and reports, per producer stream and table:

  gaps        what is missing, from every piece of evidence the producers
              give: MySQL GTIDs (Maxwell, Canal, Debezium), Maxwell's
              xid/xoffset/commit, Debezium's transaction block and the
              transaction topic's END counts, binlog file numbers, and the
              offsets in Kafka Connect sink file names; with the file:line
              on both sides
  duplicates  events the archive holds twice (same stream, table, source
              position, kind and row images), and files that repeat others
  order       source positions going backwards within a table
  quiet       hours without events between busy hours (a heuristic)
  coverage    messages and rows by kind, first and last event time and
              source position, the files, per stream and table

A message that is not JSON, or an input that cannot be read, is a gap of
its own. Exit status: 0 no gap found, 4 gaps found, 1 and 2 as usual.

Flags:
  --format NAME          the input format (default: detected per input)
  --option KEY=VALUE     a format option, as in Flink DDL (repeatable)
  --include-table REGEX  only tables whose "namespace.table" matches whole
  --exclude-table REGEX  not those
  --json                 print the whole report as JSON (gaps, duplicates,
                         order, quiet_periods, coverage, notes)
  --html FILE            also write the report as one self-contained page
  --as-of POINT          audit the archive up to an event time or source
                         position (what convert --materialize --as-of
                         POINT rests on); later messages are left out
  --samples N            places listed per finding (default 5)
  --workers N            messages read on N cores (default: cores)
  --max-line-size N      longest message accepted, in bytes
  --cpuprofile FILE      write a CPU profile (go tool pprof)
`

// errGaps is the audit's verdict when it found gaps (exit status 4).
var errGaps = errors.New("the archive has gaps")

func runAudit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o convertOpts
	var asJSON bool
	var htmlOut string
	var samples int
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	readFlags(fs, &o)
	fs.BoolVar(&asJSON, "json", false, "")
	fs.StringVar(&htmlOut, "html", "", "")
	fs.IntVar(&samples, "samples", 5, "")
	fs.StringVar(&o.asOf, "as-of", "", "")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "")
	paths, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, auditUsage)
		return errHelp
	}
	if err != nil {
		return flagError(fs, err)
	}
	if len(paths) == 0 {
		return usagef("audit: give the archive's files, directories or bucket URLs")
	}
	if samples < 1 {
		return usagef("--samples %d: want 1 or more", samples)
	}
	defer useCores(o.workers)()
	stopProfile, err := profileCPU(o.cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	cfg, paths, err := readConfig(&o, paths)
	if err != nil {
		return err
	}
	rep, err := pipeline.Audit(ctx, cfg, paths, audit.Options{Samples: samples})
	if err != nil {
		return err
	}
	if htmlOut != "" {
		page, err := rep.HTML()
		if err != nil {
			return err
		}
		if err := writer.WriteAtomic(htmlOut, page); err != nil {
			return fmt.Errorf("--html: %w", err)
		}
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else if err := rep.WriteText(stdout); err != nil {
		return err
	}
	if rep.GapsFound > 0 {
		return fmt.Errorf("%w: %d found (exit status 4)", errGaps, rep.GapsFound)
	}
	return nil
}
