package decode

// The format table: each format's name, options, metadata keys and unit
// (unit.go), and the option keys they share.

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// Option keys, after the format prefix.
const (
	optIgnoreParseErrors = "ignore-parse-errors"
	optTimestampFormat   = "timestamp-format.standard"
	optMapNullKeyMode    = "map-null-key.mode"
	optMapNullKeyLiteral = "map-null-key.literal"
	optDecimalPlain      = "encode.decimal-as-plain-number"
	optIgnoreNullFields  = "encode.ignore-null-fields"
	optDatabaseInclude   = "database.include"
	optTableInclude      = "table.include"
	optSchemaInclude     = "schema-include"
	optFailOnMissing     = "fail-on-missing-field"
	optJSONParser        = "decode.json-parser.enabled"
)

// Debezium connector settings taken as options under producer semantics.
const (
	optDecimalHandling = "decimal.handling.mode"
	optTimePrecision   = "time.precision.mode"
	optUnavailable     = "unavailable.value.placeholder"
)

var commonOptions = []string{optIgnoreParseErrors, optTimestampFormat, optMapNullKeyMode,
	optMapNullKeyLiteral, optDecimalPlain, optIgnoreNullFields}

var formats = []*Format{
	{Name: "canal-json", title: "Canal",
		options: append(append([]string{}, commonOptions...), optDatabaseInclude, optTableInclude),
		Metadata: []MetaKey{
			{"database", str, "top-level database"},
			{"table", str, "top-level table"},
			{"sql-type", arrowconv.Type{Kind: arrowconv.Map, Elem: &str, Value: &arrowconv.Type{Kind: arrowconv.Int}}, "sqlType: column name to JDBC type code"},
			{"pk-names", strs, "pkNames"},
			{"ingestion-timestamp", ltz3, "ts, epoch milliseconds"},
			{"event-timestamp", ltz3, "es, epoch milliseconds"},
		},
		unit: canalUnit{}},
	{Name: "debezium-json", title: "Debezium",
		options: append(append([]string{}, commonOptions...), optSchemaInclude, optDecimalHandling, optTimePrecision, optUnavailable),
		Metadata: []MetaKey{
			{"schema", str, "top-level schema object as JSON text"},
			{"ingestion-timestamp", ltz3, "payload ts_ms"},
			{"source.timestamp", ltz3, "source.ts_ms"},
			{"source.database", str, "source.db"},
			{"source.schema", str, "source.schema"},
			{"source.table", str, "source.table"},
			{"source.properties", arrowconv.Type{Kind: arrowconv.Map, Elem: &str, Value: &str}, "the whole source object"},
		},
		unit: debeziumUnit{}},
	{Name: "json", title: "JSON",
		options: append(append([]string{}, commonOptions...), optFailOnMissing, optJSONParser),
		unit:    plainUnit{}},
	{Name: "maxwell-json", title: "Maxwell",
		options: append([]string{}, commonOptions...),
		Metadata: []MetaKey{
			{"database", str, "database"},
			{"table", str, "table"},
			{"primary-key-columns", strs, "primary_key_columns"},
			{"ingestion-timestamp", ltz3, "ts, epoch seconds"},
		},
		unit: maxwellUnit{}},
	{Name: "ogg-json", title: "Ogg",
		options: append([]string{}, commonOptions...),
		Metadata: []MetaKey{
			{"table", str, "table"},
			{"primary-keys", strs, "primary_keys"},
			{"ingestion-timestamp", ltz6, "current_ts"},
			{"event-timestamp", ltz6, "op_ts"},
		},
		unit: oggUnit{}},
}

// Lookup finds a format by its Flink identifier.
func Lookup(name string) (*Format, bool) {
	for _, f := range formats {
		if f.Name == name {
			return f, true
		}
	}
	return nil, false
}

// FormatNames lists the identifiers.
func FormatNames() []string {
	var out []string
	for _, f := range formats {
		out = append(out, f.Name)
	}
	sort.Strings(out)
	return out
}

// Formats lists the formats, sorted by name.
func Formats() []*Format { return formats }

var (
	ltz3 = arrowconv.Type{Kind: arrowconv.TimestampLTZ, Precision: 3}
	ltz6 = arrowconv.Type{Kind: arrowconv.TimestampLTZ, Precision: 6}
	str  = arrowconv.Of(arrowconv.String)
	strs = arrowconv.Type{Kind: arrowconv.Array, Elem: &str}
)

// MetaKey is a metadata key a format can read.
type MetaKey struct {
	Key  string
	Type arrowconv.Type
	Doc  string
}

// Format is one entry of the format table.
type Format struct {
	Name     string // Flink identifier: canal-json, ...
	title    string // as Flink names it in errors: Canal, Maxwell, ...
	options  []string
	Metadata []MetaKey
	// unit is what the format knows, in its own file (unit.go).
	unit unit
}

// FileMetadata are the keys every format offers: Flink's filesystem
// connector's, and cdcetl's unchanged-columns.
var FileMetadata = []MetaKey{
	{"file.path", str, "path of the input file"},
	{"file.name", str, "name of the input file"},
	{"file.size", arrowconv.Type{Kind: arrowconv.BigInt}, "size of the input file in bytes"},
	{"file.modification-time", ltz3, "modification time of the input file"},
	{unchangedKey, strs, "the columns whose values the producer did not send (producer semantics; empty otherwise)"},
	{"file.line", arrowconv.Type{Kind: arrowconv.BigInt}, "line of the message in its file (1-based)"},
	{SourcePositionKey, str, "the producer's position of the change (binlog file and offset, LSN, SCN, ...), ordering the changes of one source as text"},
}

// SourcePositionKey is the metadata key of a change's position in its
// source's log.
const SourcePositionKey = "source-position"

// unchangedKey is the metadata key of the per-row list of unchanged
// columns.
const unchangedKey = "unchanged-columns"

// Observe reads what msg shows about its table into o, as msg's format
// places it (schemaInclude: Debezium's schema/payload envelope). It
// returns false when the format's messages name nothing to observe
// (plain JSON rows).
func (f *Format) Observe(schemaInclude bool, msg []byte, o *Observation) bool {
	*o = Observation{fields: o.fields, pos: o.pos[:0], ns: o.ns[:0], name: o.name[:0], tmp: o.tmp[:0], Images: o.Images[:0]}
	return f.unit.observe(schemaInclude, msg, o)
}

// Declared calls yield with each column type an Observation's Types
// declares, as a Flink type, and the producer's words for it.
func (f *Format) Declared(types []byte, yield func(col []byte, t arrowconv.Type, evidence string)) {
	f.unit.declared(types, yield)
}

// FiltersTables reports whether the format's options pick the tables to
// decode (Canal's database.include and table.include): its messages of
// many tables often share one topic.
func (f *Format) FiltersTables() bool { return slices.Contains(f.options, optTableInclude) }

func (f *Format) metaKey(key string) (MetaKey, bool) {
	for _, m := range f.Metadata {
		if m.Key == key {
			return m, true
		}
	}
	for _, m := range FileMetadata {
		if m.Key == key {
			return m, true
		}
	}
	return MetaKey{}, false
}

// CheckSchema reports schema problems this format cannot decode: unknown
// metadata keys, and metadata columns whose declared type is not the key's.
func (f *Format) CheckSchema(s *arrowconv.Schema) error {
	for _, c := range s.Columns {
		if !c.IsMetadata() {
			continue
		}
		m, ok := f.metaKey(c.MetadataKey)
		if !ok {
			var keys []string
			for _, m := range f.Metadata {
				keys = append(keys, m.Key)
			}
			for _, m := range FileMetadata {
				keys = append(keys, m.Key)
			}
			mean := ""
			if near := Closest(c.MetadataKey, keys); near != "" {
				mean = fmt.Sprintf(" (did you mean '%s'?)", near)
			}
			return &arrowconv.SchemaError{Column: c.Name, Msg: fmt.Sprintf("unknown metadata key '%s' for format %s%s; available keys: %s", c.MetadataKey, f.Name, mean, strings.Join(keys, ", "))}
		}
		if !arrowTypeEqual(c.Type, m.Type) {
			return &arrowconv.SchemaError{Column: c.Name, Msg: fmt.Sprintf("metadata key '%s' has type %s, which cannot be read as %s", m.Key, m.Type, c.Type)}
		}
	}
	return nil
}

// arrowTypeEqual reports whether a column declared as a can hold a
// metadata key of type b: the same Arrow type, or, for timestamps, the same
// kind at any precision (values are put in the declared column's unit).
func arrowTypeEqual(a, b arrowconv.Type) bool {
	if a.Kind == b.Kind && (a.Kind == arrowconv.Timestamp || a.Kind == arrowconv.TimestampLTZ) {
		return true
	}
	return a.ArrowType().Fingerprint() == b.ArrowType().Fingerprint()
}
