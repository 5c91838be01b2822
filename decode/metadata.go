package decode

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/buger/jsonparser"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/internal/javatext"
)

// bindMeta decides, once per schema, how metadata column m is filled.
func (d *base) bindMeta(m *metaCol) error {
	switch m.key {
	case "file.path":
		m.fill = func(c arrowconv.Column) error { c.(*arrowconv.BytesCol).AppendString(d.file.Path); return nil }
		return nil
	case "file.name":
		m.fill = func(c arrowconv.Column) error { c.(*arrowconv.BytesCol).AppendString(d.file.Name); return nil }
		return nil
	case "file.line":
		m.fill = func(c arrowconv.Column) error { c.(*arrowconv.FixedCol[int64]).Append(d.line); return nil }
		return nil
	case SourcePositionKey:
		return d.bindPosition(m)
	case "file.size":
		m.fill = func(c arrowconv.Column) error { c.(*arrowconv.FixedCol[int64]).Append(d.file.Size); return nil }
		return nil
	case "file.modification-time":
		unit := tsUnit(m.typ)
		m.fill = func(c arrowconv.Column) error {
			// Flink's connector gives milliseconds.
			v, _ := arrowconv.EpochScale(floorDiv(d.file.ModTime, 1e6), 1e6, unit)
			c.(*arrowconv.FixedCol[int64]).Append(v)
			return nil
		}
		return nil
	}
	mk, _ := d.format.metaKey(m.key)
	fromField := func(name string) {
		conv := d.cx.newConv(mk.Type, m.col)
		f := d.field(name)
		switch mk.Type.Kind {
		case arrowconv.Map, arrowconv.Multiset, arrowconv.Array:
		default:
			m.fill = func(arrowconv.Column) error {
				s := d.get(f)
				return conv(s.v, s.t)
			}
			return
		}
		// A map or list from the envelope (Canal's sqlType and pkNames) is
		// often the same bytes message after message: then the value is a
		// copy of the last one's, while that row is still in the builder,
		// instead of a walk and a conversion of every entry. Only a
		// conversion without side effects (no value nulled, no zero date)
		// is reused. Values that change every message (Debezium's source,
		// with its positions) stop the keeping of copies after a while.
		var last []byte
		var lastT jsonparser.ValueType
		lastRow, epoch := -1, uint64(0)
		hits, misses := 0, 0
		m.fill = func(c arrowconv.Column) error {
			s := d.get(f)
			if lastRow >= 0 && !d.plain && epoch == d.b.Epoch() && lastRow < c.Len() && s.t == lastT {
				if string(s.v) == string(last) {
					hits++
					c.AppendCopy(lastRow)
					lastRow = c.Len() - 1
					return nil
				}
				misses++
			}
			row, nulled, zero := c.Len(), len(d.cx.nulled), d.cx.zeroDates
			err := conv(s.v, s.t)
			lastRow = -1
			if misses >= 64 && hits < misses/4 {
				return err
			}
			if err == nil && c.Len() == row+1 && len(d.cx.nulled) == nulled && d.cx.zeroDates == zero {
				last, lastT, lastRow, epoch = append(last[:0], s.v...), s.t, row, d.b.Epoch()
			}
			return err
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
		if m.typ.Kind == arrowconv.Map {
			m.fill = d.sourceMembersMap(m.fill, m.col.(*arrowconv.MapCol), m.typ)
		}
	case "canal-json ingestion-timestamp":
		m.fill = d.epochMeta(m, "ts", 1e6)
	case "canal-json event-timestamp":
		m.fill = d.epochMeta(m, "es", 1e6)
	case "debezium-json ingestion-timestamp":
		m.fill = d.epochMeta(m, "ts_ms", 1e6)
	case "maxwell-json ingestion-timestamp":
		m.fill = d.epochMeta(m, "ts", 1e9)
	case "ogg-json ingestion-timestamp":
		f := d.field("current_ts")
		unit := tsUnit(m.typ)
		c := m.col.(*arrowconv.FixedCol[int64])
		var cache javatext.StampCache // consecutive messages' current_ts share their minute
		inner := func(v []byte, t jsonparser.ValueType) error {
			text := d.stringText(slot{v, t})
			ct, ok := cache.OggCurrentTS(text)
			if !ok && d.cx.prod != nil {
				ct, ok = producerCivil(text) // GoldenGate's native yyyy-MM-dd:HH:mm:ss[.f], ISO
			}
			if !ok {
				c.AppendNull() // spec §6: an unparseable current_ts is NULL, not an error
				return nil
			}
			ts, ok := arrowconv.EpochValue(ct.Days, ct.NsOfDay, unit)
			if !ok {
				return d.cx.fail(v, m.typ.String(), "current_ts is "+outsideRange(m.typ, unit))
			}
			c.Append(ts)
			return nil
		}
		m.fill = func(arrowconv.Column) error {
			s := d.get(f)
			return d.cx.apply(inner, c, s.v, s.t)
		}
	case "ogg-json event-timestamp":
		f := d.field("op_ts")
		unit := tsUnit(m.typ)
		var cache javatext.StampCache // consecutive messages' op_ts share their minute
		m.fill = func(c arrowconv.Column) error {
			s := d.get(f)
			if s.t == jsonparser.NotExist || s.t == jsonparser.Null {
				c.AppendNull()
				return nil
			}
			ct, ok := cache.OggOpTS(d.stringText(s))
			if !ok && d.cx.prod != nil {
				ct, ok = producerCivil(d.stringText(s))
			}
			if !ok {
				// Not a value error: Flink's converter throws in emitRow, which
				// fails (or, with ignore-parse-errors, drops) the message.
				return &msgError{off: d.cx.valueOff(s.v), err: errorf(ErrType, fmt.Sprintf("cannot parse op_ts %q", d.stringText(s)))}
			}
			ts, ok := arrowconv.EpochValue(ct.Days, ct.NsOfDay, unit)
			if !ok {
				return &msgError{off: d.cx.valueOff(s.v), err: errorf(ErrType, fmt.Sprintf("op_ts %q is %s", d.stringText(s), outsideRange(m.typ, unit)))}
			}
			c.(*arrowconv.FixedCol[int64]).Append(ts)
			return nil
		}
	case "debezium-json source.timestamp":
		d.srcField = d.envIdx["source"]
		unit := tsUnit(m.typ)
		m.fill = func(c arrowconv.Column) error {
			v, t := d.sourceProp(3) // ts_ms
			if t == jsonparser.NotExist || t == jsonparser.Null {
				c.AppendNull()
				return nil
			}
			text := d.stringText(slot{v, t})
			ms, ok := javatext.ParseInt(text, 64) // Long.parseLong, no trimming
			if !ok {
				return &msgError{off: d.cx.valueOff(v), err: errorf(ErrType, fmt.Sprintf("cannot parse source.ts_ms %q as epoch milliseconds", text))}
			}
			ts, ok := arrowconv.EpochScale(ms, 1e6, unit)
			if !ok {
				return &msgError{off: d.cx.valueOff(v), err: errorf(ErrType, fmt.Sprintf("source.ts_ms %s (epoch milliseconds) is %s", text, outsideRange(m.typ, unit)))}
			}
			c.(*arrowconv.FixedCol[int64]).Append(ts)
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
		return fmt.Errorf("metadata key %q of %s has no reader", m.key, d.format.Name)
	}
	return nil
}

// epochMeta reads a top-level field as BIGINT (Flink's lenient integer
// rules) counting units of unitNanos nanoseconds since the epoch, and
// stores it in m's column. Under ignore-parse-errors a value that does not
// convert is NULL and recorded, as any other value.
func (d *base) epochMeta(m *metaCol, name string, unitNanos int64) func(arrowconv.Column) error {
	f := d.field(name)
	unit := tsUnit(m.typ)
	c := m.col.(*arrowconv.FixedCol[int64])
	what := map[int64]string{1e6: "milliseconds", 1e9: "seconds"}[unitNanos]
	inner := func(v []byte, t jsonparser.ValueType) error {
		n, ok := d.cx.integer(v, t, 64)
		if !ok {
			return d.cx.fail(v, "BIGINT", fmt.Sprintf("%s is read as epoch %s", name, what))
		}
		ts, ok := arrowconv.EpochScale(n, unitNanos, unit)
		if !ok {
			return d.cx.fail(v, m.typ.String(), fmt.Sprintf("%s %d (epoch %s) is %s", name, n, what, outsideRange(m.typ, unit)))
		}
		c.Append(ts)
		return nil
	}
	return func(arrowconv.Column) error {
		s := d.get(f)
		return d.cx.apply(inner, c, s.v, s.t)
	}
}

// tsUnit is the Arrow unit a timestamp column of type t is held in.
func tsUnit(t arrowconv.Type) arrow.TimeUnit { return arrowconv.TimestampUnit(t.Precision) }

// outsideRange says that a value does not fit a timestamp column.
func outsideRange(t arrowconv.Type, unit arrow.TimeUnit) string {
	return "outside the range " + t.String() + " can hold (" + arrowconv.TimestampRange(unit) + ")"
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
var sourceProps = [...]string{"db", "schema", "table", "ts_ms", "collection",
	// source-position's fields (position.go), from index srcPosFirst.
	"connector", "file", "pos", "row", "gtid", "lsn", "txId", "change_lsn", "commit_lsn", "event_serial_no", "scn", "commit_scn", "ord"}

// srcPosFirst is the index in sourceProps of "connector".
const srcPosFirst = 5

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

// bindPosition fills a source-position column, as the format's unit
// reads its position.
func (d *base) bindPosition(m *metaCol) error {
	field := func(name string) func() ([]byte, bool) {
		f := d.field(name)
		return func() ([]byte, bool) {
			s := d.get(f)
			if s.t == jsonparser.NotExist || s.t == jsonparser.Null {
				return nil, false
			}
			return s.v, true
		}
	}
	return d.format.unit.bindPosition(d, m, field)
}

// bindParts fills m with the parts joined by '/' (NULL when the message
// has none of them).
func (d *base) bindParts(m *metaCol, parts ...func() ([]byte, bool)) {
	m.fill = func(c arrowconv.Column) error {
		b, any := d.posBuf[:0], false
		for i, p := range parts {
			if i > 0 {
				b = append(b, '/')
			}
			if v, ok := p(); ok {
				b, any = appendPositionPart(b, v), true
			}
		}
		d.posBuf = b
		col := c.(*arrowconv.BytesCol)
		if !any {
			col.AppendNull()
			return nil
		}
		col.Append(b)
		return nil
	}
}
