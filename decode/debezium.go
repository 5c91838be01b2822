package decode

import (
	"bytes"
	"errors"
	"strconv"
	"strings"

	"github.com/buger/jsonparser"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/internal/setting"
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
	if d.opts.Producer {
		body := root
		if d.opts.SchemaInclude {
			body = d.env[1].v
			d.applySchema(d.env[0])
		}
		if out, ok, err := d.producerControl(body); ok {
			return out, err
		}
		if after := d.get(d.after); d.get(d.op).t == jsonparser.String && string(d.get(d.op).v) == "u" &&
			(after.t == jsonparser.NotExist || after.t == jsonparser.Null) {
			if doc, ok := d.mongoUpdate(body); ok {
				// MongoDB's update without the full document: the -U has the
				// key, the +U the fields set; everything else is unchanged.
				if err := d.emitKeyOnly(arrowconv.UpdateBefore, doc); err != nil {
					return 0, err
				}
				return Emitted, d.emitObject(arrowconv.UpdateAfter, "patch", -1, doc)
			}
		}
	}
	op, opSlot, err := d.opText(d.op)
	if err != nil {
		return 0, err
	}
	return beforeAfter(d.base, string(op), d.op.name, opSlot, "c", "r", "u", "d", "Debezium")
}

// mongoUpdate builds, from a MongoDB update without "after", the document
// of what it changed: the key from "filter" (the _id), then the fields of
// the "patch" ($set; $unset as nulls; a patch without operators is the
// whole document) or of "updateDescription" (updatedFields, removedFields).
func (d *debezium) mongoUpdate(body []byte) (slot, bool) {
	text := func(path ...string) []byte {
		v, t, _, err := jsonparser.Get(body, path...)
		switch {
		case err != nil:
			return nil
		case t == jsonparser.String:
			return unescape(nil, v)
		case t == jsonparser.Object:
			return v
		}
		return nil
	}
	doc := d.docs[2][:0]
	doc = append(doc, '{')
	n := 0
	member := func(k, v []byte) {
		if n > 0 {
			doc = append(doc, ',')
		}
		n++
		doc = strconv.AppendQuote(doc, string(k))
		doc = append(doc, ':')
		doc = append(doc, v...)
	}
	var q []byte
	raw := func(obj []byte, f func(k, raw []byte)) {
		jsonparser.ObjectEach(obj, func(k, v []byte, t jsonparser.ValueType, _ int) error {
			if t == jsonparser.String {
				// jsonparser gives a string's content, still escaped: quote it back.
				q = append(append(append(q[:0], '"'), v...), '"')
				v = q
			}
			f(k, v)
			return nil
		})
	}
	if filter := text("filter"); filter != nil {
		raw(filter, func(k, v []byte) { member(k, v) })
	}
	switch patch := text("patch"); {
	case patch != nil:
		set, st, _, _ := jsonparser.Get(patch, "$set")
		unset, ut, _, _ := jsonparser.Get(patch, "$unset")
		if st != jsonparser.Object && ut != jsonparser.Object {
			raw(patch, func(k, v []byte) { member(k, v) }) // a replacement: the whole document
			break
		}
		if st == jsonparser.Object {
			raw(set, func(k, v []byte) { member(k, v) })
		}
		if ut == jsonparser.Object {
			raw(unset, func(k, _ []byte) { member(k, []byte("null")) })
		}
	default:
		updated := text("updateDescription", "updatedFields")
		removed, rt, _, _ := jsonparser.Get(body, "updateDescription", "removedFields")
		if updated == nil && rt != jsonparser.Array {
			return slot{}, false
		}
		if updated != nil {
			raw(updated, func(k, v []byte) { member(k, v) })
		}
		jsonparser.ArrayEach(removed, func(v []byte, t jsonparser.ValueType, _ int, _ error) {
			if t == jsonparser.String {
				member(v, []byte("null"))
			}
		})
	}
	doc = append(doc, '}')
	d.docs[2] = doc
	return slot{doc, jsonparser.Object}, true
}

// producerControl recognises, under producer semantics, the records
// Debezium writes that carry no rows: truncates (op t), logical decoding
// messages (op m), transaction metadata (status BEGIN/END), schema change
// events (ddl, tableChanges) and heartbeats (only ts_ms). body is the
// payload (the message itself without schema-include).
func (d *debezium) producerControl(body []byte) (Outcome, bool, error) {
	op := d.get(d.op)
	switch {
	case op.t == jsonparser.String && string(op.v) == "t":
		table, pos := DebeziumSource(body)
		out, err := d.controlled("debezium t (truncate)", true, table, pos)
		return out, true, err
	case op.t == jsonparser.String && string(op.v) == "m":
		_, pos := DebeziumSource(body)
		out, err := d.controlled("debezium m (message)", false, "", pos)
		return out, true, err
	case op.t != jsonparser.NotExist && op.t != jsonparser.Null:
		return 0, false, nil
	}
	if status, err := jsonparser.GetString(body, "status"); err == nil && (status == "BEGIN" || status == "END") {
		id, _ := jsonparser.GetString(body, "id")
		out, err := d.controlled("debezium transaction "+status, false, "", "id="+id)
		return out, true, err
	}
	if _, t, _, _ := jsonparser.Get(body, "ddl"); t != jsonparser.NotExist {
		table, pos := DebeziumSource(body)
		out, err := d.controlled("debezium schema change", false, table, pos)
		return out, true, err
	}
	if _, t, _, _ := jsonparser.Get(body, "tableChanges"); t != jsonparser.NotExist {
		table, pos := DebeziumSource(body)
		out, err := d.controlled("debezium schema change", false, table, pos)
		return out, true, err
	}
	before, after := d.get(d.before), d.get(d.after)
	if before.t == jsonparser.NotExist && after.t == jsonparser.NotExist && d.get(d.field("ts_ms")).t == jsonparser.Number {
		out, err := d.controlled("debezium heartbeat", false, "", "")
		return out, true, err
	}
	return 0, false, nil
}

// applySchema sets, under producer semantics, each column's encoding from
// the Connect schema of the message's "after" (or "before") field: the
// logical type names (io.debezium.time.*, Connect Date/Time/Timestamp/
// Decimal) and a Decimal's scale. Messages of one stream repeat one
// schema, so it is read again only when its bytes change.
func (d *debezium) applySchema(s slot) {
	if s.t != jsonparser.Object {
		copy(d.encs, d.defaultEncs)
		d.lastSchema = d.lastSchema[:0]
		return
	}
	if bytes.Equal(s.v, d.lastSchema) && len(d.lastSchema) > 0 {
		return
	}
	d.lastSchema = append(d.lastSchema[:0], s.v...)
	copy(d.encs, d.defaultEncs)
	var image []byte
	jsonparser.ArrayEach(s.v, func(f []byte, _ jsonparser.ValueType, _ int, _ error) {
		name, _ := jsonparser.GetString(f, "field")
		if image == nil && (name == "after" || name == "before") {
			if fs, t, _, err := jsonparser.Get(f, "fields"); err == nil && t == jsonparser.Array {
				image = fs
			}
		}
	}, "fields")
	if image == nil {
		return
	}
	jsonparser.ArrayEach(image, func(f []byte, _ jsonparser.ValueType, _ int, _ error) {
		field, _ := jsonparser.GetString(f, "field")
		col, ok := d.row.names[field]
		if !ok && d.row.fold != nil {
			col, ok = d.row.fold[strings.ToLower(field)]
		}
		if !ok {
			return
		}
		typ, _ := jsonparser.GetString(f, "type")
		logicalName, _ := jsonparser.GetString(f, "name")
		enc := colEnc{}
		switch logicalName {
		case "io.debezium.time.Date", "org.apache.kafka.connect.data.Date":
			enc.kind = lgDays
		case "io.debezium.time.Time", "org.apache.kafka.connect.data.Time", "io.debezium.time.Timestamp", "org.apache.kafka.connect.data.Timestamp":
			enc.kind = lgMillis
		case "io.debezium.time.MicroTime", "io.debezium.time.MicroTimestamp":
			enc.kind = lgMicros
		case "io.debezium.time.NanoTime", "io.debezium.time.NanoTimestamp":
			enc.kind = lgNanos
		case "org.apache.kafka.connect.data.Decimal":
			sc, _ := jsonparser.GetString(f, "parameters", "scale")
			n, _ := strconv.Atoi(sc)
			enc = colEnc{kind: lgDecimalB64, scale: n}
		case "io.debezium.data.VariableScaleDecimal":
			enc.kind = lgVarDecimal
		default:
			if strings.HasPrefix(logicalName, "io.debezium.data.geometry.") {
				enc.kind = lgGeometry
			} else if typ == "double" || typ == "float" {
				enc.kind = lgDouble
			}
		}
		d.encs[col] = enc
	})
}

// DebeziumSourcePos are the members of "source" that place an event in
// its database's log, for the connectors that write them (MySQL file/pos
// and GTID, Postgres LSN, SQL Server change and commit LSNs, Oracle SCN).
var DebeziumSourcePos = []string{"file", "pos", "row", "gtid", "lsn", "txId", "change_lsn", "commit_lsn", "event_serial_no", "scn", "commit_scn"}

// DebeziumSource returns the table ("schema.table", or "db.table") and the
// log position of a payload's "source".
func DebeziumSource(body []byte) (table, position string) {
	src, t, _, err := jsonparser.Get(body, "source")
	if err != nil || t != jsonparser.Object {
		return "", ""
	}
	ns, _ := jsonparser.GetString(src, "schema")
	if ns == "" {
		ns, _ = jsonparser.GetString(src, "db")
	}
	tbl, _ := jsonparser.GetString(src, "table")
	if ns != "" || tbl != "" {
		table = ns + "." + tbl
	}
	return table, DebeziumPosition(src)
}

// DebeziumPosition is the source position a Debezium source block holds
// (DebeziumSourcePos's fields that are set).
func DebeziumPosition(src []byte) string {
	var parts []string
	for _, k := range DebeziumSourcePos {
		if v, vt, _, err := jsonparser.Get(src, k); err == nil && vt != jsonparser.Null {
			parts = append(parts, k+"="+string(v))
		}
	}
	return strings.Join(parts, " ")
}

// AppendDebeziumPosition appends DebeziumPosition(src) to dst, in one walk
// of src.
func AppendDebeziumPosition(dst, src []byte) []byte {
	var vals [16][]byte
	var seen, null uint16
	if len(DebeziumSourcePos) > len(vals) || !Members(src, func(k, v []byte, t jsonparser.ValueType) {
		for i, name := range DebeziumSourcePos {
			if string(k) == name {
				if seen&(1<<i) == 0 { // the first of a name, as jsonparser.Get
					seen |= 1 << i
					vals[i] = v
					if t == jsonparser.Null {
						null |= 1 << i
					}
				}
				return
			}
		}
	}) {
		return append(dst, DebeziumPosition(src)...)
	}
	start := len(dst)
	for i, name := range DebeziumSourcePos {
		if seen&(1<<i) != 0 && null&(1<<i) == 0 {
			if len(dst) > start {
				dst = append(dst, ' ')
			}
			dst = append(append(append(dst, name...), '='), vals[i]...)
		}
	}
	return dst
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

// debeziumUnit is debezium-json's unit (unit.go).
type debeziumUnit struct{}

func (debeziumUnit) newDecoder(b *base) opDecoder          { return &debezium{base: b} }
func (debeziumUnit) newEncoder(e *Encoder) envelopeEncoder { return &debeziumEnc{e} }

// positionFields: the source block, whose members are captured with it
// (sourceProps).
func (debeziumUnit) positionFields() []string { return []string{"source"} }
func (debeziumUnit) traits() traits           { return traits{connect: true} }

func (debeziumUnit) rowPaths(opts Options) [][]string {
	if opts.SchemaInclude {
		return [][]string{{"payload", "after"}, {"payload", "before"}}
	}
	return [][]string{{"after"}, {"before"}}
}

func (debeziumUnit) bindPosition(d *base, m *metaCol, _ func(string) func() ([]byte, bool)) error {
	return d.bindDebeziumPosition(m)
}

// route reads the source block from the end: it follows before and
// after.
func (u debeziumUnit) route(schemaInclude bool, msg []byte) (ns, table []byte, esc, ok bool) {
	if !endsObject(msg) {
		return u.routeForward(schemaInclude, msg)
	}
	body := msg
	if schemaInclude {
		var ok bool
		if body, ok = backObject(msg, "payload"); !ok {
			return nil, nil, false, false
		}
	}
	if !schemaInclude {
		// "source":{ found last and closing into the envelope's tail:
		// the envelope's own (checked, not assumed).
		if vs, ve, ok := lastTopMember(body, `"source":`); ok && body[vs] == '{' {
			return sourceTable(body[vs:ve])
		}
	}
	src, ok := backObject(body, "source")
	if !ok {
		return nil, nil, false, false
	}
	return sourceTable(src)
}

func (debeziumUnit) routeForward(schemaInclude bool, msg []byte) (ns, table []byte, esc, ok bool) {
	body := msg
	if schemaInclude {
		var p []byte
		if p, ok = topObject(msg, "payload"); !ok {
			return nil, nil, false, false
		}
		body = p
	}
	src, ok := topObject(body, "source")
	if !ok {
		return nil, nil, false, false
	}
	return sourceTable(src)
}

func (debeziumUnit) guess(g *Guesser, _ bool, msg []byte) (ns, table []byte, esc, ok bool) {
	if g == nil {
		g = &Guesser{} // no memory: the search of the source block
	}
	return g.debezium(msg)
}

func (debeziumUnit) routed(d *base) (ns, table []byte, esc, ok bool) {
	if d.srcField < 0 || d.env[d.srcField].t != jsonparser.Object {
		return nil, nil, false, false
	}
	db, okDB := routedString(d.src[0])
	schema, okSchema := routedString(d.src[1])
	tb, okTable := routedString(d.src[2])
	coll, okColl := routedString(d.src[4])
	ns = schema
	if !okSchema || len(ns) == 0 {
		ns = db
	}
	table = tb
	if !okTable {
		table = coll
	}
	return ns, table, hasEscape(ns) || hasEscape(table), okDB || okSchema || okTable || okColl
}

func (debeziumUnit) unknownOpHint() string {
	return "Flink's debezium-json knows only the ops c, r, u and d: " + setting.Semantics.String() + " producer counts truncates (t), messages (m), transaction markers and heartbeats as control messages (or ignore-parse-errors drops them, dead-lettered)"
}

func (debeziumUnit) hint(err error, g Sniffed, opts Options, msg []byte) string {
	switch {
	case g.SchemaInclude && !opts.SchemaInclude:
		return "the message is a Debezium schema/payload envelope: add " + setting.Option.String() + " debezium-json.schema-include=true"
	case opts.SchemaInclude && g.Format == "debezium-json" && !g.SchemaInclude:
		return "the message has no schema/payload envelope: drop debezium-json.schema-include (or set it to false)"
	case errors.Is(err, ErrMissingField) && g.Format == "" && !debeziumEnvelope(msg):
		return "the message has no Debezium envelope (no op, before, after or source): a Kafka record key or a line of another stream; remove such lines, or drop them counted with " + setting.Option.String() + " debezium-json.ignore-parse-errors=true and " + setting.DeadLetter.String()
	}
	return ""
}

func (d *base) bindDebeziumPosition(m *metaCol) error {
	// The fields come from the scan of "source" (sourceProps): no second
	// pass over the object.
	d.srcField = d.envIdx["source"]
	prop := func(name string) int {
		for i, p := range sourceProps {
			if p == name {
				return i
			}
		}
		panic("decode: source field " + name + " is not captured")
	}
	rules := map[string][]int{}
	for conn, keys := range debeziumPositions {
		for _, k := range keys {
			rules[conn] = append(rules[conn], prop(k))
		}
	}
	var others []int
	for _, k := range append([]string{"ts_ms"}, DebeziumSourcePos...) {
		others = append(others, prop(k))
	}
	connector := prop("connector")
	m.fill = func(c arrowconv.Column) error {
		col := c.(*arrowconv.BytesCol)
		if d.env[d.srcField].t != jsonparser.Object {
			col.AppendNull()
			return nil
		}
		keys, ok := rules[string(d.src[connector].v)]
		if !ok {
			keys = others
		}
		b, any := d.posBuf[:0], false
		for i, k := range keys {
			if i > 0 {
				b = append(b, '/')
			}
			if s := d.src[k]; s.t != jsonparser.NotExist && s.t != jsonparser.Null {
				b, any = appendPositionPart(b, s.v), true
			}
		}
		d.posBuf = b
		if !any {
			col.AppendNull()
			return nil
		}
		col.Append(b)
		return nil
	}
	return nil
}

// debeziumPositions are the source fields of each connector's position,
// in order.
var debeziumPositions = map[string][]string{
	"mysql":      {"file", "pos", "row"},
	"postgresql": {"lsn"},
	"sqlserver":  {"commit_lsn", "change_lsn", "event_serial_no"},
	"oracle":     {"commit_scn", "scn"},
	"mongodb":    {"ts_ms", "ord"},
}

var (
	debeziumEvidence = [][]string{{"source"}, {"op"}, {"before"}, {"after"}}
	// debeziumEvidenceFacts adds what Facts reads that debeziumEvidence
	// lacks.
	debeziumEvidenceFacts = append(debeziumEvidence[:len(debeziumEvidence):len(debeziumEvidence)],
		[]string{"transaction"}, []string{"status"}, []string{"id"}, []string{"event_count"}, []string{"data_collections"})
	sourceEvidence = [][]string{{"schema"}, {"db"}, {"table"}, {"collection"}, {"ts_ms"}}
)

func (debeziumUnit) observe(schemaInclude bool, msg []byte, o *Observation) bool {
	body := msg
	if schemaInclude {
		v, t, _, err := jsonparser.Get(msg, "payload")
		if err != nil || t != jsonparser.Object {
			o.Control = "(no payload)" // not an envelope: inspect has the decoder judge it
			return true
		}
		body = v
	}
	f := o.fields[:len(debeziumEvidence)]
	if x := o.facts; x != nil && !schemaInclude {
		f = o.fields[:len(debeziumEvidenceFacts)]
		if x.Valid = validAfter(pick(body, f, debeziumEvidenceFacts), body); x.Valid {
			p := [...]picked{f[0], f[4], f[5], f[6], f[7], f[8]} // as debeziumFacts
			x.debezium(p[:])
		}
		x.filled = true
	} else {
		pick(body, f, debeziumEvidence)
	}
	var src [5]picked
	source := f[0].of(jsonparser.Object)
	if source != nil {
		pick(source, src[:], sourceEvidence)
		if slowObserve {
			o.pos = append(o.pos, DebeziumPosition(source)...)
		} else {
			o.pos = AppendDebeziumPosition(o.pos, source)
		}
	}
	if o.NS = src[0].str(&o.ns); len(o.NS) == 0 {
		o.NS = src[1].str(&o.ns)
	}
	if o.Table = src[2].str(&o.name); len(o.Table) == 0 {
		o.Table = src[3].str(&o.name) // MongoDB
	}
	o.Event, o.Milli, o.Position = true, src[4].int(), o.pos
	if o.Op = f[1].op("c", "r", "u", "d"); o.Op == 0 {
		if o.Control = f[1].text(); o.Control == "" {
			o.Control = debeziumControl(body)
		}
		return true
	}
	o.Changes = 1
	if schemaInclude {
		if schema, t, _, err := jsonparser.Get(msg, "schema"); err == nil && t == jsonparser.Object {
			o.Types = schema
		}
	}
	for i, img := range f[2:4] {
		row := img.of(jsonparser.Object)
		if s := img.of(jsonparser.String); s != nil {
			row = unescapeDoc(s) // MongoDB: the document as JSON text
		}
		if row != nil {
			o.Images = append(o.Images, row)
			if o.Op == 'D' && i == 0 {
				o.KeyImage = row
			}
		}
	}
	return true
}

// debeziumControl names a Debezium record without an op as conversion
// counts it: a transaction marker, a schema change, or "(no op)".
func debeziumControl(body []byte) string {
	if st, _ := jsonparser.GetString(body, "status"); st == "BEGIN" || st == "END" {
		return "transaction " + st
	}
	for _, k := range []string{"ddl", "tableChanges"} {
		if _, _, _, err := jsonparser.Get(body, k); err == nil {
			return "schema change"
		}
	}
	return "(no op)"
}

// declared reads the before and after fields of a Connect schema.
func (debeziumUnit) declared(schema []byte, yield func([]byte, arrowconv.Type, string)) {
	jsonparser.ArrayEach(schema, func(f []byte, _ jsonparser.ValueType, _ int, _ error) {
		if name, _ := jsonparser.GetString(f, "field"); name != "after" && name != "before" {
			return
		}
		jsonparser.ArrayEach(f, func(c []byte, _ jsonparser.ValueType, _ int, _ error) {
			str := func(path ...string) string {
				s, _ := jsonparser.GetString(c, path...)
				return s
			}
			col, ltype, typ := str("field"), str("name"), str("type")
			if at, ok := ConnectType(typ, ltype, str("parameters", "scale"), str("parameters", "connect.decimal.precision")); ok && col != "" {
				ev := "Connect " + typ
				if ltype != "" {
					ev = "Connect " + ltype
				}
				yield([]byte(col), at, ev)
			}
		}, "fields")
	}, "fields")
}

func (x *Facts) debezium(p []picked) {
	if src := p[0].of(jsonparser.Object); src != nil {
		var v [len(dbzSourceAll)]picked
		pick(src, v[:], dbzSourcePaths)
		keys, ok := sortableIdx[string(v[0].of(jsonparser.String))]
		if !ok {
			keys = sortableIdx[""]
		}
		b, any := x.pos[:0], false
		for i, k := range keys {
			if i > 0 {
				b = append(b, '/')
			}
			if v[k].ok && v[k].t != jsonparser.Null {
				b, any = appendPositionPart(b, v[k].v), true
			}
		}
		x.pos = b
		if any {
			x.Position = b
		}
		if conn, name := v[0].of(jsonparser.String), v[1].of(jsonparser.String); len(conn) > 0 || len(name) > 0 {
			b := append(x.tmp[0][:0], conn...)
			if len(conn) > 0 && len(name) > 0 {
				b = append(b, '/')
			}
			x.Stream = append(b, name...)
			x.tmp[0] = x.Stream
		}
		x.GTID = v[2].of(jsonparser.String)
		if f := v[3].of(jsonparser.String); len(f) > 0 && v[4].ok && v[4].t == jsonparser.Number {
			x.BinlogFile, x.BinlogPos = f, v[4].int()
		}
	}
	if txn := p[1].of(jsonparser.Object); txn != nil {
		var t [3]picked
		pick(txn, t[:], dbzTxn)
		x.TxnID = t[0].str(&x.tmp[1])
		x.TxnTotal, x.TxnCollection = t[1].int(), t[2].int()
	}
	if p[0].ok || p[1].ok {
		return
	}
	// Transaction metadata: {"status":"BEGIN"|"END","id":...}.
	switch {
	case p[2].is("BEGIN"):
		x.Marker = 'B'
	case p[2].is("END"):
		x.Marker = 'E'
	default:
		return
	}
	x.MarkerID = p[3].str(&x.tmp[1])
	x.MarkerCount = p[4].int()
	x.MarkerCollections = p[5].of(jsonparser.Array)
}

// dbzSourceAll are the members of Debezium's source block Facts reads:
// the stream's name, GTID and binlog file first, then every connector's
// position fields.
var dbzSourceAll = [...]string{"connector", "name", "gtid", "file", "pos", "row", "lsn", "txId", "change_lsn",
	"commit_lsn", "event_serial_no", "scn", "commit_scn", "ts_ms", "ord"}

var dbzSourcePaths = func() [][]string {
	out := make([][]string, len(dbzSourceAll))
	for i, k := range dbzSourceAll {
		out[i] = []string{k}
	}
	return out
}()

// sortableIdx are, per connector, the indexes in dbzSourceAll of its
// position's fields in order, as the source-position column joins them;
// "" is every other connector's (ts_ms, then DebeziumSourcePos).
var sortableIdx = func() map[string][]int {
	idx := func(k string) int {
		for i, n := range dbzSourceAll {
			if n == k {
				return i
			}
		}
		panic("decode: no source member " + k)
	}
	m := map[string][]int{}
	for conn, keys := range debeziumPositions {
		for _, k := range keys {
			m[conn] = append(m[conn], idx(k))
		}
	}
	for _, k := range append([]string{"ts_ms"}, DebeziumSourcePos...) {
		m[""] = append(m[""], idx(k))
	}
	return m
}()

// dbzTxn are the members of Debezium's transaction block Facts reads.
var dbzTxn = [][]string{{"id"}, {"total_order"}, {"data_collection_order"}}
