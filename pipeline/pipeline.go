// Package pipeline is cdcetl's library façade: it expands the inputs, cuts
// them into chunks of whole lines, decodes the chunks on a pool of workers
// into Arrow record batches, and hands the batches, back in input order, to
// writers — one output file per input file, or one ordered stream (stdout)
// for all of them. With an output directory it keeps a journal, so reruns
// are incremental, and writes dead letters next to the outputs.
//
// Data errors (a message that cannot be decoded) are the file's result:
// with ignore-parse-errors they are counted and dead-lettered; otherwise the
// run stops with a *decode.Error naming file and line (or, with KeepGoing,
// the file is journaled as failed). System errors always stop the run.
package pipeline

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/infer"
	"github.com/cdcetl/cdcetl/internal/outdir"
	"github.com/cdcetl/cdcetl/lake"
	"github.com/cdcetl/cdcetl/partition"
	"github.com/cdcetl/cdcetl/reader"
	"github.com/cdcetl/cdcetl/writer"
)

// Output kinds besides the format names.
const (
	ToPrint   = "print"
	ToParquet = "parquet"
)

// Config is one conversion.
type Config struct {
	// Format is the input format; nil means each input's is detected from
	// its first messages (decode.Detect).
	Format *decode.Format
	// Schema is the one schema of every row; nil means a routed
	// conversion: each source table gets outputs of its own under
	// OutDir/<namespace>/<table>/, with an inferred schema (routed.go).
	Schema  *arrowconv.Schema
	Options decode.Options
	// FormatOptions, when Format is nil, holds each format's options by
	// name (keys written FORMAT.KEY); a detected format without an entry
	// decodes with Options.
	FormatOptions map[string]decode.Options
	// IncludeTable and ExcludeTable, when set, keep only the messages whose
	// "namespace.table" the one fully matches and the other does not.
	IncludeTable, ExcludeTable *regexp.Regexp
	// OnlyTable, when set, keeps only the messages of that one table (a
	// DDL naming its table with 'cdcetl.namespace' and 'cdcetl.table').
	OnlyTable *TableKey
	// Hints, without a schema, say the primary key and column types of the
	// tables their patterns match, over what the messages say.
	Hints []infer.Hint

	// dirs decides the tables' directories in OutDir (set by RunFiles).
	dirs *outdir.TableDirs
	// NoLineage leaves the lineage columns (_file, _line, _source_pos) out
	// of inferred tables.
	NoLineage bool
	// DDLDir holds CREATE TABLE files ("<namespace>.<table>.sql") that pin
	// those tables' schemas in a routed conversion.
	DDLDir string
	// To is "print", "parquet", "iceberg", or a format name for
	// re-encoding.
	To string
	// Catalog is Iceberg output's catalog ("" or sqlite:PATH: the
	// embedded one in OutDir; rest+https://...: a REST catalog).
	Catalog string
	// Table names the one table of a conversion with a schema, for
	// Iceberg output.
	Table *TableKey
	// Materialize, with Parquet output, keeps each table's current state
	// (the last image per primary key) in OutDir/_current/<ns>/<table>/.
	Materialize bool
	// Dedup, with Materialize, drops exact duplicate events (same key,
	// source position and row kind) from the snapshots.
	Dedup bool
	// MaterializeMem bounds the memory of a snapshot's sorted runs
	// (default 64 MiB).
	MaterializeMem int64
	// PartitionBy is the partition spec (none: unpartitioned): Iceberg
	// tables' spec, or Hive-style directories for Parquet.
	PartitionBy []partition.Field
	// Filesystem are Flink's filesystem-connector options for Parquet.
	Filesystem FilesystemOptions
	// Shard, when set (Count > 1), converts only the inputs of that shard
	// (shard.go): n processes, one per shard, share one output directory,
	// journal file by journal file, and together write what one run
	// writes.
	Shard outdir.Shard
	// TableMode is Iceberg output's: "changelog" (default: every row
	// appended) or "upsert" (the current state per primary key).
	TableMode string
	// TableProperties are Iceberg properties of the tables Iceberg output
	// makes (--option format-version=2, write.target-file-size-bytes=N,
	// ...), over cdcetl's defaults.
	TableProperties map[string]string
	// NoMaintain: upsert tables are not compacted after the run's
	// commits, whatever their thresholds (lake.NeedsMaintenance).
	NoMaintain bool
	// OutDir receives one output per input file; empty means Stdout
	// (print and re-encoding only).
	OutDir string
	Stdout io.Writer
	// Batches, when set, receives the batches of all files in order instead
	// of a writer (library use). It must not keep rec after returning
	// unless it calls Retain.
	Batches func(ctx context.Context, rec arrow.RecordBatch) error
	// Workers is the number of files converted at once (default NumCPU).
	Workers int
	// BatchRows is the number of rows per record batch (default 16384).
	BatchRows int
	// MaxLine is the longest message accepted (default reader.DefaultMaxLine).
	MaxLine int
	// ChunkSize is the size of the blocks files are cut into for parallel
	// decoding (default reader.DefaultChunkSize).
	ChunkSize int
	// Parquet holds Parquet writer settings.
	Parquet writer.ParquetOptions
	// Target is the format re-encoded to when To names a format; its
	// options (TargetOptions) and cdcetl's extensions (Encode) apply.
	Target        *decode.Format
	TargetOptions decode.Options
	Encode        decode.EncodeOptions
	// Compression of re-encoded files: none, gzip or zstd.
	JSONCompression string
	// DeadLetterDir receives, per input, a JSONL file (<input>.jsonl) of
	// the messages dropped and values nulled under ignore-parse-errors,
	// written with the input's outputs. Default with OutDir:
	// OutDir/_dead_letters.
	DeadLetterDir string
	// Force converts every input again, whatever the journal says. (With
	// OutDir, a journal there makes reruns incremental.)
	Force bool
	// DedupInputs skips an input that holds exactly the bytes of another
	// input converted into OutDir (a file delivered twice under two
	// names); it is journaled as a duplicate, with no outputs of its own.
	// Without it such an input is converted, with a warning.
	DedupInputs bool
	// KeepGoing records a file whose messages cannot be decoded as failed
	// and goes on with the others; Run then returns ErrPartial.
	KeepGoing bool
	// OnSuccess is what happens to an input once its outputs and journal
	// entry are written: "keep" (default), "delete" or "move=DIR".
	OnSuccess string
	// FailedDir, when set with KeepGoing, receives failed inputs, each with
	// a "<name>.err" file holding the error.
	FailedDir string
	// Progress, when set, is updated as chunks are decoded.
	Progress *Progress
	// Mem allocates Arrow memory (default memory.DefaultAllocator).
	Mem memory.Allocator
	// Version is recorded in output files; Build, when known, is the
	// commit it was built from.
	Version, Build string
}

// A FileStats' Status is StatusOK, StatusFailed or "skipped"; its
// Disposed, what OnSuccess (or FailedDir) did with the input.
const (
	StatusOK        = outdir.StatusOK
	StatusFailed    = outdir.StatusFailed
	DisposedMoved   = outdir.DisposedMoved
	DisposedDeleted = outdir.DisposedDeleted
)

// ErrConversionChanged is returned, before any input is read, when the
// output directory's journal was written by a conversion with other
// settings: convert again with Force, or use another output directory.
var ErrConversionChanged = outdir.ErrConversionChanged

// TableKey names a source table: namespace and name.
type TableKey = infer.Key

// OptionsFor returns the options inputs of format f decode with.
func (c *Config) OptionsFor(f *decode.Format) decode.Options {
	if c.Format == nil && f != nil {
		if o, ok := c.FormatOptions[f.Name]; ok {
			return o
		}
	}
	return c.Options
}

// routedPageBytes is the page size of a routed conversion's writers.
const routedPageBytes = 128 << 10

// routedHoldRows: the writers of an input of several tables hold batches
// of fewer rows and write them together (writer.ParquetOptions.HoldRows).
// A chunk gives each of 20 tables some 150 rows; held to 4096, 20 tables
// at 256 MiB went 0.45-0.49 -> 0.52-0.61 of one explicit schema's speed
// (paired rounds; 1024 and 2048 within the noise of 4096, 16384 no
// better). One table's batches (a chunk's rows) are not held.
const routedHoldRows = 4096

// Conversion describes what the outputs of cfg are made with: the format,
// the schema, the format's options, and the output and its encoding.
// Settings that only decide what happens to bad messages or to inputs
// (ignore-parse-errors, dead letters, --keep-going, --on-success) or how
// the work is spread (workers, batch and row-group sizes) are not part of
// it: they never change a completed output's columns or values.
func (c *Config) Conversion() outdir.Conversion {
	m := map[string]string{"to": c.To}
	if c.Format != nil {
		m["format"] = c.Format.Name
		m["semantics"] = c.Options.Semantics()
		m["column-case"] = map[bool]string{false: "sensitive", true: "insensitive"}[c.Options.CaseInsensitive]
		if c.Options.Producer {
			m["source-time-zone"] = c.Options.TZName()
		}
		for k, v := range c.Options.Settings() {
			if k != "ignore-parse-errors" {
				m["option "+c.Format.Name+"."+k] = v
			}
		}
	}
	if c.Schema != nil {
		m["schema"] = c.Schema.ColumnList()
	} else {
		m["schema"] = "(inferred per table)"
		if c.NoLineage {
			m["lineage"] = "false"
		}
		if c.DDLDir != "" {
			m["ddl-dir"] = c.DDLDir
		}
	}
	if c.Format == nil {
		m["format"] = "(detected per input)"
		m["semantics"] = c.Options.Semantics()
		m["column-case"] = map[bool]string{false: "sensitive", true: "insensitive"}[c.Options.CaseInsensitive]
		if c.Options.Producer {
			m["source-time-zone"] = c.Options.TZName()
		}
		for name, o := range c.FormatOptions {
			for k, v := range o.Settings() {
				if k != "ignore-parse-errors" {
					m["option "+name+"."+k] = v
				}
			}
		}
	}
	if c.OnlyTable != nil {
		m["table"] = c.OnlyTable.Namespace + "." + c.OnlyTable.Name
	}
	if c.IncludeTable != nil {
		m["include-table"] = c.IncludeTable.String()
	}
	for i, h := range c.Hints {
		m[fmt.Sprintf("hint %d", i+1)] = h.String()
	}
	if c.ExcludeTable != nil {
		m["exclude-table"] = c.ExcludeTable.String()
	}
	switch {
	case c.To == ToParquet || c.To == ToIceberg:
		if c.To == ToIceberg {
			if k := lakeTableKey(c); k != nil && c.Schema != nil {
				m["iceberg-table"] = k.Namespace + "." + k.Name
			}
			m["catalog"] = c.Catalog
			m["table-mode"] = c.TableMode
		}
		if len(c.PartitionBy) > 0 {
			var ps []string
			for _, f := range c.PartitionBy {
				ps = append(ps, f.String())
			}
			m["partition-by"] = strings.Join(ps, ", ")
		}
		if fs := c.Filesystem; c.hive() {
			if fs.RollBytes > 0 {
				m["sink.rolling-policy.file-size"] = strconv.FormatInt(fs.RollBytes, 10)
			}
			if fs.DefaultPartitionName != "" {
				m["partition.default-name"] = fs.DefaultPartitionName
			}
		}
		comp := strings.ToLower(c.Parquet.Compression)
		if comp == "" {
			comp = "snappy"
		}
		m["compression"] = comp
		m["parquet-dictionary"] = strconv.FormatBool(!c.Parquet.PlainStrings)
		m["parquet-delta"] = strconv.FormatBool(!c.Parquet.PlainIntegers)
	case c.Target != nil:
		for k, v := range c.TargetOptions.Settings() {
			if k != "ignore-parse-errors" {
				m["target option "+c.Target.Name+"."+k] = v
			}
		}
		m["merge-updates"] = strconv.FormatBool(c.Encode.MergeUpdates)
		m["envelope"] = strconv.FormatBool(c.Encode.Envelope)
		comp := strings.ToLower(c.JSONCompression)
		if comp == "" {
			comp = "none"
		}
		m["compression"] = comp
	}
	return outdir.NewConversion(m)
}

// createdBy is the Parquet footer's created_by, in the convention's form
// "<app> version <version> (build <hash>)", which readers parse to decide
// on workarounds: a build part always, "unknown" when the binary does not
// know its commit (built with -buildvcs=false or outside a checkout).
func (c *Config) createdBy() string {
	version, build := c.Version, c.Build
	if version == "" {
		version = "0.0.0"
	}
	if build == "" {
		build = "unknown"
	}
	return "cdcetl version " + version + " (build " + build + ")"
}

// Stats counts what a run did. Lines = Messages + Blank + DDL + Filtered +
// Dropped + Control, where Messages are the lines that produced their rows.
type Stats struct {
	Files    int   `json:"files"`
	Lines    int64 `json:"lines"`
	Messages int64 `json:"messages"`
	Blank    int64 `json:"blank"`
	DDL      int64 `json:"ddl_skipped"`
	Filtered int64 `json:"filtered"`
	Dropped  int64 `json:"dropped"`
	// Control counts, under producer semantics, the messages that carry no
	// rows (DDL, transaction markers, heartbeats, truncates).
	Control int64 `json:"control"`
	// ZeroDates counts MySQL zero dates made NULL (producer semantics).
	ZeroDates int64 `json:"zero_dates,omitempty"`
	// Truncates lists the truncates met (producer semantics), in input
	// order: a lake loader must empty the table at that point.
	Truncates []Truncate `json:"truncates,omitempty"`
	// Rows counts rows by kind (index = arrowconv.RowKind).
	Rows  RowCounts `json:"rows"`
	Bytes int64     `json:"bytes"`
	// Nulled counts values that became NULL under ignore-parse-errors (in
	// messages that were otherwise decoded).
	Nulled int64 `json:"values_nulled"`
	// DeadLetters counts the dead-letter entries written.
	DeadLetters int64 `json:"dead_letters"`
	// Skipped counts inputs the journal says are already converted;
	// Failed counts inputs that failed (KeepGoing).
	Skipped int `json:"skipped_inputs"`
	Failed  int `json:"failed_inputs"`
	// OtherShards counts the inputs found that belong to other shards
	// (--shard): Files + Skipped + Failed + OtherShards are the inputs
	// found.
	OtherShards int `json:"other_shard_inputs,omitempty"`
	// Warnings are things that look wrong but did not stop the run (a
	// column no message has, canal messages of several tables).
	Warnings []string `json:"warnings,omitempty"`
	// Committed counts, for Iceberg output, an input's rows of a table
	// that became part of the table; Held those a table held already (a
	// rerun commits nothing twice).
	Committed int `json:"iceberg_committed,omitempty"`
	Held      int `json:"iceberg_already_held,omitempty"`
	// Maintained are the tables the run maintained after its commits
	// (their files passed the thresholds).
	Maintained []lake.MaintainResult `json:"maintained,omitempty"`
	// Materialized are the current-state snapshots made (--materialize).
	Materialized []MaterializedTable `json:"materialized,omitempty"`
	// SchemaChanges are the drifts of inferred schemas (routed): added
	// columns, widened types, and incompatible changes with the schema
	// version they started.
	SchemaChanges []SchemaChange `json:"schema_changes,omitempty"`
	// PerFile holds each input's own counts, in input order.
	PerFile []FileStats `json:"per_file,omitempty"`
}

// SchemaChange is one drift of an inferred schema, and where it was seen.
type SchemaChange struct {
	Table   string `json:"table"`
	File    string `json:"file"`
	Line    int    `json:"line"`
	Change  string `json:"change"`
	Version int    `json:"version"`
}

// TableStats is what one input gave one source table (routed).
type TableStats struct {
	Table   string    `json:"table"`
	Dir     string    `json:"dir"` // below the output directory
	Outputs []string  `json:"outputs,omitempty"`
	Rows    RowCounts `json:"rows"`
}

// Truncate is a truncate message: the table it empties, and where it is.
type Truncate struct {
	Table    string `json:"table"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Position string `json:"source_position,omitempty"`
}

// RowCounts counts rows by kind; it marshals as {"+I": n, "-U": n, ...}.
type RowCounts [4]int64

// MarshalJSON implements json.Marshaler.
func (c RowCounts) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, `{"+I":%d,"-U":%d,"+U":%d,"-D":%d}`, c[0], c[1], c[2], c[3]), nil
}

// UnmarshalJSON implements json.Unmarshaler (the journal reads it back).
func (c *RowCounts) UnmarshalJSON(b []byte) error {
	var m map[string]int64
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*c = RowCounts{m["+I"], m["-U"], m["+U"], m["-D"]}
	return nil
}

// FileStats is one input's result.
type FileStats struct {
	idx  int
	Path string `json:"path"`
	// Status is "ok", "failed" (with Error), or "skipped": the journal
	// says the input was already converted (its Outputs are that
	// conversion's).
	Status string `json:"status"`
	// Outputs are the input's files, relative to the output directory.
	Outputs []string `json:"outputs,omitempty"`
	Error   string   `json:"error,omitempty"`
	// Disposed says what became of the input ("moved" to MovedTo, or
	// "deleted"); empty when it stays where it was.
	Disposed string `json:"disposed,omitempty"`
	MovedTo  string `json:"moved_to,omitempty"`
	// Deferred says why --on-success (or --failed) left the input where
	// it is for now: it is still open for writing, or changed after it
	// was read. A later run (or the watcher, after its quiet period)
	// converts it again if it changed, and disposes of it.
	Deferred string `json:"disposition_deferred,omitempty"`
	// Tables, in a routed conversion, is what each source table got.
	Tables []TableStats `json:"tables,omitempty"`
	Stats
}

// Progress counts work done, for a progress display; safe to read while
// Run works.
type Progress struct {
	Bytes atomic.Int64 // input bytes decoded (decompressed)
	Rows  atomic.Int64
	Total atomic.Int64 // input bytes to do (file sizes, known at start)
}

// SetupError is an error met before any input was read (the inputs cannot
// be listed, the output directory cannot be used): nothing was converted.
type SetupError struct{ Err error }

func (e *SetupError) Error() string { return e.Err.Error() }
func (e *SetupError) Unwrap() error { return e.Err }

// setup marks err, if any, as a SetupError.
func setup(err error) error {
	if err == nil {
		return nil
	}
	return &SetupError{err}
}

// ErrPartial is returned (joined with each file's error) when KeepGoing let
// some inputs fail.
var ErrPartial = errors.New("some inputs failed")

// Add adds o's counts (not its PerFile) to s.
func (s *Stats) Add(o Stats) { s.add(o) }

func (s *Stats) add(o Stats) {
	s.Files += o.Files
	s.Lines += o.Lines
	s.Messages += o.Messages
	s.Blank += o.Blank
	s.DDL += o.DDL
	s.Filtered += o.Filtered
	s.Dropped += o.Dropped
	s.Control += o.Control
	s.ZeroDates += o.ZeroDates
	s.Truncates = append(s.Truncates, o.Truncates...)
	s.Bytes += o.Bytes
	s.Nulled += o.Nulled
	s.DeadLetters += o.DeadLetters
	s.Skipped += o.Skipped
	s.Failed += o.Failed
	s.OtherShards += o.OtherShards
	s.Committed += o.Committed
	s.Held += o.Held
	s.Warnings = append(s.Warnings, o.Warnings...)
	s.SchemaChanges = append(s.SchemaChanges, o.SchemaChanges...)
	for i := range s.Rows {
		s.Rows[i] += o.Rows[i]
	}
}

// TotalRows is the number of rows of all kinds.
func (s Stats) TotalRows() int64 { return s.Rows[0] + s.Rows[1] + s.Rows[2] + s.Rows[3] }

func (c *Config) defaults() {
	if c.Workers <= 0 {
		c.Workers = runtime.NumCPU()
	}
	if c.BatchRows <= 0 {
		c.BatchRows = 16384
	}
	if c.Parquet.Concurrency <= 0 {
		c.Parquet.Concurrency = c.Workers // a file's writer encodes columns on as many cores
	}
	if c.Mem == nil {
		c.Mem = arrowconv.NewPool()
	}
	if c.Stdout == nil {
		c.Stdout = os.Stdout
	}
	if c.To == "" && c.Target == nil {
		// As the command line: print without an output directory,
		// Parquet with one (a re-encoding names its Target).
		c.To = ToPrint
		if c.OutDir != "" {
			c.To = ToParquet
		}
	}
}

// Run converts every file under paths.
//
// Files are cut into chunks of whole lines (reader.Chunks); a pool of
// Workers goroutines decodes chunks from all files into record batches; for
// each file one goroutine puts the batches back in input order and writes
// them, so writing overlaps decoding. A bounded number of chunks is in
// flight, which keeps memory flat whatever the input size.
//
// The output, dead-letter, failed and done directories are never read as
// inputs, even when they lie inside an input directory.
func Run(ctx context.Context, cfg Config, paths []string) (Stats, error) {
	if err := cfg.Validate(); err != nil {
		return Stats{}, setup(err)
	}
	cfg.OutDir = outdir.LocalPath(cfg.OutDir)
	files, err := outdir.Find(ctx, paths, cfg.OwnDirs())
	if err != nil {
		return Stats{}, setup(err)
	}
	if outdir.IsRemote(cfg.OutDir) {
		return runToBucket(ctx, cfg, files)
	}
	return RunFiles(ctx, cfg, files)
}

// OwnDirs are the directories a run writes to (outputs, dead letters,
// failed and done inputs), which are never inputs.
func (c *Config) OwnDirs() []string {
	dirs := []string{c.OutDir, c.DeadLetterDir, c.FailedDir}
	if d, ok := strings.CutPrefix(c.OnSuccess, "move="); ok {
		dirs = append(dirs, d)
	}
	return slices.DeleteFunc(dirs, func(d string) bool { return d == "" })
}

// RunFiles is Run for inputs already found (a watcher's, say). With an
// output directory, inputs the journal there says are converted are
// skipped (unless Force), and each converted input is journaled once its
// outputs are in place.
func RunFiles(ctx context.Context, cfg Config, files []reader.File) (_ Stats, err error) {
	if err := cfg.Validate(); err != nil {
		return Stats{}, setup(err)
	}
	if outdir.IsRemote(cfg.OutDir) {
		return Stats{}, setup(&ConfigError{Field: "OutDir", Reason: "an output in a bucket is written by Run (RunFiles works in a directory): call Run, or give a local OutDir"})
	}
	return runFiles(ctx, cfg, files, outdir.Local(cfg.OutDir))
}

// within reports whether path lies inside dir.
func within(dir, path string) bool {
	if dir == "" {
		return false
	}
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// funcWriter adapts Config.Batches to a writer.
type funcWriter func(ctx context.Context, rec arrow.RecordBatch) error

func (f funcWriter) Write(ctx context.Context, rec arrow.RecordBatch) error { return f(ctx, rec) }
func (f funcWriter) Close() error                                           { return nil }
func (f funcWriter) Abort() error                                           { return nil }

func newStreamWriter(cfg *Config) (writer.Writer, error) {
	if cfg.Batches != nil {
		return funcWriter(cfg.Batches), nil
	}
	if cfg.To == ToPrint {
		return writer.NewPrint(cfg.Stdout, cfg.Schema.ArrowSchema()), nil
	}
	if cfg.Target != nil {
		enc, err := decode.NewEncoder(cfg.Target, cfg.Schema, cfg.TargetOptions, cfg.Encode)
		if err != nil {
			return nil, err
		}
		return writer.NewCDCJSONStream(bufio.NewWriterSize(cfg.Stdout, 1<<16), enc), nil
	}
	return nil, fmt.Errorf("pipeline: unsupported output %q", cfg.To)
}

// positionColumns are the source-position columns of s: one distinct
// value per change, so they skip the dictionary.
func positionColumns(s *arrowconv.Schema) []string {
	var out []string
	for _, c := range s.Columns {
		if c.MetadataKey == decode.SourcePositionKey {
			out = append(out, c.Name)
		}
	}
	return out
}

// newFileWriter makes the output of one input under its stem in tableDir
// (both relative to OutDir); it also returns the output's path.
//
// Parquet outputs record their source, cdcetl's version, the format and,
// when the rows are one source table's, its namespace and name.
func (r *run) newFileWriter(fr *fileRun, tableDir, stem string, schema *arrowconv.Schema, format *decode.Format, table *TableKey) (writer.Writer, string, error) {
	cfg := r.cfg
	f := fr.file
	rel, _, err := r.outputNames(filepath.Join(tableDir, stem))
	if err != nil {
		return nil, "", err
	}
	switch {
	case cfg.To == ToParquet:
		opts := cfg.Parquet
		opts.Metadata = map[string]string{
			"cdcetl.source":  f.Path,
			"cdcetl.version": cfg.Version,
		}
		if format != nil {
			opts.Metadata["cdcetl.format"] = format.Name
		}
		if table != nil {
			opts.Metadata["cdcetl.namespace"], opts.Metadata["cdcetl.table"] = table.Namespace, table.Name
		}
		if cfg.Schema == nil && opts.PageBytes == 0 {
			// A writer per source table: each column buffers a page, so
			// pages are smaller than one writer would make them.
			opts.PageBytes = routedPageBytes
		}
		if table != nil && len(fr.tables) > 1 && opts.HoldRows == 0 {
			opts.HoldRows = routedHoldRows
		}
		opts.PlainColumns = positionColumns(schema)
		opts.CreatedBy = cfg.createdBy()
		if cfg.hive() {
			h, err := r.newHiveWriter(tableDir, stem, schema, opts)
			if err != nil {
				return nil, "", err
			}
			if fr.hive == nil {
				fr.hive = map[string]*hiveOut{}
			}
			fr.hive[rel] = h
			return h, rel, nil
		}
		w, err := writer.NewParquet(filepath.Join(cfg.OutDir, rel), schema, opts)
		return w, rel, err
	case cfg.To == ToPrint:
		return nil, "", errors.New("print output goes to stdout; drop -o")
	case cfg.Target != nil:
		enc, err := decode.NewEncoder(cfg.Target, schema, cfg.TargetOptions, cfg.Encode)
		if err != nil {
			return nil, "", err
		}
		w, err := writer.NewCDCJSONFile(filepath.Join(cfg.OutDir, rel), enc, cfg.JSONCompression)
		return w, rel, err
	}
	return nil, "", fmt.Errorf("unsupported output %q", cfg.To)
}
