package decode

import (
	"github.com/buger/jsonparser"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// The source-position metadata key: where a change sits in its source's
// log, as text that sorts in log order among the changes of one source
// (one MySQL server, one Postgres slot, one GoldenGate trail). Components
// are joined by "/"; a number is zero-padded to 20 digits so that text
// order is numeric order; a component the message lacks is empty:
//
//	canal-json     es/id                       (event time ms, message id)
//	maxwell-json   FILE/OFFSET/XOFFSET         (from position "FILE:OFFSET"),
//	               or ts/xid/xoffset without a position
//	ogg-json       pos                         (trail sequence and RBA), or csn
//	debezium-json  by source.connector:
//	  mysql        file/pos/row
//	  postgresql   lsn
//	  sqlserver    commit_lsn/change_lsn/event_serial_no
//	  oracle       commit_scn/scn
//	  mongodb      ts_ms/ord
//	  others       ts_ms, then every position field the source has
//
// A message with none of its format's fields has a NULL position.

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

func (d *base) bindMaxwellPosition(m *metaCol, field func(string) func() ([]byte, bool)) error {
	position, ts, xid, xoffset := field("position"), field("ts"), field("xid"), field("xoffset")
	m.fill = func(c arrowconv.Column) error {
		b := d.posBuf[:0]
		col := c.(*arrowconv.BytesCol)
		if p, ok := position(); ok {
			// "mysql-bin.000003:4242": the file, then the offset as a number.
			cut := len(p)
			for i := len(p) - 1; i >= 0; i-- {
				if p[i] == ':' {
					cut = i
					break
				}
			}
			b = append(b, p[:cut]...)
			b = append(b, '/')
			if cut < len(p) {
				b = appendPositionPart(b, p[cut+1:])
			}
		} else {
			t, okT := ts()
			x, okX := xid()
			if !okT && !okX {
				col.AppendNull()
				return nil
			}
			b = appendPositionPart(b, t)
			b = append(b, '/')
			b = appendPositionPart(b, x)
		}
		b = append(b, '/')
		if v, ok := xoffset(); ok {
			b = appendPositionPart(b, v)
		}
		d.posBuf = b
		col.Append(b)
		return nil
	}
	return nil
}

// debeziumPositions are the source fields of each connector's position,
// in order.
var debeziumPositions = map[string][]string{
	"mysql":      {"file", "pos", "row"},
	"postgresql": {"lsn"},
	"sqlserver":  {"commit_lsn", "change_lsn", "event_serial_no"},
	"oracle":     {"commit_scn", "scn"},
	"mongodb":    {"ts_ms", "ord"},
}

func (d *base) bindDebeziumPosition(m *metaCol) error {
	// The fields come from the scan of "source" (sourceProps): no second
	// pass over the object.
	d.srcField = d.envIdx["source"]
	prop := func(name string) int {
		for i, p := range sourceProps {
			if p == name {
				return i
			}
		}
		panic("decode: source field " + name + " is not captured")
	}
	rules := map[string][]int{}
	for conn, keys := range debeziumPositions {
		for _, k := range keys {
			rules[conn] = append(rules[conn], prop(k))
		}
	}
	var others []int
	for _, k := range append([]string{"ts_ms"}, DebeziumSourcePos...) {
		others = append(others, prop(k))
	}
	connector := prop("connector")
	m.fill = func(c arrowconv.Column) error {
		col := c.(*arrowconv.BytesCol)
		if d.env[d.srcField].t != jsonparser.Object {
			col.AppendNull()
			return nil
		}
		keys, ok := rules[string(d.src[connector].v)]
		if !ok {
			keys = others
		}
		b, any := d.posBuf[:0], false
		for i, k := range keys {
			if i > 0 {
				b = append(b, '/')
			}
			if s := d.src[k]; s.t != jsonparser.NotExist && s.t != jsonparser.Null {
				b, any = appendPositionPart(b, s.v), true
			}
		}
		d.posBuf = b
		if !any {
			col.AppendNull()
			return nil
		}
		col.Append(b)
		return nil
	}
	return nil
}

const zeros = "00000000000000000000"

// appendPositionPart appends one component: a non-negative integer
// zero-padded to 20 digits, anything else as it is.
func appendPositionPart(b, v []byte) []byte {
	digits := len(v) > 0 && len(v) <= 20
	for _, c := range v {
		if c < '0' || c > '9' {
			digits = false
			break
		}
	}
	if !digits {
		return append(b, v...)
	}
	return append(append(b, zeros[:20-len(v)]...), v...)
}
