package infer

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"

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
	lastTypes       []byte // the last types block taken (mysqlType, def, schema), to skip repeats
	lastKey         []byte // the last primary key array taken, to skip repeats
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
	format *decode.Format // nil: a format whose messages are not observed
	obs    decode.Observation
	tables map[Key]*Evidence
	order  []Key
	file   int
	opts   Options
	// The table of the last message, by its names: the next message is
	// most often of the same table.
	lastNS, lastName []byte
	last             *Evidence
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
	f, _ := decode.Lookup(format)
	return &FileEvidence{Format: format, format: f, tables: map[Key]*Evidence{}, file: file, opts: opts}
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
	e.lastTypes, e.lastKey = n.lastTypes, n.lastKey
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
func (fe *FileEvidence) tableOf(ns, name []byte) *Evidence {
	if fe.last != nil && bytes.Equal(ns, fe.lastNS) && bytes.Equal(name, fe.lastName) {
		return fe.last
	}
	fe.last = fe.table(Key{string(ns), string(name)})
	fe.lastNS, fe.lastName = append(fe.lastNS[:0], ns...), append(fe.lastName[:0], name...)
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
		c.typ, c.evidence = arrowconv.Of(arrowconv.BigInt), c.evidence+"; values beyond a day (an interval, in the producer's unit)"
	case jsonparser.String:
		h := v
		if i := bytes.IndexByte(v, ':'); i >= 0 {
			h = v[:i]
		}
		if len(h) > 0 && h[0] != '-' && (len(h) < 2 || len(h) == 2 && string(h) < "24") {
			return
		}
		c.typ, c.evidence = arrowconv.Of(arrowconv.String), c.evidence+"; values beyond a day (an interval)"
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

// Observe takes one message of the input (line line) into the evidence:
// the format's unit reads where the message keeps its table, position,
// key, declared types and row images (decode.Format.Observe), and the
// evidence takes them in the same way for every format.
func (fe *FileEvidence) Observe(msg []byte, line int) {
	msg = bytes.TrimPrefix(msg, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(msg)) == 0 || fe.format == nil {
		return
	}
	o := &fe.obs
	if !fe.format.Observe(fe.opts.SchemaInclude, msg, o) {
		return
	}
	p := Pos{fe.file, line}
	e := fe.tableOf(o.NS, o.Table)
	if o.Event {
		e.event(o.Milli, o.Position)
	}
	if o.Op == 0 {
		fe.control(e, o.Control, msg, p)
		fe.declared(e, o, p)
		return
	}
	e.Messages++
	fe.declared(e, o, p)
	for _, row := range o.Images {
		fe.values(e, row, p)
	}
	if o.KeyImage != nil {
		e.keyOnly(o.KeyImage)
	}
	n := int64(o.Changes)
	switch o.Op {
	case 'I':
		e.Rows[0] += n
	case 'U':
		e.Rows[1] += n
		e.Rows[2] += n
	case 'D':
		e.Rows[3] += n
	}
}

// declared takes the key and the column types a message states.
func (fe *FileEvidence) declared(e *Evidence, o *decode.Observation, p Pos) {
	if o.PrimaryKey != nil && !bytes.Equal(o.PrimaryKey, e.lastKey) {
		if pk := strList(o.PrimaryKey); len(pk) > 0 {
			e.PrimaryKey = pk
			e.lastKey = append(e.lastKey[:0], o.PrimaryKey...)
		}
	}
	if o.Types != nil && !bytes.Equal(o.Types, e.lastTypes) {
		e.lastTypes = append(e.lastTypes[:0], o.Types...)
		fe.format.Declared(o.Types, func(col []byte, t arrowconv.Type, evidence string) {
			e.typed(col, t, evidence, p)
		})
	}
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
