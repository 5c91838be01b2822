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

func strList(msg []byte, path ...string) []string {
	var out []string
	jsonparser.ArrayEach(msg, func(v []byte, t jsonparser.ValueType, _ int, _ error) {
		if t == jsonparser.String {
			out = append(out, string(v))
		}
	}, path...)
	return out
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

func (fe *FileEvidence) canal(msg []byte, p Pos) {
	k := Key{str(msg, "database"), str(msg, "table")}
	typ := str(msg, "type")
	e := fe.table(k)
	es, _ := jsonparser.GetInt(msg, "es")
	id, _ := jsonparser.GetInt(msg, "id")
	e.event(es, "es="+strconv.FormatInt(es, 10)+" id="+strconv.FormatInt(id, 10))
	isDdl, _ := jsonparser.GetBoolean(msg, "isDdl")
	if isDdl || (typ != "INSERT" && typ != "UPDATE" && typ != "DELETE") {
		e.Control[typ]++
		return
	}
	e.Messages++
	if pk := strList(msg, "pkNames"); len(pk) > 0 {
		e.PrimaryKey = pk
	}
	if mt, t, _, err := jsonparser.Get(msg, "mysqlType"); err == nil && t == jsonparser.Object && !bytes.Equal(mt, e.lastTypes) {
		e.lastTypes = append(e.lastTypes[:0], mt...)
		jsonparser.ObjectEach(mt, func(col, v []byte, vt jsonparser.ValueType, _ int) error {
			if vt == jsonparser.String {
				if at, ok := MySQLType(string(v)); ok {
					e.typed(string(col), at, "mysqlType "+string(v), p)
				}
			}
			return nil
		})
	}
	n := 0
	jsonparser.ArrayEach(msg, func(row []byte, t jsonparser.ValueType, _ int, _ error) {
		if t == jsonparser.Object {
			e.values(row, p)
			n++
		}
	}, "data")
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

func (fe *FileEvidence) maxwell(msg []byte, p Pos) {
	k := Key{str(msg, "database"), str(msg, "table")}
	typ := str(msg, "type")
	e := fe.table(k)
	ts, _ := jsonparser.GetInt(msg, "ts")
	e.event(ts*1000, decode.MaxwellPosition(msg))
	switch typ {
	case "insert", "update", "delete", "bootstrap-insert":
	default:
		e.Control[typ]++
		if strings.HasPrefix(typ, "table-") {
			// A DDL record's "def" is the table as it is now: its columns'
			// MySQL types are the best evidence there is.
			jsonparser.ArrayEach(msg, func(c []byte, _ jsonparser.ValueType, _ int, _ error) {
				name := str(c, "name")
				signed, err := jsonparser.GetBoolean(c, "signed")
				prec, _ := jsonparser.GetInt(c, "precision")
				scale, _ := jsonparser.GetInt(c, "scale")
				length, _ := jsonparser.GetInt(c, "column-length")
				ct := str(c, "type")
				if at, ok := MaxwellDefType(ct, signed, err == nil, int(prec), int(scale), int(length)); ok && name != "" {
					e.typed(name, at, "Maxwell DDL def "+ct, p)
				}
			}, "def", "columns")
			if pk := strList(msg, "def", "primary-key"); len(pk) > 0 {
				e.PrimaryKey = pk
			}
		}
		return
	}
	e.Messages++
	if pk := strList(msg, "primary_key_columns"); len(pk) > 0 {
		e.PrimaryKey = pk
	}
	if row, t, _, err := jsonparser.Get(msg, "data"); err == nil && t == jsonparser.Object {
		e.values(row, p)
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

func (fe *FileEvidence) ogg(msg []byte, p Pos) {
	full := str(msg, "table")
	k := Key{Name: full}
	if i := strings.IndexByte(full, '.'); i >= 0 {
		k = Key{full[:i], full[i+1:]} // SCHEMA.TABLE
	}
	e := fe.table(k)
	op := str(msg, "op_type")
	e.event(oggMilli(str(msg, "op_ts")), "pos="+str(msg, "pos"))
	switch op {
	case "I", "U", "D":
	default:
		e.Control[op]++
		return
	}
	e.Messages++
	if pk := strList(msg, "primary_keys"); len(pk) > 0 {
		e.PrimaryKey = pk
	}
	for _, f := range []string{"before", "after"} {
		if row, t, _, err := jsonparser.Get(msg, f); err == nil && t == jsonparser.Object {
			e.values(row, p)
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

func (fe *FileEvidence) debezium(msg []byte, p Pos) {
	body := msg
	if fe.opts.SchemaInclude {
		v, t, _, err := jsonparser.Get(msg, "payload")
		if err != nil || t != jsonparser.Object {
			return
		}
		body = v
	}
	ns := str(body, "source", "schema")
	if ns == "" {
		ns = str(body, "source", "db")
	}
	k := Key{ns, str(body, "source", "table")}
	if k.Name == "" {
		k.Name = str(body, "source", "collection") // MongoDB
	}
	op := str(body, "op")
	e := fe.table(k)
	srcMs, _ := jsonparser.GetInt(body, "source", "ts_ms")
	_, pos := decode.DebeziumSource(body)
	e.event(srcMs, pos)
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
	for _, f := range []string{"before", "after"} {
		row, t, _, err := jsonparser.Get(body, f)
		if err == nil && t == jsonparser.String {
			row, t = unescapeDoc(row) // MongoDB: the document as JSON text
		}
		if err == nil && t == jsonparser.Object {
			e.values(row, p)
			if op == "d" && f == "before" {
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
