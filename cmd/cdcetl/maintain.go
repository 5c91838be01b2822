package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/cdcetl/cdcetl/lake"
)

const maintainUsage = `Usage: cdcetl maintain -o WAREHOUSE [flags]

Keeps the Iceberg tables of a warehouse that convert --to iceberg loads
fast to read: for each table (or those named by --table),
  - compacts an upsert table: rewrites its data files that have deletes
    with the deletes applied, and packs small ones to the target size
    (Iceberg's rewrite_data_files, bin-pack), removing the delete files
    left with nothing to apply to (changelog tables are not rewritten:
    their files are named after their inputs, which a grown input's
    reload replaces);
  - expires snapshots older than --older-than (the current one always
    stays); the inputs they record are kept in the table property
    cdcetl.inputs, so a rerun still loads nothing twice;
  - removes the data, delete and manifest files under the table that no
    snapshot left refers to and that are older than --older-than (what
    killed loads and expired snapshots leave).
Run it when no load writes to the warehouse, or keep --older-than longer
than a load takes: a file a running load has not committed yet is an
orphan too.

Flags:
  -o DIR                the warehouse (as convert -o)
  --catalog URI         the warehouse's catalog, as convert --catalog
  --table NS.NAME       only this table (repeatable)
  --older-than DUR      age of the snapshots and orphan files removed
                        (default 120h: Iceberg's 5 days; 0s: all but the
                        current snapshot)
  --target-file-size N  bytes a compacted data file aims at (default: the
                        table's write.target-file-size-bytes, else 512 MiB)
  --json                one JSON object per table
`

func runMaintain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("maintain", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var out, cat string
	var tables multiFlag
	var asJSON bool
	var target int64
	older := lake.DefaultOlderThan
	fs.StringVar(&out, "o", "", "")
	fs.StringVar(&cat, "catalog", "", "")
	fs.Var(&tables, "table", "")
	fs.DurationVar(&older, "older-than", older, "")
	fs.Int64Var(&target, "target-file-size", 0, "")
	fs.BoolVar(&asJSON, "json", false, "")
	pos, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, maintainUsage)
		return errHelp
	}
	if err != nil {
		return flagError(fs, err)
	}
	if len(pos) > 0 {
		return usagef("maintain takes no arguments (%s): the warehouse is -o DIR", strings.Join(pos, " "))
	}
	if out == "" {
		return usagef("maintain needs -o WAREHOUSE: the directory convert --to iceberg loaded")
	}
	if older < 0 || target < 0 {
		return usagef("--older-than and --target-file-size cannot be negative")
	}
	if _, err := os.Stat(out); err != nil {
		return fmt.Errorf("warehouse %s: %w", out, err)
	}
	l, err := lake.Open(ctx, out, cat)
	if err != nil {
		return err
	}
	defer l.Close()
	idents, err := l.Tables(ctx)
	if err != nil {
		return err
	}
	if len(tables) > 0 {
		var pick []table.Identifier
		for _, name := range tables {
			found := false
			for _, id := range idents {
				if strings.Join(id, ".") == name {
					pick, found = append(pick, id), true
				}
			}
			if !found {
				return usagef("--table %s: the warehouse has no such table", name)
			}
		}
		idents = pick
	}
	enc := json.NewEncoder(stdout)
	for _, id := range idents {
		start := time.Now()
		res, err := l.Maintain(ctx, id, lake.MaintainOptions{OlderThan: older, TargetFileSize: target})
		if err != nil {
			return err
		}
		if asJSON {
			enc.Encode(res)
			continue
		}
		fmt.Fprintf(stdout, "%s: %d data files -> %d (%d rewritten), %d delete files -> %d, %d snapshots -> %d, %d orphan files removed (%s)\n",
			res.Table, res.DataFilesBefore, res.DataFilesAfter, res.Rewritten, res.DeleteFilesBefore, res.DeleteFilesAfter,
			res.SnapshotsBefore, res.SnapshotsAfter, res.OrphansRemoved, time.Since(start).Round(time.Millisecond))
	}
	return nil
}
