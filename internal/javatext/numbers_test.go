package javatext

import (
	"strconv"
	"testing"

	"pgregory.net/rapid"
)

// ParseInt is Long.parseLong / Integer.parseInt and the narrower widths on
// ASCII text: Go's strconv.ParseInt in base 10 takes the same texts (a
// sign, '+' included, then digits, leading zeros of any length) and
// refuses the same ones, values out of range among them. Texts are drawn
// around the widths' limits and the lengths where uint64 arithmetic wraps
// (20 digits and more), where ParseInt once read 92233720368547758080 as
// 0.
func TestParseInt(t *testing.T) {
	check := func(t interface{ Fatalf(string, ...any) }, s string, bits int) {
		got, ok := ParseInt([]byte(s), bits)
		want, err := strconv.ParseInt(s, 10, bits)
		if ok != (err == nil) || (ok && got != want) {
			t.Fatalf("ParseInt(%q, %d) = %d %v, want %d (%v)", s, bits, got, ok, want, err)
		}
	}
	for _, s := range []string{"92233720368547758080", "-92233720368547758080", "18446744073709551616",
		"18446744073709551617", "99999999999999999999", "9223372036854775807", "9223372036854775808",
		"-9223372036854775808", "-9223372036854775809", "+9223372036854775807", "000000000000000000000000001",
		"-00000000000000000009223372036854775808", "2147483647", "2147483648", "-2147483648", "-2147483649",
		"12345678", "1234567a", "a2345678", "123456789", "12345678901234567890", "+", "-", "", "1 ", " 1", "1_0"} {
		for _, bits := range []int{8, 16, 32, 64} {
			check(t, s, bits)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.StringMatching(`[+-]?0{0,3}[0-9]{0,24}`).Draw(t, "text")
		if rapid.Bool().Draw(t, "damage") && len(s) > 0 {
			b := []byte(s)
			b[rapid.IntRange(0, len(b)-1).Draw(t, "at")] = rapid.SampledFrom([]byte("/:+-. 0x\x00\xff9")).Draw(t, "byte")
			s = string(b)
		}
		check(t, s, rapid.SampledFrom([]int{8, 16, 32, 64}).Draw(t, "bits"))
	})
}

// FuzzParseInt is TestParseInt's comparison on any text.
func FuzzParseInt(f *testing.F) {
	for _, s := range []string{"92233720368547758080", "-9223372036854775808", "12345678", "+000000000000000000001", "1x"} {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, s string, w uint8) {
		bits := []int{8, 16, 32, 64}[w%4]
		got, ok := ParseInt([]byte(s), bits)
		want, err := strconv.ParseInt(s, 10, bits)
		if ok != (err == nil) || (ok && got != want) {
			t.Fatalf("ParseInt(%q, %d) = %d %v, want %d (%v)", s, bits, got, ok, want, err)
		}
	})
}
