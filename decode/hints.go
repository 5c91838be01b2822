package decode

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/buger/jsonparser"
	"github.com/cdcetl/cdcetl/internal/javatext"
	"github.com/cdcetl/cdcetl/internal/setting"
)

// Hints: one line after an error, saying what the user most likely has to
// change. They are computed only when a message has failed (never on the
// decoding path), from the error and the message.

// Sniff reads a message's top-level keys and says which format's envelope
// they are: Canal ("data" array and "type", with "isDdl", "pkNames",
// "mysqlType", "sqlType" or "es", or a type INSERT, UPDATE or DELETE), Maxwell ("database", "table", "type"
// and "data", lower-case types), GoldenGate ("op_type" and "table"),
// Debezium ("op" with "before"/"after"/"source", or a "schema"/"payload"
// envelope). TiCDC's canal-json counts as Canal. Records that carry no
// rows tell the format too: Canal's DDL records ("isDdl": true, "sql"),
// Maxwell's ("table-*" or "database-*" types with "sql"), Debezium's
// transaction markers ("status" BEGIN or END, "id", "event_count") and
// schema changes ("ddl" or "tableChanges" with "source").
func Sniff(msg []byte) Sniffed {
	msg = bytes.TrimPrefix(msg, []byte("\xef\xbb\xbf"))
	keys := map[string]jsonparser.ValueType{}
	var typ []byte
	var payload []byte
	jsonparser.ObjectEach(msg, func(k, v []byte, t jsonparser.ValueType, _ int) error {
		keys[string(k)] = t
		switch string(k) {
		case "type":
			typ = v
		case "payload":
			payload = v
		}
		return nil
	})
	has := func(k string, t ...jsonparser.ValueType) bool {
		vt, ok := keys[k]
		if !ok {
			return false
		}
		if len(t) == 0 {
			return true
		}
		for _, x := range t {
			if vt == x {
				return true
			}
		}
		return false
	}
	found := func(ks ...string) []string {
		var out []string
		for _, k := range ks {
			if has(k) {
				out = append(out, k)
			}
		}
		return out
	}
	switch {
	case has("payload", jsonparser.Object) && has("schema"):
		inner := Sniff(payload)
		if inner.Format == "debezium-json" {
			return Sniffed{Format: "debezium-json", SchemaInclude: true, Keys: []string{"schema", "payload"}}
		}
	case has("op") && (has("before") || has("after") || has("source")):
		return Sniffed{Format: "debezium-json", Keys: found("op", "before", "after", "source")}
	case has("op_type") && has("table"):
		return Sniffed{Format: "ogg-json", Keys: found("op_type", "table", "before", "after")}
	case has("data", jsonparser.Array) && has("type") && (has("isDdl") || has("pkNames") || has("mysqlType") || has("sqlType") || has("es")):
		return Sniffed{Format: "canal-json", Keys: found("data", "type", "isDdl", "pkNames", "mysqlType", "sqlType")}
	case has("data", jsonparser.Array) && has("type", jsonparser.String) && canalRowType(typ):
		// Canal's rows cut to their core (only "data" and "type", as
		// Paimon's tests and hand-written producers send them): an array
		// of rows and an upper-case kind is Canal's shape alone.
		return Sniffed{Format: "canal-json", Keys: found("data", "type")}
	case has("database") && has("table") && has("type") && has("data", jsonparser.Object) && isLower(typ):
		return Sniffed{Format: "maxwell-json", Keys: found("database", "table", "type", "data")}
	case has("isDdl", jsonparser.Boolean) && has("sql", jsonparser.String) && has("type", jsonparser.String):
		return Sniffed{Format: "canal-json", Keys: found("isDdl", "sql", "type"), Control: true}
	case has("sql", jsonparser.String) && has("type", jsonparser.String) && (bytes.HasPrefix(typ, []byte("table-")) || bytes.HasPrefix(typ, []byte("database-"))):
		return Sniffed{Format: "maxwell-json", Keys: found("type", "sql", "database", "def"), Control: true}
	case has("status", jsonparser.String) && has("id") && has("event_count"):
		return Sniffed{Format: "debezium-json", Keys: found("status", "id", "event_count", "data_collections"), Control: true}
	case has("source", jsonparser.Object) && (has("ddl") || has("tableChanges", jsonparser.Array)):
		return Sniffed{Format: "debezium-json", Keys: found("source", "ddl", "tableChanges"), Control: true}
	}
	return Sniffed{}
}

// debeziumEnvelope reports whether msg (or its payload) has any of the
// members of Debezium's change event envelope.
func debeziumEnvelope(msg []byte) bool {
	if p, t, _, err := jsonparser.Get(msg, "payload"); err == nil && t == jsonparser.Object {
		msg = p
	}
	for _, k := range []string{"op", "before", "after", "source"} {
		if _, _, _, err := jsonparser.Get(msg, k); err == nil {
			return true
		}
	}
	return false
}

func canalRowType(b []byte) bool {
	switch string(b) {
	case "INSERT", "UPDATE", "DELETE":
		return true
	}
	return false
}

func isLower(b []byte) bool { return len(b) > 0 && bytes.Equal(b, bytes.ToLower(b)) }

// Hint returns a one-line suggestion for a message of format f (decoded
// with opts) that failed with err, or "" when there is none to give.
func Hint(f *Format, opts Options, msg []byte, err error) string {
	var me *msgError
	if errors.As(err, &me) && me.hint != "" {
		return me.hint
	}
	g := Sniff(msg)
	if h := f.unit.hint(err, g, opts, msg); h != "" {
		return h
	}
	switch {
	case g.SchemaInclude && !f.unit.traits().connect:
		return fmt.Sprintf("the message looks like a Debezium schema/payload envelope (it has %s): use %s debezium-json with %s debezium-json.schema-include=true", quoteKeys(g.Keys), setting.Format, setting.Option)
	case g.Format != "" && g.Format != f.Name:
		return fmt.Sprintf("the message looks like %s (it has %s): use %s %s", g.Format, quoteKeys(g.Keys), setting.Format, g.Format)
	}
	if errors.Is(err, ErrUnknownOp) && !opts.Producer {
		return f.unit.unknownOpHint()
	}
	return ""
}

func quoteKeys(keys []string) string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = `"` + k + `"`
	}
	return strings.Join(q, ", ")
}

// timestampHint says why text that failed as TIMESTAMP(p) or
// TIMESTAMP_LTZ(p) under the given standard probably did: an epoch number,
// the other standard, a missing or numeric zone.
func timestampHint(format string, v []byte, t jsonparser.ValueType, iso, ltz bool) string {
	opt := format + ".timestamp-format.standard"
	if t == jsonparser.Number {
		return "Flink's JSON formats read timestamps from text only; an epoch number needs a BIGINT column (convert it in SQL)"
	}
	if t != jsonparser.String {
		return ""
	}
	if _, ok := javatext.ParseTimestamp(v, !iso, ltz); ok {
		if iso {
			return "the value is SQL text (a space before the time): add " + setting.Option.String() + " " + opt + "=SQL, or drop ISO-8601"
		}
		return "the value is ISO-8601 text (a T before the time): add " + setting.Option.String() + " " + opt + "=ISO-8601"
	}
	if ltz {
		if _, ok := javatext.ParseTimestamp(v, iso, false); ok {
			return "TIMESTAMP_LTZ text needs a trailing Z (the time in UTC); for wall-clock text declare the column TIMESTAMP"
		}
		if _, ok := javatext.ParseTimestamp(v, !iso, false); ok {
			return "TIMESTAMP_LTZ text needs a trailing Z (the time in UTC), and this value is in the other standard (" + opt + ")"
		}
		if i := bytes.LastIndexAny(v, "+-"); i > 10 {
			return "Flink's JSON formats do not read UTC offsets such as " + string(v[i:]) + "; only a trailing Z"
		}
	} else if bytes.HasSuffix(v, []byte("Z")) {
		if _, ok := javatext.ParseTimestamp(v, iso, true); ok {
			return "the value ends in Z (an instant in UTC): declare the column TIMESTAMP_LTZ"
		}
	}
	return ""
}

// dateHint is timestampHint for DATE.
func dateHint(v []byte, t jsonparser.ValueType) string {
	if t == jsonparser.Number {
		return "Flink's JSON formats read dates from text (yyyy-MM-dd) only: " + setting.Semantics.String() + " producer reads epoch days (Debezium's Date) into DATE, or declare the column INT"
	}
	if _, ok := javatext.ParseTimestamp(v, false, false); ok {
		return "the value has a time: declare the column TIMESTAMP"
	}
	if _, ok := javatext.ParseTimestamp(v, true, false); ok {
		return "the value has a time: declare the column TIMESTAMP (with timestamp-format.standard=ISO-8601)"
	}
	return ""
}

// decimalHint recognises Debezium's base64 two's-complement decimals
// (decimal.handling.mode=precise), which Flink's formats cannot read.
func decimalHint(v []byte, t jsonparser.ValueType) string {
	if t != jsonparser.String || len(v) == 0 || len(v)%4 != 0 {
		return ""
	}
	if _, err := base64.StdEncoding.DecodeString(string(v)); err != nil {
		return ""
	}
	return "this looks like Debezium's base64-encoded decimal (decimal.handling.mode=precise), which Flink cannot read: set the connector's decimal.handling.mode=string, or declare the column BYTES"
}

// TableSet collects the distinct table names seen (up to eight), for
// warnings. The zero value is empty; it is not safe for concurrent use.
type TableSet struct {
	names map[string]bool
	more  bool
}

// Add records a name.
func (s *TableSet) Add(name string) {
	if s.names == nil {
		s.names = map[string]bool{}
	}
	if len(s.names) >= 8 && !s.names[name] {
		s.more = true
		return
	}
	s.names[name] = true
}

// String lists the names.
func (s *TableSet) String() string {
	var n []string
	for k := range s.names {
		n = append(n, k)
	}
	sort.Strings(n)
	out := strings.Join(n, ", ")
	if s.more {
		out += ", ..."
	}
	return out
}

// RowKeys returns the keys of the first row image of a message of format
// f (canal data[0], maxwell data, ogg and debezium after or before, the
// plain json object itself), for warnings about columns no message has.
func RowKeys(f *Format, opts Options, msg []byte) []string {
	msg = bytes.TrimPrefix(msg, []byte("\xef\xbb\xbf"))
	paths := f.unit.rowPaths(opts)
	for _, p := range paths {
		v, t, _, err := jsonparser.Get(msg, p...)
		if err != nil || t != jsonparser.Object {
			continue
		}
		var keys []string
		jsonparser.ObjectEach(v, func(k, _ []byte, _ jsonparser.ValueType, _ int) error {
			keys = append(keys, string(k))
			return nil
		})
		return keys
	}
	return nil
}

// Len is the number of distinct names recorded.
func (s *TableSet) Len() int { return len(s.names) }

// unq is a JSON string's content as text (escapes resolved).
func unq(v []byte) string {
	if !hasEscape(v) {
		return string(v)
	}
	return string(unescape(nil, v))
}

// Detect tells the format of an input from its first messages (at most
// 16 with a JSON object): the one every sniffed message agrees on.
// evidence names the keys that decided; an input whose messages disagree
// is an error naming the line and both formats.
func Detect(lines [][]byte, firstLine int) (f *Format, schemaInclude bool, evidence string, err error) {
	var found, control Sniffed
	foundLine, controlLine := 0, 0
	for i, l := range lines {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		s := Sniff(l)
		if s.Format == "" {
			continue
		}
		if s.Control {
			if control.Format == "" {
				control, controlLine = s, firstLine+i
			}
			continue
		}
		if found.Format == "" {
			found, foundLine = s, firstLine+i
			continue
		}
		if s.Format != found.Format || s.SchemaInclude != found.SchemaInclude {
			return nil, false, "", fmt.Errorf("%w: line %d looks like %s (it has %s) but line %d like %s (it has %s): give %s, or keep each format in files of its own",
				ErrDetect, foundLine, found.describe(), quoteKeys(found.Keys), firstLine+i, s.describe(), quoteKeys(s.Keys), setting.Format)
		}
	}
	if found.Format == "" && control.Format != "" {
		// Only records without rows (a file of DDL records, a transaction
		// topic): their format, and no rows to come of them.
		found, foundLine = control, controlLine
	}
	if found.Format == "" {
		return nil, false, "", fmt.Errorf("%w: no message among the first lines has the keys of a CDC format (Canal: data, type, isDdl; Maxwell: database, table, type, data; GoldenGate: op_type, table; Debezium: op and before/after, or schema/payload): give %s", ErrDetect, setting.Format)
	}
	f, _ = Lookup(found.Format)
	return f, found.SchemaInclude, fmt.Sprintf("line %d has %s", foundLine, quoteKeys(found.Keys)), nil
}

func (s Sniffed) describe() string {
	if s.SchemaInclude {
		return s.Format + " with schema-include"
	}
	return s.Format
}

// ErrDetect is returned by Detect when an input's format cannot be told.
var ErrDetect = errors.New("cannot tell the input's format")
