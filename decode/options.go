package decode

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/buger/jsonparser"
	"github.com/cdcetl/cdcetl/internal/setting"
)

// Options are one format's Flink options. The zero value is Flink's
// defaults except where noted; [ParseOptions] fills it from DDL-style keys.
type Options struct {
	IgnoreParseErrors bool
	// TimestampISO selects timestamp-format.standard=ISO-8601 (default SQL).
	TimestampISO bool
	// MapNullKeyMode is FAIL (default, empty), DROP or LITERAL (encoder only).
	MapNullKeyMode    string
	MapNullKeyLiteral string // default "null"
	DecimalPlain      bool   // encode.decimal-as-plain-number
	IgnoreNullFields  bool   // encode.ignore-null-fields
	// DatabaseInclude and TableInclude are canal-json's Java regexes.
	DatabaseInclude, TableInclude string
	// SchemaInclude is debezium-json.schema-include.
	SchemaInclude bool
	// FailOnMissingField is json.fail-on-missing-field.
	FailOnMissingField bool

	// Producer selects producer semantics (docs/producer-semantics.md):
	// each value decoded as its producer meant it, control messages
	// counted instead of failing. It is cdcetl's setting (--semantics
	// producer, 'cdcetl.semantics' in a DDL), not a Flink option.
	Producer bool
	// CaseInsensitive matches a row's keys to columns ignoring case when no
	// key matches exactly (--column-case insensitive; the producer
	// default).
	CaseInsensitive bool
	// SourceTZ is the zone of wall-clock text read into TIMESTAMP_LTZ under
	// producer semantics (MySQL TIMESTAMP columns as Canal and Maxwell
	// write them); nil means UTC.
	SourceTZ *time.Location
	// DecimalHandling and TimePrecision are Debezium's connector settings
	// decimal.handling.mode (precise, string, double) and
	// time.precision.mode (adaptive, adaptive_time_microseconds, connect),
	// used under producer semantics when a message carries no schema.
	DecimalHandling, TimePrecision string
	// Unavailable is Debezium's unavailable.value.placeholder (default
	// __debezium_unavailable_value): a value it did not send.
	Unavailable string
	// RejectUnknownKeys makes a row key that is no column an error
	// (ErrUnknownKey) instead of ignored: how a decoder with an inferred
	// schema learns that the schema missed a column.
	RejectUnknownKeys bool
	// ValueChecks, under producer semantics, make a value of a top-level
	// column (by name) that its check refuses an error: how a decoder with
	// an inferred schema learns that a value would have given the column
	// another type, though it converts (integer text into INT, a third
	// decimal place into DECIMAL(38, 2), anything into a column seen only
	// NULL).
	ValueChecks map[string]func(v []byte, t jsonparser.ValueType) bool
	// RouteKeys makes the decoder keep each message's source table for
	// Decoder.Routed (a routed conversion checks its guess with it).
	RouteKeys bool

	dbRe, tableRe *regexp.Regexp
}

// DefaultUnavailable is Debezium's default unavailable.value.placeholder.
const DefaultUnavailable = "__debezium_unavailable_value"

// Check reports options that apply only under producer semantics when it
// is off, and fills the producer defaults when it is on.
func (o *Options) Check(f *Format) error {
	if !o.Producer {
		for k, v := range map[string]string{optDecimalHandling: o.DecimalHandling, optTimePrecision: o.TimePrecision, optUnavailable: o.Unavailable} {
			if v != "" {
				return fmt.Errorf("%w: %s.%s is a Debezium connector setting that applies only with %s producer", ErrOption, f.Name, k, setting.Semantics)
			}
		}
		return nil
	}
	if o.DecimalHandling == "" {
		o.DecimalHandling = "precise"
	}
	if o.TimePrecision == "" {
		o.TimePrecision = "adaptive"
	}
	if o.Unavailable == "" {
		o.Unavailable = DefaultUnavailable
	}
	return nil
}

// OptionDoc describes an option for --help and the README.
type OptionDoc struct {
	Key, Default, Doc string
}

var optionDocs = map[string]OptionDoc{
	optIgnoreParseErrors: {optIgnoreParseErrors, "false", "skip messages that cannot be parsed and turn values that cannot be converted into NULL"},
	optTimestampFormat:   {optTimestampFormat, "SQL", "SQL or ISO-8601: how TIMESTAMP and TIMESTAMP_LTZ text is read and written"},
	optMapNullKeyMode:    {optMapNullKeyMode, "FAIL", "encoder: FAIL, DROP or LITERAL for NULL map keys"},
	optMapNullKeyLiteral: {optMapNullKeyLiteral, "null", "encoder: the key text for NULL map keys in LITERAL mode"},
	optDecimalPlain:      {optDecimalPlain, "false", "encoder: write DECIMAL as plain digits at the column's scale"},
	optIgnoreNullFields:  {optIgnoreNullFields, "false", "encoder: omit fields whose value is NULL"},
	optDatabaseInclude:   {optDatabaseInclude, "", "a regular expression (Go RE2 syntax: Java look-around and back-references are refused) the whole \"database\" value must match"},
	optTableInclude:      {optTableInclude, "", "a regular expression (Go RE2 syntax: Java look-around and back-references are refused) the whole \"table\" value must match"},
	optSchemaInclude:     {optSchemaInclude, "false", "messages carry a schema/payload envelope"},
	optDecimalHandling:   {optDecimalHandling, "precise", "producer semantics, messages without a schema: how the connector wrote DECIMAL (precise: base64 bytes; string; double)"},
	optTimePrecision:     {optTimePrecision, "adaptive", "producer semantics, messages without a schema: how the connector wrote temporal values (adaptive, adaptive_time_microseconds, connect)"},
	optUnavailable:       {optUnavailable, DefaultUnavailable, "producer semantics: the text Debezium writes for a value it did not send (Postgres TOAST); such a column is unchanged, not NULL"},
	optFailOnMissing:     {optFailOnMissing, "false", "a missing field is an error instead of NULL"},
	optJSONParser:        {optJSONParser, "true", "accepted for compatibility; decoding is the same either way"},
}

// AllOptionDocs lists every option once, in a stable order, with the
// formats that take it.
func AllOptionDocs() (docs []OptionDoc, takenBy [][]string) {
	seen := map[string]int{}
	for _, f := range formats {
		for _, k := range f.options {
			i, ok := seen[k]
			if !ok {
				i = len(docs)
				seen[k] = i
				docs = append(docs, optionDocs[k])
				takenBy = append(takenBy, nil)
			}
			takenBy[i] = append(takenBy[i], f.Name)
		}
	}
	return docs, takenBy
}

// OptionDocs lists the options of format f in a stable order.
func OptionDocs(f *Format) []OptionDoc {
	var out []OptionDoc
	for _, k := range f.options {
		out = append(out, optionDocs[k])
	}
	return out
}

// ParseOptions reads options given with the format prefix
// ("canal-json.ignore-parse-errors" = "true") and validates them as Flink
// does when a table is created. sink adds the checks Flink makes only for a
// writing table. Keys without this format's prefix are not looked at.
func ParseOptions(f *Format, kv map[string]string, sink bool) (Options, error) {
	o := Options{MapNullKeyLiteral: "null"}
	prefix := f.Name + "."
	allowed := map[string]bool{}
	for _, k := range f.options {
		allowed[k] = true
	}
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, full := range keys {
		v := kv[full]
		if !strings.HasPrefix(full, prefix) {
			continue
		}
		k := strings.TrimPrefix(full, prefix)
		if !allowed[k] {
			var sup []string
			for _, a := range f.options {
				sup = append(sup, prefix+a)
			}
			mean := ""
			if near := Closest(full, sup); near != "" {
				mean = fmt.Sprintf(" (did you mean '%s'?)", near)
			}
			return o, fmt.Errorf("%w: unsupported option '%s' for format %s%s; supported options: %s", ErrOption, full, f.Name, mean, strings.Join(sup, ", "))
		}
		var err error
		switch k {
		case optIgnoreParseErrors:
			o.IgnoreParseErrors, err = parseBool(full, v)
		case optTimestampFormat:
			switch v {
			case "SQL":
			case "ISO-8601":
				o.TimestampISO = true
			default:
				err = fmt.Errorf("%w: Unsupported value '%s' for timestamp-format.standard. Supported values are [SQL, ISO-8601].", ErrOption, v)
			}
		case optMapNullKeyMode:
			u := strings.ToUpper(v)
			if u != "FAIL" && u != "DROP" && u != "LITERAL" {
				if sink { // Flink checks this only when creating a sink
					err = fmt.Errorf("%w: Unsupported value '%s' for option map-null-key.mode. Supported values are [LITERAL, FAIL, DROP].", ErrOption, v)
				}
			} else {
				o.MapNullKeyMode = u
			}
		case optMapNullKeyLiteral:
			o.MapNullKeyLiteral = v
		case optDecimalPlain:
			o.DecimalPlain, err = parseBool(full, v)
		case optIgnoreNullFields:
			o.IgnoreNullFields, err = parseBool(full, v)
		case optDatabaseInclude:
			o.DatabaseInclude = v
			o.dbRe, err = compileJavaRegex(full, v)
		case optTableInclude:
			o.TableInclude = v
			o.tableRe, err = compileJavaRegex(full, v)
		case optSchemaInclude:
			o.SchemaInclude, err = parseBool(full, v)
			if err == nil && o.SchemaInclude && sink {
				err = fmt.Errorf("%w: Debezium JSON serialization doesn't support '%s' option been set to true.", ErrOption, full)
			}
		case optFailOnMissing:
			o.FailOnMissingField, err = parseBool(full, v)
		case optJSONParser:
			_, err = parseBool(full, v)
		case optDecimalHandling:
			switch v {
			case "precise", "string", "double":
				o.DecimalHandling = v
			default:
				err = fmt.Errorf("%w: %s: %q is not a Debezium decimal.handling.mode (precise, string, double)", ErrOption, full, v)
			}
		case optTimePrecision:
			switch v {
			case "adaptive", "adaptive_time_microseconds", "connect":
				o.TimePrecision = v
			default:
				err = fmt.Errorf("%w: %s: %q is not a Debezium time.precision.mode (adaptive, adaptive_time_microseconds, connect)", ErrOption, full, v)
			}
		case optUnavailable:
			o.Unavailable = v
		}
		if err != nil {
			return o, err
		}
	}
	if o.FailOnMissingField && o.IgnoreParseErrors {
		return o, fmt.Errorf("%w: fail-on-missing-field and ignore-parse-errors shouldn't both be true.", ErrOption)
	}
	return o, nil
}

func parseBool(key, v string) (bool, error) {
	switch strings.ToLower(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("%w: %s: Unrecognized option for boolean: %s. Expected either true or false(case insensitive)", ErrOption, key, v)
}

// compileJavaRegex compiles a Java pattern for a full match. Go's RE2 has
// no look-around or back-references; such patterns are reported here,
// before any input is read, rather than silently matching differently.
func compileJavaRegex(key, p string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(`^(?:` + p + `)$`)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: pattern %q is not supported (Go's RE2 syntax lacks look-around and back-references): %v", ErrOption, key, p, err)
	}
	return re, nil
}

// Settings lists the resolved options by key (without the format prefix),
// every key at its value or default: what a conversion was made with.
func (o Options) Settings() map[string]string {
	ts := "SQL"
	if o.TimestampISO {
		ts = "ISO-8601"
	}
	mode := o.MapNullKeyMode
	if mode == "" {
		mode = "FAIL"
	}
	b := strconv.FormatBool
	return map[string]string{
		optIgnoreParseErrors: b(o.IgnoreParseErrors),
		optTimestampFormat:   ts,
		optMapNullKeyMode:    mode,
		optMapNullKeyLiteral: o.MapNullKeyLiteral,
		optDecimalPlain:      b(o.DecimalPlain),
		optIgnoreNullFields:  b(o.IgnoreNullFields),
		optDatabaseInclude:   o.DatabaseInclude,
		optTableInclude:      o.TableInclude,
		optSchemaInclude:     b(o.SchemaInclude),
		optFailOnMissing:     b(o.FailOnMissingField),
		optDecimalHandling:   o.DecimalHandling,
		optTimePrecision:     o.TimePrecision,
		optUnavailable:       o.Unavailable,
	}
}

// Semantics names the decoding semantics: "flink" or "producer".
func (o Options) Semantics() string {
	if o.Producer {
		return "producer"
	}
	return "flink"
}

// TZName names SourceTZ ("UTC" when nil).
func (o Options) TZName() string {
	if o.SourceTZ == nil {
		return "UTC"
	}
	return o.SourceTZ.String()
}

// SettingError is a semantics setting that cannot apply: Key is its name
// as a DDL's WITH spells it after "cdcetl." (semantics, column-case,
// source-time-zone), Value what was given; callers with names of their
// own (flags, struct fields) say it in those.
type SettingError struct {
	Key, Value, Reason string
	ShowValue          bool // the value belongs in the message
}

func (e *SettingError) Error() string {
	if e.ShowValue {
		return fmt.Sprintf("%s %q: %s", e.Key, e.Value, e.Reason)
	}
	return e.Key + " " + e.Reason
}

// SetSemantics applies cdcetl's semantics settings to o: semantics
// ("", flink or producer), column case ("", sensitive or insensitive)
// and the source time zone (an IANA name; producer semantics only).
func (o *Options) SetSemantics(semantics, columnCase, sourceTZ string) error {
	switch semantics {
	case "", "flink":
	case "producer":
		o.Producer, o.CaseInsensitive = true, true
	default:
		return &SettingError{Key: "semantics", Value: semantics, Reason: "want flink or producer", ShowValue: true}
	}
	switch columnCase {
	case "":
	case "sensitive", "insensitive":
		o.CaseInsensitive = columnCase == "insensitive"
	default:
		return &SettingError{Key: "column-case", Value: columnCase, Reason: "want sensitive or insensitive", ShowValue: true}
	}
	if sourceTZ != "" {
		if !o.Producer {
			return &SettingError{Key: "source-time-zone", Value: sourceTZ, Reason: "applies only under producer semantics (Flink reads TIMESTAMP_LTZ text only with a Z)"}
		}
		loc, err := time.LoadLocation(sourceTZ)
		if err != nil {
			return &SettingError{Key: "source-time-zone", Value: sourceTZ, Reason: fmt.Sprintf("%v (use an IANA name such as Europe/Berlin, or UTC)", err), ShowValue: true}
		}
		o.SourceTZ = loc
	}
	return nil
}

// DDLKeys are cdcetl's own keys in a CREATE TABLE's WITH clause.
var DDLKeys = []string{"cdcetl.semantics", "cdcetl.column-case", "cdcetl.source-time-zone", "cdcetl.namespace", "cdcetl.table", "cdcetl.schema-version"}
