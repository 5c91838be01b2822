package decode

import (
	"bytes"

	"github.com/buger/jsonparser"
)

var (
	canalFacts    = [][]string{{"es"}, {"id"}, {"gtid"}}
	maxwellFacts  = [][]string{{"position"}, {"ts"}, {"xid"}, {"xoffset"}, {"commit"}, {"gtid"}, {"server_id"}}
	oggFacts      = [][]string{{"pos"}, {"csn"}}
	debeziumFacts = [][]string{{"source"}, {"transaction"}, {"status"}, {"id"}, {"event_count"}, {"data_collections"}}
)

// Facts reads msg's evidence of its place in its stream into x, as f
// places it (schemaInclude: Debezium's schema/payload envelope). One walk
// over the message both validates it and picks the fields. A byte-order
// mark is the caller's to remove, as for Observe.
func (f *Format) Facts(schemaInclude bool, msg []byte, x *Facts) {
	x.reset()
	switch f.Name {
	case "canal-json":
		p := x.fields[:len(canalFacts)]
		if x.Valid = pickValid(msg, p, canalFacts); x.Valid {
			x.Position = x.parts(p[0], p[1])
			x.GTID = p[2].str(&x.tmp[0])
		}
	case "maxwell-json":
		p := x.fields[:len(maxwellFacts)]
		if x.Valid = pickValid(msg, p, maxwellFacts); x.Valid {
			x.maxwell(p)
		}
	case "ogg-json":
		p := x.fields[:len(oggFacts)]
		if x.Valid = pickValid(msg, p, oggFacts); x.Valid {
			if p[0].ok && p[0].t != jsonparser.Null {
				x.Position = x.parts(p[0])
			} else {
				x.Position = x.parts(p[1])
			}
		}
	case "debezium-json":
		body := msg
		if schemaInclude {
			var pl [1]picked
			if x.Valid = pickValid(msg, pl[:], payloadPath); !x.Valid {
				return
			}
			if body = pl[0].of(jsonparser.Object); body == nil {
				return
			}
		}
		p := x.fields[:len(debeziumFacts)]
		if ok := pickValid(body, p, debeziumFacts); !schemaInclude {
			x.Valid = ok
		}
		if x.Valid {
			x.debezium(p)
		}
	default:
		x.Valid = validAfter(false, msg)
	}
}

var payloadPath = [][]string{{"payload"}}

// pickValid is pick that also tells whether msg is one JSON value.
func pickValid(msg []byte, out []picked, paths [][]string) bool {
	return validAfter(pick(msg, out, paths), msg)
}

// parts joins the values present as the source-position column does:
// each a padded number or its text, '/' between; nil when none is there.
func (x *Facts) parts(vs ...picked) []byte {
	b, any := x.pos[:0], false
	for i, v := range vs {
		if i > 0 {
			b = append(b, '/')
		}
		if v.ok && v.t != jsonparser.Null {
			b, any = appendPositionPart(b, v.v), true
		}
	}
	x.pos = b
	if !any {
		return nil
	}
	return b
}

func (x *Facts) maxwell(p []picked) {
	position, ts, xid, xoffset := p[0], p[1], p[2], p[3]
	present := func(v picked) bool { return v.ok && v.t != jsonparser.Null }
	b := x.pos[:0]
	switch {
	case present(position):
		// "mysql-bin.000003:4242": the file, then the offset as a number.
		pv := position.v
		cut := bytes.LastIndexByte(pv, ':')
		if cut < 0 {
			cut = len(pv)
		}
		b = append(append(b, pv[:cut]...), '/')
		if cut < len(pv) {
			b = appendPositionPart(b, pv[cut+1:])
			if n, err := jsonparser.ParseInt(pv[cut+1:]); err == nil && position.t == jsonparser.String {
				x.BinlogFile, x.BinlogPos = pv[:cut], n
			}
		}
	case present(ts) || present(xid):
		if present(ts) {
			b = appendPositionPart(b, ts.v)
		}
		b = append(b, '/')
		if present(xid) {
			b = appendPositionPart(b, xid.v)
		}
	default:
		b = nil
	}
	if b != nil {
		b = append(b, '/')
		if present(xoffset) {
			b = appendPositionPart(b, xoffset.v)
		}
		x.pos, x.Position = b, b
	}
	x.Xid, x.HasXid = xid.int(), xid.ok && xid.t == jsonparser.Number
	x.XOffset, x.HasXOffset = xoffset.int(), xoffset.ok && xoffset.t == jsonparser.Number
	x.Commit = string(p[4].of(jsonparser.Boolean)) == "true"
	x.GTID = p[5].str(&x.tmp[1])
	if v := p[6]; v.ok && v.t == jsonparser.Number {
		x.Stream = v.v
	}
}

// ObserveFacts is Observe and Facts in one walk over msg (an audit reads
// both of every message): o as Observe leaves it, x as Facts does.
func (f *Format) ObserveFacts(schemaInclude bool, msg []byte, o *Observation, x *Facts) bool {
	if schemaInclude {
		f.Facts(schemaInclude, msg, x)
		return f.Observe(schemaInclude, msg, o)
	}
	x.reset()
	*o = Observation{fields: o.fields, pos: o.pos[:0], ns: o.ns[:0], name: o.name[:0], tmp: o.tmp[:0], Images: o.Images[:0], facts: x}
	ok := f.unit.observe(false, msg, o)
	o.facts = nil
	if !x.filled {
		f.Facts(false, msg, x) // a format whose observe reads no facts
	}
	return ok
}
