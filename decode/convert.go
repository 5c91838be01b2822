package decode

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/buger/jsonparser"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/internal/javatext"
	"github.com/cdcetl/cdcetl/internal/setting"
)

// conv converts one JSON value (t is jsonparser.NotExist for a missing key)
// and appends the result to the column it was built for. It returns an
// error only when ignore-parse-errors is off; with it on, a value that
// cannot be converted is appended as NULL (spec §9, value layer).
type conv func(v []byte, t jsonparser.ValueType) error

// convCtx holds what every converter of one decoder shares: the options
// that change conversion, the message being decoded (for error offsets) and
// scratch buffers. Converters are built once per schema (no type switch per
// value) and are not safe for concurrent use.
type convCtx struct {
	format        string       // the format's name, for hints
	traits        traits       // the format's conventions (unit.go)
	prod          *producerCtx // producer semantics, or nil
	curEnc        *colEnc      // while building: the top-level column's encoding
	foldKeys      bool         // --column-case insensitive
	mongo         bool         // producer semantics on debezium-json: MongoDB extended JSON may appear (here, not in prod: unwrapMongo inlines)
	lenient       bool
	exact         bool  // the schema has a DECIMAL: Jackson reads fractions as exact decimals
	iso           bool  // timestamp-format.standard = ISO-8601
	failOnMissing bool  // plain json's fail-on-missing-field
	plain         *bool // the decoder's "no shortcuts" (tests), or nil
	msg           []byte
	escEnd        int     // msg has no backslash before this offset (see setMsg)
	nulled        []error // lenient value failures of the current message
	zeroDates     int     // MySQL zero dates of the current message made NULL
	text          []byte  // scratch for node text
	canon         []byte  // scratch for canonical JSON
	esc           []byte
	dec           javatext.DecimalText
}

func (cx *convCtx) fail(v []byte, typ string, why string) error {
	shown := v
	if len(shown) > 64 {
		shown = shown[:64]
	}
	msg := fmt.Sprintf("cannot convert %q to %s", shown, typ)
	if why != "" {
		msg += ": " + why
	}
	return &msgError{off: cx.valueOff(v), err: errorf(ErrType, msg)}
}

// failHint is fail with a hint for the user (see [Hint]).
func (cx *convCtx) failHint(v []byte, typ, why, hint string) error {
	err := cx.fail(v, typ, why)
	err.(*msgError).hint = hint
	return err
}

// valueOff is the offset of value v in the message, at a string's opening
// quote, or -1.
func (cx *convCtx) valueOff(v []byte) int {
	off := offsetIn(cx.msg, v)
	if off > 0 && cx.msg[off-1] == '"' {
		off--
	}
	return off
}

// setMsg makes msg the message being decoded. Unless fast is false (the
// tests' "no shortcuts"), it finds msg's first backslash: most messages
// have none, and a string value before it has no escape to undo -- one
// search of the message instead of one per string value (4-6% of a
// conversion of messages without escapes).
func (cx *convCtx) setMsg(msg []byte, fast bool) {
	cx.msg, cx.escEnd = msg, 0
	if fast && unescapedFast {
		if cx.escEnd = bytes.IndexByte(msg, '\\'); cx.escEnd < 0 {
			cx.escEnd = len(msg)
		}
	}
}

// shortcuts says whether the fast paths are on: the decoder's "no
// shortcuts" (tests) turns them off so the fuzz twins compare them with
// the general paths.
func (cx *convCtx) shortcuts() bool { return cx.plain == nil || !*cx.plain }

// shortDoubleText lets a DOUBLE's text take ShortDecimalFloat (a twin
// test compares it off).
var shortDoubleText = true

// unescapedFast turns setMsg's search on (BenchmarkUnescapedShortcut
// compares it off).
var unescapedFast = true

// unescaped reports that v lies in the message before its first
// backslash. (cx.msg is on the heap -- the decoder holds it -- so its
// address is stable; a v outside it has an offset past escEnd, or one that
// wraps around.)
func (cx *convCtx) unescaped(v []byte) bool {
	off := uintptr(unsafe.Pointer(unsafe.SliceData(v))) - uintptr(unsafe.Pointer(unsafe.SliceData(cx.msg)))
	return off <= uintptr(cx.escEnd) && uintptr(len(v)) <= uintptr(cx.escEnd)-off
}

// textOf returns Jackson's asText() of a non-null value in a scratch buffer
// valid until the next call. (Inlined: most values take the first return.)
func (cx *convCtx) textOf(v []byte, t jsonparser.ValueType) []byte {
	if t == jsonparser.String && cx.unescaped(v) {
		return v
	}
	return cx.nodeText(v, t)
}

func (cx *convCtx) nodeText(v []byte, t jsonparser.ValueType) []byte {
	if t == jsonparser.String && !hasEscape(v) {
		return v
	}
	cx.text = nodeText(cx.text[:0], v, t, cx.exact)
	return cx.text
}

// newConv builds the converter for a value of type typ appended to col.
func (cx *convCtx) newConv(typ arrowconv.Type, col arrowconv.Column) conv {
	inner := cx.newInner(typ, col)
	return func(v []byte, t jsonparser.ValueType) error { return cx.apply(inner, col, v, t) }
}

// apply appends v with inner, the converter for a non-null value: NULL for
// a missing or null value, and under ignore-parse-errors for a value that
// does not convert (recorded for the dead-letter file).
func (cx *convCtx) apply(inner conv, col arrowconv.Column, v []byte, t jsonparser.ValueType) error {
	if t == jsonparser.NotExist || t == jsonparser.Null {
		col.AppendNull()
		return nil
	}
	if err := inner(v, t); err != nil {
		return cx.nullOrErr(col, err)
	}
	return nil
}

// nullOrErr is what a value that does not convert becomes: under
// ignore-parse-errors a NULL, recorded for the dead letters; otherwise the
// error.
func (cx *convCtx) nullOrErr(col arrowconv.Column, err error) error {
	if cx.lenient {
		cx.nulled = append(cx.nulled, err)
		col.AppendNull()
		return nil
	}
	return err
}

// newInner builds the converter of non-null values of type typ into col:
// the producer's when the decoder has producer semantics and the producer's
// encoding differs from Flink's, Flink's otherwise. enc is a top-level
// column's encoding (nil inside nested values).
func (cx *convCtx) newInner(typ arrowconv.Type, col arrowconv.Column) conv {
	if cx.prod != nil {
		if c := cx.newProducerInner(typ, col, cx.curEnc); c != nil {
			return c
		}
	}
	return cx.newFlinkInner(typ, col)
}

// newFlinkInner is Flink's converter for typ (spec §3).
func (cx *convCtx) newFlinkInner(typ arrowconv.Type, col arrowconv.Column) conv {
	cx.curEnc = nil // nested values take their type's default encoding
	name := typ.String()
	switch typ.Kind {
	case arrowconv.Boolean:
		c := col.(*arrowconv.BoolCol)
		return func(v []byte, t jsonparser.ValueType) error {
			if t == jsonparser.Boolean {
				c.Append(v[0] == 't')
				return nil
			}
			s := javatext.Trim(cx.textOf(v, t))
			c.Append(len(s) == 4 && (s[0]|0x20) == 't' && (s[1]|0x20) == 'r' && (s[2]|0x20) == 'u' && (s[3]|0x20) == 'e')
			return nil
		}
	case arrowconv.TinyInt:
		c := col.(*arrowconv.FixedCol[int8])
		return func(v []byte, t jsonparser.ValueType) error {
			n, ok := javatext.ParseInt(javatext.Trim(cx.textOf(v, t)), 8)
			if !ok {
				return cx.fail(v, name, "")
			}
			c.Append(int8(n))
			return nil
		}
	case arrowconv.SmallInt:
		c := col.(*arrowconv.FixedCol[int16])
		return func(v []byte, t jsonparser.ValueType) error {
			n, ok := javatext.ParseInt(javatext.Trim(cx.textOf(v, t)), 16)
			if !ok {
				return cx.fail(v, name, "")
			}
			c.Append(int16(n))
			return nil
		}
	case arrowconv.Int:
		c := col.(*arrowconv.FixedCol[int32])
		return func(v []byte, t jsonparser.ValueType) error {
			n, ok := cx.integer(v, t, 32)
			if !ok {
				return cx.fail(v, name, "")
			}
			c.Append(int32(n))
			return nil
		}
	case arrowconv.BigInt:
		c := col.(*arrowconv.FixedCol[int64])
		return func(v []byte, t jsonparser.ValueType) error {
			n, ok := cx.integer(v, t, 64)
			if !ok {
				return cx.fail(v, name, "")
			}
			c.Append(n)
			return nil
		}
	case arrowconv.Float:
		c := col.(*arrowconv.FixedCol[float32])
		return func(v []byte, t jsonparser.ValueType) error {
			if t == jsonparser.Number && !cx.exact && javatext.IsFloatLiteral(v) {
				f, _ := javatext.ParseFloat(v, 64)
				c.Append(float32(f)) // Java narrows the double: (float) node.asDouble()
				return nil
			}
			if t == jsonparser.Boolean {
				return cx.fail(v, name, "")
			}
			text := v // an exact decimal's text has the literal's value
			if t != jsonparser.Number || !javatext.IsFloatLiteral(v) {
				text = cx.textOf(v, t)
			}
			f, ok := javatext.ParseFloat(text, 32)
			if !ok {
				return cx.fail(v, name, "")
			}
			c.Append(float32(f))
			return nil
		}
	case arrowconv.Double:
		c := col.(*arrowconv.FixedCol[float64])
		return func(v []byte, t jsonparser.ValueType) error {
			// A short plain decimal, as a JSON number or as text (canal
			// writes every value as text): what ShortDecimalFloat takes has
			// no escape, no space and no sign but '-', so the raw text is
			// what Double.parseDouble would read, and its result is the same.
			// (Text takes the general path without shortcuts: the fuzz
			// twins compare the two.)
			if t == jsonparser.Number || (t == jsonparser.String && shortDoubleText && cx.shortcuts()) {
				if f, ok := javatext.ShortDecimalFloat(v); ok {
					c.Append(f)
					return nil
				}
			}
			if t == jsonparser.Boolean {
				return cx.fail(v, name, "")
			}
			text := v // a double or exact decimal: the literal has its value
			if t != jsonparser.Number || !javatext.IsFloatLiteral(v) {
				text = cx.textOf(v, t)
			}
			f, ok := javatext.ParseFloat(text, 64)
			if !ok {
				return cx.fail(v, name, "")
			}
			c.Append(f)
			return nil
		}
	case arrowconv.Decimal:
		c := col.(*arrowconv.FixedCol[decimal128.Num])
		p, s := typ.Precision, typ.Scale
		return func(v []byte, t jsonparser.ValueType) error {
			var text []byte
			switch t {
			case jsonparser.Number:
				text = v // exact decimal node, or an integer whose text is the same value
			case jsonparser.String:
				text = cx.textOf(v, t) // not trimmed: " 1.5" fails, as in Java
			default:
				return cx.fail(v, name, "")
			}
			if u, ok := javatext.ShortDecimal(text, p, s); ok {
				c.Append(decimal128.FromI64(u))
				return nil
			}
			if !cx.dec.Parse(text) {
				return cx.failHint(v, name, "", decimalHint(text, t))
			}
			n, ok := cx.dec.ToDecimal128(p, s)
			if !ok {
				c.AppendNull() // precision overflow is NULL even in strict mode
				return nil
			}
			c.Append(n)
			return nil
		}
	case arrowconv.Char, arrowconv.VarChar, arrowconv.String:
		c := col.(*arrowconv.BytesCol)
		return func(v []byte, t jsonparser.ValueType) error {
			switch t {
			case jsonparser.String:
				k := -1
				if !cx.unescaped(v) {
					k = bytes.IndexByte(v, '\\')
				}
				if k < 0 {
					c.Append(v)
				} else { // unescaped straight into the column
					c.AppendWith(func(dst []byte) []byte { return unescapeAt(dst, v, k) })
				}
			case jsonparser.Object, jsonparser.Array:
				cx.canon = appendCanonical(cx.canon[:0], v, t, cx.exact, &cx.esc)
				c.Append(cx.canon)
			default:
				c.Append(cx.textOf(v, t))
			}
			return nil
		}
	case arrowconv.Binary, arrowconv.VarBinary, arrowconv.Bytes:
		c := col.(*arrowconv.BytesCol)
		return func(v []byte, t jsonparser.ValueType) error {
			if t != jsonparser.String {
				c.AppendNull() // Jackson's binaryValue() of a non-text node is null
				return nil
			}
			s := cx.textOf(v, t)
			// Jackson's base64 decoder skips white space between quartets.
			clean := cx.canon[:0]
			for _, b := range s {
				if b > ' ' {
					clean = append(clean, b)
				}
			}
			cx.canon = clean
			out := cx.esc[:0]
			n := base64.StdEncoding.DecodedLen(len(clean))
			if cap(out) < n {
				out = make([]byte, n)
			}
			out = out[:n]
			m, err := base64.StdEncoding.Strict().Decode(out, clean)
			if err != nil {
				return cx.fail(v, name, "invalid base64")
			}
			c.Append(out[:m])
			cx.esc = out
			return nil
		}
	case arrowconv.Date:
		c := col.(*arrowconv.FixedCol[int32])
		return func(v []byte, t jsonparser.ValueType) error {
			d, ok := javatext.ParseDate(cx.textOf(v, t))
			if !ok {
				return cx.failHint(v, name, "expected yyyy-MM-dd", dateHint(cx.textOf(v, t), t))
			}
			c.Append(d)
			return nil
		}
	case arrowconv.Time:
		// Flink keeps whole seconds; the column's unit follows the precision.
		put := timeAppender(typ, col)
		return func(v []byte, t jsonparser.ValueType) error {
			ns, ok := javatext.ParseTime(cx.textOf(v, t))
			if !ok {
				return cx.fail(v, name, "expected HH:mm:ss")
			}
			put(ns - ns%1e9)
			return nil
		}
	case arrowconv.Timestamp, arrowconv.TimestampLTZ:
		c, ltz, unit, outside := timestampTarget(typ, col)
		want := "yyyy-MM-dd HH:mm:ss[.f]"
		if cx.iso {
			want = "yyyy-MM-ddTHH:mm[:ss[.f]]"
		}
		if ltz {
			want += "Z"
		}
		want = "expected " + want
		return func(v []byte, t jsonparser.ValueType) error {
			ct, ok := javatext.ParseTimestamp(cx.textOf(v, t), cx.iso, ltz)
			if !ok {
				return cx.failHint(v, name, want, timestampHint(cx.format, cx.textOf(v, t), t, cx.iso, ltz))
			}
			ts, ok := arrowconv.EpochValue(ct.Days, ct.NsOfDay, unit)
			if !ok {
				return cx.fail(v, name, outside)
			}
			c.Append(ts)
			return nil
		}
	case arrowconv.Array:
		c := col.(*arrowconv.ListCol)
		elem := cx.newConv(*typ.Elem, c.Child)
		return func(v []byte, t jsonparser.ValueType) error {
			if t != jsonparser.Array {
				return cx.fail(v, name, "not an array")
			}
			c.Start()
			var first error
			i := 0
			jsonparser.ArrayEach(v, func(ev []byte, et jsonparser.ValueType, _ int, _ error) {
				if first == nil {
					if err := elem(ev, et); err != nil {
						first = withPath(err, fmt.Sprintf("[%d]", i))
					}
				}
				i++
			})
			return first
		}
	case arrowconv.Map, arrowconv.Multiset:
		c := col.(*arrowconv.MapCol)
		keyConv := cx.newConv(*typ.Elem, c.Keys)
		var valConv conv
		if typ.Kind == arrowconv.Map {
			valConv = cx.newConv(*typ.Value, c.Values)
		} else {
			valConv = cx.newConv(arrowconv.Type{Kind: arrowconv.Int}, c.Values)
		}
		type entry struct {
			k0, k1 int // key bytes in arena
			v      []byte
			t      jsonparser.ValueType
		}
		var entries []entry
		var arena []byte
		// seen has a bit per key met in the object (by length and last
		// byte): a key whose bit is clear is new, without a look at the
		// others (a map of a dozen keys was a hundred comparisons).
		var seen uint64
		// add and each are made once, not per value.
		add := func(k, mv []byte, mt jsonparser.ValueType) {
			var lastByte uint
			if len(k) > 0 {
				lastByte = uint(k[len(k)-1])
			}
			bit := uint64(1) << ((uint(len(k))*7 + lastByte) % 64)
			if seen&bit != 0 {
				for i := range entries {
					e := &entries[i]
					if e.k1-e.k0 == len(k) && string(arena[e.k0:e.k1]) == string(k) {
						e.v, e.t = mv, mt // duplicate key: the last value wins
						return
					}
				}
			}
			seen |= bit
			k0 := len(arena)
			arena = append(arena, k...)
			entries = append(entries, entry{k0, len(arena), mv, mt})
		}
		each := func(k, mv []byte, mt jsonparser.ValueType, _ int) error {
			add(k, mv, mt)
			return nil
		}
		return func(v []byte, t jsonparser.ValueType) error {
			c.Start()
			if t != jsonparser.Object {
				return nil // a non-object gives an empty map, not an error
			}
			entries, arena, seen = entries[:0], arena[:0], 0
			if !cx.shortcuts() || !eachMember(v, add) {
				// Not the plain object the fast walk reads: jsonparser's.
				entries, arena, seen = entries[:0], arena[:0], 0
				jsonparser.ObjectEach(v, each)
			}
			for _, e := range entries {
				// Keys are plain text already unescaped; feed them as a
				// string without escapes.
				if err := keyConv(arena[e.k0:e.k1], jsonparser.String); err != nil {
					return err
				}
				if err := valConv(e.v, e.t); err != nil {
					return withPath(err, string(arena[e.k0:e.k1]))
				}
			}
			return nil
		}
	case arrowconv.Row:
		c := col.(*arrowconv.StructCol)
		rc := cx.newRowConv(typ.Fields, c.Fields, nil)
		slots := make([]slot, len(typ.Fields))
		return func(v []byte, t jsonparser.ValueType) error {
			if t != jsonparser.Object {
				return cx.fail(v, name, "not an object")
			}
			rc.scan(v, slots)
			c.AppendValid()
			return rc.convert(slots)
		}
	}
	panic("decode: no converter for " + name)
}

// timestampTarget is a TIMESTAMP or TIMESTAMP_LTZ column: where its
// values go, whether it is LTZ, its unit, and what a value beyond its
// range is told.
func timestampTarget(typ arrowconv.Type, col arrowconv.Column) (c *arrowconv.FixedCol[int64], ltz bool, unit arrow.TimeUnit, outside string) {
	unit = typ.ArrowType().(*arrow.TimestampType).Unit
	outside = "outside the range " + typ.String() + " can hold (" + arrowconv.TimestampRange(unit) + ")"
	return col.(*arrowconv.FixedCol[int64]), typ.Kind == arrowconv.TimestampLTZ, unit, outside
}

// timeAppender appends nanoseconds of the day to a TIME(p) column in its
// unit (milliseconds in int32 up to precision 3, else int64 µs or ns).
func timeAppender(typ arrowconv.Type, col arrowconv.Column) func(ns int64) {
	per := arrowconv.UnitNanos(arrowconv.TimeUnit(typ.Precision))
	if c, ok := col.(*arrowconv.FixedCol[int32]); ok {
		return func(ns int64) { c.Append(int32(ns / per)) }
	}
	c := col.(*arrowconv.FixedCol[int64])
	return func(ns int64) { c.Append(ns / per) }
}

// integer is Flink's INT/BIGINT rule: a JSON number whose value is in range
// is truncated toward zero; anything else goes through Integer.parseInt of
// the trimmed text.
func (cx *convCtx) integer(v []byte, t jsonparser.ValueType, bits int) (int64, bool) {
	if t == jsonparser.Number {
		// An integer literal is its own text ("-0" is 0). ParseInt takes
		// only a sign and digits, so what it takes has no fraction or
		// exponent: the float test runs only on what it refuses.
		if n, ok := javatext.ParseInt(v, bits); ok || !javatext.IsFloatLiteral(v) {
			return n, ok
		}
		// A fraction or an exponent.
		minV, maxV := int64(math.MinInt64), int64(math.MaxInt64)
		if bits == 32 {
			minV, maxV = math.MinInt32, math.MaxInt32
		}
		if cx.exact {
			// An exact decimal is range-checked exactly, then truncated.
			if !cx.dec.Parse(v) {
				return 0, false
			}
			n, ok := truncDecimal(&cx.dec)
			if !ok || n.Less(decimal128.FromI64(minV)) || n.Greater(decimal128.FromI64(maxV)) {
				return 0, false
			}
			return int64(n.LowBits()), true
		}
		f, _ := javatext.ParseFloat(v, 64)
		// Jackson compares the double with (double) MIN/MAX; for long the
		// upper bound rounds to 2^63 and (long) saturates.
		if f < float64(minV) || f > float64(maxV) || math.IsNaN(f) {
			return 0, false
		}
		if f >= math.Pow(2, 63) {
			return math.MaxInt64, true
		}
		return int64(f), true
	}
	return javatext.ParseInt(javatext.Trim(cx.textOf(v, t)), bits)
}

// truncDecimal returns the integer part of d, toward zero.
func truncDecimal(d *javatext.DecimalText) (decimal128.Num, bool) {
	digits := d.Digits
	if d.Exp < 0 {
		drop := -d.Exp
		if drop >= len(digits) {
			return decimal128.Num{}, true
		}
		digits = digits[:len(digits)-drop]
	} else if len(digits)+d.Exp > 38 {
		return decimal128.Num{}, false
	}
	var hi, lo uint64
	for _, c := range digits {
		hi, lo = javatext.Mul10Add(hi, lo, uint64(c-'0'))
	}
	for k := 0; d.Exp > 0 && k < d.Exp; k++ {
		hi, lo = javatext.Mul10Add(hi, lo, 0)
	}
	n := decimal128.New(int64(hi), lo)
	if d.Neg {
		n = n.Negate()
	}
	return n, true
}

// rowConv converts JSON objects into a fixed list of fields, each appended
// to its own column. Object members are matched to fields by exact name in
// one pass; unknown members are ignored; a repeated key keeps its last value.
type rowConv struct {
	cx     *convCtx
	names  map[string]int
	fold   map[string]int // lower-cased names, with --column-case insensitive
	fields []arrowconv.Field
	// unch, for the top-level row under producer semantics, records the
	// columns the producer did not send (nil otherwise).
	unch *unchanged
	// inners convert non-null values into cols; apply does the rest, one
	// call per value.
	inners []conv
	cols   []arrowconv.Column
	// checks refuse values the columns' inferred types did not foresee
	// (Options.ValueChecks; nil when none).
	checks []func([]byte, jsonparser.ValueType) bool
	// foldErr is the error of the last scan: two keys differing only in
	// case, or a key that is no column (rejectUnknown).
	foldErr       error
	rejectUnknown bool
}

// newRowConv builds the converter of rows of fields into cols; encs, for
// the top-level row under producer semantics, are the columns' encodings
// (nil otherwise).
func (cx *convCtx) newRowConv(fields []arrowconv.Field, cols []arrowconv.Column, encs []colEnc) *rowConv {
	rc := &rowConv{cx: cx, names: make(map[string]int, len(fields)), fields: fields}
	for i, f := range fields {
		rc.names[f.Name] = i
		cx.curEnc = nil
		if encs != nil {
			cx.curEnc = &encs[i]
		}
		rc.inners = append(rc.inners, cx.newInner(f.Type, cols[i]))
		if encs != nil && cx.prod != nil {
			if check := cx.prod.opts.ValueChecks[f.Name]; check != nil {
				if rc.checks == nil {
					rc.checks = make([]func([]byte, jsonparser.ValueType) bool, len(fields))
				}
				rc.checks[i] = check
			}
		}
		rc.cols = append(rc.cols, cols[i])
	}
	cx.curEnc = nil
	if cx.foldKeys {
		rc.fold = make(map[string]int, len(fields))
		for i, f := range fields {
			rc.fold[strings.ToLower(f.Name)] = i
		}
	}
	return rc
}

// unforeseen is the error of a value its column's check refuses
// (Options.ValueChecks).
func (rc *rowConv) unforeseen(i int, v []byte) error {
	return rc.cx.fail(v, rc.fields[i].Type.String(), "a value the inferred schema's sample did not foresee")
}

// scan fills slots (one per field) from the members of obj.
func (rc *rowConv) scan(obj []byte, slots []slot) {
	for i := range slots {
		slots[i] = slot{t: jsonparser.NotExist}
	}
	var folded []foldHit
	var ferr error
	jsonparser.ObjectEach(obj, func(k, v []byte, t jsonparser.ValueType, _ int) error {
		if i, ok := rc.names[string(k)]; ok {
			slots[i] = slot{v, t}
			if folded != nil {
				ferr = firstErr(ferr, checkFold(folded, i, k))
			}
		} else if rc.rejectUnknown && (rc.fold == nil || !hasKey(rc.fold, strings.ToLower(string(k)))) {
			ferr = firstErr(ferr, &msgError{off: -1, err: errorf(ErrUnknownKey, fmt.Sprintf("key %q is not a column", k))})
		} else if rc.fold != nil {
			if i, ok := rc.fold[strings.ToLower(string(k))]; ok {
				ferr = firstErr(ferr, checkFold(folded, i, k))
				if ferr == nil && slots[i].t != jsonparser.NotExist && !hasFold(folded, i) {
					ferr = foldConflict(rc.fields[i].Name, string(k))
				}
				folded = append(folded, foldHit{i, string(k)})
				slots[i] = slot{v, t}
			}
		}
		return nil
	})
	rc.foldErr = ferr
}

func hasKey(m map[string]int, k string) bool { _, ok := m[k]; return ok }

// foldHit is a key matched to column col ignoring case.
type foldHit struct {
	col int
	key string
}

func hasFold(hits []foldHit, col int) bool {
	for _, h := range hits {
		if h.col == col {
			return true
		}
	}
	return false
}

// checkFold reports two keys that differ only in case meeting in column
// col: an earlier folded key, then k.
func checkFold(hits []foldHit, col int, k []byte) error {
	for _, h := range hits {
		if h.col == col && h.key != string(k) {
			return foldConflict(h.key, string(k))
		}
	}
	return nil
}

func foldConflict(a, b string) error {
	return &msgError{off: -1, err: errorf(ErrType, fmt.Sprintf("keys %q and %q differ only in case: with %[3]s insensitive one column cannot take both (use %[3]s sensitive)", a, b, setting.ColumnCase))}
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// convert appends every field from slots.
func (rc *rowConv) convert(slots []slot) error {
	if rc.foldErr != nil {
		return rc.foldErr
	}
	if !rc.cx.failOnMissing {
		// The common case, without the calls of convertOne, conv and
		// apply per value (a tenth of a decode): a value goes to its
		// converter directly, a NULL to its column (what conv does).
		u := rc.unch
		if u == nil && rc.checks == nil {
			// Flink's decoding, an explicit schema: nothing but NULLs and
			// values to tell apart.
			inners, cols := rc.inners[:len(slots)], rc.cols[:len(slots)]
			for i := range slots {
				s := &slots[i]
				if s.t == jsonparser.NotExist || s.t == jsonparser.Null {
					cols[i].AppendNull()
				} else if err := inners[i](s.v, s.t); err != nil {
					if err = rc.cx.nullOrErr(cols[i], err); err != nil {
						return withPath(err, rc.fields[i].Name)
					}
				}
			}
			return nil
		}
		if u != nil && len(u.placeholder) == 0 && rc.cx.shortcuts() {
			return rc.convertSent(slots, u)
		}
		for i, s := range slots {
			switch {
			case u != nil && (s.t == jsonparser.NotExist || s.t == jsonparser.String || s.t == jsonparser.Array) && u.not(s.v, s.t):
				rc.cols[i].AppendNull()
				u.cols[i] = true
			case s.t == jsonparser.NotExist || s.t == jsonparser.Null:
				rc.cols[i].AppendNull()
			default:
				if rc.checks != nil && rc.checks[i] != nil && !rc.checks[i](s.v, s.t) {
					return withPath(rc.unforeseen(i, s.v), rc.fields[i].Name)
				}
				if err := rc.inners[i](s.v, s.t); err != nil {
					if err = rc.cx.nullOrErr(rc.cols[i], err); err != nil {
						return withPath(err, rc.fields[i].Name)
					}
				}
			}
		}
		return nil
	}
	for i, s := range slots {
		if err := rc.convertOne(i, s); err != nil {
			return err
		}
	}
	return nil
}

// convertOne appends field i from its slot.
func (rc *rowConv) convertOne(i int, s slot) error {
	if s.t == jsonparser.NotExist && rc.cx.failOnMissing {
		return withPath(errorf(ErrMissingField, fmt.Sprintf("Could not find field with name '%s'.", rc.fields[i].Name)), rc.fields[i].Name)
	}
	if err := rc.conv(i, s.v, s.t); err != nil {
		return withPath(err, rc.fields[i].Name)
	}
	return nil
}

// conv appends v to field i's column (see convCtx.apply). Under producer
// semantics a value the producer did not send (Debezium's placeholder; a
// key missing from an update's or delete's image) is recorded as unchanged
// and appended as NULL.
func (rc *rowConv) conv(i int, v []byte, t jsonparser.ValueType) error {
	if rc.unch != nil && rc.unch.not(v, t) {
		rc.cols[i].AppendNull()
		rc.unch.cols[i] = true
		return nil
	}
	if t == jsonparser.NotExist || t == jsonparser.Null {
		rc.cols[i].AppendNull()
		return nil
	}
	if rc.checks != nil && rc.checks[i] != nil && !rc.checks[i](v, t) {
		return rc.unforeseen(i, v)
	}
	if err := rc.inners[i](v, t); err != nil {
		return rc.cx.nullOrErr(rc.cols[i], err)
	}
	return nil
}

// Members walks the members of the JSON object msg as jsonparser's
// ObjectEach reports them (keys unescaped, strings without their quotes),
// at the speed of the decoders' scanner. It returns false, having called
// fn for a prefix of the members at most, when msg holds what the walk
// does not read (escaped keys, malformed JSON) or more than white space
// after the object: the caller then reads msg with jsonparser.
func Members(msg []byte, fn func(k, v []byte, t jsonparser.ValueType)) bool {
	end, ok := eachMemberEnd(msg, fn)
	return ok && skipWS(msg, end+1) == len(msg)
}

// eachMember walks the members of the object v (a whole, already
// validated JSON object) as jsonparser.ObjectEach reports them: keys
// unescaped, strings without their quotes. It returns false, having
// called fn for a prefix of the members at most, when v holds what the
// walk does not read (the caller then walks it again with jsonparser).
func eachMember(v []byte, fn func(k, mv []byte, mt jsonparser.ValueType)) bool {
	_, ok := eachMemberEnd(v, fn)
	return ok
}

// eachMemberEnd is eachMember that also returns the index of the object's
// closing brace.
func eachMemberEnd(v []byte, fn func(k, mv []byte, mt jsonparser.ValueType)) (int, bool) {
	i := skipWS(v, 0)
	if i >= len(v) || v[i] != '{' {
		return 0, false
	}
	i = skipWS(v, i+1)
	if i < len(v) && v[i] == '}' {
		return i, true
	}
	for i < len(v) && v[i] == '"' {
		end, esc, err := scanStringEsc(v, i)
		if err != nil {
			return 0, false
		}
		k := v[i+1 : end-1]
		if esc {
			return 0, false // rare: jsonparser unescapes such keys
		}
		i = skipWS(v, end)
		if i >= len(v) || v[i] != ':' {
			return 0, false
		}
		i = skipWS(v, i+1)
		if i >= len(v) {
			return 0, false
		}
		sl, next, scalar, err := scanScalar(v, i)
		if err != nil {
			return 0, false
		}
		if !scalar {
			e, ok := skipFast(v, i, 1)
			if !ok {
				return 0, false
			}
			t := jsonparser.Object
			if v[i] == '[' {
				t = jsonparser.Array
			}
			sl, next = slot{v[i:e], t}, e
		}
		fn(k, sl.v, sl.t)
		i = skipWS(v, next)
		if i < len(v) && v[i] == ',' {
			i = skipWS(v, i+1)
			continue
		}
		return i, i < len(v) && v[i] == '}'
	}
	return 0, false
}

// convertSent is convert's loop under producer semantics with no
// placeholder (every format but Debezium): only a member left out of an
// update's or a delete's image is "not sent", which convert's general loop
// asks of every value. Without shortcuts the general loop runs, so the
// fuzz twins compare the two. (A method of its own: inlined into
// emitObject with the rest of convert, it cost Flink's loop there about
// twenty instructions a message.)
func (rc *rowConv) convertSent(slots []slot, u *unchanged) error {
	inners, cols := rc.inners[:len(slots)], rc.cols[:len(slots)]
	checks := rc.checks
	if checks != nil {
		checks = checks[:len(slots)]
	}
	for i := range slots {
		s := &slots[i]
		switch s.t {
		case jsonparser.NotExist:
			cols[i].AppendNull()
			if u.absent {
				u.cols[i] = true
			}
		case jsonparser.Null:
			cols[i].AppendNull()
		default:
			if checks != nil && checks[i] != nil && !checks[i](s.v, s.t) {
				return withPath(rc.unforeseen(i, s.v), rc.fields[i].Name)
			}
			if err := inners[i](s.v, s.t); err != nil {
				if err = rc.cx.nullOrErr(cols[i], err); err != nil {
					return withPath(err, rc.fields[i].Name)
				}
			}
		}
	}
	return nil
}
