package decode

import (
	"unsafe"

	"github.com/buger/jsonparser"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/internal/javatext"
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
	// Flink's STRING keys and values: a listed key (plain, no escapes) and
	// a NULL, a string with nothing to unescape, a boolean or an integer
	// go straight to the columns, as the converters would put them; the
	// rest goes through the converters. Both columns or neither.
	var keyCol, valCol *arrowconv.BytesCol
	if d.cx.prod == nil && typ.Elem.IsString() && typ.Value.IsString() {
		keyCol, _ = mc.Keys.(*arrowconv.BytesCol)
		valCol, _ = mc.Values.(*arrowconv.BytesCol)
		if keyCol == nil || valCol == nil {
			keyCol, valCol = nil, nil
		}
	}
	return func(c arrowconv.Column) error {
		if !sourceMembersFast || d.plain || d.srcField < 0 || d.srcFastSeq != d.msgSeq || d.env[d.srcField].t != jsonparser.Object {
			return general(c)
		}
		b, at := d.sc.msg, d.srcFastAt
		members := d.srcPrev.members
		mc.Start()
		if keyCol != nil {
			// STRING keys and values (no conversion can fail): the keys
			// go in at once.
			d.appendSourceKeys(keyCol, members)
		}
		for x := range members {
			mb := &members[x]
			name := d.srcOrder[mb.pos].name
			if keyCol == nil {
				if err := keyConv(unsafe.Slice(unsafe.StringData(name), len(name)), jsonparser.String); err != nil {
					return d.cx.nullOrErr(mc, err)
				}
			}
			v0 := at + int(mb.v0)
			v := b[v0 : v0+int(mb.vn)]
			if valCol != nil {
				switch {
				case mb.t == jsonparser.Null:
					valCol.AppendNull()
					continue
				case mb.t == jsonparser.String && (d.cx.unescaped(v) || !hasEscape(v)),
					mb.t == jsonparser.Boolean,
					mb.t == jsonparser.Number && !javatext.IsFloatLiteral(v) && string(v) != "-0":
					valCol.Append(v) // an integer's text is its digits (Jackson's -0 is 0)
					continue
				}
			}
			if err := valConv(v, mb.t); err != nil {
				return d.cx.nullOrErr(mc, withPath(err, name))
			}
		}
		return nil
	}
}

// appendSourceKeys appends the keys of members to col: the last ones
// again when they are the same members.
func (d *base) appendSourceKeys(col *arrowconv.BytesCol, members []srcMember) {
	k := &d.srcKeys
	same := len(k.pos) == len(members)
	for x := 0; same && x < len(members); x++ {
		same = k.pos[x] == members[x].pos
	}
	if !same {
		k.pos, k.data, k.starts = k.pos[:0], k.data[:0], k.starts[:0]
		for x := range members {
			k.pos = append(k.pos, members[x].pos)
			k.starts = append(k.starts, int32(len(k.data)))
			k.data = append(k.data, d.srcOrder[members[x].pos].name...)
		}
	}
	col.AppendValues(k.data, k.starts)
}

// sourceMembersFast turns sourceMembersMap's path on (a test compares it
// with the general one).
var sourceMembersFast = true
