package decode

import (
	"math"
	"strings"
	"testing"

	"github.com/buger/jsonparser"

	"github.com/cdcetl/cdcetl/internal/javatext"
	"pgregory.net/rapid"
)

// ShortDecimalFloat against the DOUBLE converter's general path, bit for
// bit, signed zeros included, on literals of up to 17 digits; it must
// accept every literal of up to 15 digits without an exponent but the
// integer -0.
func TestShortDecimalFloat(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		lit := rapid.StringMatching(`-?(0|[1-9][0-9]{0,16})(\.[0-9]{1,17})?([eE][+-]?[0-9]{1,2})?`).Draw(t, "literal")
		f, ok := javatext.ShortDecimalFloat([]byte(lit))
		digits := 0
		for _, c := range lit {
			if c >= '0' && c <= '9' {
				digits++
			}
		}
		short := digits <= 15 && !strings.ContainsAny(lit, "eE") && lit != "-0"
		if ok != short {
			t.Fatalf("%s: ok %v, want %v", lit, ok, short)
		}
		if !ok {
			return
		}
		// The reference is the DOUBLE converter's general path.
		text := []byte(lit)
		if !javatext.IsFloatLiteral(text) {
			text = appendNumberText(nil, text, false)
		}
		want, wok := javatext.ParseFloat(text, 64)
		if !wok || math.Float64bits(f) != math.Float64bits(want) {
			t.Fatalf("%s: %v (%x), general path %v (%x)", lit, f, math.Float64bits(f), want, math.Float64bits(want))
		}
	})
}

// convCtx.integer takes a JSON number through ParseInt first and tests
// for a fraction or exponent only when ParseInt refuses it. That is the
// rule "an integer literal is its own text, a float literal is truncated"
// only if ParseInt refuses every float literal: checked here with the
// results of both sides, for every width, on literals near the limits.
func TestIntegerLiteral(t *testing.T) {
	cx := &convCtx{}
	rapid.Check(t, func(t *rapid.T) {
		lit := rapid.OneOf(
			rapid.StringMatching(`-?(0|[1-9][0-9]{0,20})(\.[0-9]{1,5})?([eE][+-]?[0-9]{1,2})?`),
			rapid.SampledFrom([]string{"-0", "127", "128", "-128", "-129", "32767", "2147483647", "2147483648", "-2147483648", "-2147483649",
				"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "1e2", "1.0", "-0.0", "9.3e18", "1E19"}),
		).Draw(t, "literal")
		bits := rapid.SampledFrom([]int{8, 16, 32, 64}).Draw(t, "bits")
		v := []byte(lit)
		got, gok := cx.integer(v, jsonparser.Number, bits)
		if !javatext.IsFloatLiteral(v) {
			want, wok := javatext.ParseInt(v, bits)
			if got != want || gok != wok {
				t.Fatalf("%s as %d bits: %d %v, want ParseInt's %d %v", lit, bits, got, gok, want, wok)
			}
			return
		}
		if n, ok := javatext.ParseInt(v, bits); ok {
			t.Fatalf("ParseInt(%s) took a float literal: %d", lit, n)
		}
		// Jackson's truncation of the double, saturating at the long's top.
		f, _ := javatext.ParseFloat(v, 64)
		lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
		if bits == 32 {
			lo, hi = math.MinInt32, math.MaxInt32
		}
		want, wok := int64(0), false
		switch {
		case f < float64(lo) || f > float64(hi) || math.IsNaN(f):
		case f >= math.Pow(2, 63):
			want, wok = math.MaxInt64, true
		default:
			want, wok = int64(f), true
		}
		if got != want || gok != wok {
			t.Fatalf("%s as %d bits: %d %v, want %d %v", lit, bits, got, gok, want, wok)
		}
	})
}

// A DOUBLE given as text (canal's every value) takes ShortDecimalFloat
// when it can: the rows must be the ones the general path
// (Double.parseDouble of the trimmed text) gives, errors included, on
// texts drawn around that path's edges (signs, points, exponents, spaces,
// leading zeros, 15 to 17 digits, escapes).
func TestShortDoubleText(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		text := rapid.OneOf(
			rapid.StringMatching(`[ +-]?0{0,2}[0-9]{0,17}(\.[0-9]{0,6})?([eE][+-]?[0-9]{1,2})?[ dD]?`),
			rapid.SampledFrom([]string{"-0", "-0.0", "0", "5.", ".5", "Infinity", "-NaN", "1.2.3", `\u0034.5`, "4.7", "-", ".", ""}),
		).Draw(rt, "text")
		line := `{"data":[{"v":"` + text + `"}],"type":"INSERT"}`
		opts := map[string]string{"canal-json.ignore-parse-errors": rapid.SampledFrom([]string{"true", "false"}).Draw(rt, "lenient")}
		fast, ferr := decodeLines(t, "canal-json", "v DOUBLE", opts, line)
		shortDoubleText = false
		general, gerr := decodeLines(t, "canal-json", "v DOUBLE", opts, line)
		shortDoubleText = true
		if strings.Join(fast, " ") != strings.Join(general, " ") || (ferr == nil) != (gerr == nil) {
			rt.Fatalf("%q: rows %v err %v, general path %v err %v", text, fast, ferr, general, gerr)
		}
	})
}
