package decode

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/buger/jsonparser"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/internal/javatext"
)

// EncodeOptions are cdcetl's additions to Flink's encoders. Their zero value
// is Flink's behaviour.
type EncodeOptions struct {
	// MergeUpdates writes a -U row immediately followed by a +U row as one
	// native update message instead of Flink's delete + insert.
	MergeUpdates bool
	// Envelope writes the declared metadata columns back into the target
	// envelope where it has a place for them.
	Envelope bool
}

// Encoder turns record batches back into CDC JSON messages of one format,
// one per line. With MergeUpdates it holds a -U row until it sees the next
// row, so call Finish after the last batch. Not safe for concurrent use.
type Encoder struct {
	format *Format
	opts   Options
	eo     EncodeOptions
	schema *arrowconv.Schema

	phys     []int // column index in the batch (after _rowkind) of each physical column
	names    [][]byte
	encs     []valueEnc
	metas    map[string]int // metadata key → batch column
	metaEncs map[string]valueEnc

	cur, pending encodedRow
	hasPending   bool
	changedBuf   []bool
	names2idx    map[string]int
	env          envelopeEncoder
	schemaPK     []byte // the schema's PRIMARY KEY as a JSON array, or nil
}

// encodedRow is one row's physical fields, each already JSON-encoded; a nil
// entry is NULL. meta holds its envelope metadata (Envelope mode).
type encodedRow struct {
	fields [][]byte
	spans  [][2]int
	meta   map[string][]byte // JSON of non-timestamp metadata
	metaUS map[string]int64  // timestamp metadata, epoch microseconds
	// metaSpans is where each meta value lies in buf while buf grows
	// (reused from row to row).
	metaSpans map[string][2]int
	buf       []byte
}

// envelopeEncoder is the format-specific part of encoding.
type envelopeEncoder interface {
	// flink appends Flink's message for one row of kind k.
	flink(dst []byte, k arrowconv.RowKind, r *encodedRow) []byte
	// update appends a native update message (MergeUpdates).
	update(dst []byte, before, after *encodedRow) []byte
}

// valueEnc appends element i of arr as JSON.
type valueEnc func(dst []byte, arr arrow.Array, i int) ([]byte, error)

// NewEncoder returns an encoder writing format f for batches of schema s.
func NewEncoder(f *Format, s *arrowconv.Schema, o Options, eo EncodeOptions) (*Encoder, error) {
	e := &Encoder{format: f, opts: o, eo: eo, schema: s, metas: map[string]int{}, metaEncs: map[string]valueEnc{}}
	for i, c := range s.Columns {
		if c.IsMetadata() {
			e.metas[c.MetadataKey] = i
			e.metaEncs[c.MetadataKey] = e.newValueEnc(c.Type)
			continue
		}
		e.phys = append(e.phys, i)
		e.names = append(e.names, appendQuoted(nil, []byte(c.Name)))
		e.encs = append(e.encs, e.newValueEnc(c.Type))
	}
	if pk := s.PrimaryKey; len(pk) > 0 {
		e.schemaPK = append(e.schemaPK, '[')
		for i, k := range pk {
			if i > 0 {
				e.schemaPK = append(e.schemaPK, ',')
			}
			e.schemaPK = appendQuoted(e.schemaPK, []byte(k))
		}
		e.schemaPK = append(e.schemaPK, ']')
	}
	e.cur.fields = make([][]byte, len(e.phys))
	e.pending.fields = make([][]byte, len(e.phys))
	e.env = f.unit.newEncoder(e)
	return e, nil
}

// AppendBatch appends the messages for the rows of rec to dst, each ended
// by '\n'.
func (e *Encoder) AppendBatch(dst []byte, rec arrow.RecordBatch) ([]byte, error) {
	kinds := rec.Column(0).(*array.Dictionary).Indices().(*array.Int8).Int8Values()
	cols := rec.Columns()[1:]
	for i, k8 := range kinds {
		k := arrowconv.RowKind(k8)
		if err := e.encodeRow(&e.cur, cols, i); err != nil {
			return dst, fmt.Errorf("Could not serialize row: %w", err)
		}
		if e.hasPending {
			e.hasPending = false
			if k == arrowconv.UpdateAfter {
				dst = e.env.update(dst, &e.pending, &e.cur)
				dst = append(dst, '\n')
				continue
			}
			dst = append(e.env.flink(dst, arrowconv.UpdateBefore, &e.pending), '\n')
		}
		if k == arrowconv.UpdateBefore && e.eo.MergeUpdates {
			e.cur, e.pending = e.pending, e.cur
			e.hasPending = true
			continue
		}
		dst = append(e.env.flink(dst, k, &e.cur), '\n')
	}
	return dst, nil
}

// Finish appends what is still held: a -U row that no +U followed is
// written as Flink writes it (a delete).
func (e *Encoder) Finish(dst []byte) []byte {
	if e.hasPending {
		e.hasPending = false
		dst = append(e.env.flink(dst, arrowconv.UpdateBefore, &e.pending), '\n')
	}
	return dst
}

// encodeRow encodes the physical fields (and, in Envelope mode, metadata)
// of row i into r, reusing r's storage.
func (e *Encoder) encodeRow(r *encodedRow, cols []arrow.Array, i int) error {
	buf := r.buf[:0]
	if cap(r.spans) < len(e.phys) {
		r.spans = make([][2]int, len(e.phys))
	}
	spans := r.spans[:len(e.phys)]
	var err error
	for k, c := range e.phys {
		if cols[c].IsNull(i) {
			spans[k] = [2]int{-1, -1}
			continue
		}
		start := len(buf)
		if buf, err = e.encs[k](buf, cols[c], i); err != nil {
			return fmt.Errorf("Fail to serialize at field: %s: %w", e.schema.Columns[c].Name, err)
		}
		spans[k] = [2]int{start, len(buf)}
	}
	if e.eo.Envelope && len(e.metas) > 0 {
		if r.meta == nil {
			r.meta = map[string][]byte{}
			r.metaUS = map[string]int64{}
			r.metaSpans = map[string][2]int{}
		}
		clear(r.meta)
		clear(r.metaUS)
		clear(r.metaSpans)
		for key, c := range e.metas {
			if cols[c].IsNull(i) {
				continue
			}
			if ts, ok := cols[c].(*array.Timestamp); ok {
				v := int64(ts.Value(i))
				if ts.DataType().(*arrow.TimestampType).Unit == arrow.Nanosecond {
					v = floorDiv(v, 1e3)
				}
				r.metaUS[key] = v
				continue
			}
			start := len(buf)
			if buf, err = e.metaEncs[key](buf, cols[c], i); err != nil {
				return err
			}
			r.metaSpans[key] = [2]int{start, len(buf)}
		}
	}
	// Slice only now: buf may have moved while growing.
	for k, sp := range spans {
		if sp[0] < 0 {
			r.fields[k] = nil
		} else {
			r.fields[k] = buf[sp[0]:sp[1]:sp[1]]
		}
	}
	for key, sp := range r.metaSpans {
		r.meta[key] = buf[sp[0]:sp[1]:sp[1]]
	}
	r.buf = buf
	return nil
}

// appendRow writes a row object from encoded fields: schema order, NULLs as
// null or left out with encode.ignore-null-fields. only, when not nil, keeps
// just the fields it marks.
func (e *Encoder) appendRow(dst []byte, r *encodedRow, only []bool, keepNulls bool) []byte {
	dst = append(dst, '{')
	first := true
	for k, v := range r.fields {
		if only != nil && !only[k] {
			continue
		}
		if v == nil && e.opts.IgnoreNullFields && !keepNulls {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, e.names[k]...)
		dst = append(dst, ':')
		if v == nil {
			dst = append(dst, "null"...)
		} else {
			dst = append(dst, v...)
		}
	}
	return append(dst, '}')
}

// changed marks, in out, the fields whose encodings differ between before
// and after.
func changed(out []bool, before, after *encodedRow) []bool {
	out = out[:0]
	for k := range before.fields {
		out = append(out, false)
		b, a := before.fields[k], after.fields[k]
		out[k] = (b == nil) != (a == nil) || string(b) != string(a)
	}
	return out
}

// newValueEnc builds the SQL-to-JSON encoder for values of type t
// (Flink's RowDataToJsonConverters).
func (e *Encoder) newValueEnc(t arrowconv.Type) valueEnc {
	switch t.Kind {
	case arrowconv.Boolean:
		return func(dst []byte, a arrow.Array, i int) ([]byte, error) {
			return strconv.AppendBool(dst, a.(*array.Boolean).Value(i)), nil
		}
	case arrowconv.TinyInt:
		return func(dst []byte, a arrow.Array, i int) ([]byte, error) {
			return strconv.AppendInt(dst, int64(a.(*array.Int8).Value(i)), 10), nil
		}
	case arrowconv.SmallInt:
		return func(dst []byte, a arrow.Array, i int) ([]byte, error) {
			return strconv.AppendInt(dst, int64(a.(*array.Int16).Value(i)), 10), nil
		}
	case arrowconv.Int:
		return func(dst []byte, a arrow.Array, i int) ([]byte, error) {
			return strconv.AppendInt(dst, int64(a.(*array.Int32).Value(i)), 10), nil
		}
	case arrowconv.BigInt:
		return func(dst []byte, a arrow.Array, i int) ([]byte, error) {
			return strconv.AppendInt(dst, a.(*array.Int64).Value(i), 10), nil
		}
	case arrowconv.Float:
		return func(dst []byte, a arrow.Array, i int) ([]byte, error) {
			return appendJSONFloat(dst, float64(a.(*array.Float32).Value(i)), 32), nil
		}
	case arrowconv.Double:
		return func(dst []byte, a arrow.Array, i int) ([]byte, error) {
			return appendJSONFloat(dst, a.(*array.Float64).Value(i), 64), nil
		}
	case arrowconv.Decimal:
		scale := t.Scale
		plain := e.opts.DecimalPlain
		return func(dst []byte, a arrow.Array, i int) ([]byte, error) {
			return appendDecimalJSON(dst, a.(*array.Decimal128).Value(i), scale, plain), nil
		}
	case arrowconv.Char, arrowconv.VarChar, arrowconv.String:
		return func(dst []byte, a arrow.Array, i int) ([]byte, error) {
			offs, data := arrowconv.StringBytes(a.(*array.String))
			return appendQuoted(dst, data[offs[i]:offs[i+1]]), nil
		}
	case arrowconv.Binary, arrowconv.VarBinary, arrowconv.Bytes:
		return func(dst []byte, a arrow.Array, i int) ([]byte, error) {
			v := a.(*array.Binary).Value(i)
			dst = append(dst, '"')
			dst = base64.StdEncoding.AppendEncode(dst, v)
			return append(dst, '"'), nil
		}
	case arrowconv.Date:
		return func(dst []byte, a arrow.Array, i int) ([]byte, error) {
			tm := time.Unix(int64(a.(*array.Date32).Value(i))*86400, 0).UTC()
			dst = append(dst, '"')
			dst = appendISODate(dst, tm)
			return append(dst, '"'), nil
		}
	case arrowconv.Time:
		return func(dst []byte, a arrow.Array, i int) ([]byte, error) {
			// Flink writes HH:mm:ss: the fraction is dropped.
			s := arrowconv.TimeNanos(a, i) / 1e9
			dst = append(dst, '"')
			dst = appendClock(dst, int(s/3600), int(s/60%60), int(s%60))
			return append(dst, '"'), nil
		}
	case arrowconv.Timestamp, arrowconv.TimestampLTZ:
		ltz := t.Kind == arrowconv.TimestampLTZ
		sep := byte(' ')
		if e.opts.TimestampISO {
			sep = 'T'
		}
		unit := t.ArrowType().(*arrow.TimestampType).Unit
		return func(dst []byte, a arrow.Array, i int) ([]byte, error) {
			tm := arrowconv.EpochTime(int64(a.(*array.Timestamp).Value(i)), unit)
			dst = append(dst, '"')
			dst = appendDateTime(dst, tm, sep)
			if ns := tm.Nanosecond(); ns != 0 {
				// Fraction without trailing zeros (appendFraction 0..9).
				var b [9]byte
				for k := 8; k >= 0; k-- {
					b[k] = byte('0' + ns%10)
					ns /= 10
				}
				n := 9
				for n > 0 && b[n-1] == '0' {
					n--
				}
				dst = append(dst, '.')
				dst = append(dst, b[:n]...)
			}
			if ltz {
				dst = append(dst, 'Z')
			}
			return append(dst, '"'), nil
		}
	case arrowconv.Array:
		elem := e.newValueEnc(*t.Elem)
		return func(dst []byte, a arrow.Array, i int) ([]byte, error) {
			l := a.(*array.List)
			from, to := l.ValueOffsets(i)
			child := l.ListValues()
			dst = append(dst, '[')
			var err error
			for j := from; j < to; j++ {
				if j > from {
					dst = append(dst, ',')
				}
				if child.IsNull(int(j)) {
					dst = append(dst, "null"...)
					continue
				}
				if dst, err = elem(dst, child, int(j)); err != nil {
					return dst, err
				}
			}
			return append(dst, ']'), nil
		}
	case arrowconv.Map, arrowconv.Multiset:
		vt := arrowconv.Type{Kind: arrowconv.Int}
		if t.Kind == arrowconv.Map {
			vt = *t.Value
		}
		val := e.newValueEnc(vt)
		// map-null-key.mode never applies: JSON object keys are strings and
		// Arrow maps cannot hold a NULL key, so no NULL key reaches here.
		return func(dst []byte, a arrow.Array, i int) ([]byte, error) {
			m := a.(*array.Map)
			from, to := m.ValueOffsets(i)
			keys := m.Keys().(*array.String)
			keyOffs, keyData := arrowconv.StringBytes(keys) // as the STRING encoder reads them
			items := m.Items()
			dst = append(dst, '{')
			first := true
			var err error
			for j := from; j < to; j++ {
				if !first {
					dst = append(dst, ',')
				}
				first = false
				dst = appendQuoted(dst, keyData[keyOffs[j]:keyOffs[j+1]])
				dst = append(dst, ':')
				if items.IsNull(int(j)) {
					dst = append(dst, "null"...)
					continue
				}
				if dst, err = val(dst, items, int(j)); err != nil {
					return dst, err
				}
			}
			return append(dst, '}'), nil
		}
	case arrowconv.Row:
		fields := make([]valueEnc, len(t.Fields))
		names := make([][]byte, len(t.Fields))
		for k, f := range t.Fields {
			fields[k] = e.newValueEnc(f.Type)
			names[k] = appendQuoted(nil, []byte(f.Name))
		}
		ignoreNull := e.opts.IgnoreNullFields
		return func(dst []byte, a arrow.Array, i int) ([]byte, error) {
			s := a.(*array.Struct)
			dst = append(dst, '{')
			first := true
			var err error
			for k, f := range fields {
				c := s.Field(k)
				if c.IsNull(i) && ignoreNull {
					continue
				}
				if !first {
					dst = append(dst, ',')
				}
				first = false
				dst = append(dst, names[k]...)
				dst = append(dst, ':')
				if c.IsNull(i) {
					dst = append(dst, "null"...)
					continue
				}
				if dst, err = f(dst, c, i); err != nil {
					return dst, err
				}
			}
			return append(dst, '}'), nil
		}
	}
	panic("decode: no encoder for " + t.String())
}

func append2(dst []byte, v int) []byte { return append(dst, byte('0'+v/10), byte('0'+v%10)) }

// appendClock writes HH:mm:ss.
func appendClock(dst []byte, h, m, s int) []byte {
	dst = append2(dst, h)
	dst = append(dst, ':')
	dst = append2(dst, m)
	dst = append(dst, ':')
	return append2(dst, s)
}

// appendDateTime writes yyyy-MM-dd<sep>HH:mm:ss.
func appendDateTime(dst []byte, t time.Time, sep byte) []byte {
	dst = appendISODate(dst, t)
	dst = append(dst, sep)
	return appendClock(dst, t.Hour(), t.Minute(), t.Second())
}

// appendISODate writes ISO_LOCAL_DATE (years past 9999 get a '+').
func appendISODate(dst []byte, t time.Time) []byte { return arrowconv.AppendISODate(dst, t) }

// appendJSONFloat writes a float as Jackson does: the Java toString digits
// as a number, NaN and infinities as strings.
func appendJSONFloat(dst []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		dst = append(dst, '"')
		dst = arrowconv.AppendJavaDouble(dst, f)
		return append(dst, '"')
	}
	if bits == 32 {
		return arrowconv.AppendJavaFloat(dst, float32(f))
	}
	return arrowconv.AppendJavaDouble(dst, f)
}

// appendDecimalJSON writes a DECIMAL as a JSON number: trailing zeros
// stripped in BigDecimal.toString form (Flink's default), or plain digits
// at the column's scale (encode.decimal-as-plain-number).
func appendDecimalJSON(dst []byte, n decimal128.Num, scale int, plain bool) []byte {
	if plain {
		return arrowconv.AppendDecimal(dst, n, scale, true)
	}
	var buf [40]byte
	neg, digits := arrowconv.DecimalDigits(buf[:0], n)
	d := javatext.DecimalText{Neg: neg, Digits: digits, Exp: -scale}
	if string(digits) == "0" {
		d.Digits = d.Digits[:0]
	}
	d.StripTrailingZeros()
	return d.AppendString(dst)
}

// beforeAfter writes "before":...,"after":... (nil means null; left out
// with encode.ignore-null-fields).
func (e *Encoder) beforeAfter(dst []byte, before, after *encodedRow) []byte {
	first := true
	for _, part := range []struct {
		name string
		r    *encodedRow
	}{{`"before":`, before}, {`"after":`, after}} {
		if part.r == nil && e.opts.IgnoreNullFields {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, part.name...)
		if part.r == nil {
			dst = append(dst, "null"...)
		} else {
			dst = e.appendRow(dst, part.r, nil, false)
		}
	}
	return dst
}

// metaField writes ,"name":<metadata value> from the first of keys the row
// has (keys name the same thing in different formats: "database",
// "source.database").
func (e *Encoder) metaField(dst []byte, r *encodedRow, name string, keys ...string) []byte {
	v, ok := metaAny(r.meta, keys)
	if !ok {
		return dst
	}
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	dst = append(dst, '"', ':')
	return append(dst, v...)
}

// epochField writes ,"name":<timestamp metadata in units of unit µs>.
func (e *Encoder) epochField(dst []byte, r *encodedRow, name string, unit int64, keys ...string) []byte {
	us, ok := metaAny(r.metaUS, keys)
	if !ok {
		return dst
	}
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	dst = append(dst, '"', ':')
	return strconv.AppendInt(dst, floorDiv(us, unit), 10)
}

// oldColumns picks the columns a canal/maxwell "old" must list so that
// Flink's merge rule rebuilds the before image: the changed ones, plus any
// unchanged column whose name appears as a key inside a changed nested
// value (Flink searches "old" at every depth, and a hit there would stop the
// column from being copied from "data").
func (e *Encoder) oldColumns(before, after *encodedRow) []bool {
	ch := changed(e.changedBuf, before, after)
	e.changedBuf = ch
	if e.names2idx == nil {
		e.names2idx = map[string]int{}
		for k, c := range e.phys {
			e.names2idx[e.schema.Columns[c].Name] = k
		}
	}
	names := e.names2idx
	for k, isCh := range ch {
		v := before.fields[k]
		if !isCh || len(v) == 0 || (v[0] != '{' && v[0] != '[') {
			continue
		}
		var walk func(v []byte, t jsonparser.ValueType)
		walk = func(v []byte, t jsonparser.ValueType) {
			switch t {
			case jsonparser.Object:
				jsonparser.ObjectEach(v, func(key, mv []byte, mt jsonparser.ValueType, _ int) error {
					if j, ok := names[string(key)]; ok {
						ch[j] = true
					}
					walk(mv, mt)
					return nil
				})
			case jsonparser.Array:
				jsonparser.ArrayEach(v, func(ev []byte, et jsonparser.ValueType, _ int, _ error) { walk(ev, et) })
			}
		}
		t := jsonparser.Object
		if v[0] == '[' {
			t = jsonparser.Array
		}
		walk(v, t)
	}
	return ch
}

func metaAny[V any](m map[string]V, keys []string) (V, bool) {
	for _, k := range keys {
		if v, ok := m[k]; ok {
			return v, true
		}
	}
	var zero V
	return zero, false
}

// Metadata keys that mean the same thing across formats, for --envelope.
var (
	keysDatabase = []string{"database", "source.database"}
	keysTable    = []string{"table", "source.table"}
	keysPK       = []string{"pk-names", "primary-key-columns", "primary-keys"}
	keysEvent    = []string{"event-timestamp", "source.timestamp"}
	keysIngest   = []string{"ingestion-timestamp"}
)

// appendPK writes ,"name":[...] from primary-key metadata or the schema's
// PRIMARY KEY.
func (e *Encoder) appendPK(dst []byte, r *encodedRow, name string) []byte {
	v, ok := metaAny(r.meta, keysPK)
	if !ok {
		v = e.schemaPK
	}
	if v == nil {
		return dst
	}
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	dst = append(dst, '"', ':')
	return append(dst, v...)
}
