package infer

import (
	"bytes"
	"encoding/binary"

	"github.com/buger/jsonparser"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// Types from JSON values, for producers that send none (Maxwell rows,
// GoldenGate, Debezium without its schema): each value's kind, joined over
// all values of a column into the narrowest type that holds them all.

// kind is a point of the value lattice.
type kind uint8

const (
	kNone      kind = iota // only nulls so far
	kBool                  // JSON booleans
	kInt                   // integer literals (bits: 32 or 64)
	kDecimal               // plain decimal literals, and integers past BIGINT
	kDouble                // literals with an exponent
	kDate                  // yyyy-MM-dd text
	kTime                  // HH:mm:ss[.f] text
	kTimestamp             // date-time text without a zone
	kLTZ                   // date-time text with a zone
	kString                // anything else: text, objects, arrays, mixed kinds
)

// valueType is the join of the values seen for one column.
type valueType struct {
	k     kind
	bits  int // kInt: 32 or 64
	scale int // kDecimal: the largest scale seen; kTime, kTimestamp, kLTZ: fraction digits
	wide  int // kDecimal: the most digits before the point seen
}

// observe joins value v (JSON type t) into vt.
func (vt *valueType) observe(v []byte, t jsonparser.ValueType) {
	vt.join(classify(v, t))
}

// classify is the type of one value.
func classify(v []byte, t jsonparser.ValueType) valueType {
	switch t {
	case jsonparser.Null, jsonparser.NotExist:
		return valueType{k: kNone}
	case jsonparser.Boolean:
		return valueType{k: kBool}
	case jsonparser.Number:
		return classifyNumber(v)
	case jsonparser.String:
		return classifyText(v)
	}
	return valueType{k: kString} // objects and arrays: compact JSON text
}

func classifyNumber(v []byte) valueType {
	// One pass for the exponent and the point: strict attempts classify
	// every value they decode (Table.ValueChecks).
	dot := -1
	for i, c := range v {
		switch c {
		case 'e', 'E':
			return valueType{k: kDouble}
		case '.':
			if dot < 0 {
				dot = i
			}
		}
	}
	intPart, frac := v, []byte(nil)
	if dot >= 0 {
		intPart, frac = v[:dot], v[dot+1:]
	}
	if len(intPart) > 0 && (intPart[0] == '-' || intPart[0] == '+') {
		intPart = intPart[1:]
	}
	for len(intPart) > 0 && intPart[0] == '0' {
		intPart = intPart[1:]
	}
	return classifyDigits(v, intPart, frac)
}

// classifyDigits types number literal v by its digits before the point
// (leading zeros left out) and after it.
func classifyDigits(v, intPart, frac []byte) valueType {
	if len(frac) == 0 {
		switch {
		case len(intPart) <= 9:
			return valueType{k: kInt, bits: 32}
		case len(intPart) <= 18:
			return valueType{k: kInt, bits: 64}
		case len(intPart) == 19 && fitsInt64(v):
			return valueType{k: kInt, bits: 64}
		case len(intPart) <= 38:
			return valueType{k: kDecimal, wide: len(intPart)}
		}
		return valueType{k: kDouble}
	}
	if len(intPart)+len(frac) > 38 {
		return valueType{k: kDouble}
	}
	return valueType{k: kDecimal, scale: len(frac), wide: len(intPart)}
}

func fitsInt64(v []byte) bool {
	neg := v[0] == '-'
	s := bytes.TrimLeft(bytes.TrimLeft(v, "+-"), "0")
	lim := "9223372036854775807"
	if neg {
		lim = "9223372036854775808"
	}
	return len(s) < len(lim) || len(s) == len(lim) && string(s) <= lim
}

// classifyText recognises the temporal shapes producers write: a date, a
// time of day, a date-time with or without a zone (in the forms producer
// semantics reads, GoldenGate's included).
func classifyText(v []byte) valueType {
	if len(v) < 5 || len(v) > 40 || v[0] < '0' || v[0] > '9' {
		return valueType{k: kString}
	}
	if hasEscape(v) {
		return valueType{k: kString}
	}
	if k, frac, ok := temporalShape(v); ok {
		return valueType{k: k, scale: frac}
	}
	return valueType{k: kString}
}

func hasEscape(v []byte) bool { return bytes.IndexByte(v, '\\') >= 0 }

// temporalShape reads yyyy-MM-dd[( |T|:)HH:mm[:ss[.f]][zone]] or
// HH:mm:ss[.f] and says which kind it is, with its fraction digits.
func temporalShape(v []byte) (kind, int, bool) {
	digit := func(i int) bool { return i < len(v) && v[i] >= '0' && v[i] <= '9' }
	two := func(i int) bool { return digit(i) && digit(i+1) }
	clock := func(i int) (end, frac int, ok bool) {
		if !two(i) || i+2 >= len(v) || v[i+2] != ':' || !two(i+3) {
			return 0, 0, false
		}
		end = i + 5
		if end < len(v) && v[end] == ':' {
			if !two(end + 1) {
				return 0, 0, false
			}
			end += 3
			if end < len(v) && v[end] == '.' {
				end++
				for digit(end) {
					end++
					frac++
				}
				if frac == 0 || frac > 9 {
					return 0, 0, false
				}
			}
		}
		return end, frac, true
	}
	if len(v) >= 8 && v[2] == ':' {
		end, frac, ok := clock(0)
		if ok && end == len(v) {
			return kTime, frac, true
		}
		return 0, 0, false
	}
	if len(v) < 10 || !digit(0) || !digit(1) || !digit(2) || !digit(3) || v[4] != '-' || !two(5) || v[7] != '-' || !two(8) {
		return 0, 0, false
	}
	if len(v) == 10 {
		return kDate, 0, true
	}
	if v[10] != ' ' && v[10] != 'T' && v[10] != ':' {
		return 0, 0, false
	}
	end, frac, ok := clock(11)
	if !ok {
		return 0, 0, false
	}
	if end == len(v) {
		return kTimestamp, frac, true
	}
	zone := v[end:]
	if len(zone) == 1 && zone[0] == 'Z' || len(zone) >= 3 && (zone[0] == '+' || zone[0] == '-') && two(end+1) {
		return kLTZ, frac, true
	}
	return 0, 0, false
}

// join widens vt to hold o's values too.
func (vt *valueType) join(o valueType) {
	a, b := *vt, o
	switch {
	case b.k == kNone:
		return
	case a.k == kNone:
		*vt = b
		return
	case a.k == b.k:
		vt.bits = max(a.bits, b.bits)
		vt.scale = max(a.scale, b.scale)
		vt.wide = max(a.wide, b.wide)
		return
	}
	if a.k > b.k {
		a, b = b, a // a is the lower kind
	}
	switch {
	case a.k == kBool && b.k == kInt:
		*vt = b // MySQL booleans as 0 and 1
	case a.k == kBool && b.k == kDecimal:
		*vt = b
	case a.k == kInt && b.k == kDecimal:
		*vt = valueType{k: kDecimal, scale: b.scale, wide: max(b.wide, 19)}
	case (a.k == kInt || a.k == kDecimal || a.k == kBool) && b.k == kDouble:
		*vt = b
	case a.k == kDate && (b.k == kTimestamp || b.k == kLTZ):
		*vt = b
	default:
		*vt = valueType{k: kString}
	}
}

// typ is the Flink type of the values seen (STRING when only nulls).
func (vt valueType) typ() arrowconv.Type {
	switch vt.k {
	case kBool:
		return arrowconv.Of(arrowconv.Boolean)
	case kInt:
		if vt.bits == 64 {
			return arrowconv.Of(arrowconv.BigInt)
		}
		return arrowconv.Of(arrowconv.Int)
	case kDecimal:
		return arrowconv.Of(arrowconv.Decimal, 38, min(vt.scale, 38-min(vt.wide, 38)))
	case kDouble:
		return arrowconv.Of(arrowconv.Double)
	case kDate:
		return arrowconv.Of(arrowconv.Date)
	case kTime:
		return arrowconv.Of(arrowconv.Time, vt.scale)
	case kTimestamp:
		return arrowconv.Of(arrowconv.Timestamp, vt.scale)
	case kLTZ:
		return arrowconv.Of(arrowconv.TimestampLTZ, vt.scale)
	}
	return arrowconv.Of(arrowconv.String)
}

// describe says in words what the values were, for inspect.
func (vt valueType) describe() string {
	switch vt.k {
	case kNone:
		return "values: only nulls"
	case kBool:
		return "values: booleans"
	case kInt:
		if vt.bits == 64 {
			return "values: integers past INT"
		}
		return "values: integers"
	case kDecimal:
		return "values: decimal literals"
	case kDouble:
		return "values: numbers with exponents"
	case kDate:
		return "values: yyyy-MM-dd text"
	case kTime:
		return "values: HH:mm:ss text"
	case kTimestamp:
		return "values: date-time text"
	case kLTZ:
		return "values: date-time text with a zone"
	}
	return "values: text or mixed kinds"
}

// form is a fixed text form, matched eight bytes at a time: 'd' a
// digit, ' ' at index 10 a space, 'T' or ':' (the date-time separators
// temporalShape takes), anything else itself. Forms are 8 bytes or more.
type form struct {
	n      int
	sep    bool // index 10 is the date-time separator
	blocks []formBlock
}

// formBlock is one eight-byte window of a form: its digits' bytes and the
// literal bytes it must hold.
type formBlock struct {
	off                   int
	digits, litMask, lits uint64
}

func newForm(f string) form {
	fm := form{n: len(f), sep: len(f) > 10 && f[10] == ' '}
	for off := 0; off < len(f); off += 8 {
		off = min(off, len(f)-8) // the last window ends with the form
		var b formBlock
		b.off = off
		for j := range 8 {
			i, sh := off+j, uint(8*j)
			switch {
			case f[i] == 'd':
				b.digits |= 0xff << sh
			case fm.sep && i == 10:
			default:
				b.litMask |= 0xff << sh
				b.lits |= uint64(f[i]) << sh
			}
		}
		fm.blocks = append(fm.blocks, b)
	}
	return fm
}

// match reports whether v has the form.
func (fm *form) match(v []byte) bool {
	if len(v) != fm.n {
		return false
	}
	for _, b := range fm.blocks {
		w := binary.LittleEndian.Uint64(v[b.off:])
		if w&b.litMask != b.lits {
			return false
		}
		// A digit byte minus '0' is below 10: adding 0x76 to its low
		// seven bits leaves the high bit clear (no carry crosses a byte).
		x := w ^ 0x3030303030303030
		if (((x&0x7f7f7f7f7f7f7f7f)+0x7676767676767676)|x)&0x8080808080808080&b.digits != 0 {
			return false
		}
	}
	return !fm.sep || v[10] == ' ' || v[10] == 'T' || v[10] == ':'
}

// decimalDigits counts a plain decimal literal's digits before the point
// (leading zeros left out) and after it; ok is false for anything else
// (an exponent, no point).
func decimalDigits(v []byte) (wide, scale int, ok bool) {
	i := 0
	if i < len(v) && v[i] == '-' {
		i++
	}
	for i < len(v) && v[i] == '0' {
		i++
	}
	for ; i < len(v) && v[i] >= '0' && v[i] <= '9'; i++ {
		wide++
	}
	if i == len(v) || v[i] != '.' {
		return 0, 0, false
	}
	for i++; i < len(v) && v[i] >= '0' && v[i] <= '9'; i++ {
		scale++
	}
	return wide, scale, i == len(v)
}
