package infer

import (
	"bytes"
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
	LastPosition    string
	lastTypes       []byte // the last type object taken (mysqlType, schema), to skip repeats
	keyOnlyBefore   []string
	// deletes and keyOnlyDeletes count delete before images, and those
	// with columns NULL: only when every one is, is it a key-only image
	// (a full image may hold NULLs of its own).
	deletes, keyOnlyDeletes int
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
}

// FileEvidence is what one input said, table by table.
type FileEvidence struct {
	Format string
	tables map[Key]*Evidence
	order  []Key
	file   int
	opts   Options
}

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
	e := fe.tables[k]
	if e == nil {
		e = &Evidence{cols: map[string]*colEvidence{}, Control: map[string]int64{}, FirstEventMilli: -1}
		fe.tables[k] = e
		fe.order = append(fe.order, k)
	}
	return e
}

// col returns the evidence of column name, first met at p.
func (e *Evidence) col(name string, p Pos) *colEvidence {
	c := e.cols[name]
	if c == nil {
		c = &colEvidence{name: name, first: p, seq: len(e.cols)}
		e.cols[name] = c
	}
	return c
}

// typed records a producer's type for column name.
func (e *Evidence) typed(name string, t arrowconv.Type, evidence string, p Pos) {
	c := e.col(name, p)
	c.typed, c.typ, c.evidence = true, t, evidence
}

// values records the values of a row image's columns (typed columns keep
// their type; the values still say the column exists).
func (e *Evidence) values(row []byte, p Pos) {
	jsonparser.ObjectEach(row, func(k, v []byte, t jsonparser.ValueType, _ int) error {
		c := e.col(string(k), p)
		if !c.typed {
			c.vals.join(classifyValue(v, t))
		}
		return nil
	})
}

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

func (e *Evidence) event(milli int64, pos string) {
	if e.FirstEventMilli < 0 && milli > 0 {
		e.FirstEventMilli = milli
	}
	if milli > 0 {
		e.LastEventMilli = milli
	}
	if e.FirstPosition == "" {
		e.FirstPosition = pos
	}
	e.LastPosition = pos
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
	for i := range out {
		out[i] = field{}
	}
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
	k := Key{f[0].str(), f[1].str()}
	typ := f[2].str()
	e := fe.table(k)
	es, id := f[3].int(), f[4].int()
	e.event(es, "es="+strconv.FormatInt(es, 10)+" id="+strconv.FormatInt(id, 10))
	isDdl := f[5].ok && f[5].t == jsonparser.Boolean && string(f[5].v) == "true"
	if isDdl || (typ != "INSERT" && typ != "UPDATE" && typ != "DELETE") {
		e.Control[typ]++
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
					e.typed(string(col), at, "mysqlType "+string(v), p)
				}
			}
			return nil
		})
	}
	n := 0
	if f[8].ok && f[8].t == jsonparser.Array {
		jsonparser.ArrayEach(f[8].v, func(row []byte, t jsonparser.ValueType, _ int, _ error) {
			if t == jsonparser.Object {
				e.values(row, p)
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
	k := Key{f[0].str(), f[1].str()}
	typ := f[2].str()
	e := fe.table(k)
	var pos []string
	if s := f[4].str(); s != "" {
		pos = append(pos, "position="+s)
	}
	if f[5].ok {
		pos = append(pos, "xid="+string(f[5].v))
	}
	if f[6].ok {
		pos = append(pos, "xoffset="+string(f[6].v))
	}
	e.event(f[3].int()*1000, strings.Join(pos, " "))
	switch typ {
	case "insert", "update", "delete", "bootstrap-insert":
	default:
		e.Control[typ]++
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
					e.typed(name, at, "Maxwell DDL def "+ct, p)
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
		e.values(f[8].v, p)
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
	e.event(oggMilli(f[2].str()), "pos="+f[3].str())
	switch op {
	case "I", "U", "D":
	default:
		e.Control[op]++
		return
	}
	e.Messages++
	if pk := f[4].list(); len(pk) > 0 {
		e.PrimaryKey = pk
	}
	for _, img := range f[5:7] {
		if img.ok && img.t == jsonparser.Object {
			e.values(img.v, p)
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
	pos := ""
	if f[0].ok && f[0].t == jsonparser.Object {
		pos = decode.DebeziumPosition(f[0].v)
	}
	e.event(src[4].int(), pos)
	switch op {
	case "c", "r", "u", "d":
	default:
		if op == "" {
			op = "(no op)"
		}
		e.Control[op]++
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
						e.typed(col, at, ev, p)
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
			e.values(row, p)
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

// primaryKey is the key the messages name, or the one key-only before
// images show.
func (e *Evidence) primaryKey() []string {
	if len(e.PrimaryKey) > 0 {
		return e.PrimaryKey
	}
	if e.deletes > 0 && e.keyOnlyDeletes == e.deletes {
		return e.keyOnlyBefore
	}
	return nil
}

// keyOnly notes a delete's before image with some columns NULL: the ones
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
	if nulls == 0 || len(set) == 0 {
		return
	}
	e.keyOnlyDeletes++
	if e.keyOnlyBefore == nil {
		e.keyOnlyBefore = set
		return
	}
	var both []string
	for _, k := range e.keyOnlyBefore {
		for _, s := range set {
			if k == s {
				both = append(both, k)
			}
		}
	}
	e.keyOnlyBefore = both
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
