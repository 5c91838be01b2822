package decode

import (
	"github.com/buger/jsonparser"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// maxwell decodes maxwell-json (spec §5): "data" is the row, "old" holds the
// changed columns of an update. Only insert, update and delete are known;
// DDL and bootstrap records are errors.
type maxwell struct{ *base }

func newMaxwell(b *base) opDecoder { return &maxwell{b} }

func (m *maxwell) envelope() []string {
	return []string{"data", "old", "type", "database", "table", "primary_key_columns", "ts"}
}

func (m *maxwell) decode(root []byte) (Outcome, error) {
	m.scanEnvelope(root, m.envIdx, m.env)
	op, opSlot, err := m.opText("type")
	if err != nil {
		return 0, err
	}
	data, old := m.envSlot("data"), m.envSlot("old")
	switch string(op) {
	case "insert", "delete":
		if err := m.validateRow("old", old); err != nil {
			return 0, err
		}
		kind := arrowconv.Insert
		if op[0] == 'd' {
			kind = arrowconv.Delete
		}
		return Emitted, m.emitObject(kind, "data", data)
	case "update":
		if old.t != jsonparser.Object {
			return 0, (&canal{base: m.base}).notRow("old", old)
		}
		if data.t != jsonparser.Object {
			return 0, (&canal{base: m.base}).notRow("data", data)
		}
		m.markPresent(old.v, old.t)
		if err := m.emitMergedBefore(old.v, data.v); err != nil {
			return 0, withPath(err, "old")
		}
		return Emitted, m.emitObject(arrowconv.UpdateAfter, "data", data)
	}
	if err := m.validateRow("data", data); err != nil {
		return 0, err
	}
	if err := m.validateRow("old", old); err != nil {
		return 0, err
	}
	return 0, m.opError("type", opSlot)
}
