package writer

import (
	"encoding/binary"
	"iter"
	"math"
	"math/bits"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/parquet-go/parquet-go/format"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// Column-at-a-time writers of fixed-width leaves. A batch's rows go into
// the page in one loop per column: the validity bitmap is read in place,
// values are converted without a call or type assertion per value, the
// page's bounds are taken once per batch, and the buffers grow once.
// Columns without NULLs (most of them) skip the bitmap altogether.

// validity is an Arrow array's validity bitmap (nil: no NULLs) and offset.
type validity struct {
	bits []byte
	off  int
}

func validityOf(a arrow.Array) validity {
	if a.NullN() == 0 {
		return validity{}
	}
	return validity{a.NullBitmapBytes(), a.Data().Offset()}
}

func (v validity) valid(i int) bool { return v.bit(i) != 0 }

// defLevels records the definition levels of rows [from, to) of a flat
// column and returns how many hold a value. A required column (maxDef 0)
// has no levels and no NULLs.
func (l *leaf) defLevels(v validity, from, to int) int {
	n := to - from
	l.nRows += n
	l.nValues += n
	if l.maxDef == 0 {
		return n
	}
	// Filled through a local slice (one store of the leaf's), a validity
	// byte's eight levels at once where the rows cover it whole.
	d := room(l.def, n)
	k := len(d) - from
	d = d[:len(d)+n]
	if v.bits == nil {
		fillLevels(d[k+from:], 1)
		l.def = d
		return n
	}
	present := 0
	i := from
	for ; i < to && (v.off+i)&7 != 0; i++ {
		d[k+i] = v.bit(i)
		present += int(d[k+i])
	}
	for ; i+8 <= to && defBytesFast; i += 8 {
		b := v.bits[(v.off+i)>>3]
		binary.LittleEndian.PutUint64(d[k+i:], bitBytes[b])
		present += bits.OnesCount8(b)
	}
	for ; i < to; i++ {
		d[k+i] = v.bit(i)
		present += int(d[k+i])
	}
	l.def = d
	l.nNulls += n - present
	return present
}

// bit is row i's validity as a definition level (1 valid, 0 NULL).
func (v validity) bit(i int) uint8 {
	j := v.off + i
	return v.bits[j>>3] >> (j & 7) & 1
}

// rows returns the rows of [i, to) with a value among the next n (up to
// 56, as many as are left; a word read at any bit offset holds 56 bits),
// as offsets from i in ascending order, in at's storage. The put loops
// visit the rows with a value through it, a validity word at a time, set
// bit by set bit: with NULLs scattered at random (half the values of the
// wide shape's nullable columns) a test of each row's bit went the way
// the branch predictor did not expect about half the time. Without NULLs
// every row is listed.
func (v validity) rows(i, to int, at *[56]uint8) (ks []uint8, n int) {
	n = min(to-i, 56)
	if v.bits == nil {
		return allRows[:n], n
	}
	if !validWords {
		m := 0
		for k := range n {
			if v.valid(i + k) {
				at[m] = uint8(k)
				m++
			}
		}
		return at[:m], n
	}
	j := v.off + i
	p := j >> 3
	var w uint64
	if p+8 <= len(v.bits) {
		w = binary.LittleEndian.Uint64(v.bits[p:])
	} else {
		for k := len(v.bits) - 1; k >= p; k-- {
			w = w<<8 | uint64(v.bits[k])
		}
	}
	w = w >> (j & 7) & (1<<n - 1)
	m := 0
	for ; w != 0; w &= w - 1 {
		at[m] = uint8(bits.TrailingZeros64(w))
		m++
	}
	return at[:m], n
}

// present yields the rows of [from, to) with a value, in order, through
// rows: the put loops' one way of visiting them.
func (v validity) present(from, to int) iter.Seq[int] {
	return func(yield func(int) bool) {
		var at [56]uint8
		for r := from; r < to; {
			ks, n := v.rows(r, to, &at)
			for _, k := range ks {
				if !yield(r + int(k)) {
					return
				}
			}
			r += n
		}
	}
}

// allRows lists every offset rows can return.
var allRows = func() (a [56]uint8) {
	for k := range a {
		a[k] = uint8(k)
	}
	return a
}()

// validWords turns rows' word-at-a-time reading of the bitmap on (a test
// compares the files written with it and with a test of each row's bit).
var validWords = true

// bitBytes[b] is the eight bits of b, least significant first, as the
// bytes 0 and 1 of a little-endian word.
var bitBytes = func() (t [256]uint64) {
	for b := range t {
		for j := range 8 {
			t[b] |= uint64(b>>j&1) << (8 * j)
		}
	}
	return t
}()

// defBytesFast turns the byte-at-a-time levels of defLevels on (a test
// compares them with the bit-by-bit loop).
var defBytesFast = true

// integer is the Arrow value types written as INT32 or INT64.
type integer interface {
	~int8 | ~int16 | ~int32 | ~int64
}

// putInts32 puts rows [from, to) of an INT32 leaf: vs[i] as int32.
func putInts32[T integer](l *leaf, v validity, vs []T, from, to int) {
	present := l.defLevels(v, from, to)
	if present == 0 {
		return
	}
	lo, hi := int32(math.MaxInt32), int32(math.MinInt32)
	if l.delta {
		out := slices.Grow(l.ints32, present)
		for i := range v.present(from, to) {
			x := int32(vs[i])
			lo, hi = min(lo, x), max(hi, x)
			out = append(out, x)
		}
		l.ints32 = out
	} else {
		out := slices.Grow(l.vals, 4*present)
		for i := range v.present(from, to) {
			x := int32(vs[i])
			lo, hi = min(lo, x), max(hi, x)
			out = binary.LittleEndian.AppendUint32(out, uint32(x))
		}
		l.vals = out
	}
	l.pb.int(int64(lo))
	l.pb.int(int64(hi))
}

// putInts64 puts rows [from, to) of an INT64 leaf: vs[i] times mul, then
// divided by div rounding down (Parquet's unit from Arrow's; one of them
// is 1).
func putInts64[T integer](l *leaf, v validity, vs []T, from, to int, mul, div int64) {
	present := l.defLevels(v, from, to)
	if present == 0 {
		return
	}
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	conv := func(x T) int64 { return int64(x) }
	switch {
	case div == 1000:
		conv = func(x T) int64 { return floorDiv1000(int64(x)) }
	case div != 1:
		conv = func(x T) int64 { return floorDiv(int64(x), div) }
	case mul != 1:
		conv = func(x T) int64 { return int64(x) * mul }
	}
	if l.delta {
		out := slices.Grow(l.ints, present)
		switch { // the common units without a call per value
		case div == 1 && mul == 1:
			for i := range v.present(from, to) {
				x := int64(vs[i])
				lo, hi = min(lo, x), max(hi, x)
				out = append(out, x)
			}
		case div == 1000:
			for i := range v.present(from, to) {
				x := floorDiv1000(int64(vs[i]))
				lo, hi = min(lo, x), max(hi, x)
				out = append(out, x)
			}
		default:
			for i := range v.present(from, to) {
				x := conv(vs[i])
				lo, hi = min(lo, x), max(hi, x)
				out = append(out, x)
			}
		}
		l.ints = out
	} else {
		out := slices.Grow(l.vals, 8*present)
		for i := range v.present(from, to) {
			x := conv(vs[i])
			lo, hi = min(lo, x), max(hi, x)
			out = binary.LittleEndian.AppendUint64(out, uint64(x))
		}
		l.vals = out
	}
	l.pb.int(lo)
	l.pb.int(hi)
}

// floorDiv1000 is floorDiv(x, 1000) with the constant divisor the
// compiler turns into a multiplication (milliseconds from microseconds).
func floorDiv1000(x int64) int64 {
	q := x / 1000
	if x%1000 != 0 && x < 0 {
		q--
	}
	return q
}

// putDecimals puts rows [from, to) of a DECIMAL leaf of up to 18 digits
// (INT32 up to 9, INT64 above): the unscaled value's low 64 bits.
func putDecimals(l *leaf, v validity, vs []decimal128.Num, from, to int) {
	present := l.defLevels(v, from, to)
	if present == 0 {
		return
	}
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	switch {
	case l.phys == format.Int32 && l.delta:
		out := slices.Grow(l.ints32, present)
		for i := range v.present(from, to) {
			x := int32(vs[i].LowBits())
			lo, hi = min(lo, int64(x)), max(hi, int64(x))
			out = append(out, x)
		}
		l.ints32 = out
	case l.phys == format.Int32:
		out := slices.Grow(l.vals, 4*present)
		for i := range v.present(from, to) {
			x := int32(vs[i].LowBits())
			lo, hi = min(lo, int64(x)), max(hi, int64(x))
			out = binary.LittleEndian.AppendUint32(out, uint32(x))
		}
		l.vals = out
	case l.delta:
		out := slices.Grow(l.ints, present)
		for i := range v.present(from, to) {
			x := int64(vs[i].LowBits())
			lo, hi = min(lo, x), max(hi, x)
			out = append(out, x)
		}
		l.ints = out
	default:
		out := slices.Grow(l.vals, 8*present)
		for i := range v.present(from, to) {
			x := int64(vs[i].LowBits())
			lo, hi = min(lo, x), max(hi, x)
			out = binary.LittleEndian.AppendUint64(out, uint64(x))
		}
		l.vals = out
	}
	l.pb.int(lo)
	l.pb.int(hi)
}

// putWideDecimals puts rows [from, to) of a DECIMAL leaf of more than 18
// digits: FIXED_LEN_BYTE_ARRAY of n bytes, the unscaled value's low n
// bytes big-endian, its bounds taken once from the smallest and largest
// value (big-endian two's complement orders as the numbers do).
func putWideDecimals(l *leaf, v validity, vs []decimal128.Num, n int, from, to int) {
	present := l.defLevels(v, from, to)
	if present == 0 {
		return
	}
	if n == 16 {
		putDecimals16(l, v, vs, present, from, to)
		return
	}
	out := slices.Grow(l.vals, n*present)
	var b [16]byte
	var lo, hi decimal128.Num
	first := true
	for i := from; i < to; i++ {
		if v.bits != nil && !v.valid(i) {
			continue
		}
		x := vs[i]
		if first {
			lo, hi, first = x, x, false
		} else if x.Less(lo) {
			lo = x
		} else if hi.Less(x) {
			hi = x
		}
		out = append(out, bigEndian(&b, x, n)...)
	}
	l.vals = out
	l.pb.bytes(bigEndian(&b, lo, n), l.signed)
	l.pb.bytes(bigEndian(&b, hi, n), l.signed)
}

// putDecimals16 is putWideDecimals for 16-byte values (precision 37 and
// 38, what inference gives a decimal column): each value stored as two
// big-endian words in place, where a copy of a variable length cost a
// call per value, and compared as the two's-complement number it is.
func putDecimals16(l *leaf, v validity, vs []decimal128.Num, present, from, to int) {
	out := slices.Grow(l.vals, 16*present)
	k := len(out)
	out = out[:k+16*present]
	lo := decimal128.New(math.MaxInt64, math.MaxUint64)
	hi := decimal128.New(math.MinInt64, 0)
	for i := range v.present(from, to) {
		x := vs[i]
		if x.Less(lo) {
			lo = x
		}
		if hi.Less(x) {
			hi = x
		}
		binary.BigEndian.PutUint64(out[k:], uint64(x.HighBits()))
		binary.BigEndian.PutUint64(out[k+8:], x.LowBits())
		k += 16
	}
	l.vals = out
	var b [16]byte
	l.pb.bytes(bigEndian(&b, lo, 16), l.signed)
	l.pb.bytes(bigEndian(&b, hi, 16), l.signed)
}

// putFloats puts rows [from, to) of a FLOAT or DOUBLE leaf.
func putFloats[T float32 | float64](l *leaf, v validity, vs []T, from, to int) {
	present := l.defLevels(v, from, to)
	if present == 0 {
		return
	}
	var x0 T
	wide := any(x0) == any(float64(0)) // DOUBLE: 8 bytes a value
	size := 4
	if wide {
		size = 8
	}
	out := slices.Grow(l.vals, size*present)
	for i := range v.present(from, to) {
		x := vs[i]
		if wide {
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(float64(x)))
		} else {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(float32(x)))
		}
		l.pb.float(float64(x))
	}
	l.vals = out
}

// putBools puts rows [from, to) of a BOOLEAN leaf.
func putBools(l *leaf, v validity, a *array.Boolean, from, to int) {
	if l.defLevels(v, from, to) == 0 {
		return
	}
	var seen [2]bool
	for i := range v.present(from, to) {
		x := a.Value(i)
		if l.nbits%8 == 0 {
			l.vals = append(l.vals, 0)
		}
		var b uint8 // no branch on the value: booleans at random are common
		if x {
			b = 1
		}
		l.vals[len(l.vals)-1] |= b << (l.nbits % 8)
		seen[b] = true
		l.nbits++
	}
	for k, s := range seen {
		if s {
			l.pb.int(int64(k))
		}
	}
}

// putStrings puts rows [from, to) of a BYTE_ARRAY leaf of strings.
func putStrings(l *leaf, v validity, a *array.String, from, to int) {
	if l.defLevels(v, from, to) == 0 {
		return
	}
	offs, data := arrowconv.StringBytes(a)
	for i := range v.present(from, to) {
		l.putBytes(data[offs[i]:offs[i+1]])
	}
}

// bulkFor returns the column-at-a-time writer of a flat fixed-width or
// string column, or nil (the caller's per-value path).
func (st storage) bulkFor(t arrowconv.Type, l *leaf) colFunc {
	switch t.Kind {
	case arrowconv.Boolean:
		return func(arr arrow.Array, from, to int) {
			putBools(l, validityOf(arr), arr.(*array.Boolean), from, to)
		}
	case arrowconv.TinyInt:
		return func(arr arrow.Array, from, to int) {
			putInts32(l, validityOf(arr), arr.(*array.Int8).Int8Values(), from, to)
		}
	case arrowconv.SmallInt:
		return func(arr arrow.Array, from, to int) {
			putInts32(l, validityOf(arr), arr.(*array.Int16).Int16Values(), from, to)
		}
	case arrowconv.Int:
		return func(arr arrow.Array, from, to int) {
			putInts32(l, validityOf(arr), arr.(*array.Int32).Int32Values(), from, to)
		}
	case arrowconv.BigInt:
		return func(arr arrow.Array, from, to int) {
			putInts64(l, validityOf(arr), arr.(*array.Int64).Int64Values(), from, to, 1, 1)
		}
	case arrowconv.Float:
		return func(arr arrow.Array, from, to int) {
			putFloats(l, validityOf(arr), arr.(*array.Float32).Float32Values(), from, to)
		}
	case arrowconv.Double:
		return func(arr arrow.Array, from, to int) {
			putFloats(l, validityOf(arr), arr.(*array.Float64).Float64Values(), from, to)
		}
	case arrowconv.Decimal:
		if t.Precision > 18 {
			n := decimalBytes(t.Precision)
			return func(arr arrow.Array, from, to int) {
				putWideDecimals(l, validityOf(arr), arr.(*array.Decimal128).Values(), n, from, to)
			}
		}
		return func(arr arrow.Array, from, to int) {
			putDecimals(l, validityOf(arr), arr.(*array.Decimal128).Values(), from, to)
		}
	case arrowconv.Char, arrowconv.VarChar, arrowconv.String:
		return func(arr arrow.Array, from, to int) {
			putStrings(l, validityOf(arr), arr.(*array.String), from, to)
		}
	case arrowconv.Date:
		return func(arr arrow.Array, from, to int) {
			putInts32(l, validityOf(arr), arr.(*array.Date32).Date32Values(), from, to)
		}
	case arrowconv.Time:
		// The Arrow unit is the Parquet one (MILLIS as INT32 up to
		// precision 3, MICROS or NANOS as INT64 above); Iceberg has
		// microseconds only.
		switch {
		case st.iceberg && t.Precision <= 3:
			return func(arr arrow.Array, from, to int) {
				putInts64(l, validityOf(arr), arr.(*array.Time32).Time32Values(), from, to, 1000, 1)
			}
		case st.iceberg && t.Precision > 6:
			return func(arr arrow.Array, from, to int) {
				putInts64(l, validityOf(arr), arr.(*array.Time64).Time64Values(), from, to, 1, 1000)
			}
		case t.Precision <= 3:
			return func(arr arrow.Array, from, to int) {
				putInts32(l, validityOf(arr), arr.(*array.Time32).Time32Values(), from, to)
			}
		}
		return func(arr arrow.Array, from, to int) {
			putInts64(l, validityOf(arr), arr.(*array.Time64).Time64Values(), from, to, 1, 1)
		}
	case arrowconv.Timestamp, arrowconv.TimestampLTZ:
		// Arrow holds microseconds up to precision 6 and nanoseconds above
		// (arrowconv.TimestampUnit); Parquet gets the declared precision's
		// unit: MILLIS up to 3, MICROS up to 6, NANOS above.
		div := int64(1)
		switch {
		case st.iceberg && t.Precision > 6:
			div = 1e3 // nanoseconds to Iceberg's microseconds
		case st.iceberg:
		case t.Precision <= 3:
			div = 1e3
		}
		return func(arr arrow.Array, from, to int) {
			putInts64(l, validityOf(arr), arr.(*array.Timestamp).TimestampValues(), from, to, 1, div)
		}
	}
	return nil
}
