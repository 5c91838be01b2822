package decode

import (
	"fmt"

	"github.com/buger/jsonparser"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// metaCol is one declared METADATA column and how to fill it.
type metaCol struct {
	key  string
	col  arrowconv.Column
	fill func(arrowconv.Column) error
}

// bindMeta decides, once per schema, how metadata column m is filled.
func (d *base) bindMeta(m *metaCol) error {
	switch m.key {
	case "file.path":
		m.fill = func(c arrowconv.Column) error { c.(*arrowconv.BytesCol).AppendString(d.file.Path); return nil }
		return nil
	case "file.name":
		m.fill = func(c arrowconv.Column) error { c.(*arrowconv.BytesCol).AppendString(d.file.Name); return nil }
		return nil
	case "file.size":
		m.fill = func(c arrowconv.Column) error { c.(*arrowconv.FixedCol[int64]).Append(d.file.Size); return nil }
		return nil
	case "file.modification-time":
		m.fill = func(c arrowconv.Column) error {
			c.(*arrowconv.FixedCol[int64]).Append(d.file.ModTime - d.file.ModTime%1e6)
			return nil
		}
		return nil
	}
	mk, _ := d.format.metaKey(m.key)
	fromField := func(name string) {
		conv := d.cx.newConv(mk.Type, m.col)
		f := d.field(name)
		m.fill = func(arrowconv.Column) error {
			s := d.get(f)
			return conv(s.v, s.t)
		}
	}
	switch d.format.Name + " " + m.key {
	case "canal-json database", "maxwell-json database":
		fromField("database")
	case "canal-json table", "maxwell-json table", "ogg-json table":
		fromField("table")
	case "canal-json sql-type":
		fromField("sqlType")
	case "canal-json pk-names":
		fromField("pkNames")
	case "maxwell-json primary-key-columns":
		fromField("primary_key_columns")
	case "ogg-json primary-keys":
		fromField("primary_keys")
	case "debezium-json schema":
		fromField("schema")
	case "debezium-json source.properties":
		fromField("source")
	case "canal-json ingestion-timestamp":
		m.fill = d.epochMeta("ts", 1e6)
	case "canal-json event-timestamp":
		m.fill = d.epochMeta("es", 1e6)
	case "debezium-json ingestion-timestamp":
		m.fill = d.epochMeta("ts_ms", 1e6)
	case "maxwell-json ingestion-timestamp":
		m.fill = d.epochMeta("ts", 1e9)
	case "ogg-json ingestion-timestamp":
		f := d.field("current_ts")
		m.fill = func(c arrowconv.Column) error {
			s := d.get(f)
			if s.t == jsonparser.NotExist || s.t == jsonparser.Null {
				c.AppendNull()
				return nil
			}
			ns, ok := parseOggCurrentTS(d.stringText(s))
			if !ok {
				c.AppendNull() // spec §6: an unparseable current_ts is NULL, not an error
				return nil
			}
			c.(*arrowconv.FixedCol[int64]).Append(ns)
			return nil
		}
	case "ogg-json event-timestamp":
		f := d.field("op_ts")
		m.fill = func(c arrowconv.Column) error {
			s := d.get(f)
			if s.t == jsonparser.NotExist || s.t == jsonparser.Null {
				c.AppendNull()
				return nil
			}
			ns, ok := parseOggOpTS(d.stringText(s))
			if !ok {
				// Not a value error: Flink's converter throws in emitRow, which
				// fails (or, with ignore-parse-errors, drops) the message.
				return &msgError{off: d.cx.valueOff(s.v), err: errorf(ErrType, fmt.Sprintf("cannot parse op_ts %q", d.stringText(s)))}
			}
			c.(*arrowconv.FixedCol[int64]).Append(ns)
			return nil
		}
	case "debezium-json source.timestamp":
		d.srcField = d.envIdx["source"]
		m.fill = func(c arrowconv.Column) error {
			v, t := d.sourceProp(3) // ts_ms
			if t == jsonparser.NotExist || t == jsonparser.Null {
				c.AppendNull()
				return nil
			}
			text := d.stringText(slot{v, t})
			ms, ok := parseJavaInt(text, 64) // Long.parseLong, no trimming
			if !ok {
				return &msgError{off: d.cx.valueOff(v), err: errorf(ErrType, fmt.Sprintf("cannot parse source.ts_ms %q as epoch milliseconds", text))}
			}
			ns, ok := mulCheck(ms, 1e6)
			if !ok {
				return &msgError{off: d.cx.valueOff(v), err: errorf(ErrType, "source.ts_ms out of range")}
			}
			c.(*arrowconv.FixedCol[int64]).Append(ns)
			return nil
		}
	case "debezium-json source.database", "debezium-json source.schema", "debezium-json source.table":
		prop := map[string]int{"source.database": 0, "source.schema": 1, "source.table": 2}[m.key] // index in sourceProps
		d.srcField = d.envIdx["source"]
		conv := d.cx.newConv(str, m.col)
		m.fill = func(arrowconv.Column) error {
			v, t := d.sourceProp(prop)
			return conv(v, t)
		}
	default:
		return fmt.Errorf("decode: metadata key %q of %s has no reader", m.key, d.format.Name)
	}
	return nil
}

// epochMeta reads a top-level field as BIGINT (Flink's lenient integer
// rules) and stores it as a timestamp, unit nanoseconds per count.
func (d *base) epochMeta(name string, unit int64) func(arrowconv.Column) error {
	f := d.field(name)
	return func(c arrowconv.Column) error {
		s := d.get(f)
		if s.t == jsonparser.NotExist || s.t == jsonparser.Null {
			c.AppendNull()
			return nil
		}
		n, ok := d.cx.integer(s.v, s.t, 64)
		var ns int64
		if ok {
			ns, ok = mulCheck(n, unit)
		}
		if !ok {
			if d.cx.lenient {
				c.AppendNull()
				return nil
			}
			return d.cx.fail(s.v, "BIGINT", "")
		}
		c.(*arrowconv.FixedCol[int64]).Append(ns)
		return nil
	}
}

func mulCheck(a, b int64) (int64, bool) {
	if a == 0 {
		return 0, true
	}
	r := a * b
	if r/b != a {
		return 0, false
	}
	return r, true
}

// stringText is the STRING conversion of a value: content, number text, or
// compact JSON for containers.
func (d *base) stringText(s slot) []byte {
	if s.t == jsonparser.Object || s.t == jsonparser.Array {
		d.cx.canon = appendCanonical(d.cx.canon[:0], s.v, s.t, d.cx.exact, &d.cx.esc)
		return d.cx.canon
	}
	return d.cx.textOf(s.v, s.t)
}

// sourceProps are the members of debezium's "source" object that
// metadata columns read.
var sourceProps = [...]string{"db", "schema", "table", "ts_ms"}

func sourcePropIndex(k []byte) int {
	for i, p := range sourceProps {
		if string(k) == p {
			return i
		}
	}
	return -1
}

// sourceProp returns one member of debezium's "source" object (which
// Flink reads as MAP<STRING, STRING>: a non-object is an empty map, and a
// repeated key keeps its last value), as captured during the scan.
func (d *base) sourceProp(i int) ([]byte, jsonparser.ValueType) {
	if d.env[d.srcField].t != jsonparser.Object {
		return nil, jsonparser.NotExist
	}
	s := d.src[i]
	return s.v, s.t
}
