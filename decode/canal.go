package decode

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/buger/jsonparser"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/internal/setting"
)

// canal decodes canal-json (spec §4): "data" and "old" are arrays of rows;
// INSERT, UPDATE and DELETE emit one row (UPDATE a -U/+U pair) per element,
// CREATE is skipped, every other type is an error.
type canal struct {
	*base
	data, old, typ, database, table, mysqlType field
}

func newCanal(b *base) opDecoder { return &canal{base: b} }

func (c *canal) envelope() []string {
	return []string{"data", "old", "type", "database", "table", "sqlType", "pkNames", "ts", "es", "mysqlType"}
}

func (c *canal) bind() {
	c.data, c.old, c.typ = c.field("data"), c.field("old"), c.field("type")
	c.database, c.table = c.field("database"), c.field("table")
	c.mysqlType = c.field("mysqlType")
}

func (c *canal) decode(root []byte) (Outcome, error) {
	// The filters run on the parsed tree before any conversion.
	if ok, err := c.filter(c.database, c.opts.dbRe); err != nil || !ok {
		return Filtered, err
	}
	if ok, err := c.filter(c.table, c.opts.tableRe); err != nil || !ok {
		return Filtered, err
	}
	op, opSlot, err := c.opText(c.typ)
	if err != nil {
		return 0, err
	}
	if c.opts.Producer {
		if out, ok, err := c.producerControl(root, string(op)); ok {
			return out, err
		}
		c.applyMysqlTypes(c.get(c.mysqlType))
	}
	switch string(op) {
	case "INSERT", "DELETE":
		if err := c.validateRows("old", c.get(c.old)); err != nil {
			return 0, err
		}
		kind := arrowconv.Insert
		if op[0] == 'D' {
			kind = arrowconv.Delete
		}
		rows, err := c.elements(c.data)
		if err != nil {
			return 0, err
		}
		for i, r := range rows {
			if err := c.emitObject(kind, "data", i, r); err != nil {
				return 0, err
			}
		}
		return Emitted, nil
	case "UPDATE":
		rows, err := c.elements(c.data)
		if err != nil {
			return 0, err
		}
		if len(rows) == 0 {
			return Emitted, c.validateRows("old", c.get(c.old))
		}
		olds, err := c.elements(c.old)
		if err != nil {
			return 0, err
		}
		for i, after := range rows {
			if i >= len(olds) {
				return 0, withPath(errorf(ErrMissingField, fmt.Sprintf("\"old\" has %d elements, fewer than \"data\" (%d)", len(olds), len(rows))), fmt.Sprintf("old[%d]", i))
			}
			before := olds[i]
			if before.t != jsonparser.Object {
				return 0, c.notRow(fmt.Sprintf("old[%d]", i), before)
			}
			if after.t != jsonparser.Object {
				return 0, c.notRow(fmt.Sprintf("data[%d]", i), after)
			}
			if err := c.emitMergedBefore(before, after); err != nil {
				return 0, withPath(err, fmt.Sprintf("old[%d]", i))
			}
			if err := c.emitMergedAfter("data", i, after); err != nil {
				return 0, err
			}
		}
		for i := len(rows); i < len(olds); i++ {
			if err := c.validateRow(fmt.Sprintf("old[%d]", i), olds[i]); err != nil {
				return 0, err
			}
		}
		return Emitted, nil
	case "CREATE":
		// DDL "create table": skipped, after the envelope converted.
		if err := c.validateRows("data", c.get(c.data)); err != nil {
			return 0, err
		}
		if err := c.validateRows("old", c.get(c.old)); err != nil {
			return 0, err
		}
		return SkippedDDL, nil
	}
	if err := c.validateRows("data", c.get(c.data)); err != nil {
		return 0, err
	}
	if err := c.validateRows("old", c.get(c.old)); err != nil {
		return 0, err
	}
	return 0, c.opError("type", opSlot)
}

// applyMysqlTypes marks, under producer semantics, the columns whose
// mysqlType is spatial: Canal writes them as MySQL's own form (a 4-byte
// SRID, then WKB), and a BYTES column gets the WKB. Read again only when
// the mysqlType object's bytes change.
func (c *canal) applyMysqlTypes(s slot) {
	if s.t != jsonparser.Object || bytes.Equal(s.v, c.lastSchema) {
		return
	}
	c.lastSchema = append(c.lastSchema[:0], s.v...)
	copy(c.encs, c.defaultEncs)
	jsonparser.ObjectEach(s.v, func(k, v []byte, _ jsonparser.ValueType, _ int) error {
		col, ok := c.row.names[string(k)]
		if !ok && c.row.fold != nil {
			col, ok = c.row.fold[strings.ToLower(string(k))]
		}
		if ok && mysqlSpatial[strings.ToLower(string(v))] {
			c.encs[col] = colEnc{kind: lgGeometry}
		}
		return nil
	})
}

// mysqlSpatial are MySQL's spatial column types.
var mysqlSpatial = map[string]bool{"geometry": true, "point": true, "linestring": true, "polygon": true, "multipoint": true,
	"multilinestring": true, "multipolygon": true, "geometrycollection": true, "geomcollection": true}

// canalControl are the event types Canal (and TiCDC's canal-json) write
// for messages that carry no rows: DDL (isDdl true), transaction and
// heartbeat markers, TiCDC's watermarks.
var canalControl = map[string]bool{
	"CREATE": true, "ALTER": true, "ERASE": true, "QUERY": true, "TRUNCATE": true, "RENAME": true,
	"CINDEX": true, "DINDEX": true, "GTID": true, "XACOMMIT": true, "XAROLLBACK": true, "MHEARTBEAT": true,
	"TIDB_WATERMARK": true,
}

// producerControl recognises, under producer semantics, a control message:
// a documented non-row type, or any message with "isDdl": true. ok false
// leaves the message to the row rules.
func (c *canal) producerControl(root []byte, op string) (Outcome, bool, error) {
	switch op {
	case "INSERT", "UPDATE", "DELETE":
		return 0, false, nil
	}
	isDdl, _ := jsonparser.GetBoolean(root, "isDdl")
	if !canalControl[op] && !isDdl {
		return 0, false, nil
	}
	table := canalTable(root)
	es, _ := jsonparser.GetInt(root, "es")
	id, _ := jsonparser.GetInt(root, "id")
	out, err := c.controlled("canal "+op, op == "TRUNCATE", table, fmt.Sprintf("es=%d id=%d", es, id))
	return out, true, err
}

// canalTable is a message's "database.table" ("" when it has neither).
func canalTable(msg []byte) string {
	db, _ := jsonparser.GetString(msg, "database")
	tbl, _ := jsonparser.GetString(msg, "table")
	if db == "" && tbl == "" {
		return ""
	}
	return db + "." + tbl
}

// filter applies database.include / table.include to the raw top-level
// value's text (JSON null reads as "null"); a missing key is an error.
func (c *canal) filter(f field, re *regexp.Regexp) (bool, error) {
	if re == nil {
		return true, nil
	}
	s := c.get(f)
	switch s.t {
	case jsonparser.NotExist:
		return false, withPath(errorf(ErrMissingField, fmt.Sprintf("the %q field is missing but %s.include is set", f.name, f.name)), f.name)
	case jsonparser.Null:
		return re.MatchString("null"), nil
	case jsonparser.Object, jsonparser.Array:
		return re.MatchString(""), nil
	}
	return re.Match(c.cx.textOf(s.v, s.t)), nil
}

// elements returns the elements of an array-of-rows field, as captured
// during the scan. A missing or null field, or one that is not an array,
// fails the message.
func (c *canal) elements(f field) ([]slot, error) {
	s := c.get(f)
	if s.t != jsonparser.Array {
		return nil, c.notRow(f.name, s)
	}
	return c.base.elems[f.idx], nil
}

// canalEnc writes canal-json. Flink: {"data":[ROW],"type":"INSERT"} for +I
// and +U, "DELETE" for -U and -D. A merged update is
// {"data":[AFTER],"old":[CHANGED BEFORE VALUES],"type":"UPDATE"}.
type canalEnc struct {
	e *Encoder
	// types is `,"mysqlType":{...}` and sqlTypes `,"sqlType":{...}` from the
	// schema: the same for every message (Envelope mode).
	types, sqlTypes []byte
}

func newCanalEnc(e *Encoder) *canalEnc {
	c := &canalEnc{e: e}
	c.types = append(c.types, `,"mysqlType":{`...)
	c.sqlTypes = append(c.sqlTypes, `,"sqlType":{`...)
	for i, col := range e.phys {
		if i > 0 {
			c.types = append(c.types, ',')
			c.sqlTypes = append(c.sqlTypes, ',')
		}
		mt, code := mysqlType(e.schema.Columns[col].Type)
		c.types = append(append(c.types, e.names[i]...), ':')
		c.types = appendQuoted(c.types, []byte(mt))
		c.sqlTypes = append(append(c.sqlTypes, e.names[i]...), ':')
		c.sqlTypes = strconv.AppendInt(c.sqlTypes, int64(code), 10)
	}
	c.types = append(c.types, '}')
	c.sqlTypes = append(c.sqlTypes, '}')
	return c
}

func (c *canalEnc) flink(dst []byte, k arrowconv.RowKind, r *encodedRow) []byte {
	dst = append(dst, `{"data":[`...)
	dst = c.e.appendRow(dst, r, nil, false)
	dst = append(dst, ']')
	dst = c.envelope(dst, r)
	if k == arrowconv.Insert || k == arrowconv.UpdateAfter {
		return append(dst, `,"type":"INSERT"}`...)
	}
	return append(dst, `,"type":"DELETE"}`...)
}

func (c *canalEnc) update(dst []byte, before, after *encodedRow) []byte {
	dst = append(dst, `{"data":[`...)
	dst = c.e.appendRow(dst, after, nil, false)
	dst = append(dst, `],"old":[`...)
	// "old" must keep explicit nulls: a changed column missing from it would
	// be read back as unchanged.
	dst = c.e.appendRow(dst, before, c.e.oldColumns(before, after), true)
	dst = append(dst, ']')
	dst = c.envelope(dst, after)
	return append(dst, `,"type":"UPDATE"}`...)
}

// envelope writes the fields Canal consumers expect, from metadata columns
// and the schema (Envelope mode only).
func (c *canalEnc) envelope(dst []byte, r *encodedRow) []byte {
	e := c.e
	if !e.eo.Envelope {
		return dst
	}
	dst = e.metaField(dst, r, "database", keysDatabase...)
	dst = e.metaField(dst, r, "table", keysTable...)
	dst = e.appendPK(dst, r, "pkNames")
	dst = append(dst, `,"isDdl":false`...)
	dst = append(dst, c.types...)
	if v, ok := r.meta["sql-type"]; ok {
		dst = append(append(dst, `,"sqlType":`...), v...)
	} else {
		dst = append(dst, c.sqlTypes...)
	}
	dst = e.epochField(dst, r, "es", 1e3, keysEvent...)
	return e.epochField(dst, r, "ts", 1e3, keysIngest...)
}

// mysqlType is the MySQL column type and JDBC type code Canal would report
// for a column of type t.
func mysqlType(t arrowconv.Type) (string, int) {
	switch t.Kind {
	case arrowconv.Boolean:
		return "tinyint(1)", -6
	case arrowconv.TinyInt:
		return "tinyint", -6
	case arrowconv.SmallInt:
		return "smallint", 5
	case arrowconv.Int:
		return "int", 4
	case arrowconv.BigInt:
		return "bigint", -5
	case arrowconv.Float:
		return "float", 7
	case arrowconv.Double:
		return "double", 8
	case arrowconv.Decimal:
		return fmt.Sprintf("decimal(%d,%d)", t.Precision, t.Scale), 3
	case arrowconv.Char:
		return fmt.Sprintf("char(%d)", t.Precision), 1
	case arrowconv.VarChar:
		return fmt.Sprintf("varchar(%d)", t.Precision), 12
	case arrowconv.String:
		return "longtext", 2005
	case arrowconv.Binary:
		return fmt.Sprintf("binary(%d)", t.Precision), -2
	case arrowconv.VarBinary:
		return fmt.Sprintf("varbinary(%d)", t.Precision), -3
	case arrowconv.Bytes:
		return "longblob", 2004
	case arrowconv.Date:
		return "date", 91
	case arrowconv.Time:
		return "time", 92
	case arrowconv.Timestamp:
		return fmt.Sprintf("datetime(%d)", min(t.Precision, 6)), 93
	case arrowconv.TimestampLTZ:
		return fmt.Sprintf("timestamp(%d)", min(t.Precision, 6)), 93
	}
	return "json", 12
}

// canalUnit is canal-json's unit (unit.go).
type canalUnit struct{ noHint }

func (canalUnit) newDecoder(b *base) opDecoder          { return &canal{base: b} }
func (canalUnit) newEncoder(e *Encoder) envelopeEncoder { return newCanalEnc(e) }
func (canalUnit) positionFields() []string              { return []string{"es", "id"} }
func (canalUnit) traits() traits                        { return traits{latin1Binary: true} }
func (canalUnit) rowPaths(Options) [][]string           { return [][]string{{"data", "[0]"}} }

func (canalUnit) bindPosition(d *base, m *metaCol, field func(string) func() ([]byte, bool)) error {
	d.bindParts(m, field("es"), field("id"))
	return nil
}

// route reads "database" and "table" from the end: they follow the
// data and old arrays.
func (u canalUnit) route(schemaInclude bool, msg []byte) (ns, table []byte, esc, ok bool) {
	if endsObject(msg) {
		var v [2][]byte
		var e, found [2]bool
		backStrings(msg, routeKeysDBTable, v[:], e[:], found[:])
		return v[0], v[1], e[0] || e[1], found[0] || found[1]
	}
	return u.routeForward(schemaInclude, msg)
}

func (canalUnit) routeForward(_ bool, msg []byte) (ns, table []byte, esc, ok bool) {
	return routeDBTable(msg)
}

func (canalUnit) guess(g *Guesser, _ bool, msg []byte) (ns, table []byte, esc, ok bool) {
	if g == nil {
		g = &Guesser{} // no memory: the search from the end
	}
	return g.canal(msg)
}

func (canalUnit) routed(d *base) (ns, table []byte, esc, ok bool) { return routedDBTable(d) }

func (canalUnit) unknownOpHint() string {
	return "Flink's canal-json skips only CREATE among Canal's DDL and control messages: " + setting.Semantics.String() + " producer counts the others as control messages and goes on (or ignore-parse-errors drops them, dead-lettered)"
}

var (
	canalEvidence = [][]string{{"database"}, {"table"}, {"type"}, {"es"}, {"id"}, {"isDdl"}, {"pkNames"}, {"mysqlType"}, {"data"}}
	// canalEvidenceFacts adds what Facts reads that canalEvidence lacks.
	canalEvidenceFacts = append(canalEvidence[:len(canalEvidence):len(canalEvidence)], []string{"gtid"})
)

func (canalUnit) observe(_ bool, msg []byte, o *Observation) bool {
	f := o.fields[:len(canalEvidence)]
	if x := o.facts; x != nil {
		f = o.fields[:len(canalEvidenceFacts)]
		if x.Valid = validAfter(pick(msg, f, canalEvidenceFacts), msg); x.Valid {
			x.Position = x.parts(f[3], f[4])
			x.GTID = f[9].str(&x.tmp[0])
		}
		x.filled = true
	} else {
		pick(msg, f, canalEvidence)
	}
	o.NS, o.Table = f[0].str(&o.ns), f[1].str(&o.name)
	o.Event, o.Milli = true, f[3].int()
	if f[3].ok || f[4].ok { // messages cut to data and type have no position
		o.pos = strconv.AppendInt(append(o.pos, "es="...), o.Milli, 10)
		o.pos = strconv.AppendInt(append(o.pos, " id="...), f[4].int(), 10)
	}
	o.Position = o.pos
	if isDdl := string(f[5].of(jsonparser.Boolean)) == "true"; !isDdl {
		o.Op = f[2].op("INSERT", "", "UPDATE", "DELETE")
	}
	if o.Op == 0 {
		o.Control = f[2].text()
		return true
	}
	o.PrimaryKey, o.Types = f[6].of(jsonparser.Array), f[7].of(jsonparser.Object)
	if data := f[8].of(jsonparser.Array); data != nil {
		jsonparser.ArrayEach(data, func(row []byte, t jsonparser.ValueType, _ int, _ error) {
			if t == jsonparser.Object {
				o.Images = append(o.Images, row)
			}
		})
	}
	o.Changes = len(o.Images)
	return true
}

// declared reads a mysqlType object.
func (canalUnit) declared(types []byte, yield func([]byte, arrowconv.Type, string)) {
	jsonparser.ObjectEach(types, func(col, v []byte, vt jsonparser.ValueType, _ int) error {
		if vt == jsonparser.String {
			if at, ok := MySQLType(string(v)); ok {
				yield(col, at, "mysqlType "+string(v))
			}
		}
		return nil
	})
}
