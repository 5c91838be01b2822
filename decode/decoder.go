package decode

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"

	"github.com/buger/jsonparser"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// Outcome says what became of one message.
type Outcome uint8

const (
	// Emitted: the message produced its rows (possibly zero, e.g. an empty
	// canal "data" array).
	Emitted Outcome = iota
	// Blank: a zero-length message (blank line, Kafka tombstone), skipped as
	// Flink skips it.
	Blank
	// SkippedDDL: a canal CREATE message, which Flink skips.
	SkippedDDL
	// Filtered: dropped by canal's database.include / table.include.
	Filtered
	// Dropped: the message could not be decoded and ignore-parse-errors is
	// on. Rows it emitted before the failure stay, as in Flink (spec §9).
	Dropped
	// Control: under producer semantics, a message the producer documents
	// that carries no rows (DDL, transaction markers, heartbeats, bootstrap
	// markers, truncates); Result.Control names it.
	Control
)

// Result is what [Decoder.Decode] did with one message.
type Result struct {
	Rows    int
	Outcome Outcome
	// Err is the reason a Dropped message was dropped.
	Err error
	// Nulled lists the values of an emitted message that could not be
	// converted and became NULL (ignore-parse-errors only); use [Locate]
	// on each for its position.
	Nulled []error
	// Control names a Control message ("canal ALTER", "debezium
	// transaction BEGIN", ...); Truncate is set for a truncate, which a
	// lake loader must apply: Table and Position say where it applies.
	Control  string
	Truncate bool
	Table    string
	Position string
	// ZeroDates counts MySQL zero dates ("0000-00-00") that became NULL
	// (producer semantics).
	ZeroDates int
	// Trailing says the message had more than white space after its JSON
	// object (which decoding ignores, as Jackson does; routing from the
	// end of a message must then look again: RouteForward).
	Trailing bool
	// Repeated says a top-level key may occur twice (one came earlier than
	// the message's key order had it): decoding keeps the last, and a
	// router that stopped at the first must look again (RouteForward).
	Repeated bool
}

// Decoder turns messages into rows appended to the [arrowconv.Builder] it
// was created for. A Decoder is not safe for concurrent use; make one per
// goroutine.
type Decoder interface {
	// Decode decodes one message (a line without its terminator). msg is not
	// retained. With ignore-parse-errors off, a message that cannot be
	// decoded returns an error and appends nothing; use [Locate] to give the
	// error its file position.
	Decode(msg []byte) (Result, error)
	// SetFile sets the file the following messages come from, for the
	// file.* metadata columns.
	SetFile(FileInfo)
	// SetLine sets the line number (1-based) of the next message in its
	// file, for the file.line metadata column.
	SetLine(int64)
	// Routed is the source table of the message last decoded, as decoding
	// read it (the rules of [Route]; escaped when esc); it needs
	// Options.RouteKeys. The slices are valid until the next Decode.
	Routed() (ns, table []byte, esc, ok bool)
}

// FileInfo describes the input file, for the filesystem metadata keys.
type FileInfo struct {
	Path    string // absolute path
	Name    string
	Size    int64
	ModTime int64 // nanoseconds since the epoch
}

// field is an envelope field resolved once: its name, for messages, and its
// index in base.env, so no message looks a name up.
type field struct {
	name string
	idx  int
}

func (d *base) field(name string) field { return field{name, d.envIdx[name]} }

// bindBeforeAfter resolves the fields ogg and debezium share.
func (d *base) bindBeforeAfter() { d.before, d.after = d.field("before"), d.field("after") }

// get returns the captured value of an envelope field.
func (d *base) get(f field) slot { return d.env[f.idx] }

// New returns a decoder for format f appending to b, whose columns must be
// those of s. opts must come from [ParseOptions] for f.
func New(f *Format, s *arrowconv.Schema, opts Options, b *arrowconv.Builder) (Decoder, error) {
	if err := f.CheckSchema(s); err != nil {
		return nil, err
	}
	d := &base{
		format: f,
		opts:   opts,
		b:      b,
		cx:     &convCtx{format: f.Name, traits: f.unit.traits(), lenient: opts.IgnoreParseErrors, exact: s.HasDecimal(), iso: opts.TimestampISO, failOnMissing: opts.FailOnMissingField},
	}
	d.cx.plain = &d.plain
	var physCols []arrowconv.Column
	for i, c := range s.Columns {
		if c.MetadataKey == unchangedKey {
			d.unchCols = append(d.unchCols, b.Column(i).(*arrowconv.ListCol))
			continue
		}
		if c.IsMetadata() {
			d.metas = append(d.metas, metaCol{key: c.MetadataKey, typ: c.Type, col: b.Column(i)})
			continue
		}
		d.phys = append(d.phys, c)
		physCols = append(physCols, b.Column(i))
	}
	d.cx.foldKeys = opts.CaseInsensitive
	if opts.Producer {
		d.cx.prod = &producerCtx{opts: &d.opts}
		d.cx.mongo = f.unit.traits().connect
		d.encs = make([]colEnc, len(d.phys))
		for i, c := range d.phys {
			d.encs[i] = defaultEnc(f.unit.traits(), &d.opts, c.Type)
		}
		d.defaultEncs = slices.Clone(d.encs)
	}
	d.row = d.cx.newRowConv(d.phys, physCols, d.encs)
	d.row.rejectUnknown = opts.RejectUnknownKeys
	if opts.Producer {
		u := &unchanged{cols: make([]bool, len(d.phys))}
		if f.unit.traits().connect {
			u.placeholder = []byte(opts.Unavailable)
			u.placeB64 = []byte(base64.StdEncoding.EncodeToString(u.placeholder))
		}
		d.row.unch = u
		for _, c := range s.PrimaryKey {
			for i, p := range d.phys {
				if p.Name == c {
					d.pk = append(d.pk, i)
				}
			}
		}
	}
	d.physCols = physCols
	for _, c := range d.phys {
		d.fastNames = append(d.fastNames, plainKey(c.Name))
		d.fastMembers = append(d.fastMembers, newMemberPat(plainKey(c.Name)))
	}
	d.dataSlots = make([]slot, len(d.phys))
	d.fromData = make([]bool, len(d.phys))
	d.oldSlots = make([]slot, len(d.phys))
	d.present = make([]bool, len(d.phys))
	d.op = f.unit.newDecoder(d)
	d.envNames = d.op.envelope()
	for _, m := range d.metas {
		if m.key == SourcePositionKey {
			for _, n := range f.unit.positionFields() {
				if !slices.Contains(d.envNames, n) {
					d.envNames = append(d.envNames, n)
				}
			}
		}
	}
	d.env = make([]slot, len(d.envNames))
	d.envIdx = map[string]int{}
	for i, n := range d.envNames {
		d.envIdx[n] = i
	}
	d.rowFieldsOf()
	d.op.bind()
	d.srcField = -1
	d.routeDB, d.routeTable = d.field("database"), d.field("table")
	if opts.RouteKeys && f.unit.traits().connect {
		d.srcField = d.envIdx["source"]
	}
	d.markFn = d.markKey // a method value allocates; make it once
	for i := range d.metas {
		if err := d.bindMeta(&d.metas[i]); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// base holds what all formats share: the envelope scan, row emission with
// metadata, and the message-level error rule.
type base struct {
	format *Format
	opts   Options
	line   int64  // of the message being decoded (SetLine)
	posBuf []byte // source-position text under construction
	b      *arrowconv.Builder
	cx     *convCtx
	phys   []arrowconv.Field
	// fastNames are the physical column names the scanner may match raw
	// (plainKey), in column order.
	fastNames   []string
	fastMembers []memberPat // the same names as compact member starts
	plain       bool        // tests: no shortcuts (key prediction, fast paths, value reuse); fuzz targets and BenchmarkDecodeShortcuts compare both ways
	physCols    []arrowconv.Column
	row         *rowConv
	metas       []metaCol
	op          opDecoder

	envNames []string
	envIdx   map[string]int
	env      []slot

	dataSlots, oldSlots []slot
	fromData            []bool // per column: the -U row took a non-NULL value from data
	present             []bool // canal/maxwell: column name found anywhere in "old"
	markNext            int    // the column markKey tries first
	file                FileInfo

	sc           scanner
	rowKinds     []rowField // per envelope field
	markField    int        // envelope index of "old", or -1
	payloadField int
	pool         []slot        // captured row slots of the current message
	captured     []capturedRow // captured row objects, in scan order
	lastCaptured int
	trailing     bool // content after the message's JSON object (Result.Trailing)
	// routeDB and routeTable are the envelope fields Routed reads.
	routeDB, routeTable field
	repeated            bool // a top-level key met before its place (Result.Repeated)
	markFn              func([]byte)
	before              field // ogg, debezium
	after               field
	elems               [][]slot    // per row-array field: its elements, in order
	keyOrder            [2][]envKey // envelope keys of the previous message, per level
	interned            map[string]string

	// srcField is the envelope index of debezium's "source" when source.*
	// metadata is declared (else -1); src holds its members of interest,
	// captured during the scan.
	srcField int
	src      [len(sourceProps)]slot
	srcOrder []envKey // the remembered key order of "source" (idx: sourcePropIndex)
	srcSeen  []string // scratch: the keys of the source object walked
	// srcPrev is the last source block the compact path read (srcNext the
	// one under way), for the next one to take its unchanged members from.
	srcPrev, srcNext srcBlock
	// msgSeq counts the messages Decode was given; srcFastSeq is msgSeq
	// when the compact path read this message's source block (starting at
	// srcFastAt), whose members srcPrev then lists: source.properties is
	// made from them, without walking the block again.
	msgSeq, srcFastSeq uint64
	srcFastAt          int
	// srcKeys is the keys of the last source.properties made from the
	// members, end to end (sourceMembersMap): blocks list the same keys
	// message after message, appended at once.
	srcKeys struct {
		pos    []int16 // the members' places in srcOrder
		data   []byte
		starts []int32
	}

	mark     int // builder rows at the start of the message
	rows     int // rows emitted by the current message
	metaDone bool

	// control describes the current message when it is a Control one.
	control controlInfo

	// Producer semantics: the columns' encodings in the current message
	// (from a Debezium schema, else defaultEncs), the primary key's columns,
	// and the unchanged-columns metadata columns.
	encs, defaultEncs []colEnc
	pk                []int
	unchCols          []*arrowconv.ListCol
	lastSchema        []byte
	fillFromBefore    bool      // ogg: a +U takes what "after" left out from "before"
	docs              [3][]byte // MongoDB documents of the message, unescaped
}

// documentOf returns, under producer semantics, the object a JSON string
// holds (MongoDB's connector writes before/after as text), in buffer k;
// any other value as it is.
func (d *base) documentOf(s slot, k int) slot {
	if s.t != jsonparser.String {
		return s
	}
	d.docs[k] = unescape(d.docs[k][:0], s.v)
	doc := bytes.TrimSpace(d.docs[k])
	if len(doc) == 0 || doc[0] != '{' {
		return s
	}
	return slot{doc, jsonparser.Object}
}

// emitKeyOnly emits a row of kind k with the primary key's columns from
// image and every other column unchanged (NULL, listed in
// unchanged-columns): the before image a producer did not send.
func (d *base) emitKeyOnly(k arrowconv.RowKind, image slot) error {
	slots := d.rowSlots(image, d.oldSlots)
	if err := d.beginRow(k); err != nil {
		return err
	}
	u := d.row.unch
	for i, c := range d.physCols {
		if slices.Contains(d.pk, i) {
			if err := d.row.convertOne(i, slots[i]); err != nil {
				return withPath(err, "after")
			}
			continue
		}
		c.AppendNull()
		u.cols[i] = true
	}
	d.endRow()
	return nil
}

// controlInfo is what a format says about a control message.
type controlInfo struct {
	what            string
	truncate        bool
	table, position string
}

// controlled records a control message and returns its outcome.
func (d *base) controlled(what string, truncate bool, table, position string) (Outcome, error) {
	d.control = controlInfo{what, truncate, table, position}
	return Control, nil
}

func (d *base) SetFile(fi FileInfo) { d.file = fi }

func (d *base) SetLine(n int64) { d.line = n }

// Routed implements Decoder from the envelope captured by the last Decode.
func (d *base) Routed() (ns, table []byte, esc, ok bool) { return d.format.unit.routed(d) }

// Decode implements [Decoder].
func (d *base) Decode(msg []byte) (Result, error) {
	if len(msg) == 0 {
		return Result{Outcome: Blank}, nil
	}
	d.cx.setMsg(msg, !d.plain)
	d.msgSeq++
	d.cx.nulled = d.cx.nulled[:0]
	d.cx.zeroDates = 0
	d.row.foldErr = nil
	d.mark, d.rows, d.metaDone = d.b.Mark(), 0, false
	out, err := d.decode(msg)
	if err != nil {
		if d.opts.IgnoreParseErrors {
			// Keep the rows already emitted, as Flink does; drop the rest
			// of this message, including a half-built row.
			d.b.Rollback(d.mark + d.rows)
			d.trimMeta()
			return Result{Rows: d.rows, Outcome: Dropped, Err: err}, nil
		}
		d.b.Rollback(d.mark)
		return Result{}, err
	}
	d.trimMeta()
	res := Result{Rows: d.rows, Outcome: out, ZeroDates: d.cx.zeroDates, Trailing: d.trailing, Repeated: d.repeated}
	if out == Control {
		c := d.control
		res.Control, res.Truncate, res.Table, res.Position = c.what, c.truncate, c.table, c.position
	}
	if len(d.cx.nulled) > 0 {
		res.Nulled = append([]error(nil), d.cx.nulled...)
	}
	return res, nil
}

// trimMeta removes metadata values filled for a first row that never came.
func (d *base) trimMeta() {
	if d.metaDone && d.rows == 0 {
		d.b.Rollback(d.mark)
	}
}

func (d *base) decode(msg []byte) (Outcome, error) {
	// Jackson tolerates a BOM, skips white space, reads one value and
	// ignores whatever follows it.
	i := 0
	if len(msg) >= 3 && msg[0] == 0xEF && msg[1] == 0xBB && msg[2] == 0xBF {
		i = 3
	}
	i = skipWS(msg, i)
	if i >= len(msg) {
		return 0, &msgError{off: i, err: errorf(ErrMalformed, "no JSON value (blank message)")}
	}
	d.sc = scanner{msg: msg}
	d.lastCaptured = 0
	d.trailing, d.repeated = false, false
	if msg[i] != '{' {
		v, _, err := d.sc.value(i)
		if err != nil {
			return 0, err
		}
		if d.cx.traits.plain && v.t == jsonparser.Null {
			return Blank, nil // plain json: a null message gives no row
		}
		return 0, &msgError{off: i, err: errorf(ErrMalformed, "the message is not a JSON object")}
	}
	end, err := d.capture(i)
	if err != nil {
		return 0, err
	}
	d.trailing = skipWS(msg, end) < len(msg)
	return d.op.decode(msg[i:end])
}

// beginRow appends the row kind and the metadata columns of one row; the
// caller then appends the physical columns. Metadata is computed for the
// first row of a message and copied for the others, as every row of one
// message carries the same metadata.
func (d *base) beginRow(k arrowconv.RowKind) error {
	if d.row.foldErr != nil {
		return d.row.foldErr // two keys differing only in case, met scanning the image
	}
	if err := d.fillMeta(); err != nil {
		return err
	}
	d.b.AppendKind(k)
	if d.rows > 0 {
		for _, m := range d.metas {
			m.col.AppendCopy(d.mark)
		}
	}
	if u := d.row.unch; u != nil {
		clear(u.cols)
		u.absent = k != arrowconv.Insert
	}
	return nil
}

// fillMeta computes the metadata values once per message, at the row index
// of the message's first row.
func (d *base) fillMeta() error {
	if d.metaDone {
		return nil
	}
	d.metaDone = true
	for _, m := range d.metas {
		if err := m.fill(m.col); err != nil {
			return withPath(err, m.key)
		}
	}
	return nil
}

// endRow counts a finished row.
func (d *base) endRow() {
	d.rows++
	for _, c := range d.unchCols {
		c.Start()
		if u := d.row.unch; u != nil {
			for i, set := range u.cols {
				if set {
					c.Child.(*arrowconv.BytesCol).AppendString(d.phys[i].Name)
				}
			}
		}
	}
}

// emitObject emits one row from a JSON object value (a data/before/after
// row; idx >= 0 for an element of an array field). A null or missing row
// fails, as Flink's NullPointerException does.
func (d *base) emitObject(k arrowconv.RowKind, field string, idx int, s slot) error {
	if s.t != jsonparser.Object {
		path := fieldPath(field, idx)
		if !d.cx.lenient && s.t != jsonparser.NotExist && s.t != jsonparser.Null {
			return withPath(d.cx.fail(s.v, "ROW", "not an object"), path)
		}
		return withPath(errorf(ErrMissingField, fmt.Sprintf("the %q field is null or not an object", path)), path)
	}
	slots := d.rowSlots(s, d.dataSlots)
	if err := d.beginRow(k); err != nil {
		return err
	}
	if err := d.row.convert(slots); err != nil {
		return withPath(err, fieldPath(field, idx))
	}
	d.endRow()
	return nil
}

// fieldPath is field or field[idx]; built only for errors.
func fieldPath(field string, idx int) string {
	if idx < 0 {
		return field
	}
	return fmt.Sprintf("%s[%d]", field, idx)
}

// validateRow converts a row value and throws the result away: with
// ignore-parse-errors off, Flink converts the whole envelope before looking
// at the operation, so a bad value fails the message even where no row
// uses it.
func (d *base) validateRow(field string, s slot) error {
	if d.cx.lenient || s.t == jsonparser.NotExist || s.t == jsonparser.Null {
		return nil
	}
	if s.t != jsonparser.Object {
		return withPath(d.cx.fail(s.v, "ROW", "not an object"), field)
	}
	lens := d.colLens()
	err := d.row.convert(d.rowSlots(s, d.oldSlots))
	for i, c := range d.physCols {
		c.Truncate(lens[i])
	}
	if err != nil {
		return withPath(err, field)
	}
	return nil
}

// validateRows is validateRow for an array of rows.
func (d *base) validateRows(field string, s slot) error {
	if d.cx.lenient || s.t == jsonparser.NotExist || s.t == jsonparser.Null {
		return nil
	}
	if s.t != jsonparser.Array {
		return withPath(d.cx.fail(s.v, "ARRAY", "not an array"), field)
	}
	var first error
	i := 0
	jsonparser.ArrayEach(s.v, func(v []byte, t jsonparser.ValueType, _ int, _ error) {
		if first == nil {
			first = d.validateRow(fmt.Sprintf("%s[%d]", field, i), slot{v, t})
		}
		i++
	})
	return first
}

func (d *base) colLens() []int {
	lens := make([]int, len(d.physCols))
	for i, c := range d.physCols {
		lens[i] = c.Len()
	}
	return lens
}

// emitMergedBefore emits canal/maxwell's -U row: each column from old,
// except that a column whose old value is NULL and whose name occurs
// nowhere in "old" is copied from the after row (spec §4).
func (d *base) emitMergedBefore(oldObj, dataObj slot) error {
	if err := d.beginRow(arrowconv.UpdateBefore); err != nil {
		return err
	}
	olds := d.rowSlots(oldObj, d.oldSlots)
	datas := d.rowSlots(dataObj, d.dataSlots)
	clear(d.fromData)
	for i, c := range d.physCols {
		if s := olds[i]; s.t != jsonparser.NotExist {
			if err := d.row.conv(i, s.v, s.t); err != nil {
				return withPath(err, d.phys[i].Name)
			}
			if !c.IsNull(c.Len()-1) || d.present[i] {
				continue
			}
			c.Truncate(c.Len() - 1)
		} else if d.present[i] {
			c.AppendNull()
			continue
		}
		if err := d.row.conv(i, datas[i].v, datas[i].t); err != nil {
			return withPath(err, d.phys[i].Name)
		}
		// A NULL may stand for a value nulled under ignore-parse-errors,
		// which the after row must record again: only values are reused.
		d.fromData[i] = !c.IsNull(c.Len() - 1)
	}
	d.endRow()
	return nil
}

// emitAfterImage emits the +U row of an update whose -U row was just
// emitted from the before image: a column whose raw JSON is the same in
// both images (most columns of an update) copies the converted value
// instead of converting it again. Only non-NULL values are copied, so a
// value nulled under ignore-parse-errors is converted, and recorded, again.
func (d *base) emitAfterImage(before, after slot) error {
	bs := d.rowSlots(before, d.oldSlots)
	as := d.rowSlots(after, d.dataSlots)
	if d.fillFromBefore {
		for i := range as {
			if as[i].t == jsonparser.NotExist && bs[i].t != jsonparser.NotExist {
				as[i] = bs[i]
			}
		}
	}
	if err := d.beginRow(arrowconv.UpdateAfter); err != nil {
		return err
	}
	for i, c := range d.physCols {
		if a, b := as[i], bs[i]; !d.plain && a.t == b.t && a.t != jsonparser.NotExist && bytes.Equal(a.v, b.v) && !c.IsNull(c.Len()-1) {
			c.AppendCopy(c.Len() - 1)
			continue
		}
		if err := d.row.convertOne(i, as[i]); err != nil {
			return withPath(err, "after")
		}
	}
	d.endRow()
	return nil
}

// emitMergedAfter emits the +U row that follows emitMergedBefore for the
// same data object: columns the before row converted from data are copied
// from it rather than converted a second time.
func (d *base) emitMergedAfter(field string, idx int, s slot) error {
	slots := d.rowSlots(s, d.dataSlots)
	if err := d.beginRow(arrowconv.UpdateAfter); err != nil {
		return err
	}
	for i, c := range d.physCols {
		if d.fromData[i] && !d.plain {
			c.AppendCopy(c.Len() - 1)
			continue
		}
		if err := d.row.convertOne(i, slots[i]); err != nil {
			return withPath(err, fieldPath(field, idx))
		}
	}
	d.endRow()
	return nil
}

// notRow is the error for a row or array-of-rows field that is missing,
// null or of the wrong JSON type.
func (d *base) notRow(field string, s slot) error {
	if s.t == jsonparser.NotExist || s.t == jsonparser.Null {
		return withPath(errorf(ErrMissingField, fmt.Sprintf("the %q field is missing or null", field)), field)
	}
	return withPath(d.cx.fail(s.v, "ROW", "wrong JSON type"), field)
}

// opError is the error for an operation the format does not know.
func (d *base) opError(field string, s slot) error {
	v := string(d.cx.textOf(s.v, s.t))
	return &msgError{path: field, off: d.cx.valueOff(s.v), err: errorf(ErrUnknownOp, fmt.Sprintf("Unknown %q value %q", field, v))}
}

// opText returns the operation field as text, failing when it is missing
// or null (Flink dereferences it).
func (d *base) opText(f field) ([]byte, slot, error) {
	s := d.get(f)
	if s.t == jsonparser.NotExist || s.t == jsonparser.Null {
		return nil, s, withPath(errorf(ErrMissingField, fmt.Sprintf("the %q field is missing or null", f.name)), f.name)
	}
	if s.t == jsonparser.Object || s.t == jsonparser.Array {
		d.cx.canon = appendCanonical(d.cx.canon[:0], s.v, s.t, d.cx.exact, &d.cx.esc)
		return d.cx.canon, s, nil
	}
	return d.cx.textOf(s.v, s.t), s, nil
}

// Locate gives an error returned by [Decoder.Decode] its position:
// file, 1-based line and the byte offset of the line in the file.
func Locate(err error, file string, line int, offset int64) *Error {
	e := &Error{File: file, Line: line, Offset: offset, Err: err}
	var me *msgError
	if errors.As(err, &me) {
		e.Path, e.Hint = me.path, me.hint
		if me.off >= 0 {
			e.Column = me.off + 1
		}
		e.Err = me.err
	}
	return e
}
