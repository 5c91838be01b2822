package decode

import (
	"bytes"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/buger/jsonparser"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/internal/setting"
)

// replicaIdentity is Flink's text for an update or delete without "before"
// (Flink's wording, Postgres mention included).
const replicaIdentity = "The \"before\" field of %s message is null, if you are using %s Postgres Connector, please check the Postgres table has been set REPLICA IDENTITY to FULL level."

// ogg decodes ogg-json (spec §6): op_type I, U, D with "before"/"after"
// taken as they are (no merging).
type ogg struct {
	*base
	op field
}

func newOgg(b *base) opDecoder { return &ogg{base: b} }

func (o *ogg) envelope() []string {
	return []string{"before", "after", "op_type", "table", "primary_keys", "current_ts", "op_ts"}
}

func (o *ogg) bind() {
	o.op = o.field("op_type")
	o.bindBeforeAfter()
	// GoldenGate compressed updates leave unchanged columns out of "after":
	// under producer semantics they come from "before" where it has them.
	o.fillFromBefore = o.cx.prod != nil
}

func (o *ogg) decode(root []byte) (Outcome, error) {
	op, opSlot, err := o.opText(o.op)
	if err != nil {
		return 0, err
	}
	if o.opts.Producer && string(op) == "T" {
		// A truncate: GoldenGate's JSON formatter writes op_type T.
		table, _ := jsonparser.GetString(root, "table")
		pos, _ := jsonparser.GetString(root, "pos")
		csn, _ := jsonparser.GetString(root, "csn")
		return o.controlled("ogg T", true, table, fmt.Sprintf("pos=%s csn=%s", pos, csn))
	}
	return beforeAfter(o.base, string(op), o.op.name, opSlot, "I", "", "U", "D", "Ogg")
}

// beforeAfter is the dispatch ogg-json and debezium-json share: inserts from
// "after", updates as -U "before" then +U "after", deletes from "before".
func beforeAfter(d *base, op, opField string, opSlot slot, ins1, ins2, upd, del, who string) (Outcome, error) {
	before, after := d.get(d.before), d.get(d.after)
	if d.cx.prod != nil {
		// MongoDB's connector writes the documents as JSON text.
		before, after = d.documentOf(before, 0), d.documentOf(after, 1)
		if op == upd && (before.t == jsonparser.NotExist || before.t == jsonparser.Null) && after.t == jsonparser.Object {
			// No before image (Postgres REPLICA IDENTITY DEFAULT, GoldenGate
			// without before images, MongoDB): the -U row has the key, and
			// every other column is unchanged.
			if err := d.emitKeyOnly(arrowconv.UpdateBefore, after); err != nil {
				return 0, err
			}
			return Emitted, d.emitObject(arrowconv.UpdateAfter, "after", -1, after)
		}
	}
	switch {
	case op == ins1 || (ins2 != "" && op == ins2):
		if err := d.validateRow("before", before); err != nil {
			return 0, err
		}
		return Emitted, d.emitObject(arrowconv.Insert, "after", -1, after)
	case op == upd:
		if err := needBefore(d, before, "UPDATE", who); err != nil {
			return 0, err
		}
		if after.t != jsonparser.Object {
			return 0, d.notRow("after", after)
		}
		if err := d.emitObject(arrowconv.UpdateBefore, "before", -1, before); err != nil {
			return 0, err
		}
		return Emitted, d.emitAfterImage(before, after)
	case op == del:
		if err := needBefore(d, before, "DELETE", who); err != nil {
			return 0, err
		}
		if err := d.validateRow("after", after); err != nil {
			return 0, err
		}
		return Emitted, d.emitObject(arrowconv.Delete, "before", -1, before)
	}
	if err := d.validateRow("before", before); err != nil {
		return 0, err
	}
	if err := d.validateRow("after", after); err != nil {
		return 0, err
	}
	return 0, d.opError(opField, opSlot)
}

func needBefore(d *base, before slot, what, who string) error {
	if before.t == jsonparser.Object {
		return nil
	}
	if !d.cx.lenient && before.t != jsonparser.NotExist && before.t != jsonparser.Null {
		return withPath(d.cx.fail(before.v, "ROW", "not an object"), "before")
	}
	return withPath(errorf(ErrMissingField, fmt.Sprintf(replicaIdentity, what, who)), "before")
}

// oggEnc writes ogg-json. Flink: {"before":null,"after":ROW,"op_type":"I"}
// and {"before":ROW,"after":null,"op_type":"D"}; a merged update has both
// images and "op_type":"U".
type oggEnc struct{ e *Encoder }

func (o *oggEnc) flink(dst []byte, k arrowconv.RowKind, r *encodedRow) []byte {
	dst = o.head(dst, r)
	if k == arrowconv.Insert || k == arrowconv.UpdateAfter {
		dst = o.e.beforeAfter(dst, nil, r)
		return append(dst, `,"op_type":"I"}`...)
	}
	dst = o.e.beforeAfter(dst, r, nil)
	return append(dst, `,"op_type":"D"}`...)
}

func (o *oggEnc) update(dst []byte, before, after *encodedRow) []byte {
	dst = o.head(dst, after)
	dst = o.e.beforeAfter(dst, before, after)
	return append(dst, `,"op_type":"U"}`...)
}

func (o *oggEnc) head(dst []byte, r *encodedRow) []byte {
	dst = append(dst, '{')
	e := o.e
	if !e.eo.Envelope {
		return dst
	}
	n := len(dst)
	dst = e.metaField(dst, r, "table", keysTable...)
	dst = e.appendPK(dst, r, "primary_keys")
	if us, ok := metaAny(r.metaUS, keysEvent); ok {
		dst = append(dst, `,"op_ts":"`...)
		dst = appendMicros(dst, us, ' ')
		dst = append(dst, '"')
	}
	if us, ok := metaAny(r.metaUS, keysIngest); ok {
		dst = append(dst, `,"current_ts":"`...)
		dst = appendMicros(dst, us, 'T')
		dst = append(dst, '"')
	}
	if len(dst) > n {
		dst = append(dst[:n], dst[n+1:]...)
		dst = append(dst, ',')
	}
	return dst
}

// appendMicros writes yyyy-MM-dd<sep>HH:mm:ss.SSSSSS, the shape GoldenGate
// uses and Flink's ogg metadata parsers read.
func appendMicros(dst []byte, us int64, sep byte) []byte {
	t := arrowconv.EpochTime(us, arrow.Microsecond)
	dst = appendDateTime(dst, t, sep)
	dst = append(dst, '.')
	frac := t.Nanosecond() / 1000
	for d := 100000; d > 0; d /= 10 {
		dst = append(dst, byte('0'+frac/d%10))
	}
	return dst
}

// oggUnit is ogg-json's unit (unit.go).
type oggUnit struct {
	noHint
	noTypes
}

func (oggUnit) newDecoder(b *base) opDecoder          { return &ogg{base: b} }
func (oggUnit) newEncoder(e *Encoder) envelopeEncoder { return &oggEnc{e} }
func (oggUnit) positionFields() []string              { return []string{"pos", "csn"} }
func (oggUnit) traits() traits                        { return traits{} }
func (oggUnit) rowPaths(Options) [][]string           { return [][]string{{"after"}, {"before"}} }

func (oggUnit) bindPosition(d *base, m *metaCol, field func(string) func() ([]byte, bool)) error {
	pos, csn := field("pos"), field("csn")
	d.bindParts(m, func() ([]byte, bool) {
		if v, ok := pos(); ok {
			return v, true
		}
		return csn()
	})
	return nil
}

// route stops once "table" ("SCHEMA.TABLE") is read: GoldenGate writes
// it first.
func (oggUnit) route(_ bool, msg []byte) (ns, table []byte, esc, ok bool) {
	var v [2][]byte
	var e, found [2]bool
	firstStrings(msg, routeKeysTable, v[:], e[:], found[:])
	return splitOgg(v[0], e[0], found[0])
}

func (oggUnit) routeForward(_ bool, msg []byte) (ns, table []byte, esc, ok bool) {
	var v [1][]byte
	var e, found [1]bool
	topStrings(msg, 0, routeKeysTable, v[:], e[:], found[:])
	return splitOgg(v[0], e[0], found[0])
}

func (u oggUnit) guess(g *Guesser, schemaInclude bool, msg []byte) (ns, table []byte, esc, ok bool) {
	if g != nil {
		if tb, _, ok := leadingString(msg, `{"table":"`); ok {
			return splitOgg(tb, false, true)
		}
	}
	return u.route(schemaInclude, msg)
}

func (oggUnit) routed(d *base) (ns, table []byte, esc, ok bool) {
	v, ok := routedString(d.get(d.routeTable))
	return splitOgg(v, hasEscape(v), ok)
}

func (oggUnit) unknownOpHint() string {
	return "Flink's ogg-json knows only the op_types I, U and D: " + setting.Semantics.String() + " producer counts truncates (T) as control messages (or ignore-parse-errors drops them, dead-lettered)"
}

var (
	oggEvidence = [][]string{{"table"}, {"op_type"}, {"op_ts"}, {"pos"}, {"primary_keys"}, {"before"}, {"after"}}
	// oggEvidenceFacts adds what Facts reads that oggEvidence lacks.
	oggEvidenceFacts = append(oggEvidence[:len(oggEvidence):len(oggEvidence)], []string{"csn"})
)

func (oggUnit) observe(_ bool, msg []byte, o *Observation) bool {
	f := o.fields[:len(oggEvidence)]
	if x := o.facts; x != nil {
		f = o.fields[:len(oggEvidenceFacts)]
		if x.Valid = validAfter(pick(msg, f, oggEvidenceFacts), msg); x.Valid {
			if f[3].ok && f[3].t != jsonparser.Null {
				x.Position = x.parts(f[3])
			} else {
				x.Position = x.parts(f[7])
			}
		}
		x.filled = true
	} else {
		pick(msg, f, oggEvidence)
	}
	o.Table = f[0].str(&o.name)
	if i := bytes.IndexByte(o.Table, '.'); i >= 0 {
		o.NS, o.Table = o.Table[:i], o.Table[i+1:] // SCHEMA.TABLE
	}
	o.pos = append(append(o.pos, "pos="...), f[3].str(&o.tmp)...)
	o.Event, o.Milli, o.Position = true, oggMilli(f[2].str(&o.tmp)), o.pos
	if o.Op = f[1].op("I", "", "U", "D"); o.Op == 0 {
		o.Control = f[1].text()
		return true
	}
	o.PrimaryKey, o.Changes = f[4].of(jsonparser.Array), 1
	for _, img := range f[5:7] {
		if v := img.of(jsonparser.Object); v != nil {
			o.Images = append(o.Images, v)
		}
	}
	return true
}
