package infer

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/buger/jsonparser"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/decode"
)

// Evidence is what the messages of one table in one input said.
type Evidence struct {
	cols       map[string]*colEvidence
	PrimaryKey []string
	// For inspect: messages and rows by kind, control messages by type,
	// the event times and source positions of the first and last message.
	Messages        int64
	Rows            [4]int64 // +I, -U, +U, -D
	Control         map[string]int64
	FirstEventMilli int64
	LastEventMilli  int64
	FirstPosition   string
	lastPos         []byte // the last message's position (Positions)
	events          int    // messages that set the positions, for Join
	lastTypes       []byte // the last type object taken (mysqlType, schema), to skip repeats
	keyOnlyBefore   []string
	// deletes and keyOnlyDeletes count delete before images, and those
	// with columns NULL: only when every one is, is it a key-only image
	// (a full image may hold NULLs of its own).
	deletes, keyOnlyDeletes int
	// bare: delete before images without a NULL, which may be key-only
	// images that leave the other columns out; decided once all columns
	// are known (primaryKey), so that evidence read in parts joins to the
	// same: how many, the most columns one held, the columns all held.
	bareDeletes, bareMax int
	bareSet              []string
}

// colEvidence is what one input said of one column.
type colEvidence struct {
	name     string
	typed    bool
	typ      arrowconv.Type
	evidence string
	vals     valueType
	first    Pos
	seq      int // order of first sight, for columns first seen on one line
	// interval: a TIME column (by its producer's type) had a value beyond
	// a day (MySQL TIME is an interval, -838:59:59 to 838:59:59): its type
	// became BIGINT (numbers, in the producer's unit) or STRING (text),
	// and a later TIME type does not take it back.
	interval bool
	// drifts are the producer's type changes within the input (the last
	// type taken stands): reported as the table's schema changes. first is
	// the first type taken, and where (Join compares it with the type the
	// evidence before ends with).
	drifts []drift
	first1 *drift
	typ1   arrowconv.Type
}

// drift is a change of a column's producer type, and where.
type drift struct {
	pos  Pos
	what string
}

// maxDrifts bounds the type changes kept per column and input.
const maxDrifts = 8

func (c *colEvidence) drifted(p Pos, to arrowconv.Type, evidence string) {
	if c.typed && !typesEqual(c.typ, to) && len(c.drifts) < maxDrifts {
		c.drifts = append(c.drifts, drift{p, fmt.Sprintf("%s %s became %s within the input (%s)", c.name, c.typ, to, evidence)})
	}
}

// FileEvidence is what one input said, table by table.
type FileEvidence struct {
	Format string
	tables map[Key]*Evidence
	order  []Key
	file   int
	opts   Options
	// The table of the last message, by its names as they stand in it:
	// the next message is most often of the same table.
	lastNS, lastName []byte
	last             *Evidence
	pos              []byte   // scratch: a message's position
	members          []member // scratch: a row's members
	// samples: the first message of each kind counted as control, so that
	// inspect can have the decoder say whether conversion takes it as
	// control too (the evidence counts what it does not know).
	samples    []ControlSample
	sampleKind map[string]bool
}

// ControlSample is the first message of one control kind in an input.
type ControlSample struct {
	Kind string
	Line int
	Msg  []byte
}

// maxSamples bounds the control kinds sampled per input.
const maxSamples = 32

// ControlSamples are the first message of each kind of control message
// (by the evidence's reading), in the order they were met.
func (fe *FileEvidence) ControlSamples() []ControlSample { return fe.samples }

// control counts a message of kind kind that carries no rows.
func (fe *FileEvidence) control(e *Evidence, kind string, msg []byte, p Pos) {
	e.Control[kind]++
	if fe.sampleKind[kind] || len(fe.samples) >= maxSamples {
		return
	}
	if fe.sampleKind == nil {
		fe.sampleKind = map[string]bool{}
	}
	fe.sampleKind[kind] = true
	fe.samples = append(fe.samples, ControlSample{Kind: kind, Line: p.Line, Msg: bytes.Clone(msg)})
}

// Positions are the first and last source positions the table's messages
// held.
func (e *Evidence) Positions() (first, last string) { return e.FirstPosition, string(e.lastPos) }

// Options steer what is observed.
type Options struct {
	// SchemaInclude: Debezium messages have the schema/payload envelope.
	SchemaInclude bool
}

// NewFileEvidence starts collecting the evidence of input number file.
func NewFileEvidence(format string, file int, opts Options) *FileEvidence {
	return &FileEvidence{Format: format, tables: map[Key]*Evidence{}, file: file, opts: opts}
}

// Tables lists the tables seen, in the order first seen.
func (fe *FileEvidence) Tables() []Key { return fe.order }

// Of returns the evidence of table k (nil when the input had none).
func (fe *FileEvidence) Of(k Key) *Evidence { return fe.tables[k] }

func (fe *FileEvidence) table(k Key) *Evidence {
	if k.Name == "" {
		k = Unnamed
	}
	e := fe.tables[k]
	if e == nil {
		e = &Evidence{cols: map[string]*colEvidence{}, Control: map[string]int64{}, FirstEventMilli: -1}
		fe.tables[k] = e
		fe.order = append(fe.order, k)
	}
	return e
}

// Join takes into fe the evidence next gathered from the lines that
// follow fe's in the same input, so that an input read in parts, each
// part observed on its own, has the evidence of one reading in order.
// next is not to be used after.
func (fe *FileEvidence) Join(next *FileEvidence) {
	for _, c := range next.samples {
		if !fe.sampleKind[c.Kind] && len(fe.samples) < maxSamples {
			if fe.sampleKind == nil {
				fe.sampleKind = map[string]bool{}
			}
			fe.sampleKind[c.Kind] = true
			fe.samples = append(fe.samples, c)
		}
	}
	for _, k := range next.order {
		n := next.tables[k]
		e := fe.tables[k]
		if e == nil {
			fe.tables[k] = n
			fe.order = append(fe.order, k)
			continue
		}
		e.join(n)
	}
}

// join takes into e the evidence n of the table in later lines.
func (e *Evidence) join(n *Evidence) {
	later := make([]*colEvidence, 0, len(n.cols))
	for _, c := range n.cols {
		later = append(later, c)
	}
	sort.Slice(later, func(i, j int) bool { return later[i].seq < later[j].seq })
	for _, nc := range later {
		c := e.cols[nc.name]
		if c == nil {
			nc.seq = len(e.cols)
			e.cols[nc.name] = nc
			continue
		}
		// Read in order, values count only until a type is taken; the
		// last type taken stands.
		if !c.typed {
			c.vals.join(nc.vals)
		}
		if nc.typed && !(c.interval && nc.typ.Kind == arrowconv.Time) {
			if nc.first1 != nil {
				c.drifted(nc.first1.pos, nc.typ1, nc.first1.what)
			}
			if c.first1 == nil {
				c.first1, c.typ1 = nc.first1, nc.typ1
			}
			c.drifts = append(c.drifts, nc.drifts[:min(len(nc.drifts), maxDrifts-min(len(c.drifts), maxDrifts))]...)
			c.typed, c.typ, c.evidence, c.interval = true, nc.typ, nc.evidence, nc.interval
		}
	}
	if len(n.PrimaryKey) > 0 {
		e.PrimaryKey = n.PrimaryKey
	}
	e.Messages += n.Messages
	for i := range e.Rows {
		e.Rows[i] += n.Rows[i]
	}
	for k, v := range n.Control {
		e.Control[k] += v
	}
	if e.FirstEventMilli < 0 {
		e.FirstEventMilli = n.FirstEventMilli
	}
	if n.LastEventMilli > 0 {
		e.LastEventMilli = n.LastEventMilli
	}
	if e.FirstPosition == "" {
		e.FirstPosition = n.FirstPosition
	}
	if n.events > 0 {
		e.lastPos = n.lastPos
	}
	e.events += n.events
	switch {
	case n.keyOnlyDeletes == 0:
	case e.keyOnlyDeletes == 0:
		e.keyOnlyBefore = n.keyOnlyBefore
	default:
		e.keyOnlyBefore = intersect(e.keyOnlyBefore, n.keyOnlyBefore)
	}
	switch {
	case n.bareDeletes == 0:
	case e.bareDeletes == 0:
		e.bareSet = n.bareSet
	default:
		e.bareSet = intersect(e.bareSet, n.bareSet)
	}
	e.bareDeletes += n.bareDeletes
	e.bareMax = max(e.bareMax, n.bareMax)
	e.deletes += n.deletes
	e.keyOnlyDeletes += n.keyOnlyDeletes
	e.lastTypes = n.lastTypes
}

// col returns the evidence of column name, first met at p.
func (e *Evidence) col(name []byte, p Pos) *colEvidence {
	c := e.cols[string(name)]
	if c == nil {
		c = &colEvidence{name: string(name), first: p, seq: len(e.cols)}
		e.cols[c.name] = c
	}
	return c
}

// tableOf is the evidence of the table a message names by ns and name.
func (fe *FileEvidence) tableOf(ns, name field) *Evidence {
	if fe.last != nil && bytes.Equal(ns.raw(), fe.lastNS) && bytes.Equal(name.raw(), fe.lastName) {
		return fe.last
	}
	fe.last = fe.table(Key{ns.str(), name.str()})
	fe.lastNS, fe.lastName = append(fe.lastNS[:0], ns.raw()...), append(fe.lastName[:0], name.raw()...)
	return fe.last
}

// typed records a producer's type for column name.
func (e *Evidence) typed(name []byte, t arrowconv.Type, evidence string, p Pos) {
	c := e.col(name, p)
	if c.interval && t.Kind == arrowconv.Time {
		return // values beyond a day: an interval, not a time of day
	}
	c.drifted(p, t, evidence)
	if c.first1 == nil {
		c.first1, c.typ1 = &drift{pos: p, what: evidence}, t
	}
	c.typed, c.typ, c.evidence = true, t, evidence
}

// beyondDay makes a TIME column that holds v an interval when v is not a
// time of day: a number (in units of the type's precision) outside one
// day, or text with a sign or 24 hours or more.
func (c *colEvidence) beyondDay(v []byte, t jsonparser.ValueType) {
	switch t {
	case jsonparser.Number:
		n, err := strconv.ParseInt(string(v), 10, 64)
		day := int64(86400)
		for range c.typ.Precision {
			day *= 10
		}
		if err != nil || n >= 0 && n < day {
			return
		}
		c.typ, c.evidence = tBig, c.evidence+"; values beyond a day (an interval, in the producer's unit)"
	case jsonparser.String:
		h := v
		if i := bytes.IndexByte(v, ':'); i >= 0 {
			h = v[:i]
		}
		if len(h) > 0 && h[0] != '-' && (len(h) < 2 || len(h) == 2 && string(h) < "24") {
			return
		}
		c.typ, c.evidence = tString, c.evidence+"; values beyond a day (an interval)"
	default:
		return
	}
	c.interval = true
}

// values records the values of a row image's columns (typed columns keep
// their type; the values still say the column exists).
func (fe *FileEvidence) values(e *Evidence, row []byte, p Pos) {
	take := func(k, v []byte, t jsonparser.ValueType) {
		c := e.col(k, p)
		if !c.typed {
			c.vals.join(classifyValue(v, t))
		} else if c.typ.Kind == arrowconv.Time {
			c.beyondDay(v, t)
		}
	}
	// The fast walk's members are taken once it has read the whole row:
	// jsonparser may read what it gave up on otherwise.
	ms := fe.members[:0]
	if !slowScan && decode.Members(row, func(k, v []byte, t jsonparser.ValueType) {
		ms = append(ms, member{k, v, t})
	}) {
		for _, m := range ms {
			take(m.k, m.v, m.t)
		}
		fe.members = ms[:0]
		return
	}
	fe.members = ms[:0]
	jsonparser.ObjectEach(row, func(k, v []byte, t jsonparser.ValueType, _ int) error {
		take(k, v, t)
		return nil
	})
}

// member is an object member the fast walk met.
type member struct {
	k, v []byte
	t    jsonparser.ValueType
}

// slowScan makes the evidence walk messages with jsonparser alone (the
// fuzz twin of the fast walk).
var slowScan = false

// classifyValue is classify with MongoDB's extended JSON wrappers read as
// the types they stand for.
func classifyValue(v []byte, t jsonparser.ValueType) valueType {
	if t == jsonparser.Object && len(v) > 3 {
		var key string
		var iv []byte
		var it jsonparser.ValueType
		n := 0
		jsonparser.ObjectEach(v, func(k, kv []byte, kt jsonparser.ValueType, _ int) error {
			key, iv, it = string(k), kv, kt
			n++
			return nil
		})
		switch {
		case key == "$numberLong":
			return valueType{k: kInt, bits: 64}
		case key == "$numberInt":
			return valueType{k: kInt, bits: 32}
		case key == "$numberDouble":
			return valueType{k: kDouble}
		case key == "$numberDecimal" && it == jsonparser.String:
			return classifyNumber(iv)
		case key == "$date":
			return valueType{k: kLTZ, scale: 3}
		case key == "$oid", key == "$symbol":
			return valueType{k: kString}
		case key == "$binary" && n <= 2:
			return valueType{k: kString} // BYTES cannot be told from values: declare it
		}
	}
	return classify(v, t)
}

// Observe takes one message of the input (line line) into the evidence.
func (fe *FileEvidence) Observe(msg []byte, line int) {
	msg = bytes.TrimPrefix(msg, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(msg)) == 0 {
		return
	}
	p := Pos{fe.file, line}
	switch fe.Format {
	case "canal-json":
		fe.canal(msg, p)
	case "maxwell-json":
		fe.maxwell(msg, p)
	case "ogg-json":
		fe.ogg(msg, p)
	case "debezium-json":
		fe.debezium(msg, p)
	}
}

func str(msg []byte, path ...string) string {
	s, _ := jsonparser.GetString(msg, path...)
	return s
}

// strList reads a JSON array's strings.
func strList(arr []byte) []string {
	var out []string
	jsonparser.ArrayEach(arr, func(v []byte, t jsonparser.ValueType, _ int, _ error) {
		if t == jsonparser.String {
			out = append(out, string(v))
		}
	})
	return out
}

// strListAt reads the strings of the array at path in msg.
func strListAt(msg []byte, path ...string) []string {
	v, t, _, err := jsonparser.Get(msg, path...)
	if err != nil || t != jsonparser.Array {
		return nil
	}
	return strList(v)
}

func (e *Evidence) event(milli int64, pos []byte) {
	e.events++
	if e.FirstEventMilli < 0 && milli > 0 {
		e.FirstEventMilli = milli
	}
	if milli > 0 {
		e.LastEventMilli = milli
	}
	if e.FirstPosition == "" {
		e.FirstPosition = string(pos)
	}
	e.lastPos = append(e.lastPos[:0], pos...)
}

// field is one envelope value picked by pick.
type field struct {
	v  []byte
	t  jsonparser.ValueType
	ok bool
}

func (f field) str() string {
	if !f.ok || f.t != jsonparser.String {
		return ""
	}
	if bytes.IndexByte(f.v, '\\') < 0 {
		return string(f.v)
	}
	s, err := jsonparser.ParseString(f.v)
	if err != nil {
		return string(f.v)
	}
	return s
}

// raw is the value as it stands in the message ("" when absent or no
// string), to tell names apart without unescaping them.
func (f field) raw() []byte {
	if !f.ok || f.t != jsonparser.String {
		return nil
	}
	return f.v
}

// is reports whether the field is the string s.
func (f field) is(s string) bool {
	if !f.ok || f.t != jsonparser.String {
		return false
	}
	if bytes.IndexByte(f.v, '\\') < 0 {
		return string(f.v) == s
	}
	return f.str() == s
}

func (f field) int() int64 {
	if !f.ok || f.t != jsonparser.Number {
		return 0
	}
	n, _ := jsonparser.ParseInt(f.v)
	return n
}

func (f field) list() []string {
	if !f.ok || f.t != jsonparser.Array {
		return nil
	}
	return strList(f.v)
}

// pick reads the values at paths in one pass over msg (a message's
// evidence is taken from one walk, not one per field).
func pick(msg []byte, out []field, paths [][]string) {
	clear(out)
	// A message's top-level members, the first of each name, as
	// jsonparser.EachKey finds them (every path is one name).
	if !slowScan && decode.Members(msg, func(k, v []byte, t jsonparser.ValueType) {
		for i, p := range paths {
			if string(k) == p[0] {
				if !out[i].ok {
					out[i] = field{v, t, true}
				}
				return
			}
		}
	}) {
		return
	}
	clear(out)
	jsonparser.EachKey(msg, func(i int, v []byte, t jsonparser.ValueType, err error) {
		if err == nil {
			out[i] = field{v, t, true}
		}
	}, paths...)
}

var canalPaths = [][]string{{"database"}, {"table"}, {"type"}, {"es"}, {"id"}, {"isDdl"}, {"pkNames"}, {"mysqlType"}, {"data"}}

func (fe *FileEvidence) canal(msg []byte, p Pos) {
	var f [9]field
	pick(msg, f[:], canalPaths)
	e := fe.tableOf(f[0], f[1])
	es, id := f[3].int(), f[4].int()
	fe.pos = fe.pos[:0]
	if f[3].ok || f[4].ok { // messages cut to data and type have no position
		fe.pos = strconv.AppendInt(append(fe.pos, "es="...), es, 10)
		fe.pos = strconv.AppendInt(append(fe.pos, " id="...), id, 10)
	}
	e.event(es, fe.pos)
	isDdl := f[5].ok && f[5].t == jsonparser.Boolean && string(f[5].v) == "true"
	var typ string
	switch {
	case isDdl:
		typ = f[2].str()
	case f[2].is("INSERT"):
		typ = "INSERT"
	case f[2].is("UPDATE"):
		typ = "UPDATE"
	case f[2].is("DELETE"):
		typ = "DELETE"
	default:
		typ = f[2].str()
	}
	if isDdl || (typ != "INSERT" && typ != "UPDATE" && typ != "DELETE") {
		fe.control(e, typ, msg, p)
		return
	}
	e.Messages++
	if pk := f[6].list(); len(pk) > 0 {
		e.PrimaryKey = pk
	}
	if mt := f[7]; mt.ok && mt.t == jsonparser.Object && !bytes.Equal(mt.v, e.lastTypes) {
		e.lastTypes = append(e.lastTypes[:0], mt.v...)
		jsonparser.ObjectEach(mt.v, func(col, v []byte, vt jsonparser.ValueType, _ int) error {
			if vt == jsonparser.String {
				if at, ok := MySQLType(string(v)); ok {
					e.typed(col, at, "mysqlType "+string(v), p)
				}
			}
			return nil
		})
	}
	n := 0
	if f[8].ok && f[8].t == jsonparser.Array {
		jsonparser.ArrayEach(f[8].v, func(row []byte, t jsonparser.ValueType, _ int, _ error) {
			if t == jsonparser.Object {
				fe.values(e, row, p)
				n++
			}
		})
	}
	switch typ {
	case "INSERT":
		e.Rows[0] += int64(n)
	case "UPDATE":
		e.Rows[1] += int64(n)
		e.Rows[2] += int64(n)
	case "DELETE":
		e.Rows[3] += int64(n)
	}
}

var maxwellPaths = [][]string{{"database"}, {"table"}, {"type"}, {"ts"}, {"position"}, {"xid"}, {"xoffset"}, {"primary_key_columns"}, {"data"}, {"def"}}

func (fe *FileEvidence) maxwell(msg []byte, p Pos) {
	var f [10]field
	pick(msg, f[:], maxwellPaths)
	e := fe.tableOf(f[0], f[1])
	var typ string
	for _, t := range [...]string{"insert", "update", "delete", "bootstrap-insert"} {
		if f[2].is(t) {
			typ = t
		}
	}
	if typ == "" {
		typ = f[2].str()
	}
	fe.pos = fe.pos[:0]
	sep := func() {
		if len(fe.pos) > 0 {
			fe.pos = append(fe.pos, ' ')
		}
	}
	if f[4].ok && f[4].t == jsonparser.String && len(f[4].v) > 0 {
		fe.pos = append(fe.pos, "position="...)
		if bytes.IndexByte(f[4].v, '\\') < 0 {
			fe.pos = append(fe.pos, f[4].v...)
		} else {
			fe.pos = append(fe.pos, f[4].str()...)
		}
	}
	if f[5].ok {
		sep()
		fe.pos = append(append(fe.pos, "xid="...), f[5].v...)
	}
	if f[6].ok {
		sep()
		fe.pos = append(append(fe.pos, "xoffset="...), f[6].v...)
	}
	e.event(maxwellMilli(f[3].int()), fe.pos)
	switch typ {
	case "insert", "update", "delete", "bootstrap-insert":
	default:
		fe.control(e, typ, msg, p)
		if def := f[9]; strings.HasPrefix(typ, "table-") && def.ok && def.t == jsonparser.Object {
			// A DDL record's "def" is the table as it is now: its columns'
			// MySQL types are the best evidence there is.
			jsonparser.ArrayEach(def.v, func(c []byte, _ jsonparser.ValueType, _ int, _ error) {
				name := str(c, "name")
				signed, err := jsonparser.GetBoolean(c, "signed")
				prec, _ := jsonparser.GetInt(c, "precision")
				scale, _ := jsonparser.GetInt(c, "scale")
				length, _ := jsonparser.GetInt(c, "column-length")
				ct := str(c, "type")
				if at, ok := MaxwellDefType(ct, signed, err == nil, int(prec), int(scale), int(length)); ok && name != "" {
					e.typed([]byte(name), at, "Maxwell DDL def "+ct, p)
				}
			}, "columns")
			if pk := strListAt(def.v, "primary-key"); len(pk) > 0 {
				e.PrimaryKey = pk
			}
		}
		return
	}
	e.Messages++
	if pk := f[7].list(); len(pk) > 0 {
		e.PrimaryKey = pk
	}
	if f[8].ok && f[8].t == jsonparser.Object {
		fe.values(e, f[8].v, p)
	}
	switch typ {
	case "insert", "bootstrap-insert":
		e.Rows[0]++
	case "update":
		e.Rows[1]++
		e.Rows[2]++
	case "delete":
		e.Rows[3]++
	}
}

// maxwellMilli reads Maxwell's ts: seconds in row records, milliseconds in
// DDL records (table-create, table-alter, ...). A count of seconds that
// large would be past the year 5000.
func maxwellMilli(ts int64) int64 {
	if ts >= 100_000_000_000 {
		return ts
	}
	return ts * 1000
}

var oggPaths = [][]string{{"table"}, {"op_type"}, {"op_ts"}, {"pos"}, {"primary_keys"}, {"before"}, {"after"}}

func (fe *FileEvidence) ogg(msg []byte, p Pos) {
	var f [7]field
	pick(msg, f[:], oggPaths)
	full := f[0].str()
	k := Key{Name: full}
	if i := strings.IndexByte(full, '.'); i >= 0 {
		k = Key{full[:i], full[i+1:]} // SCHEMA.TABLE
	}
	e := fe.table(k)
	op := f[1].str()
	fe.pos = append(append(fe.pos[:0], "pos="...), f[3].str()...)
	e.event(oggMilli(f[2].str()), fe.pos)
	switch op {
	case "I", "U", "D":
	default:
		fe.control(e, op, msg, p)
		return
	}
	e.Messages++
	if pk := f[4].list(); len(pk) > 0 {
		e.PrimaryKey = pk
	}
	for _, img := range f[5:7] {
		if img.ok && img.t == jsonparser.Object {
			fe.values(e, img.v, p)
		}
	}
	switch op {
	case "I":
		e.Rows[0]++
	case "U":
		e.Rows[1]++
		e.Rows[2]++
	case "D":
		e.Rows[3]++
	}
}

// oggMilli reads op_ts's date and time (to the second) as epoch
// milliseconds, 0 when it cannot.
func oggMilli(s string) int64 {
	if len(s) < 19 {
		return 0
	}
	b := []byte(s[:19])
	b[10] = ' ' // ' ', 'T' or GoldenGate's ':'
	t, err := time.Parse("2006-01-02 15:04:05", string(b))
	if err != nil {
		return 0
	}
	return t.UnixMilli()
}

var (
	debeziumPaths = [][]string{{"source"}, {"op"}, {"before"}, {"after"}}
	sourcePaths   = [][]string{{"schema"}, {"db"}, {"table"}, {"collection"}, {"ts_ms"}}
)

func (fe *FileEvidence) debezium(msg []byte, p Pos) {
	body := msg
	if fe.opts.SchemaInclude {
		v, t, _, err := jsonparser.Get(msg, "payload")
		if err != nil || t != jsonparser.Object {
			// No envelope: inspect has the decoder judge it.
			fe.control(fe.table(Key{}), "(no payload)", msg, p)
			return
		}
		body = v
	}
	var f [4]field
	pick(body, f[:], debeziumPaths)
	var src [5]field
	if f[0].ok && f[0].t == jsonparser.Object {
		pick(f[0].v, src[:], sourcePaths)
	}
	ns := src[0].str()
	if ns == "" {
		ns = src[1].str()
	}
	k := Key{ns, src[2].str()}
	if k.Name == "" {
		k.Name = src[3].str() // MongoDB
	}
	op := f[1].str()
	e := fe.table(k)
	fe.pos = fe.pos[:0]
	if f[0].ok && f[0].t == jsonparser.Object {
		if slowScan {
			fe.pos = append(fe.pos, decode.DebeziumPosition(f[0].v)...)
		} else {
			fe.pos = decode.AppendDebeziumPosition(fe.pos, f[0].v)
		}
	}
	e.event(src[4].int(), fe.pos)
	switch op {
	case "c", "r", "u", "d":
	default:
		if op == "" {
			op = debeziumControl(body)
		}
		fe.control(e, op, msg, p)
		return
	}
	e.Messages++
	if fe.opts.SchemaInclude {
		if schema, t, _, err := jsonparser.Get(msg, "schema"); err == nil && t == jsonparser.Object && !bytes.Equal(schema, e.lastTypes) {
			e.lastTypes = append(e.lastTypes[:0], schema...)
			jsonparser.ArrayEach(schema, func(f []byte, _ jsonparser.ValueType, _ int, _ error) {
				name := str(f, "field")
				if name != "after" && name != "before" {
					return
				}
				jsonparser.ArrayEach(f, func(c []byte, _ jsonparser.ValueType, _ int, _ error) {
					col := str(c, "field")
					ltype := str(c, "name")
					if at, ok := ConnectType(str(c, "type"), ltype, str(c, "parameters", "scale"), str(c, "parameters", "connect.decimal.precision")); ok && col != "" {
						ev := "Connect " + str(c, "type")
						if ltype != "" {
							ev = "Connect " + ltype
						}
						e.typed([]byte(col), at, ev, p)
					}
				}, "fields")
			}, "fields")
		}
	}
	for i, img := range f[2:4] {
		row, t := img.v, img.t
		if img.ok && t == jsonparser.String {
			row, t = unescapeDoc(row) // MongoDB: the document as JSON text
		}
		if img.ok && t == jsonparser.Object {
			fe.values(e, row, p)
			if op == "d" && i == 0 {
				e.keyOnly(row)
			}
		}
	}
	switch op {
	case "c", "r":
		e.Rows[0]++
	case "u":
		e.Rows[1]++
		e.Rows[2]++
	case "d":
		e.Rows[3]++
	}
}

// debeziumControl names a Debezium record without an op as conversion
// counts it: a transaction marker, a schema change, or "(no op)".
func debeziumControl(body []byte) string {
	if st := str(body, "status"); st == "BEGIN" || st == "END" {
		return "transaction " + st
	}
	for _, k := range []string{"ddl", "tableChanges"} {
		if _, _, _, err := jsonparser.Get(body, k); err == nil {
			return "schema change"
		}
	}
	return "(no op)"
}

// InferredKey is the primary key the evidence shows (nil: none).
func (e *Evidence) InferredKey() []string { return e.primaryKey() }

// primaryKey is the key the messages name, or the one key-only before
// images show.
func (e *Evidence) primaryKey() []string {
	if len(e.PrimaryKey) > 0 {
		return e.PrimaryKey
	}
	if e.deletes == 0 || e.keyOnlyDeletes+e.bareDeletes != e.deletes {
		return nil
	}
	if e.bareDeletes == 0 {
		return e.keyOnlyBefore
	}
	// Images without a NULL are key-only when each left out most columns
	// (a full image after a column was dropped leaves out one).
	if e.bareMax >= len(e.cols) || e.bareMax > len(e.cols)/2 {
		return nil
	}
	if e.keyOnlyDeletes == 0 {
		return e.bareSet
	}
	return intersect(e.keyOnlyBefore, e.bareSet)
}

// keyOnly notes a delete's before image with some columns NULL or left
// out: the ones
// set are the key (Postgres REPLICA IDENTITY DEFAULT sends only the key).
// The key is the columns set in every such image.
func (e *Evidence) keyOnly(row []byte) {
	e.deletes++
	var set []string
	nulls := 0
	jsonparser.ObjectEach(row, func(k, _ []byte, t jsonparser.ValueType, _ int) error {
		if t == jsonparser.Null {
			nulls++
		} else {
			set = append(set, string(k))
		}
		return nil
	})
	if len(set) == 0 {
		return
	}
	if nulls == 0 {
		// Without a schema the image may leave the other columns out
		// (as Debezium's documentation shows it): primaryKey decides.
		e.bareDeletes++
		e.bareMax = max(e.bareMax, len(set))
		if e.bareDeletes == 1 {
			e.bareSet = set
		} else {
			e.bareSet = intersect(e.bareSet, set)
		}
		return
	}
	e.keyOnlyDeletes++
	if e.keyOnlyDeletes == 1 {
		e.keyOnlyBefore = set
		return
	}
	e.keyOnlyBefore = intersect(e.keyOnlyBefore, set)
}

// intersect is the names of a that are in b too, in a's order.
func intersect(a, b []string) []string {
	var both []string
	for _, k := range a {
		for _, s := range b {
			if k == s {
				both = append(both, k)
				break
			}
		}
	}
	return both
}

func unescapeDoc(s []byte) ([]byte, jsonparser.ValueType) {
	u, err := jsonparser.Unescape(s, nil)
	if err != nil {
		return nil, jsonparser.Unknown
	}
	u = bytes.TrimSpace(u)
	if len(u) > 0 && u[0] == '{' {
		return u, jsonparser.Object
	}
	return nil, jsonparser.Unknown
}
