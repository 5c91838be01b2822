package decode

import (
	"math"
	"strings"
	"testing"

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
