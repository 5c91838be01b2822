package cdcetl

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/decode"
)

// Decoding says how messages are decoded.
type Decoding struct {
	// Format is the Flink format identifier: canal-json, maxwell-json,
	// ogg-json or debezium-json. A DDL's 'format' option gives it when
	// empty; Convert detects each input's format when both are empty.
	Format string
	// Schema is a Flink SQL column list: "id BIGINT, name STRING,
	// PRIMARY KEY (id) NOT ENFORCED"; metadata columns are declared as in
	// Flink ("`ts` TIMESTAMP_LTZ(3) METADATA FROM 'ingestion-timestamp'
	// VIRTUAL").
	Schema string
	// DDL is a whole CREATE TABLE statement, as an alternative to Schema:
	// its WITH options apply as Flink applies them (format, format
	// options), under Options.
	DDL string
	// Options are Flink's format options, keyed as in a WITH clause:
	// "canal-json.ignore-parse-errors": "true".
	Options map[string]string
	// Semantics is "flink" (the default with a schema) or "producer":
	// each value decoded as its producer meant it (see
	// docs/producer-semantics.md). Without a schema it is always
	// "producer".
	Semantics string
	// ColumnCase is "sensitive" or "insensitive": how a message's keys
	// match column names (default: sensitive under Flink semantics,
	// insensitive under producer semantics).
	ColumnCase string
	// SourceTimeZone is the IANA zone of wall-clock text read into
	// TIMESTAMP_LTZ columns under producer semantics (default UTC).
	SourceTimeZone string
}

// decoding is a Decoding resolved: the format (nil: detected), the
// schema (nil: inferred), the options of each format that may decode,
// and what else the DDL said.
type decoding struct {
	format    *decode.Format
	schema    *arrowconv.Schema
	opts      decode.Options            // of format; the shared settings when detecting
	perFormat map[string]decode.Options // every format's, when detecting
	only      *[2]string                // the one table of an inspected DDL
	foreign   map[string]string         // keys of no format (table properties, ...)
	kv        map[string]string         // every option given
}

// resolve checks d and turns it into what the decoders take.
func (d Decoding) resolve() (decoding, error) {
	var r decoding
	kv := map[string]string{}
	var err error
	switch {
	case d.DDL != "" && d.Schema != "":
		return r, fmt.Errorf("cdcetl: give a Schema or a DDL, not both")
	case d.DDL != "":
		if r.schema, err = arrowconv.ParseDDL(d.DDL); err != nil {
			return r, fmt.Errorf("cdcetl: DDL: %w", err)
		}
		for k, v := range r.schema.Options {
			switch k {
			case "connector", "path":
				// The table's source: a Decoding reads what it is given.
			case "format":
				if d.Format == "" {
					d.Format = v
				}
			case "cdcetl.semantics":
				if d.Semantics == "" {
					d.Semantics = v
				}
			case "cdcetl.column-case":
				if d.ColumnCase == "" {
					d.ColumnCase = v
				}
			case "cdcetl.source-time-zone":
				if d.SourceTimeZone == "" {
					d.SourceTimeZone = v
				}
			case "cdcetl.namespace", "cdcetl.table", "cdcetl.schema-version":
			default:
				if strings.HasPrefix(k, "cdcetl.") {
					return r, fmt.Errorf("cdcetl: DDL: unknown WITH key '%s' (cdcetl's keys: %s)", k, strings.Join(decode.DDLKeys, ", "))
				}
				kv[k] = v
			}
		}
		ns, hasNS := r.schema.Options["cdcetl.namespace"]
		tbl, hasTbl := r.schema.Options["cdcetl.table"]
		if hasNS && hasTbl {
			r.only = &[2]string{ns, tbl}
		}
	case d.Schema != "":
		if r.schema, err = arrowconv.ParseColumns(d.Schema); err != nil {
			return r, fmt.Errorf("cdcetl: Schema: %w", err)
		}
	}
	maps.Copy(kv, d.Options)
	r.kv = kv
	if d.Format != "" {
		f, ok := decode.Lookup(d.Format)
		if !ok {
			return r, fmt.Errorf("cdcetl: unknown format %q (%s)", d.Format, strings.Join(decode.FormatNames(), ", "))
		}
		r.format = f
	} else if r.schema != nil {
		return r, fmt.Errorf("cdcetl: a Schema or DDL needs a Format (%s)", strings.Join(decode.FormatNames(), ", "))
	}
	if r.schema == nil {
		switch d.Semantics {
		case "", "producer":
			d.Semantics = "producer" // inferred schemas hold the producer's types
		default:
			return r, fmt.Errorf("cdcetl: Semantics %q needs a Schema or DDL: inferred schemas decode under producer semantics", d.Semantics)
		}
	}
	formats := []*decode.Format{r.format}
	if r.format == nil {
		formats = decode.Formats()
	}
	r.foreign = map[string]string{}
	for k, v := range kv {
		if k == "format" {
			continue
		}
		if !slices.ContainsFunc(formats, func(f *decode.Format) bool { return strings.HasPrefix(k, f.Name+".") }) {
			r.foreign[k] = v
		}
	}
	r.perFormat = map[string]decode.Options{}
	for _, f := range formats {
		o, err := decode.ParseOptions(f, kv, false)
		if err != nil {
			return r, fmt.Errorf("cdcetl: %w", err)
		}
		if err := d.apply(&o); err != nil {
			return r, err
		}
		if err := o.Check(f); err != nil {
			return r, fmt.Errorf("cdcetl: %w", err)
		}
		r.perFormat[f.Name] = o
	}
	if r.format != nil {
		r.opts = r.perFormat[r.format.Name]
	} else if err := d.apply(&r.opts); err != nil {
		return r, err
	}
	if r.schema != nil {
		if err := r.format.CheckSchema(r.schema); err != nil {
			return r, fmt.Errorf("cdcetl: %w", err)
		}
	}
	return r, nil
}

// apply sets the semantics settings on one format's options.
func (d Decoding) apply(o *decode.Options) error {
	err := o.SetSemantics(d.Semantics, d.ColumnCase, d.SourceTimeZone)
	var se *decode.SettingError
	if errors.As(err, &se) {
		field := map[string]string{"semantics": "Semantics", "column-case": "ColumnCase", "source-time-zone": "SourceTimeZone"}[se.Key]
		return fmt.Errorf("cdcetl: %s%s", field, strings.TrimPrefix(se.Error(), se.Key))
	}
	return err
}
