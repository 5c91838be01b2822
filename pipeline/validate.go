package pipeline

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/internal/outdir"
)

// ConfigError is a Config that cannot run: Field is the setting, as
// Config spells it, and Reason says why and what to do. Callers with
// settings of their own names (the command line's flags) map Field to
// them.
type ConfigError struct {
	Field  string
	Reason string
}

func (e *ConfigError) Error() string { return "pipeline: Config." + e.Field + ": " + e.Reason }

func invalid(field, format string, args ...any) error {
	return &ConfigError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// Validate checks the rules between a Config's fields, the same ones the
// command line applies to its flags; Run and RunFiles call it first, so a
// Config that breaks one fails before any input is read. It does not look
// at the inputs or the output directory.
func (c *Config) Validate() error {
	to := c.To
	if to == "" && c.Target == nil {
		to = ToPrint
		if c.OutDir != "" {
			to = ToParquet
		}
	}
	lakeOut := to == ToIceberg
	switch {
	case c.Target != nil:
	case to == ToPrint:
		if c.OutDir != "" {
			return invalid("OutDir", "printed rows go to standard output: give no output directory")
		}
	case to == ToParquet:
		if c.OutDir == "" && c.Batches == nil {
			return invalid("OutDir", "Parquet output needs an output directory")
		}
	case lakeOut:
		if c.OutDir == "" {
			return invalid("OutDir", "Iceberg output needs a warehouse directory (tables at DIR/<namespace>/<table>, the embedded catalog at DIR/_catalog.db)")
		}
	default:
		return invalid("To", "%q: want %s, %s, %s, or a Target format", to, ToPrint, ToParquet, ToIceberg)
	}
	if c.Schema != nil && c.Format == nil {
		return invalid("Format", "a Schema needs its format")
	}
	if !lakeOut {
		switch {
		case c.Catalog != "":
			return invalid("Catalog", "applies only to Iceberg output")
		case c.TableMode != "":
			return invalid("TableMode", "applies only to Iceberg output")
		case len(c.TableProperties) > 0:
			return invalid("TableProperties", "Iceberg table properties apply only to Iceberg output")
		}
	}
	switch c.TableMode {
	case "", "changelog", "upsert":
	default:
		return invalid("TableMode", "%q: want changelog or upsert", c.TableMode)
	}
	if c.TableMode == "upsert" && c.KeepGoing {
		return invalid("KeepGoing", "an upsert table applies inputs in order, so one that fails stops the load: going on past failed inputs (and moving them away) does not apply")
	}
	routed := c.Schema == nil
	if c.Table != nil && routed {
		return invalid("Table", "names the one table of a conversion with a schema; without one every source table gets its own (choose them with the include-table filter)")
	}
	if !routed && c.Table == nil && c.OnlyTable == nil {
		switch {
		case lakeOut:
			return invalid("Table", "Iceberg output with a schema needs the table to load into: NAMESPACE.NAME")
		case c.Materialize:
			return invalid("Table", "a current-state snapshot with a schema needs the table's name: NAMESPACE.NAME")
		}
	}
	if c.Materialize {
		if to != ToParquet {
			return invalid("Materialize", "applies to Parquet output (an Iceberg upsert table keeps the current state)")
		}
		if !routed && len(c.Schema.PrimaryKey) == 0 {
			return invalid("Materialize", "needs a primary key: declare PRIMARY KEY (...) NOT ENFORCED in the schema")
		}
	}
	if c.Dedup && !c.Materialize {
		return invalid("Dedup", "applies to current-state snapshots: a snapshot keeps one copy of an event delivered twice; a changelog keeps every message as it came (Flink's cdc-events-duplicate, too, needs a stateful step)")
	}
	if len(c.PartitionBy) > 0 {
		if to != ToParquet && !lakeOut {
			return invalid("PartitionBy", "applies to Parquet output (Hive-style directories) and Iceberg output")
		}
		for _, f := range c.PartitionBy {
			if routed {
				break
			}
			if !slices.ContainsFunc(c.Schema.Columns, func(col arrowconv.Field) bool { return col.Name == f.Column }) {
				return invalid("PartitionBy", "%s: the schema has no column %s", f, f.Column)
			}
			if (c.Materialize || c.TableMode == "upsert") && !slices.Contains(c.Schema.PrimaryKey, f.Column) {
				what := "a current-state snapshot"
				if c.TableMode == "upsert" {
					what = "an upsert table"
				}
				return invalid("PartitionBy", "%s with %s: a key's changes must stay in one partition, so partition by primary key columns (%s) only", f, what, strings.Join(c.Schema.PrimaryKey, ", "))
			}
		}
	}
	if !routed {
		switch {
		case c.NoLineage:
			return invalid("NoLineage", "applies without a schema; a schema has exactly its columns (declare METADATA FROM 'file.line' or 'source-position' to get them)")
		case len(c.Hints) > 0:
			return invalid("Hints", "say what inference cannot know; with a schema, declare it there")
		case c.DDLDir != "":
			return invalid("DDLDir", "pins tables of a conversion without a schema; drop the schema, or the DDL directory")
		}
	}
	switch {
	case c.OnSuccess == "" || c.OnSuccess == "keep":
	case c.OnSuccess == "delete" || strings.HasPrefix(c.OnSuccess, "move=") && len(c.OnSuccess) > 5:
		if c.OutDir == "" {
			return invalid("OnSuccess", "%s needs an output directory: outputs and journal must be on disk first", c.OnSuccess)
		}
	default:
		return invalid("OnSuccess", "%q: want keep, delete or move=DIR", c.OnSuccess)
	}
	remote := outdir.IsRemote(c.OutDir)
	switch {
	case remote && lakeOut && c.Catalog == "":
		return invalid("Catalog", "an Iceberg warehouse in a bucket needs a catalog outside it: postgres://USER@HOST:PORT/DB or rest+https://HOST/PATH (or sqlite:/LOCAL/PATH for one machine)")
	case remote && c.DeadLetterDir != "":
		return invalid("DeadLetterDir", "with OutDir in a bucket, dead letters go to the bucket, under _dead_letters/: leave DeadLetterDir empty (and set the format's ignore-parse-errors)")
	case outdir.IsRemote(c.DeadLetterDir):
		return invalid("DeadLetterDir", "takes a local or mounted directory; with OutDir in a bucket, dead letters go to its _dead_letters/")
	}
	if c.Shard.Sharded() {
		switch {
		case c.Materialize:
			return invalid("Shard", "Materialize folds every input's changes in one order and cannot be split into shards: run the shards without it, then one run without a Shard and with Materialize over the same inputs and OutDir (it skips every input the shards converted and folds their changes)")
		case lakeOut && c.TableMode == "upsert":
			return invalid("Shard", "an upsert table applies each key's changes in order and cannot be split into shards: load upsert tables with one run without a Shard, or shard into a changelog table")
		}
	}
	if c.DedupInputs && c.OutDir == "" {
		return invalid("DedupInputs", "compares inputs with those converted into an output directory: give one")
	}
	if !c.Encode.MergeUpdates && !c.Encode.Envelope || c.Target != nil {
		return nil
	}
	return invalid("Encode", "merging updates and envelopes apply only when re-encoding to a CDC format")
}
