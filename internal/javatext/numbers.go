package javatext

import (
	"math"
	"math/big"
	"math/bits"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// DecimalText is a decimal number as digits × 10^exp, parsed with Java's
// BigDecimal(String) grammar. It reuses its digit storage between calls.
type DecimalText struct {
	Neg    bool
	Digits []byte // no leading zeros; empty for zero
	Exp    int
}

// Parse reads [+-]? (d+ (. d*)? | . d+) ([eE] [+-]? d+)? exactly, no spaces.
func (d *DecimalText) Parse(s []byte) bool {
	d.Neg, d.Digits, d.Exp = false, d.Digits[:0], 0
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		d.Neg = s[i] == '-'
		i++
	}
	nd, frac := 0, 0
	seenDot := false
	for ; i < len(s); i++ {
		c := s[i]
		if c >= '0' && c <= '9' {
			nd++
			if seenDot {
				frac++
			}
			if c == '0' && len(d.Digits) == 0 {
				continue // leading zero
			}
			d.Digits = append(d.Digits, c)
			continue
		}
		if c == '.' && !seenDot {
			seenDot = true
			continue
		}
		break
	}
	if nd == 0 {
		return false
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		if i >= len(s) {
			return false
		}
		for ; i < len(s); i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return false
			}
			exp = exp*10 + int(c-'0')
			if exp > 999_999_999 {
				return false // Java: exponent overflow
			}
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(s) {
		return false
	}
	d.Exp = exp - frac
	return true
}

func (d *DecimalText) StripTrailingZeros() {
	for len(d.Digits) > 0 && d.Digits[len(d.Digits)-1] == '0' {
		d.Digits = d.Digits[:len(d.Digits)-1]
		d.Exp++
	}
	if len(d.Digits) == 0 {
		d.Exp = 0
	}
}

// AppendString writes BigDecimal.toString of the value.
func (d *DecimalText) AppendString(dst []byte) []byte {
	if len(d.Digits) == 0 {
		if d.Exp >= 0 {
			return append(dst, '0')
		}
		return arrowconv.AppendBigDecimal(dst, false, []byte{'0'}, -d.Exp)
	}
	return arrowconv.AppendBigDecimal(dst, d.Neg, d.Digits, -d.Exp)
}

// ToDecimal128 rounds the value to scale with HALF_UP and returns it as an
// unscaled 128-bit integer. ok is false when the rounded value needs more
// than precision digits: Flink then yields NULL, silently.
func (d *DecimalText) ToDecimal128(precision, scale int) (decimal128.Num, bool) {
	digits := d.Digits
	shift := d.Exp + scale
	var roundUp bool
	if shift < 0 {
		drop := -shift
		if drop > len(digits) {
			digits = digits[:0]
		} else {
			roundUp = digits[len(digits)-drop] >= '5'
			digits = digits[:len(digits)-drop]
		}
		shift = 0
	}
	n := len(digits) + shift
	if len(digits) == 0 {
		n = 0
	}
	if n > precision+1 || (n > 38) {
		return decimal128.Num{}, false
	}
	var hi, lo uint64
	for _, c := range digits {
		hi, lo = Mul10Add(hi, lo, uint64(c-'0'))
	}
	for k := 0; k < shift && len(digits) > 0; k++ {
		hi, lo = Mul10Add(hi, lo, 0)
	}
	if roundUp {
		var carry uint64
		lo, carry = bits.Add64(lo, 1, 0)
		hi += carry
	}
	num := decimal128.New(int64(hi), lo)
	if digitCount(hi, lo) > precision {
		return decimal128.Num{}, false
	}
	if d.Neg {
		num = num.Negate()
	}
	return num, true
}

func Mul10Add(hi, lo, add uint64) (uint64, uint64) {
	h, l := bits.Mul64(lo, 10)
	h += hi * 10
	var carry uint64
	l, carry = bits.Add64(l, add, 0)
	return h + carry, l
}

// digitCount is BigDecimal.precision() of a non-negative unscaled value.
func digitCount(hi, lo uint64) int {
	if hi == 0 {
		if lo == 0 {
			return 1
		}
		n := 0
		for lo > 0 {
			lo /= 10
			n++
		}
		return n
	}
	b := new(big.Int).SetUint64(hi)
	b.Lsh(b, 64)
	b.Or(b, new(big.Int).SetUint64(lo))
	return len(b.String())
}

// ParseInt is Integer.parseInt / Long.parseLong / Short / Byte: an
// optional sign and ASCII digits, with range checking for bits.
func ParseInt(s []byte, bitSize int) (int64, bool) {
	if len(s) == 0 {
		return 0, false
	}
	neg := false
	if s[0] == '+' || s[0] == '-' {
		neg = s[0] == '-'
		s = s[1:]
		if len(s) == 0 {
			return 0, false
		}
	}
	var u uint64
	for _, c := range s {
		// Past maxMagnitude/10 another digit can only go out of range,
		// and u*10 could wrap (92233720368547758080 read as 0).
		if c < '0' || c > '9' || u > maxMagnitude/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	limit := uint64(1) << (bitSize - 1) // magnitude of the minimum
	if u > limit {
		return 0, false
	}
	if neg {
		return -int64(u), true // u == limit gives the minimum
	}
	if u == limit {
		return 0, false
	}
	return int64(u), true
}

// maxMagnitude is the largest magnitude ParseInt takes at any width: the
// long minimum's.
const maxMagnitude = 1 << 63

// PlainDecimal reads -?digits[.digits] (a digit on each side of the point)
// of at most 18 digits: the digits as one integer, whether it is negative,
// how many digits there are and how many follow the point (-1 without a
// point). ok false for anything else: more digits, an exponent, other text.
func PlainDecimal(b []byte) (m uint64, neg bool, digits, frac int, ok bool) {
	i := 0
	if len(b) > 0 && b[0] == '-' {
		i, neg = 1, true
	}
	frac = -1
	for ; i < len(b); i++ {
		c := b[i]
		if c == '.' && frac < 0 && digits > 0 {
			frac = 0
			continue
		}
		if c < '0' || c > '9' {
			return 0, false, 0, 0, false
		}
		m = m*10 + uint64(c-'0')
		digits++
		if frac >= 0 {
			frac++
		}
	}
	if digits == 0 || digits > 18 || frac == 0 {
		return 0, false, 0, 0, false // "5." has no fraction digit
	}
	return m, neg, digits, frac, true
}

// ShortDecimalFloat reads the JSON number literal v (already validated)
// as a double when it is -?digits[.digits] with at most 15 digits: such a
// value and the power of ten dividing it are exact doubles, so one
// division gives the correctly rounded result Double.parseDouble (and
// Jackson) give. ok false leaves anything else to ParseFloat.
func ShortDecimalFloat(v []byte) (float64, bool) {
	m, neg, digits, frac, ok := PlainDecimal(v)
	if !ok || digits > 15 || (neg && m == 0 && frac < 0) {
		return 0, false // the integer -0 reads as 0 (Jackson's IntNode): the general path
	}
	f := float64(m)
	if frac > 0 {
		f /= exactPow10[frac]
	}
	if neg {
		f = -f
	}
	return f, true
}

var exactPow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// ShortDecimal reads text of the form -?digits[.digits], at most 18
// digits with no more fraction digits than scale s, as its unscaled value
// at scale s when that fits precision p: no rounding, no exponent, no
// overflow to decide. ok false leaves the rest to DecimalText, which
// BigDecimal's rules are written in.
func ShortDecimal(text []byte, p, s int) (int64, bool) {
	u, neg, digits, frac, ok := PlainDecimal(text)
	frac = max(frac, 0)
	if !ok || frac > s || digits+s-frac > 18 {
		return 0, false
	}
	m := int64(u)
	for k := frac; k < s; k++ {
		m *= 10
	}
	if p < 19 && m >= exactPow10Int[p] {
		return 0, false // too many digits for the precision: NULL, decided there
	}
	if neg {
		m = -m
	}
	return m, true
}

var exactPow10Int = [...]int64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18}

// ParseFloat is Float.parseFloat / Double.parseDouble on trimmed text:
// decimal or hex literals with an optional f/F/d/D suffix, "NaN",
// "Infinity", each with an optional sign. Overflow gives ±Infinity.
func ParseFloat(s []byte, bitSize int) (float64, bool) {
	s = Trim(s)
	if len(s) == 0 {
		return 0, false
	}
	body := s
	neg := false
	if body[0] == '+' || body[0] == '-' {
		neg = body[0] == '-'
		body = body[1:]
	}
	switch string(body) {
	case "NaN":
		return math.NaN(), true
	case "Infinity":
		if neg {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	if n := len(body); n > 0 {
		switch body[n-1] {
		case 'f', 'F', 'd', 'D':
			body = body[:n-1]
			s = s[:len(s)-1]
		}
	}
	if len(body) > 1 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X') {
		if !validHexFloat(body[2:]) {
			return 0, false
		}
	} else if !validDecFloat(body) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(s), bitSize)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f, true
		}
		return 0, false
	}
	return f, true
}

func validDecFloat(b []byte) bool {
	i, nd := 0, 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
		nd++
	}
	if i < len(b) && b[i] == '.' {
		i++
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			nd++
		}
	}
	if nd == 0 {
		return false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		var ok bool
		if i, ok = exponent(b, i+1); !ok {
			return false
		}
	}
	return i == len(b)
}

// exponent reads an exponent's optional sign and its digits from b[i:]:
// the index after them, and whether there was a digit.
func exponent(b []byte, i int) (int, bool) {
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		i++
	}
	start := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i, i > start
}

func validHexFloat(b []byte) bool {
	i, nd := 0, 0
	for i < len(b) && HexVal(b[i]) >= 0 {
		i++
		nd++
	}
	if i < len(b) && b[i] == '.' {
		i++
		for i < len(b) && HexVal(b[i]) >= 0 {
			i++
			nd++
		}
	}
	if nd == 0 || i >= len(b) || (b[i] != 'p' && b[i] != 'P') {
		return false
	}
	i, ok := exponent(b, i+1)
	return ok && i == len(b)
}

func HexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// Trim is String.trim: it strips every byte <= ' ' at both ends.
func Trim(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && b[i] <= ' ' {
		i++
	}
	for j > i && b[j-1] <= ' ' {
		j--
	}
	return b[i:j]
}

// IsFloatLiteral reports whether a JSON number has a fraction or exponent,
// which makes Jackson read it as a double (or an exact decimal).
func IsFloatLiteral(n []byte) bool {
	for _, c := range n {
		if c == '.' || c == 'e' || c == 'E' {
			return true
		}
	}
	return false
}
