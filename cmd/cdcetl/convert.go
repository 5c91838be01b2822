package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/infer"
	"github.com/cdcetl/cdcetl/internal/outdir"
	"github.com/cdcetl/cdcetl/internal/setting"
	"github.com/cdcetl/cdcetl/objstore"
	"github.com/cdcetl/cdcetl/partition"
	"github.com/cdcetl/cdcetl/pipeline"
	"github.com/cdcetl/cdcetl/reader"
	"github.com/cdcetl/cdcetl/writer"
)

var errHelp = errors.New("help shown")

// multiFlag collects a repeatable flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// convertOpts are the flags of 'cdcetl convert'.
type convertOpts struct {
	format, schema, ddl, to, out, compression  string
	options                                    multiFlag
	workers, batchRows, maxLine, rowGroupRows  int
	chunkSize                                  int
	quiet, mergeUpdates, envelope              bool
	cpuProfile, memProfile, deadLetter, report string
	onSuccess, failedDir                       string
	force, keepGoing, dictionary, delta        bool
	dedupInputs                                bool
	primaryKeys, columnTypes                   multiFlag
	settle                                     time.Duration
	logFormat                                  string
	semantics, columnCase, sourceTZ            string
	includeTable, excludeTable, ddlDir         string
	catalog, table, tableMode, partitionBy     string
	dedup                                      bool
	asOf                                       string
	noLineage, materialize, noMaintain         bool
	shard                                      string
	bucketTimeout                              time.Duration
	bucketAttempts                             int
}

func convertFlags(o *convertOpts) *flag.FlagSet {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	fs.StringVar(&o.format, "format", "", "input format: "+strings.Join(decode.FormatNames(), ", ")+" (without a schema: detected per input when not given)")
	fs.StringVar(&o.schema, "schema", "", "Flink SQL column list, e.g. \"id BIGINT, name STRING\" (without --schema or --ddl: each source table is routed to outputs of its own with an inferred schema)")
	fs.StringVar(&o.semantics, "semantics", "", "flink (default with a schema): decode exactly as Flink; producer: decode each value as its producer meant it, control messages counted (docs/producer-semantics.md)")
	fs.StringVar(&o.columnCase, "column-case", "", "sensitive (Flink) or insensitive (the producer default): match row keys to columns ignoring case when no key matches exactly")
	fs.StringVar(&o.sourceTZ, "source-time-zone", "", "producer semantics: the zone of wall-clock text read into TIMESTAMP_LTZ (MySQL TIMESTAMP columns), an IANA name (default UTC)")
	fs.StringVar(&o.ddl, "ddl", "", "file holding a Flink CREATE TABLE statement (instead of --schema)")
	fs.StringVar(&o.includeTable, "include-table", "", "keep only messages of tables whose \"namespace.table\" this Go RE2 expression matches whole")
	fs.StringVar(&o.excludeTable, "exclude-table", "", "drop messages of tables whose \"namespace.table\" this Go RE2 expression matches whole (counted as filtered)")
	fs.Var(&o.primaryKeys, "primary-key", "without a schema: NS.TABLE=COL[,COL], the primary key of the tables NS.TABLE (a Go RE2 expression of \"namespace.table\") matches, over what the messages say (repeatable)")
	fs.Var(&o.columnTypes, "column-type", "without a schema: NS.TABLE.COL=TYPE, a Flink SQL type for column COL of the tables NS.TABLE matches, over what the values say (repeatable)")
	fs.StringVar(&o.ddlDir, "ddl-dir", "", "without --schema: a directory of <namespace>.<table>.sql CREATE TABLE files that pin those tables' schemas (others are inferred)")
	fs.Var(&o.options, "option", "format option KEY=VALUE, keys as in Flink DDL (repeatable); --KEY=VALUE works too")
	fs.StringVar(&o.to, "to", "", "output: print (default without -o), parquet (default with -o), iceberg (tables in the warehouse -o DIR), or a format to re-encode to: "+strings.Join(decode.FormatNames(), ", "))
	fs.StringVar(&o.catalog, "catalog", "", "iceberg: the catalog, sqlite:PATH (default: the embedded one, DIR/_catalog.db), postgres://USER@HOST:PORT/DB (password in PGPASSWORD or ~/.pgpass) or rest+https://HOST/PATH")
	fs.BoolVar(&o.noMaintain, "no-maintain", false, "--to iceberg --table-mode upsert: do not compact the tables after the load when their files pass the thresholds (table properties cdcetl.maintain.max-data-files, cdcetl.maintain.max-delete-files; default 32 each)")
	fs.BoolVar(&o.noLineage, "no-lineage", false, "without a schema: leave out the lineage columns _file, _line and _source_pos (with a schema, declare the metadata keys file.path, file.line, source-position instead)")
	fs.StringVar(&o.partitionBy, "partition-by", "", "the partition spec, Iceberg transforms of columns: \"day(_event_ts), bucket(16, id)\" (COLUMN, identity|year|month|day|hour(COLUMN), bucket(N, COLUMN), truncate(N, COLUMN)); iceberg: the tables' spec; parquet: Hive-style directories (a DDL's PARTITIONED BY gives identity fields)")
	fs.BoolVar(&o.materialize, "materialize", false, "parquet: also keep each table's current state (the last image per primary key, deletes removed) in OUT/_current/<ns>/<table>/ (beside the changelogs), updated by every run (with a schema, --table NAMESPACE.NAME names the table)")
	fs.StringVar(&o.asOf, "as-of", "", "leave out the messages after this event time (2026-11-30T02:00:00Z) or source position (as 'cdcetl audit' prints it): with --materialize or --table-mode upsert, the state of each key at that point")
	fs.BoolVar(&o.dedup, "dedup", false, "with --materialize: drop exact duplicate events (same key, source position and row kind; at-least-once delivery, replayed logs), keeping the first copy")
	fs.StringVar(&o.tableMode, "table-mode", "", "iceberg: changelog (default: every row appended, with _rowkind) or upsert (the current state per primary key: equality and position deletes)")
	fs.StringVar(&o.table, "table", "", "the table a conversion with a schema loads into, NAMESPACE.NAME (iceberg)")
	fs.BoolVar(&o.mergeUpdates, "merge-updates", false, "re-encoding: write a -U row followed by its +U row as one native update message (Flink writes a delete and an insert)")
	fs.BoolVar(&o.envelope, "envelope", false, "re-encoding: put declared metadata columns back into the target envelope (canal also gets mysqlType/sqlType/pkNames)")
	fs.StringVar(&o.out, "o", "", "output directory (one output file per input file)")
	fs.StringVar(&o.compression, "compression", "", "Parquet: snappy (default), zstd, gzip or none; re-encoded JSON: none (default), gzip or zstd")
	fs.IntVar(&o.workers, "workers", runtime.NumCPU(), "cores to use: decoding workers, and the Go scheduler's limit")
	fs.IntVar(&o.batchRows, "batch-rows", 16384, "rows per Arrow record batch")
	fs.IntVar(&o.rowGroupRows, "row-group-rows", 128<<10, "rows per Parquet row group")
	fs.BoolVar(&o.dictionary, "parquet-dictionary", true, "dictionary-encode Parquet string columns (=false: PLAIN, about 5% less CPU, about a third larger files)")
	fs.BoolVar(&o.delta, "parquet-delta", true, "DELTA_BINARY_PACKED-encode Parquet integer, date, time and timestamp columns (=false: PLAIN, for readers without Parquet 2.0 encodings)")
	fs.IntVar(&o.maxLine, "max-line-size", reader.DefaultMaxLine, "longest message accepted, in bytes")
	fs.IntVar(&o.chunkSize, "chunk-size", reader.DefaultChunkSize, "bytes per block a file is cut into for parallel decoding (a routed conversion infers an input's schemas from its first block)")
	fs.BoolVar(&o.quiet, "quiet", false, "no summary on stderr")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile to this file (go tool pprof)")
	fs.StringVar(&o.memProfile, "memprofile", "", "write an allocation profile of the whole run to this file at its end (go tool pprof -sample_index=alloc_space)")
	fs.StringVar(&o.deadLetter, "dead-letter", "", "directory for one JSONL file per input of the messages that could not be decoded and values that became NULL; turns on ignore-parse-errors (default with -o and ignore-parse-errors: DIR/_dead_letters)")
	fs.StringVar(&o.shard, "shard", "", "i/n: convert only the inputs of shard i (0 <= i < n) of n, side by side with the other shards' processes on the same -o (default $CDCETL_SHARD; a Kubernetes Indexed Job sets it from JOB_COMPLETION_INDEX)")
	fs.BoolVar(&o.force, "force", false, "convert every input again, whatever the journal in -o DIR says")
	fs.BoolVar(&o.dedupInputs, "dedup-inputs", false, "skip an input holding exactly the bytes of another one converted into -o DIR (or earlier in the run); without it such an input is converted, with a warning")
	fs.BoolVar(&o.keepGoing, "keep-going", false, "a file that cannot be decoded is journaled as failed and the others go on (exit status 3)")
	fs.StringVar(&o.onSuccess, "on-success", "keep", "what to do with a converted input: keep, delete or move=DIR")
	fs.StringVar(&o.failedDir, "failed", "", "move inputs that failed here, with a <name>.err beside each (implies --keep-going)")
	fs.StringVar(&o.report, "report", "", "write the run's counts, totals and per input, as JSON to this file")
	fs.StringVar(&o.logFormat, "log-format", "text", "summary and logs on stderr: text or json")
	bucketFlags(fs, o)
	return fs
}

// readFlags are the flags of the commands that read an archive without
// converting it (inspect, audit): which inputs and how they are read.
func readFlags(fs *flag.FlagSet, o *convertOpts) {
	fs.StringVar(&o.format, "format", "", "")
	fs.Var(&o.options, "option", "")
	fs.StringVar(&o.includeTable, "include-table", "", "")
	fs.StringVar(&o.excludeTable, "exclude-table", "", "")
	fs.IntVar(&o.workers, "workers", runtime.NumCPU(), "")
	fs.IntVar(&o.maxLine, "max-line-size", reader.DefaultMaxLine, "")
	bucketFlags(fs, o)
}

// readConfig is buildConfig for a command that reads an archive without
// converting it: the conversion's checks and defaults for the flags it
// shares.
func readConfig(o *convertOpts, paths []string) (pipeline.Config, []string, error) {
	o.batchRows, o.rowGroupRows, o.chunkSize, o.onSuccess, o.logFormat = 1, 1, reader.DefaultChunkSize, "keep", "text"
	return buildConfig(o, paths)
}

// useCores makes --workers N mean N cores: decoding, writing and GC share
// them, so a one-worker run is a one-core run (and comparable with
// one-thread tools). The returned func restores the setting.
func useCores(workers int) func() {
	if workers > 0 && workers < runtime.GOMAXPROCS(0) {
		prev := runtime.GOMAXPROCS(workers)
		return func() { runtime.GOMAXPROCS(prev) }
	}
	return func() {}
}

// profileCPU starts --cpuprofile's profile (none for path ""); the
// returned func stops it and closes the file.
func profileCPU(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, usageError{err}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// bucketFlags are the object-storage request policy's flags.
func bucketFlags(fs *flag.FlagSet, o *convertOpts) {
	o.bucketTimeout, o.bucketAttempts = objstore.DefaultPolicy.Timeout, objstore.DefaultPolicy.Attempts
	fs.Var(durationFlag{&o.bucketTimeout}, "bucket-timeout", "buckets: a request with no answer and no progress for this long fails and is tried again")
	fs.IntVar(&o.bucketAttempts, "bucket-attempts", objstore.DefaultPolicy.Attempts, "buckets: tries per request (timeouts, 5xx answers, resets, bodies cut short), with backoff up to 20s between them")
}

// formatOptionFlags rewrites --canal-json.table.include=x (or with the
// value as the next argument) into --option canal-json.table.include=x.
func formatOptionFlags(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		name := strings.TrimLeft(a, "-")
		if a == "--" {
			return append(out, args[i:]...)
		}
		if len(name) < len(a) && isFormatOption(name) {
			if !strings.Contains(name, "=") && i+1 < len(args) {
				i++
				name += "=" + args[i]
			}
			out = append(out, "--option", name)
			continue
		}
		out = append(out, a)
	}
	return out
}

func isFormatOption(name string) bool {
	for _, f := range decode.FormatNames() {
		if strings.HasPrefix(name, f+".") {
			return true
		}
	}
	return false
}

// parseInterleaved lets flags follow positional arguments.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	args = formatOptionFlags(args)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func runConvert(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o convertOpts
	fs := convertFlags(&o)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	paths, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, convertUsage)
		return errHelp
	}
	if err != nil {
		return flagError(fs, err)
	}
	cfg, paths, err := buildConfig(&o, paths)
	if err != nil {
		return err
	}
	if o.report != "" {
		// A report that cannot be written must not be found out only
		// after a night's conversion.
		if err := checkWritable(o.report); err != nil {
			return usagef("--report %s: %v", o.report, err)
		}
	}
	cfg.Stdout = stdout
	defer useCores(o.workers)()
	stopProfile, err := profileCPU(o.cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	if o.memProfile != "" {
		f, err := os.Create(o.memProfile)
		if err != nil {
			return usageError{err}
		}
		defer func() {
			// Allocations since the start, not just the live heap: what a
			// steady state churns is what costs collections and page faults.
			runtime.GC()
			if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
				fmt.Fprintf(stderr, "cdcetl: --memprofile: %v\n", err)
			}
			f.Close()
		}()
	}
	// A progress line on a terminal, unless --quiet or stdout is data.
	stopProgress := func() {}
	if !o.quiet && isTerminal(os.Stdout) && isTerminal(os.Stderr) && cfg.OutDir != "" {
		cfg.Progress = &pipeline.Progress{}
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() { showProgress(stderr, cfg.Progress, stop); close(done) }()
		stopProgress = func() { close(stop); <-done }
	}
	started := time.Now()
	st, err := pipeline.Run(ctx, cfg, paths)
	stopProgress() // the line is cleared before anything else is printed
	if o.report != "" {
		if rerr := writeReport(o.report, newReport(st, err, started, cfg)); rerr != nil && err == nil {
			err = rerr
		}
	}
	var setupErr *pipeline.SetupError
	if errors.As(err, &setupErr) {
		return err // nothing was read: no summary
	}
	for _, w := range st.Warnings {
		fmt.Fprintln(stderr, "cdcetl: warning:", w)
	}
	if st.UnplacedAsOf > 0 {
		fmt.Fprintf(stderr, "cdcetl: warning: %d messages have no %s: --as-of cannot place them, so they are kept\n", st.UnplacedAsOf,
			map[bool]string{true: "event time", false: "source position"}[!cfg.AsOf.Time.IsZero()])
	}
	if !o.quiet {
		printSummary(stderr, o.logFormat, st, err, cfg, paths)
	}
	return err
}

// printSummary writes the run's counts on stderr: one line of text, or a
// JSON log record.
func printSummary(stderr io.Writer, logFormat string, st pipeline.Stats, err error, cfg pipeline.Config, paths []string) {
	if logFormat == "json" {
		log, _ := newLogger("json", stderr)
		attrs := []any{"files", st.Files, "lines", st.Lines, "messages", st.Messages, "blank", st.Blank, "ddl", st.DDL,
			"filtered", st.Filtered, "dropped", st.Dropped, "control", st.Control, "zero_dates", st.ZeroDates, "truncates", len(st.Truncates),
			"nulled", st.Nulled, "skipped", st.Skipped, "failed", st.Failed, "schema_changes", len(st.SchemaChanges),
			"insert", st.Rows[0], "update_before", st.Rows[1], "update_after", st.Rows[2], "delete", st.Rows[3]}
		if err != nil {
			log.Error("summary", append(attrs, "error", err.Error())...)
		} else {
			log.Info("summary", attrs...)
		}
		return
	}
	switch {
	case err == nil && st.Files == 0 && st.Skipped == 0 && st.OtherShards > 0:
		fmt.Fprintf(stderr, "cdcetl: nothing to do in shard %s: all %d inputs belong to other shards\n", cfg.Shard, st.OtherShards)
		return
	case err == nil && st.Files == 0 && st.Skipped == 0:
		fmt.Fprintf(stderr, "cdcetl: no input files under %s (below a directory, names starting with '.' or '_' are skipped)\n", strings.Join(paths, ", "))
		return
	case err == nil && st.Files == 0:
		if moved, deleted := disposals(st); moved+deleted > 0 {
			fmt.Fprintf(stderr, "cdcetl: all %d inputs were already converted into %s; finished what an earlier run left pending: %d moved, %d deleted\n",
				st.Skipped, cfg.OutDir, moved, deleted)
			return
		}
		fmt.Fprintf(stderr, "cdcetl: nothing to do: all %d inputs were already converted into %s (journal %s; --force converts them again)\n",
			st.Skipped, cfg.OutDir, outdir.JournalName)
		return
	}
	if errors.Is(err, context.Canceled) {
		kept := 0
		for _, f := range st.PerFile {
			if f.Status == pipeline.StatusOK {
				kept++
			}
		}
		where := "printed"
		if cfg.OutDir != "" {
			where = "kept in " + cfg.OutDir + " and journaled"
		}
		fmt.Fprintf(stderr, "cdcetl: interrupted: %d inputs finished (%s); the ones in flight were rolled back, nothing of them kept: run again to go on\n", kept, where)
	}
	control := ""
	if cfg.Options.Producer {
		control = fmt.Sprintf(", %d control", st.Control)
	}
	asOf := ""
	if cfg.AsOf != nil {
		asOf = fmt.Sprintf(" (%d after --as-of %s)", st.AfterAsOf, cfg.AsOf)
	}
	fmt.Fprintf(stderr, "cdcetl: %d files, %d lines: %d messages, %d blank, %d DDL skipped, %d filtered%s, %d dropped%s; rows +I %d, -U %d, +U %d, -D %d",
		st.Files, st.Lines, st.Messages, st.Blank, st.DDL, st.Filtered, asOf, st.Dropped, control, st.Rows[0], st.Rows[1], st.Rows[2], st.Rows[3])
	if cfg.Schema == nil && cfg.OutDir != "" { // printed rows name their tables
		tables := map[string]bool{}
		for _, f := range st.PerFile {
			for _, t := range f.Tables {
				tables[t.Table] = true
			}
		}
		fmt.Fprintf(stderr, "; %d tables", len(tables))
		if n := len(st.SchemaChanges); n > 0 {
			fmt.Fprintf(stderr, ", %d schema changes (listed in --report)", n)
		}
	}
	if cfg.To == pipeline.ToIceberg {
		fmt.Fprintf(stderr, "; iceberg: %d parts committed (an input's rows of one table)", st.Committed)
		if st.Held > 0 {
			fmt.Fprintf(stderr, ", %d already in their tables", st.Held)
		}
		for _, m := range st.Maintained {
			if m.Skipped != "" {
				fmt.Fprintf(stderr, "; maintenance of %s skipped (%s)", m.Table, m.Skipped)
				continue
			}
			fmt.Fprintf(stderr, "; compacted %s: %d data files -> %d, %d delete files -> %d", m.Table, m.DataFilesBefore, m.DataFilesAfter, m.DeleteFilesBefore, m.DeleteFilesAfter)
		}
	}
	if st.ZeroDates > 0 {
		fmt.Fprintf(stderr, "; %d zero dates nulled", st.ZeroDates)
	}
	if n := len(st.Truncates); n > 0 {
		fmt.Fprintf(stderr, "; %d truncates (listed in --report)", n)
	}
	if st.Nulled > 0 {
		fmt.Fprintf(stderr, "; %d values nulled", st.Nulled)
	}
	if st.Skipped > 0 {
		fmt.Fprintf(stderr, "; %d inputs already converted (journal)", st.Skipped)
	}
	if st.OtherShards > 0 {
		fmt.Fprintf(stderr, "; shard %s: %d inputs left to the other shards", cfg.Shard, st.OtherShards)
	}
	if st.Failed > 0 {
		fmt.Fprintf(stderr, "; %d inputs failed", st.Failed)
	}
	switch {
	case st.DeadLetters > 0:
		dir := cfg.DeadLetterDir
		if dir == "" {
			dir = outdir.DeadLetterDir(cfg.OutDir)
		}
		fmt.Fprintf(stderr, "; dead letters in %s", dir)
	case cfg.DeadLetterDir == "" && cfg.OutDir == "" && st.Dropped+st.Nulled > 0:
		fmt.Fprintf(stderr, " (--dead-letter DIR keeps them)")
	}
	fmt.Fprintln(stderr)
	const shown = 10
	for i, c := range st.SchemaChanges {
		if i == shown {
			fmt.Fprintf(stderr, "cdcetl: ... and %d more schema changes (--report lists them all)\n", len(st.SchemaChanges)-shown)
			break
		}
		fmt.Fprintf(stderr, "cdcetl: schema change: %s at %s:%d: %s\n", c.Table, c.File, c.Line, c.Change)
	}
}

// buildConfig turns flags (and a DDL file) into a pipeline configuration,
// checking everything that can be checked before any input is read.
func buildConfig(o *convertOpts, paths []string) (pipeline.Config, []string, error) {
	var cfg pipeline.Config
	if o.bucketAttempts < 1 {
		return cfg, nil, usagef("--bucket-attempts %d: want 1 or more", o.bucketAttempts)
	}
	objstore.SetPolicy(objstore.Policy{Timeout: o.bucketTimeout, Attempts: o.bucketAttempts})
	// file:// URLs name local paths: they are those paths everywhere.
	for _, p := range []*string{&o.out, &o.deadLetter, &o.failedDir} {
		*p = outdir.LocalPath(*p)
	}
	if d, ok := strings.CutPrefix(o.onSuccess, "move="); ok {
		o.onSuccess = "move=" + outdir.LocalPath(d)
	}
	// A bucket this build cannot open, or a URL with credentials in it,
	// is known before any input is read.
	if err := outdir.CheckLocation(o.out); err != nil {
		return cfg, nil, usagef("-o %v", err)
	}
	var schema *arrowconv.Schema
	var err error
	kv := map[string]string{}
	switch {
	case o.ddl != "" && o.schema != "":
		return cfg, nil, usagef("give --schema or --ddl, not both")
	case o.ddl != "":
		text, rerr := os.ReadFile(o.ddl)
		if rerr != nil {
			return cfg, nil, usagef("--ddl: %w", rerr)
		}
		if schema, err = arrowconv.ParseDDL(string(text)); err != nil {
			return cfg, nil, arrowconv.InFile(o.ddl, err)
		}
		for k, v := range schema.Options {
			switch k {
			case "connector":
			case "format":
				if o.format == "" {
					o.format = v
				}
			case "path":
				if len(paths) == 0 {
					// Relative to the DDL file, as a file kept next to its
					// data expects: the command works from any directory.
					if !filepath.IsAbs(v) && !strings.Contains(v, "://") {
						v = filepath.Join(filepath.Dir(o.ddl), v)
					}
					paths = []string{v}
				}
			case "cdcetl.semantics":
				if o.semantics == "" {
					o.semantics = v
				}
			case "cdcetl.column-case":
				if o.columnCase == "" {
					o.columnCase = v
				}
			case "cdcetl.source-time-zone":
				if o.sourceTZ == "" {
					o.sourceTZ = v
				}
			case "cdcetl.namespace", "cdcetl.table", "cdcetl.schema-version":
				// Written by 'cdcetl inspect': the table the DDL is of
				// (its rows are the only ones kept) and its version.
			default:
				if strings.HasPrefix(k, "cdcetl.") {
					return cfg, nil, usagef("--ddl: unknown WITH key '%s'%s (cdcetl's keys: %s)", k,
						didYouMean(k, decode.DDLKeys), strings.Join(decode.DDLKeys, ", "))
				}
				kv[k] = v
			}
		}
	case o.schema != "":
		if schema, err = arrowconv.ParseColumns(o.schema); err != nil {
			return cfg, nil, err
		}
	}
	routed := schema == nil
	var only *pipeline.TableKey
	if schema != nil {
		// A DDL 'cdcetl inspect' wrote names its table: keep only its rows.
		ns, hasNS := schema.Options["cdcetl.namespace"]
		tbl, hasTbl := schema.Options["cdcetl.table"]
		if hasNS && hasTbl {
			only = &pipeline.TableKey{Namespace: ns, Name: tbl}
		}
	}
	if o.logFormat != "text" && o.logFormat != "json" {
		return cfg, nil, usagef("--log-format %q: want text or json", o.logFormat)
	}
	for _, n := range []struct {
		flag string
		v    int
	}{{"workers", o.workers}, {"batch-rows", o.batchRows}, {"row-group-rows", o.rowGroupRows}, {"max-line-size", o.maxLine}, {"chunk-size", o.chunkSize}} {
		if n.v < 1 {
			return cfg, nil, usagef("--%s %d: want a number of at least 1", n.flag, n.v)
		}
	}
	var f *decode.Format
	switch {
	case o.format != "":
		var ok bool
		if f, ok = decode.Lookup(o.format); !ok {
			return cfg, nil, usagef("unknown format %q%s (%s)", o.format, didYouMean(o.format, decode.FormatNames()), strings.Join(decode.FormatNames(), ", "))
		}
	case !routed:
		return cfg, nil, usagef("--format is required with --schema or --ddl (%s); without a schema each input's format is detected", strings.Join(decode.FormatNames(), ", "))
	}
	for _, opt := range o.options {
		k, v, ok := strings.Cut(opt, "=")
		if !ok {
			return cfg, nil, usagef("--option %q: want KEY=VALUE", opt)
		}
		kv[k] = v
	}
	// The filesystem options of a DDL describe its table (and are unused
	// unless its output is partitioned Parquet); given as flags, they ask
	// for it.
	fsFlag := false
	for _, opt := range o.options {
		k, _, _ := strings.Cut(opt, "=")
		fsFlag = fsFlag || slices.Contains(pipeline.FilesystemKeys, k)
	}
	fsOpts, _, err := pipeline.ParseFilesystemOptions(kv)
	if err != nil {
		return cfg, nil, usageError{err}
	}
	// The formats whose options apply: the one given, or (detected) all.
	formats := []*decode.Format{f}
	if f == nil {
		formats = nil
		for _, n := range decode.FormatNames() {
			ff, _ := decode.Lookup(n)
			formats = append(formats, ff)
		}
	}
	foreignKeys := map[string]bool{}
	for k := range kv {
		if k == "format" {
			continue
		}
		owned := false
		for _, ff := range formats {
			owned = owned || strings.HasPrefix(k, ff.Name+".")
		}
		if !owned {
			foreignKeys[k] = true
		}
	}
	to := o.to
	if to == "" {
		to = pipeline.ToPrint
		if o.out != "" {
			to = pipeline.ToParquet
		}
	}
	var target *decode.Format
	if to != pipeline.ToPrint && to != pipeline.ToParquet && to != pipeline.ToIceberg {
		t, ok := decode.Lookup(to)
		if !ok {
			outs := append([]string{pipeline.ToPrint, pipeline.ToParquet, pipeline.ToIceberg}, decode.FormatNames()...)
			return cfg, nil, usagef("unknown output --to %q%s (%s)", to, didYouMean(to, outs), strings.Join(outs, ", "))
		}
		target = t
	}
	if o.deadLetter != "" {
		// Setting messages aside only makes sense when they are skipped.
		for _, ff := range formats {
			kv[ff.Name+".ignore-parse-errors"] = "true"
		}
	}
	if routed {
		switch o.semantics {
		case "":
			// Inferred schemas hold the producer's types.
			o.semantics = "producer"
		case "flink":
			return cfg, nil, usagef("--semantics flink needs a schema: inferred schemas hold the producer's types and decode under producer semantics (give --schema or --ddl to decode exactly as Flink, or pin tables with --ddl-dir files holding 'cdcetl.semantics' = 'flink')")
		}
	}
	perFormat := map[string]decode.Options{}
	var opts decode.Options
	for _, ff := range formats {
		fo, err := decode.ParseOptions(ff, kv, false)
		if err != nil {
			return cfg, nil, err
		}
		if err := applySemantics(o, &fo); err != nil {
			return cfg, nil, err
		}
		if err := fo.Check(ff); err != nil {
			return cfg, nil, err
		}
		perFormat[ff.Name] = fo
	}
	if f != nil {
		opts = perFormat[f.Name]
	} else if err := applySemantics(o, &opts); err != nil {
		return cfg, nil, err
	}
	var targetOpts decode.Options
	if target != nil {
		// The target's options are validated as Flink validates a sink.
		// With the same format on both sides, schema-include belongs to the
		// decoding side (Flink's encoder never writes it).
		tkv := kv
		if target == f || f == nil {
			tkv = map[string]string{}
			for k, v := range kv {
				if k != f.Name+".schema-include" {
					tkv[k] = v
				}
			}
		} else {
			for k := range kv {
				if strings.HasPrefix(k, target.Name+".") {
					delete(foreignKeys, k)
				}
			}
		}
		if targetOpts, err = decode.ParseOptions(target, tkv, true); err != nil {
			return cfg, nil, err
		}
	}
	// Iceberg table properties of the tables --to iceberg makes.
	var tableProps map[string]string
	for k := range foreignKeys {
		if isTableProperty(k) {
			if to != pipeline.ToIceberg {
				return cfg, nil, usagef("option %s is an Iceberg table property: it applies only with --to iceberg", k)
			}
			if tableProps == nil {
				tableProps = map[string]string{}
			}
			tableProps[k] = kv[k]
			delete(foreignKeys, k)
		}
	}
	if len(foreignKeys) > 0 {
		var keys []string
		for k := range foreignKeys {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if f == nil {
			return cfg, nil, usagef("option %s belongs to no format (keys are written FORMAT.KEY, FORMAT one of %s)", strings.Join(keys, ", "), strings.Join(decode.FormatNames(), ", "))
		}
		return cfg, nil, usagef("option %s does not belong to format %s (keys are written %s.KEY)", strings.Join(keys, ", "), f.Name, f.Name)
	}
	if schema != nil {
		if err := f.CheckSchema(schema); err != nil {
			return cfg, nil, err
		}
	}
	jsonCompression := ""
	if target != nil {
		jsonCompression = o.compression
		if _, err := writer.JSONSuffix(jsonCompression); err != nil {
			return cfg, nil, usagef("--compression: %v", err)
		}
	} else if _, err := writer.Codec(o.compression); err != nil {
		return cfg, nil, usagef("--compression: %v", err)
	}
	if len(paths) == 0 {
		return cfg, nil, usagef("no input PATH given")
	}
	for _, p := range paths {
		if outdir.IsRemote(p) {
			if err := outdir.CheckLocation(p); err != nil {
				return cfg, nil, usagef("input %v", err)
			}
			continue // listed (and checked) when the run starts
		}
		if _, err := os.Stat(p); err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return cfg, nil, usagef("input %s: %v", p, err)
		}
	}
	cfg = pipeline.Config{InputOptions: pipeline.InputOptions{MaxLine: o.maxLine, ChunkSize: o.chunkSize}, DecodingOptions: pipeline.DecodingOptions{Format: f, Schema: schema, Options: opts}, OutputOptions: pipeline.OutputOptions{To: to, OutDir: o.out}, RunOptions: pipeline.RunOptions{Workers: o.workers, BatchRows: o.batchRows, Version: version, Build: buildCommit()}}
	cfg.Parquet.Compression = o.compression
	cfg.Target, cfg.TargetOptions, cfg.JSONCompression = target, targetOpts, jsonCompression
	cfg.Encode = decode.EncodeOptions{MergeUpdates: o.mergeUpdates, Envelope: o.envelope}
	cfg.DeadLetterDir = o.deadLetter
	cfg.Force, cfg.KeepGoing, cfg.OnSuccess, cfg.FailedDir = o.force, o.keepGoing, o.onSuccess, o.failedDir
	cfg.DedupInputs = o.dedupInputs
	shard := o.shard
	if shard == "" {
		shard = os.Getenv("CDCETL_SHARD")
	}
	if cfg.Shard, err = pipeline.ParseShard(shard); err != nil {
		return cfg, nil, usagef("%v", err)
	}
	if o.failedDir != "" {
		cfg.KeepGoing = true
	}
	if f == nil {
		cfg.FormatOptions = perFormat
	}
	cfg.OnlyTable = only
	if u, err := url.Parse(o.catalog); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			return cfg, nil, usagef("--catalog: a password in the URI ends up in shell history and process lists: drop it and set PGPASSWORD, or put it in ~/.pgpass")
		}
	}
	cfg.Catalog, cfg.TableMode, cfg.TableProperties = o.catalog, o.tableMode, tableProps
	cfg.NoLineage = o.noLineage
	cfg.NoMaintain = o.noMaintain
	cfg.Dedup = o.dedup
	if o.asOf != "" {
		a, err := pipeline.ParseAsOf(o.asOf)
		if err != nil {
			return cfg, nil, usageError{err}
		}
		cfg.AsOf = a
	}
	if o.table != "" {
		if !strings.Contains(o.table, ".") {
			return cfg, nil, usagef("--table %q: want NAMESPACE.NAME", o.table)
		}
		ns, name, _ := strings.Cut(o.table, ".")
		cfg.Table = &pipeline.TableKey{Namespace: ns, Name: name}
	}
	cfg.Materialize = o.materialize
	var partitionFields []partition.Field
	if o.partitionBy != "" {
		if partitionFields, err = partition.ParsePartitionBy(o.partitionBy); err != nil {
			return cfg, nil, usagef("--partition-by: %v", err)
		}
	} else if schema != nil && (to == pipeline.ToParquet || to == pipeline.ToIceberg) {
		// A DDL's PARTITIONED BY (a, b): Hive-style identity partitions,
		// as Flink's filesystem connector writes them.
		for _, c := range schema.PartitionedBy {
			partitionFields = append(partitionFields, partition.Field{Transform: "identity", Column: c})
		}
	}
	if fsFlag && (to != pipeline.ToParquet || len(partitionFields) == 0) {
		return cfg, nil, usagef("the filesystem options (%s) apply to partitioned Parquet output: add --partition-by (or PARTITIONED BY in the DDL) with --to parquet; an unpartitioned input has one output, named after it", strings.Join(pipeline.FilesystemKeys[:1], ", ")+", ...")
	}
	cfg.Filesystem = fsOpts
	if len(partitionFields) > 0 {
		cfg.PartitionBy = partitionFields
	}
	for _, t := range []struct {
		flag, expr string
		re         **regexp.Regexp
	}{{"include-table", o.includeTable, &cfg.IncludeTable}, {"exclude-table", o.excludeTable, &cfg.ExcludeTable}} {
		if t.expr == "" {
			continue
		}
		re, err := pipeline.FullMatch(t.expr)
		if err != nil {
			return cfg, nil, usagef("--%s %q: %v (a Go RE2 expression the whole \"namespace.table\" must match, e.g. 'shop\\.(orders|items)')", t.flag, t.expr, err)
		}
		*t.re = re
	}
	if cfg.Hints, err = parseHints(o.primaryKeys, o.columnTypes); err != nil {
		return cfg, nil, err
	}
	if o.ddlDir != "" {
		if st, err := os.Stat(o.ddlDir); err != nil || !st.IsDir() {
			return cfg, nil, usagef("--ddl-dir %s: not a directory (want a directory of <namespace>.<table>.sql files, as 'cdcetl inspect --ddl-out' writes)", o.ddlDir)
		}
		cfg.DDLDir = o.ddlDir
	}
	cfg.Parquet.RowGroupRows = o.rowGroupRows
	cfg.Parquet.PlainStrings = !o.dictionary
	cfg.Parquet.PlainIntegers = !o.delta
	if err := cfg.Validate(); err != nil {
		return cfg, nil, configError(err)
	}
	return cfg, paths, nil
}

// configFlags are the flags of pipeline.Config's fields that no setting
// names (settingFlags spells the others: fieldFlag).
var configFlags = map[string]string{
	"To": "--to", "KeepGoing": "--keep-going", "Table": "--table",
	"Dedup": "--dedup", "PartitionBy": "--partition-by", "NoLineage": "--no-lineage",
	"Hints": "--primary-key and --column-type", "Encode": "--merge-updates and --envelope",
	"Catalog": "--catalog", "TableProperties": "--option (Iceberg table properties)",
}

// fieldFlag is the flag of pipeline.Config's field.
func fieldFlag(field string) (string, bool) {
	if f, ok := configFlags[field]; ok {
		return f, true
	}
	f, ok := settingFlags[setting.Name("Config."+field)]
	return f, ok
}

// settingFlags are the flags of the settings the library's messages
// advise changing (internal/setting).
var settingFlags = map[setting.Name]string{
	setting.Format: "--format", setting.Option: "--option", setting.Semantics: "--semantics",
	setting.ColumnCase: "--column-case", setting.MaxLine: "--max-line-size", setting.Shard: "--shard",
	setting.Force: "--force", setting.DedupInputs: "--dedup-inputs", setting.OnSuccess: "--on-success",
	setting.FailedDir: "--failed", setting.OutDir: "-o", setting.DeadLetter: "--dead-letter",
	setting.Materialize: "--materialize", setting.TableMode: "--table-mode", setting.PrimaryKey: "--primary-key",
	setting.ColumnType: "--column-type", setting.DDLDir: "--ddl-dir", setting.NoMaintain: "--no-maintain",
	setting.ShowFiles: "--files", setting.BucketTimeout: "--bucket-timeout", setting.BucketTries: "--bucket-attempts",
}

// The library's messages name the flags (before anything runs: its
// package-level errors spell settings when they are read).
func init() {
	setting.Spell = func(n setting.Name) string {
		if f, ok := settingFlags[n]; ok {
			return f
		}
		return string(n)
	}
}

// configError speaks of a pipeline.ConfigError's field as the flag that
// sets it: a usage error.
func configError(err error) error {
	var ce *pipeline.ConfigError
	if !errors.As(err, &ce) {
		return err
	}
	flag, ok := fieldFlag(ce.Field)
	if !ok {
		flag = ce.Field
	}
	return usagef("%s: %s", flag, ce.Reason)
}

// applySemantics sets --semantics, --column-case and --source-time-zone
// on one format's options.
func applySemantics(o *convertOpts, opts *decode.Options) error {
	if err := opts.SetSemantics(o.semantics, o.columnCase, o.sourceTZ); err != nil {
		return usagef("--%v", err) // the settings' keys are the flags' names
	}
	return nil
}

// report is what --report writes: the truth about one run.
type report struct {
	// Status is "ok", "partial" (some inputs failed, the others were
	// converted), "failed" or "interrupted".
	Status          string    `json:"status"`
	Version         string    `json:"version"`
	Build           string    `json:"build,omitempty"`
	Started         time.Time `json:"started"`
	Finished        time.Time `json:"finished"`
	DurationSeconds float64   `json:"duration_seconds"`
	OutputDir       string    `json:"output_dir,omitempty"`
	Error           string    `json:"error,omitempty"`
	pipeline.Stats
	// PerFile shadows Stats.PerFile: always a list, [] when no input.
	PerFile []pipeline.FileStats `json:"per_file"`
}

func newReport(st pipeline.Stats, runErr error, started time.Time, cfg pipeline.Config) report {
	now := time.Now()
	rep := report{Status: "ok", Version: version, Build: cfg.Build, Started: started.UTC(), Finished: now.UTC(),
		DurationSeconds: now.Sub(started).Seconds(), OutputDir: cfg.OutDir, Stats: st, PerFile: st.PerFile}
	if rep.PerFile == nil {
		rep.PerFile = []pipeline.FileStats{}
	}
	switch {
	case runErr == nil:
	case errors.Is(runErr, context.Canceled):
		rep.Status = "interrupted"
	case errors.Is(runErr, pipeline.ErrPartial), errors.Is(runErr, pipeline.ErrNotDisposed):
		rep.Status = "partial"
	default:
		rep.Status = "failed"
	}
	if runErr != nil {
		rep.Error = runErr.Error()
	}
	return rep
}

// parseHints reads --primary-key NS.TABLE=COL[,COL] and --column-type
// NS.TABLE.COL=TYPE into hints, one per flag.
func parseHints(keys, types []string) ([]infer.Hint, error) {
	var hints []infer.Hint
	pattern := func(flag, arg, expr string) (*regexp.Regexp, error) {
		re, err := pipeline.FullMatch(expr)
		if err != nil || expr == "" {
			return nil, usagef("--%s %q: %q is not a Go RE2 expression of \"namespace.table\" (%v)", flag, arg, expr, err)
		}
		return re, nil
	}
	for _, a := range keys {
		tbl, cols, ok := strings.Cut(a, "=")
		if !ok || strings.TrimSpace(cols) == "" {
			return nil, usagef("--primary-key %q: want NS.TABLE=COL[,COL], e.g. shop.orders=id", a)
		}
		re, err := pattern("primary-key", a, tbl)
		if err != nil {
			return nil, err
		}
		var pk []string
		for _, c := range strings.Split(cols, ",") {
			if c = strings.TrimSpace(c); c != "" {
				pk = append(pk, c)
			}
		}
		hints = append(hints, infer.Hint{Pattern: re, PrimaryKey: pk})
	}
	for _, a := range types {
		lhs, typ, ok := strings.Cut(a, "=")
		i := strings.LastIndexByte(lhs, '.')
		if !ok || i <= 0 || i == len(lhs)-1 || strings.TrimSpace(typ) == "" {
			return nil, usagef("--column-type %q: want NS.TABLE.COL=TYPE, e.g. shop.orders.amount=DECIMAL(12, 2)", a)
		}
		re, err := pattern("column-type", a, lhs[:i])
		if err != nil {
			return nil, err
		}
		col := lhs[i+1:]
		s, err := arrowconv.ParseColumns("`" + strings.ReplaceAll(col, "`", "``") + "` " + typ)
		if err != nil || len(s.Columns) != 1 {
			return nil, usagef("--column-type %q: %v", a, err)
		}
		hints = append(hints, infer.Hint{Pattern: re, Types: map[string]arrowconv.Type{col: s.Columns[0].Type}})
	}
	return hints, nil
}

// disposals counts the inputs a run moved and deleted.
func disposals(st pipeline.Stats) (moved, deleted int) {
	for _, f := range st.PerFile {
		switch f.Disposed {
		case pipeline.DisposedMoved:
			moved++
		case pipeline.DisposedDeleted:
			deleted++
		}
	}
	return moved, deleted
}

// checkWritable checks that a file can be made at path (its directory
// exists and takes files), leaving nothing behind.
func checkWritable(path string) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("its directory: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// writeReport writes the report atomically (temp file, sync, rename).
func writeReport(path string, rep report) error {
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("--report %s: %w", path, err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(append(data, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("--report %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("--report %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--report %s: %w", path, err)
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return fmt.Errorf("--report %s: %w", path, err)
	}
	return os.Rename(f.Name(), path)
}

// isTableProperty reports whether an --option key is an Iceberg table
// property (for the tables --to iceberg makes) rather than a format's.
func isTableProperty(k string) bool {
	return k == "format-version" || strings.HasPrefix(k, "write.") || strings.HasPrefix(k, "history.") || strings.HasPrefix(k, "commit.") || strings.HasPrefix(k, "cdcetl.maintain.")
}
