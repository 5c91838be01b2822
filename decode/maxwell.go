package decode

import (
	"strconv"
	"strings"

	"github.com/buger/jsonparser"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/internal/setting"
)

// MaxwellPosition is a Maxwell message's position in the binlog:
// "position" (file:offset), "xid" and "xoffset".
func MaxwellPosition(root []byte) string {
	var parts []string
	if pos, err := jsonparser.GetString(root, "position"); err == nil && pos != "" {
		parts = append(parts, "position="+pos)
	}
	for _, k := range []string{"xid", "xoffset"} {
		if v, err := jsonparser.GetInt(root, k); err == nil {
			parts = append(parts, k+"="+strconv.FormatInt(v, 10))
		}
	}
	return strings.Join(parts, " ") // only what the message has (output_binlog_position, xid)
}

// maxwell decodes maxwell-json (spec §5): "data" is the row, "old" holds the
// changed columns of an update. Only insert, update and delete are known;
// DDL and bootstrap records are errors.
type maxwell struct {
	*base
	data, old, typ field
}

func newMaxwell(b *base) opDecoder { return &maxwell{base: b} }

func (m *maxwell) envelope() []string {
	return []string{"data", "old", "type", "database", "table", "primary_key_columns", "ts"}
}

func (m *maxwell) bind() { m.data, m.old, m.typ = m.field("data"), m.field("old"), m.field("type") }

func (m *maxwell) decode(root []byte) (Outcome, error) {
	op, opSlot, err := m.opText(m.typ)
	if err != nil {
		return 0, err
	}
	data, old := m.get(m.data), m.get(m.old)
	if m.opts.Producer {
		switch string(op) {
		case "bootstrap-insert":
			// The initial snapshot: rows of the table as it was.
			op = []byte("insert")
		case "table-create", "table-alter", "table-drop", "database-create", "database-alter", "database-drop",
			"bootstrap-start", "bootstrap-complete":
			db, _ := jsonparser.GetString(root, "database")
			tbl, _ := jsonparser.GetString(root, "table")
			return m.controlled("maxwell "+string(op), false, db+"."+tbl, MaxwellPosition(root))
		}
	}
	switch string(op) {
	case "insert", "delete":
		if err := m.validateRow("old", old); err != nil {
			return 0, err
		}
		kind := arrowconv.Insert
		if op[0] == 'd' {
			kind = arrowconv.Delete
		}
		return Emitted, m.emitObject(kind, "data", -1, data)
	case "update":
		if old.t != jsonparser.Object {
			return 0, m.notRow("old", old)
		}
		if data.t != jsonparser.Object {
			return 0, m.notRow("data", data)
		}
		if err := m.emitMergedBefore(old, data); err != nil {
			return 0, withPath(err, "old")
		}
		return Emitted, m.emitMergedAfter("data", -1, data)
	}
	if err := m.validateRow("data", data); err != nil {
		return 0, err
	}
	if err := m.validateRow("old", old); err != nil {
		return 0, err
	}
	return 0, m.opError("type", opSlot)
}

// maxwellEnc writes maxwell-json. Flink: {"data":ROW,"type":"insert"} for +I
// and +U, "delete" for -U and -D. A merged update is
// {"data":AFTER,"old":{CHANGED BEFORE VALUES},"type":"update"}.
type maxwellEnc struct{ e *Encoder }

func (m *maxwellEnc) flink(dst []byte, k arrowconv.RowKind, r *encodedRow) []byte {
	dst = m.head(dst, r)
	dst = append(dst, `"data":`...)
	dst = m.e.appendRow(dst, r, nil, false)
	if k == arrowconv.Insert || k == arrowconv.UpdateAfter {
		dst = append(dst, `,"type":"insert"`...)
	} else {
		dst = append(dst, `,"type":"delete"`...)
	}
	return m.tail(dst, r)
}

func (m *maxwellEnc) update(dst []byte, before, after *encodedRow) []byte {
	dst = m.head(dst, after)
	dst = append(dst, `"data":`...)
	dst = m.e.appendRow(dst, after, nil, false)
	dst = append(dst, `,"old":`...)
	dst = m.e.appendRow(dst, before, m.e.oldColumns(before, after), true)
	dst = append(dst, `,"type":"update"`...)
	return m.tail(dst, after)
}

// head opens the message; in Envelope mode Maxwell's own fields come first.
func (m *maxwellEnc) head(dst []byte, r *encodedRow) []byte {
	dst = append(dst, '{')
	if !m.e.eo.Envelope {
		return dst
	}
	n := len(dst)
	dst = m.e.metaField(dst, r, "database", keysDatabase...)
	dst = m.e.metaField(dst, r, "table", keysTable...)
	dst = m.e.epochField(dst, r, "ts", 1e6, keysIngest...)
	if len(dst) > n {
		dst = append(dst[:n], dst[n+1:]...) // drop the leading comma
		dst = append(dst, ',')
	}
	return dst
}

func (m *maxwellEnc) tail(dst []byte, r *encodedRow) []byte {
	if m.e.eo.Envelope {
		dst = m.e.appendPK(dst, r, "primary_key_columns")
	}
	return append(dst, '}')
}

// maxwellUnit is maxwell-json's unit (unit.go).
type maxwellUnit struct{ noHint }

func (maxwellUnit) newDecoder(b *base) opDecoder          { return &maxwell{base: b} }
func (maxwellUnit) newEncoder(e *Encoder) envelopeEncoder { return &maxwellEnc{e} }
func (maxwellUnit) positionFields() []string              { return []string{"position", "ts", "xid", "xoffset"} }
func (maxwellUnit) traits() traits                        { return traits{wktGeometry: true} }
func (maxwellUnit) rowPaths(Options) [][]string           { return [][]string{{"data"}} }

func (maxwellUnit) bindPosition(d *base, m *metaCol, field func(string) func() ([]byte, bool)) error {
	return d.bindMaxwellPosition(m, field)
}

// route stops once the table is read: Maxwell writes it first. A message
// that repeats the key goes by its first here; decoding keeps the last,
// says so (Result.Repeated) and RouteForward settles it.
func (maxwellUnit) route(_ bool, msg []byte) (ns, table []byte, esc, ok bool) {
	var v [2][]byte
	var e, found [2]bool
	firstStrings(msg, routeKeysDBTable, v[:], e[:], found[:])
	return v[0], v[1], e[0] || e[1], found[0] || found[1]
}

func (maxwellUnit) routeForward(_ bool, msg []byte) (ns, table []byte, esc, ok bool) {
	return routeDBTable(msg)
}

func (u maxwellUnit) guess(g *Guesser, schemaInclude bool, msg []byte) (ns, table []byte, esc, ok bool) {
	if g != nil {
		if db, rest, ok := leadingString(msg, `{"database":"`); ok {
			if tb, _, ok := leadingString(rest, `,"table":"`); ok {
				return db, tb, false, true
			}
		}
	}
	return u.route(schemaInclude, msg)
}

func (maxwellUnit) routed(d *base) (ns, table []byte, esc, ok bool) { return routedDBTable(d) }

func (maxwellUnit) unknownOpHint() string {
	return "Flink's maxwell-json knows only insert, update and delete: " + setting.Semantics.String() + " producer reads bootstrap-insert rows and counts DDL and bootstrap markers as control messages (or ignore-parse-errors drops them, dead-lettered)"
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

var (
	maxwellEvidence = [][]string{{"database"}, {"table"}, {"type"}, {"ts"}, {"position"}, {"xid"}, {"xoffset"}, {"primary_key_columns"}, {"data"}, {"def"}}
	// maxwellEvidenceFacts adds what Facts reads that maxwellEvidence lacks.
	maxwellEvidenceFacts = append(maxwellEvidence[:len(maxwellEvidence):len(maxwellEvidence)], []string{"commit"}, []string{"gtid"}, []string{"server_id"})
)

func (maxwellUnit) observe(_ bool, msg []byte, o *Observation) bool {
	f := o.fields[:len(maxwellEvidence)]
	if x := o.facts; x != nil {
		f = o.fields[:len(maxwellEvidenceFacts)]
		if x.Valid = validAfter(pick(msg, f, maxwellEvidenceFacts), msg); x.Valid {
			p := [...]picked{f[4], f[3], f[5], f[6], f[10], f[11], f[12]} // as maxwellFacts
			x.maxwell(p[:])
		}
		x.filled = true
	} else {
		pick(msg, f, maxwellEvidence)
	}
	o.NS, o.Table = f[0].str(&o.ns), f[1].str(&o.name)
	o.Op = f[2].op("insert", "bootstrap-insert", "update", "delete")
	sep := func() {
		if len(o.pos) > 0 {
			o.pos = append(o.pos, ' ')
		}
	}
	if p := f[4].of(jsonparser.String); len(p) > 0 {
		o.pos = append(append(o.pos, "position="...), f[4].str(&o.tmp)...)
	}
	if f[5].ok {
		sep()
		o.pos = append(append(o.pos, "xid="...), f[5].v...)
	}
	if f[6].ok {
		sep()
		o.pos = append(append(o.pos, "xoffset="...), f[6].v...)
	}
	o.Event, o.Milli, o.Position = true, maxwellMilli(f[3].int()), o.pos
	if o.Op == 0 {
		o.Control = f[2].text()
		// A DDL record's "def" is the table as it is now: its columns'
		// MySQL types are the best evidence there is.
		if def := f[9].of(jsonparser.Object); def != nil && strings.HasPrefix(o.Control, "table-") {
			o.Types = def
			if pk, t, _, err := jsonparser.Get(def, "primary-key"); err == nil && t == jsonparser.Array {
				o.PrimaryKey = pk
			}
		}
		return true
	}
	o.PrimaryKey = f[7].of(jsonparser.Array)
	if data := f[8].of(jsonparser.Object); data != nil {
		o.Images = append(o.Images, data)
	}
	o.Changes = 1
	return true
}

// declared reads the columns of a DDL record's def.
func (maxwellUnit) declared(def []byte, yield func([]byte, arrowconv.Type, string)) {
	jsonparser.ArrayEach(def, func(c []byte, _ jsonparser.ValueType, _ int, _ error) {
		name, _ := jsonparser.GetString(c, "name")
		signed, err := jsonparser.GetBoolean(c, "signed")
		prec, _ := jsonparser.GetInt(c, "precision")
		scale, _ := jsonparser.GetInt(c, "scale")
		length, _ := jsonparser.GetInt(c, "column-length")
		ct, _ := jsonparser.GetString(c, "type")
		if at, ok := MaxwellDefType(ct, signed, err == nil, int(prec), int(scale), int(length)); ok && name != "" {
			yield([]byte(name), at, "Maxwell DDL def "+ct)
		}
	}, "columns")
}
