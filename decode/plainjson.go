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

func (p *plainJSON) bind() {}

func (p *plainJSON) decode(root []byte) (Outcome, error) {
	return Emitted, p.emitObject(arrowconv.Insert, "", -1, slot{root, jsonparser.Object})
}

// plainEnc writes Flink's json format: the row object only, whatever its
// kind (the format has no changelog).
type plainEnc struct{ e *Encoder }

func (p *plainEnc) flink(dst []byte, _ arrowconv.RowKind, r *encodedRow) []byte {
	return p.e.appendRow(dst, r, nil, false)
}

func (p *plainEnc) update(dst []byte, before, after *encodedRow) []byte {
	dst = append(p.flink(dst, arrowconv.UpdateBefore, before), '\n')
	return p.flink(dst, arrowconv.UpdateAfter, after)
}

// plainUnit is json's unit (unit.go): a message is a row, with no table
// and no position.
type plainUnit struct {
	noRoute
	noHint
	noTypes
}

// observe: a plain row names no table and no position.
func (plainUnit) observe(bool, []byte, *Observation) bool { return false }

func (plainUnit) newDecoder(b *base) opDecoder          { return &plainJSON{b} }
func (plainUnit) newEncoder(e *Encoder) envelopeEncoder { return &plainEnc{e} }
func (plainUnit) positionFields() []string              { return nil }
func (plainUnit) traits() traits                        { return traits{plain: true} }
func (plainUnit) rowPaths(Options) [][]string           { return [][]string{{}} }
func (plainUnit) unknownOpHint() string                 { return "" }

func (plainUnit) bindPosition(d *base, m *metaCol, _ func(string) func() ([]byte, bool)) error {
	m.fill = func(c arrowconv.Column) error { c.(*arrowconv.BytesCol).AppendNull(); return nil }
	return nil
}
