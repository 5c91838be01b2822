package decode

import (
	"github.com/buger/jsonparser"
)

// debezium decodes debezium-json (spec §7): op c and r insert, u updates,
// d deletes; with schema-include the row lives under "payload".
type debezium struct {
	*base
	rootIdx map[string]int
}

func newDebezium(b *base) opDecoder {
	return &debezium{base: b, rootIdx: map[string]int{"schema": 0, "payload": 1}}
}

func (d *debezium) envelope() []string {
	return []string{"schema", "payload", "before", "after", "op", "ts_ms", "source"}
}

func (d *debezium) decode(root []byte) (Outcome, error) {
	d.scanEnvelope(root, d.envIdx, d.env)
	if d.opts.SchemaInclude {
		schema, payload := d.env[0], d.env[1]
		if payload.t != jsonparser.Object {
			return 0, (&canal{base: d.base}).notRow("payload", payload)
		}
		d.scanEnvelope(payload.v, d.envIdx, d.env)
		d.env[0], d.env[1] = schema, payload // "schema" is read from the root only
	}
	op, opSlot, err := d.opText("op")
	if err != nil {
		return 0, err
	}
	return beforeAfter(d.base, string(op), "op", opSlot, "c", "r", "u", "d", "Debezium")
}
