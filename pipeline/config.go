package pipeline

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/infer"
	"github.com/cdcetl/cdcetl/internal/outdir"
	"github.com/cdcetl/cdcetl/partition"
	"github.com/cdcetl/cdcetl/writer"
)

// Config is one conversion, its settings grouped by what they decide:
// the inputs, the decoding, the output, Iceberg tables, and the run. The
// groups are embedded, so cfg.OutDir reads as before.
type Config struct {
	InputOptions
	DecodingOptions
	OutputOptions
	LakeOptions
	RunOptions

	// dirs decides the tables' directories in OutDir (set by RunFiles).
	dirs *outdir.TableDirs
}

// InputOptions say which inputs a run converts and what becomes of them.
type InputOptions struct {
	// IncludeTable and ExcludeTable, when set, keep only the messages whose
	// "namespace.table" the one fully matches and the other does not.
	IncludeTable, ExcludeTable *regexp.Regexp
	// OnlyTable, when set, keeps only the messages of that one table (a
	// DDL naming its table with 'cdcetl.namespace' and 'cdcetl.table').
	OnlyTable *TableKey
	// Shard, when set (Count > 1), converts only the inputs of that shard
	// (shard.go): n processes, one per shard, share one output directory,
	// journal file by journal file, and together write what one run
	// writes.
	Shard outdir.Shard
	// MaxLine is the longest message accepted (default reader.DefaultMaxLine).
	MaxLine int
	// AsOf, when set, leaves out the messages after a point of event time
	// or source position: with Materialize, or an upsert table, each key
	// is as it was at that point.
	AsOf *AsOf
	// ChunkSize is the size of the blocks files are cut into for parallel
	// decoding (default reader.DefaultChunkSize).
	ChunkSize int
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
}

// DecodingOptions say how messages become rows: the format, the schema (or none: routed, inferred), the options.
type DecodingOptions struct {
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
	// Hints, without a schema, say the primary key and column types of the
	// tables their patterns match, over what the messages say.
	Hints []infer.Hint
	// NoLineage leaves the lineage columns (_file, _line, _source_pos) out
	// of inferred tables.
	NoLineage bool
	// DDLDir holds CREATE TABLE files ("<namespace>.<table>.sql") that pin
	// those tables' schemas in a routed conversion.
	DDLDir string
}

// OutputOptions say where rows go and in what form.
type OutputOptions struct {
	// To is "print", "parquet", "iceberg", or a format name for
	// re-encoding.
	To string
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
	// OutDir receives one output per input file; empty means Stdout
	// (print and re-encoding only).
	OutDir string
	Stdout io.Writer
	// Batches, when set, receives the batches of all files in order instead
	// of a writer (library use). It must not keep rec after returning
	// unless it calls Retain.
	Batches func(ctx context.Context, rec arrow.RecordBatch) error
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
}

// LakeOptions are Iceberg output's.
type LakeOptions struct {
	// Catalog is Iceberg output's catalog ("" or sqlite:PATH: the
	// embedded one in OutDir; rest+https://...: a REST catalog).
	Catalog string
	// Table names the one table of a conversion with a schema, for
	// Iceberg output.
	Table *TableKey
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
}

// RunOptions say how the work is spread and what it records about itself.
type RunOptions struct {
	// Workers is the number of files converted at once (default NumCPU).
	Workers int
	// BatchRows is the number of rows per record batch (default 16384).
	BatchRows int
	// Progress, when set, is updated as chunks are decoded.
	Progress *Progress
	// Mem allocates Arrow memory (default memory.DefaultAllocator).
	Mem memory.Allocator
	// Version is recorded in output files; Build, when known, is the
	// commit it was built from.
	Version, Build string
}

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
	if c.AsOf != nil {
		m["as-of"] = c.AsOf.String()
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

// OwnDirs are the directories a run writes to (outputs, dead letters,
// failed and done inputs), which are never inputs.
func (c *Config) OwnDirs() []string {
	dirs := append([]string{c.OutDir, c.DeadLetterDir}, c.moveDirs()...)
	return slices.DeleteFunc(dirs, func(d string) bool { return d == "" })
}

// moveDirs are where inputs go once converted (OnSuccess move=DIR) or
// failed (FailedDir).
func (c *Config) moveDirs() []string {
	var dirs []string
	if c.FailedDir != "" {
		dirs = append(dirs, c.FailedDir)
	}
	if d, ok := strings.CutPrefix(c.OnSuccess, "move="); ok {
		dirs = append(dirs, d)
	}
	return dirs
}

// Output kinds besides the format names.
const (
	ToPrint   = "print"
	ToParquet = "parquet"
	ToIceberg = "iceberg"
)

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

// hive reports whether Parquet outputs are partitioned.
func (c *Config) hive() bool { return c.To == ToParquet && len(c.PartitionBy) > 0 }

// lakeTableKey is the one table of a conversion with a schema.
func lakeTableKey(cfg *Config) *TableKey {
	switch {
	case cfg.Table != nil:
		return cfg.Table
	case cfg.OnlyTable != nil:
		return cfg.OnlyTable
	}
	return nil
}

// outputNames are the main output's and the dead-letter file's paths for a
// stem.
func (cfg *Config) outputNames(stem string) (main, dead string, err error) {
	switch {
	case cfg.To == ToParquet, cfg.To == ToIceberg:
		main = stem + ".parquet"
	case cfg.Target != nil:
		suffix, err := writer.JSONSuffix(cfg.JSONCompression)
		if err != nil {
			return "", "", err
		}
		main = stem + suffix
	}
	if cfg.DeadLetterDir != "" {
		dead = filepath.Join(cfg.DeadLetterDir, stem+".jsonl")
	}
	return main, dead, nil
}
