package decode

import (
	"github.com/buger/jsonparser"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// plainJSON is Flink's append-only json format: each message is one row,
// always +I. It shares the field converters with the CDC formats.
type plainJSON struct{ *base }

func newPlainJSON(b *base) opDecoder { return &plainJSON{b} }

func (p *plainJSON) envelope() []string { return nil }

func (p *plainJSON) decode(root []byte) (Outcome, error) {
	return Emitted, p.emitObject(arrowconv.Insert, "", slot{root, jsonparser.Object})
}
