package cdcetl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"

	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/partition"
	"github.com/cdcetl/cdcetl/pipeline"
)

// Output kinds of a Job (To); a format name (canal-json, ...) re-encodes.
const (
	ToPrint   = pipeline.ToPrint
	ToParquet = pipeline.ToParquet
	ToIceberg = pipeline.ToIceberg
)

// Job is one conversion, as the cdcetl convert command runs it.
type Job struct {
	// Inputs are files, directories (every file under them) and bucket
	// URLs (s3://, gs://, azblob://).
	Inputs []string
	// Decoding says how messages decode; its zero value detects each
	// input's format and infers a table per source table.
	Decoding Decoding
	// To is ToParquet (the default with an Output), ToIceberg, ToPrint
	// (the default without) or a format name to re-encode to.
	To string
	// Output is the output directory, or a bucket URL: Parquet files (one
	// per input, under <namespace>/<table>/ without a schema), the
	// Iceberg warehouse, or re-encoded files. Empty: Stdout.
	Output string
	// Stdout receives printed rows and re-encoded messages without an
	// Output (default os.Stdout).
	Stdout io.Writer
	// Table is the "namespace.name" of the one table a job with a schema
	// loads (Iceberg; Materialize).
	Table string
	// TableMode is an Iceberg table's: "changelog" (default: every row
	// appended, with its kind) or "upsert" (the current row per primary
	// key).
	TableMode string
	// Catalog is the Iceberg catalog: empty for the one embedded in the
	// warehouse, sqlite:PATH, postgres://..., or rest+https://....
	Catalog string
	// TableProperties are Iceberg properties of the tables made
	// (format-version, write.target-file-size-bytes, ...).
	TableProperties map[string]string
	// PartitionBy is a partition spec: "region, day(ts), bucket(16, id)".
	PartitionBy string
	// Materialize keeps each table's current state (Parquet output).
	Materialize bool
	// KeepGoing records an input that fails as failed and goes on with
	// the others; Convert then returns an error wrapping
	// pipeline.ErrPartial with the Stats of the rest.
	KeepGoing bool
	// Force converts every input again, whatever the output's journal
	// says (a rerun otherwise converts only new inputs).
	Force bool
	// Workers is the number of inputs decoded at once (default: the
	// number of CPUs).
	Workers int
}

// Stats counts what a job did: inputs, messages, rows by kind, dropped
// messages, commits.
type Stats = pipeline.Stats

// Convert runs j.
func Convert(ctx context.Context, j Job) (Stats, error) {
	cfg, err := j.Config()
	if err != nil {
		return Stats{}, err
	}
	return pipeline.Run(ctx, cfg, j.Inputs)
}

// Config is the pipeline.Config that Convert runs for j, checked: for
// the settings a Job does not name (dead letters, sharding, Parquet
// encodings, ...), set them on it and call pipeline.Run.
func (j Job) Config() (pipeline.Config, error) {
	var cfg pipeline.Config
	d, err := j.Decoding.resolve()
	if err != nil {
		return cfg, err
	}
	if len(j.Inputs) == 0 {
		return cfg, fmt.Errorf("cdcetl: a Job needs Inputs")
	}
	to := j.To
	if to == "" {
		to = ToPrint
		if j.Output != "" {
			to = ToParquet
		}
	}
	cfg = pipeline.Config{InputOptions: pipeline.InputOptions{KeepGoing: j.KeepGoing, Force: j.Force}, DecodingOptions: pipeline.DecodingOptions{Format: d.format, Schema: d.schema, Options: d.opts}, OutputOptions: pipeline.OutputOptions{To: to, OutDir: j.Output, Stdout: j.Stdout, Materialize: j.Materialize}, LakeOptions: pipeline.LakeOptions{Catalog: j.Catalog, TableMode: j.TableMode}, RunOptions: pipeline.RunOptions{Workers: j.Workers}}
	if d.format == nil {
		cfg.FormatOptions = d.perFormat
	}
	if d.only != nil {
		cfg.OnlyTable = &pipeline.TableKey{Namespace: d.only[0], Name: d.only[1]}
	}
	foreign := maps.Clone(d.foreign)
	switch to {
	case ToPrint, ToParquet, ToIceberg:
	default:
		target, ok := decode.Lookup(to)
		if !ok {
			return cfg, fmt.Errorf("cdcetl: To %q: want %s, %s, %s or a format (%s)", to, ToParquet, ToIceberg, ToPrint, strings.Join(decode.FormatNames(), ", "))
		}
		// The target's options are checked as Flink checks a sink's;
		// schema-include is the decoding side's (Flink's encoder never
		// writes it).
		tkv := map[string]string{}
		for k, v := range d.kv {
			if d.format == nil || k != d.format.Name+".schema-include" {
				tkv[k] = v
			}
			if strings.HasPrefix(k, target.Name+".") {
				delete(foreign, k)
			}
		}
		if cfg.TargetOptions, err = decode.ParseOptions(target, tkv, true); err != nil {
			return cfg, fmt.Errorf("cdcetl: To %s: %w", to, err)
		}
		cfg.Target = target
	}
	// Flink's filesystem connector options (a DDL's rolling and commit
	// settings) apply to partitioned Parquet output.
	if cfg.Filesystem, _, err = pipeline.ParseFilesystemOptions(foreign); err != nil {
		return cfg, fmt.Errorf("cdcetl: %w", err)
	}
	props := maps.Clone(j.TableProperties)
	for k, v := range foreign {
		if to != ToIceberg {
			return cfg, fmt.Errorf("cdcetl: option %s belongs to no decoding format (keys are written FORMAT.KEY)", k)
		}
		if props == nil {
			props = map[string]string{}
		}
		props[k] = v // an Iceberg table property, as the command line takes it
	}
	cfg.TableProperties = props
	if j.Table != "" {
		ns, name, ok := strings.Cut(j.Table, ".")
		if !ok {
			return cfg, fmt.Errorf("cdcetl: Table %q: want namespace.name", j.Table)
		}
		cfg.Table = &pipeline.TableKey{Namespace: ns, Name: name}
	}
	var fields []partition.Field
	if j.PartitionBy != "" {
		if fields, err = partition.ParsePartitionBy(j.PartitionBy); err != nil {
			return cfg, fmt.Errorf("cdcetl: PartitionBy: %w", err)
		}
	} else if d.schema != nil && (to == ToParquet || to == ToIceberg) {
		// A DDL's PARTITIONED BY (a, b): identity partitions, as Flink's
		// filesystem connector writes them.
		for _, c := range d.schema.PartitionedBy {
			fields = append(fields, partition.Field{Transform: "identity", Column: c})
		}
	}
	cfg.PartitionBy = fields
	if err := cfg.Validate(); err != nil {
		var ce *pipeline.ConfigError
		if errors.As(err, &ce) {
			// The Job's names for the Config's settings.
			field := ce.Field
			if field == "OutDir" {
				field = "Output"
			}
			return cfg, &JobError{Field: field, Reason: strings.ReplaceAll(ce.Reason, "OutDir", "Output")}
		}
		return cfg, fmt.Errorf("cdcetl: %w", err)
	}
	return cfg, nil
}

// JobError is a Job that cannot run: Field is the setting, Reason why.
type JobError struct {
	Field  string
	Reason string
}

func (e *JobError) Error() string { return "cdcetl: Job." + e.Field + ": " + e.Reason }
