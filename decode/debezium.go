package decode

import (
	"github.com/buger/jsonparser"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// debezium decodes debezium-json (spec §7): op c and r insert, u updates,
// d deletes; with schema-include the row lives under "payload".
type debezium struct {
	*base
	op field
}

func newDebezium(b *base) opDecoder { return &debezium{base: b} }

func (d *debezium) envelope() []string {
	return []string{"schema", "payload", "before", "after", "op", "ts_ms", "source"}
}

func (d *debezium) bind() { d.op = d.field("op"); d.bindBeforeAfter() }

func (d *debezium) decode(root []byte) (Outcome, error) {
	if d.opts.SchemaInclude {
		if payload := d.env[1]; payload.t != jsonparser.Object {
			return 0, d.notRow("payload", payload)
		}
	}
	op, opSlot, err := d.opText(d.op)
	if err != nil {
		return 0, err
	}
	return beforeAfter(d.base, string(op), d.op.name, opSlot, "c", "r", "u", "d", "Debezium")
}

// debeziumEnc writes debezium-json (never with schema-include, as Flink).
// Flink: {"before":null,"after":ROW,"op":"c"} and
// {"before":ROW,"after":null,"op":"d"}; a merged update has "op":"u".
type debeziumEnc struct{ e *Encoder }

func (d *debeziumEnc) flink(dst []byte, k arrowconv.RowKind, r *encodedRow) []byte {
	dst = append(dst, '{')
	if k == arrowconv.Insert || k == arrowconv.UpdateAfter {
		dst = d.e.beforeAfter(dst, nil, r)
		dst = d.source(dst, r)
		return d.tail(append(dst, `,"op":"c"`...), r)
	}
	dst = d.e.beforeAfter(dst, r, nil)
	dst = d.source(dst, r)
	return d.tail(append(dst, `,"op":"d"`...), r)
}

func (d *debeziumEnc) update(dst []byte, before, after *encodedRow) []byte {
	dst = append(dst, '{')
	dst = d.e.beforeAfter(dst, before, after)
	dst = d.source(dst, after)
	return d.tail(append(dst, `,"op":"u"`...), after)
}

func (d *debeziumEnc) tail(dst []byte, r *encodedRow) []byte {
	dst = d.e.epochField(dst, r, "ts_ms", 1e3, keysIngest...)
	return append(dst, '}')
}

// source writes the "source" block from the source.* metadata columns
// (Envelope mode): source.properties as the base, then the named keys.
func (d *debeziumEnc) source(dst []byte, r *encodedRow) []byte {
	e := d.e
	if !e.eo.Envelope {
		return dst
	}
	if v, ok := r.meta["source.properties"]; ok {
		return append(append(dst, `,"source":`...), v...)
	}
	n := len(dst)
	dst = append(dst, `,"source":{`...)
	m := len(dst)
	dst = e.metaField(dst, r, "db", "source.database", "database")
	dst = e.metaField(dst, r, "schema", "source.schema")
	dst = e.metaField(dst, r, "table", "source.table", "table")
	dst = e.epochField(dst, r, "ts_ms", 1e3, "source.timestamp", "event-timestamp")
	if len(dst) == m {
		return dst[:n]
	}
	dst = append(dst[:m], dst[m+1:]...)
	return append(dst, '}')
}
