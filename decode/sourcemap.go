package decode

import (
	"unsafe"

	"github.com/buger/jsonparser"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// sourceMembersMap makes source.properties (typ, a MAP, into mc) from the
// members the compact path of captureSource listed for this message, when
// it read the block (source.* metadata is declared too): the block is not
// walked a second time. Otherwise, and under plain decoding, general
// fills it. The listed keys are unique and unescaped, in the message's
// order, as the general map converter would have them; the key and value
// converters are the ones it has (under producer semantics too).
func (d *base) sourceMembersMap(general func(arrowconv.Column) error, mc *arrowconv.MapCol, typ arrowconv.Type) func(arrowconv.Column) error {
	d.cx.curEnc = nil // as the general map converter builds its own: each type's default encoding
	keyConv := d.cx.newConv(*typ.Elem, mc.Keys)
	valConv := d.cx.newConv(*typ.Value, mc.Values)
	return func(c arrowconv.Column) error {
		if !sourceMembersFast || d.plain || d.srcField < 0 || d.srcFastSeq != d.msgSeq || d.env[d.srcField].t != jsonparser.Object {
			return general(c)
		}
		b, at := d.sc.msg, d.srcFastAt
		mc.Start()
		for _, mb := range d.srcPrev.members {
			name := d.srcOrder[mb.pos].name
			if err := keyConv(unsafe.Slice(unsafe.StringData(name), len(name)), jsonparser.String); err != nil {
				return d.cx.nullOrErr(mc, err)
			}
			v0 := at + int(mb.v0)
			if err := valConv(b[v0:v0+int(mb.vn)], mb.t); err != nil {
				return d.cx.nullOrErr(mc, withPath(err, name))
			}
		}
		return nil
	}
}

// sourceMembersFast turns sourceMembersMap's path on (a test compares it
// with the general one).
var sourceMembersFast = true
