package arrowconv

import (
	"math"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// AppendJavaDouble appends f as Java's Double.toString renders it (JDK 19+:
// the shortest digits that round-trip): "3.14", "1.0", "1.0E-5", "1.0E10",
// "NaN", "Infinity". Flink prints FLOAT/DOUBLE this way and uses this text
// when a JSON double is read into a STRING column.
func AppendJavaDouble(dst []byte, f float64) []byte { return appendJava(dst, f, 64) }

// AppendJavaFloat is Java's Float.toString.
func AppendJavaFloat(dst []byte, f float32) []byte { return appendJava(dst, float64(f), 32) }

func appendJava(dst []byte, f float64, bitSize int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, bitSize) // d.ddde±XX
	if len(e) > 1 && (e[1] == 'e' || (e[0] == '-' && e[2] == 'e')) {
		// Java always shows two significant digits (d.d) and then picks
		// the two-digit decimal closest to the value: 4.9E-324, not 5.0E-324.
		e = strconv.AppendFloat(buf[:0], f, 'e', 1, bitSize)
	}
	neg := e[0] == '-'
	if neg {
		e = e[1:]
		dst = append(dst, '-')
	}
	// Split mantissa digits and exponent.
	var digits [24]byte
	nd := 0
	i := 0
	for ; i < len(e) && e[i] != 'e'; i++ {
		if e[i] != '.' {
			digits[nd] = e[i]
			nd++
		}
	}
	exp, eneg := 0, false
	for _, c := range e[i+1:] {
		switch {
		case c == '-':
			eneg = true
		case c >= '0' && c <= '9':
			exp = exp*10 + int(c-'0')
		}
	}
	if eneg {
		exp = -exp
	}
	for nd > 1 && digits[nd-1] == '0' {
		nd-- // the two-digit form may end in 0: 0.8 stays 0.8
	}
	abs := math.Abs(f)
	if abs >= 1e-3 && abs < 1e7 {
		// Plain notation: the decimal point sits after digit exp+1.
		if exp >= 0 {
			intLen := exp + 1
			for k := 0; k < intLen; k++ {
				if k < nd {
					dst = append(dst, digits[k])
				} else {
					dst = append(dst, '0')
				}
			}
			dst = append(dst, '.')
			if nd > intLen {
				dst = append(dst, digits[intLen:nd]...)
			} else {
				dst = append(dst, '0')
			}
			return dst
		}
		dst = append(dst, '0', '.')
		for k := 0; k < -exp-1; k++ {
			dst = append(dst, '0')
		}
		return append(dst, digits[:nd]...)
	}
	dst = append(dst, digits[0], '.')
	if nd > 1 {
		dst = append(dst, digits[1:nd]...)
	} else {
		dst = append(dst, '0')
	}
	dst = append(dst, 'E')
	return strconv.AppendInt(dst, int64(exp), 10)
}

// AppendBigDecimal appends the value unscaled×10^-scale as Java's
// BigDecimal.toString renders it: plain unless the scale is negative or the
// adjusted exponent is below -6, then scientific ("1E-8", "1.5E+3").
// digits holds the absolute unscaled value without leading zeros ("0" for 0).
func AppendBigDecimal(dst []byte, neg bool, digits []byte, scale int) []byte {
	if neg {
		dst = append(dst, '-')
	}
	n := len(digits)
	adjusted := -scale + (n - 1)
	if scale == 0 {
		return append(dst, digits...)
	}
	if scale > 0 && adjusted >= -6 {
		if n > scale {
			dst = append(dst, digits[:n-scale]...)
			dst = append(dst, '.')
			return append(dst, digits[n-scale:]...)
		}
		dst = append(dst, '0', '.')
		for k := 0; k < scale-n; k++ {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	dst = append(dst, digits[0])
	if n > 1 {
		dst = append(dst, '.')
		dst = append(dst, digits[1:]...)
	}
	dst = append(dst, 'E')
	if adjusted > 0 {
		dst = append(dst, '+')
	}
	return strconv.AppendInt(dst, int64(adjusted), 10)
}

// AppendDecimal appends an unscaled decimal at scale as Java's
// BigDecimal.toString (plain=false) or toPlainString (plain=true).
func AppendDecimal(dst []byte, n decimal128.Num, scale int, plain bool) []byte {
	var buf [40]byte
	neg, digits := DecimalDigits(buf[:0], n)
	if plain {
		if neg {
			dst = append(dst, '-')
		}
		if scale == 0 {
			return append(dst, digits...)
		}
		if len(digits) > scale {
			dst = append(dst, digits[:len(digits)-scale]...)
			dst = append(dst, '.')
			return append(dst, digits[len(digits)-scale:]...)
		}
		dst = append(dst, '0', '.')
		for k := len(digits); k < scale; k++ {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	return AppendBigDecimal(dst, neg, digits, scale)
}

// DecimalDigits appends the absolute unscaled value of n in decimal to
// dst and reports its sign.
func DecimalDigits(dst []byte, n decimal128.Num) (neg bool, digits []byte) {
	neg = n.Sign() < 0
	if neg {
		n = n.Negate()
	}
	if n.HighBits() == 0 && n.LowBits() < 1<<63 {
		return neg, strconv.AppendUint(dst, n.LowBits(), 10)
	}
	return neg, append(dst, n.BigInt().String()...)
}

// AppendISODate writes t's date as Java's LocalDate.toString and
// ISO_LOCAL_DATE do: yyyy-MM-dd, with a sign and more digits outside the
// years 0 to 9999.
func AppendISODate(dst []byte, t time.Time) []byte {
	y := t.Year()
	switch {
	case y > 9999:
		dst = append(dst, '+')
		dst = strconv.AppendInt(dst, int64(y), 10)
	case y < 0:
		dst = append(dst, '-')
		dst = appendPad4(dst, -y)
	default:
		dst = appendPad4(dst, y)
	}
	m, d := int(t.Month()), t.Day()
	return append(dst, '-', byte('0'+m/10), byte('0'+m%10), '-', byte('0'+d/10), byte('0'+d%10))
}

func appendPad4(dst []byte, v int) []byte {
	var buf [20]byte
	s := strconv.AppendInt(buf[:0], int64(v), 10)
	for k := len(s); k < 4; k++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}
