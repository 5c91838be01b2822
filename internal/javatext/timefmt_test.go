package javatext

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"pgregory.net/rapid"
)

// The one-step readers must read exactly what the general readers read:
// the same fields, or give way to them. Texts are drawn from the bytes that
// matter (digits, separators, signs) so near misses are common.
func TestFixedDateClockMatchGeneral(t *testing.T) {
	same := func(t interface{ Fatalf(string, ...any) }, b []byte) {
		if y, m, d, ok := FixedDate(b); ok {
			c := Cursor{B: b}
			gy, gm, gd, gok := c.DateFields()
			if !gok || c.I != 10 || gy != y || gm != m || gd != d {
				t.Fatalf("FixedDate(%q) = %d-%d-%d; general %v %d-%d-%d at %d", b, y, m, d, gok, gy, gm, gd, c.I)
			}
		}
		if h, mi, s, ok := FixedClock(b); ok {
			c := Cursor{B: b}
			gh, ok1 := c.Digits(2, 2)
			ok2 := c.Lit(':')
			gmi, ok3 := c.Digits(2, 2)
			ok4 := c.Lit(':')
			gs, ok5 := c.Digits(2, 2)
			if !(ok1 && ok2 && ok3 && ok4 && ok5) || c.I != 8 || gh != h || gmi != mi || gs != s {
				t.Fatalf("FixedClock(%q) = %d:%d:%d; general %d:%d:%d at %d", b, h, mi, s, gh, gmi, gs, c.I)
			}
		}
		// FixedClock against the fields alone in both directions (it fails
		// exactly where they do), past a prefix as ParseOggCurrentTS calls
		// it.
		for _, pre := range []string{"", "2020-05-13T"} {
			in := append([]byte(pre), b...)
			c, g := Cursor{B: in, I: len(pre)}, Cursor{B: in, I: len(pre)}
			h, mi, s, ok := FixedClock(c.B[c.I:])
			if ok {
				c.I += 8
			}
			gh, ok1 := g.Digits(2, 2)
			ok2 := ok1 && g.Lit(':')
			gmi, ok3 := g.Digits(2, 2)
			ok4 := ok2 && ok3 && g.Lit(':')
			gs, ok5 := g.Digits(2, 2)
			if gok := ok4 && ok5; ok != gok || ok && (c.I != g.I || h != gh || mi != gmi || s != gs) {
				t.Fatalf("FixedClock(%q) = %d:%d:%d %v at %d; fields %d:%d:%d %v at %d", in, h, mi, s, ok, c.I, gh, gmi, gs, gok, g.I)
			}
		}
	}
	// Every byte value at every position of the two shapes.
	for _, tmpl := range []string{"2020-05-12", "17:10:08.3"} {
		for i := range tmpl {
			for c := 0; c < 256; c++ {
				b := []byte(tmpl)
				b[i] = byte(c)
				same(t, b)
			}
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		b := []byte(rapid.OneOf(
			rapid.StringMatching(`[0-9:+\-. T]{0,14}`),
			rapid.StringMatching(`[+\-]?[0-9]{3,5}[\-:][0-9]{1,3}[\-:][0-9]{1,3}[ T.:0-9]{0,4}`),
			rapid.StringMatching(`[0-9]{1,3}[:\-][0-9]{1,3}[:\-][0-9]{1,3}[.0-9]{0,4}`),
			rapid.StringMatching(`[0-9]{4}[\-:x][0-9]{2}[\-:x][0-9]{2}[ T0-9]?`),
			rapid.StringMatching(`[0-9]{2}[:\-x][0-9]{2}[:\-x][0-9]{2}[.0-9]?`),
			rapid.StringMatching(`[0-9x]{4}-[0-9x]{2}-[0-9x]{2}`),
			rapid.StringMatching(`[0-9x]{2}:[0-9x]{2}:[0-9x]{2}`),
		).Draw(t, "text"))
		same(t, b)
	})
}

// ParseOggOpTS's fixed steps against oggOpTS, which reads every shape
// field by field: the same instant and verdict on every text.
func TestParseOggOpTSMatchGeneral(t *testing.T) {
	same := func(t interface{ Fatalf(string, ...any) }, b []byte) {
		c, ok := ParseOggOpTS(b)
		gc, gok := oggOpTS(b)
		if c != gc || ok != gok {
			t.Fatalf("ParseOggOpTS(%q) = %v %v; field by field %v %v", b, c, ok, gc, gok)
		}
	}
	// Every byte value at every position of the shapes GoldenGate writes,
	// and of their edges (the last day of February, the last instant).
	for _, tmpl := range []string{"2020-05-13 12:38:40.214000", "2020-02-29 23:59:59", "2019-02-28 00:00:00.9999999999"} {
		for i := 0; i <= len(tmpl); i++ {
			for c := 0; c < 256; c++ {
				b := []byte(tmpl)
				if i < len(b) {
					b[i] = byte(c)
				} else {
					b = append(b, byte(c))
				}
				same(t, b)
				same(t, b[:i]) // cut short
			}
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		b := []byte(rapid.OneOf(
			rapid.StringMatching(`[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}( [0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(\.[0-9]{0,10})?)?`),
			rapid.StringMatching(`[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}[.0-9x ]{0,8}`),
			rapid.StringMatching(`[0-9: .\-]{0,30}`),
		).Draw(t, "text"))
		same(t, b)
	})
}

func FuzzParseOggOpTS(f *testing.F) {
	for _, s := range []string{"2020-05-13 12:38:40.214000", "2020-5-3 1:2:3.4", "2020-02-30 00:00:00", "2020-05-13", "2020-05-13 24:00:00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, ok := ParseOggOpTS(b)
		gc, gok := oggOpTS(b)
		if c != gc || ok != gok {
			t.Fatalf("ParseOggOpTS(%q) = %v %v; field by field %v %v", b, c, ok, gc, gok)
		}
	})
}

// EpochDays against the standard library, on both sides of its unsigned
// fast case (years before 1 and after 2^32 take the signed formula).
func TestEpochDays(t *testing.T) {
	check := func(y, m, d int) {
		want := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Unix() / 86400
		if got := EpochDays(y, m, d); got != want {
			t.Fatalf("EpochDays(%d, %d, %d) = %d, want %d", y, m, d, got, want)
		}
	}
	for _, y := range []int{-1_000_000, -401, -400, -1, 0, 1, 2, 1600, 1969, 1970, 2000, 2024, 9999, 1 << 32, 1<<32 + 1, 5_000_000_000} {
		for m := 1; m <= 12; m++ {
			check(y, m, 1)
			check(y, m, DaysIn(y, m))
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		y := rapid.IntRange(-3_000_000, 3_000_000).Draw(t, "y")
		m := rapid.IntRange(1, 12).Draw(t, "m")
		check(y, m, rapid.IntRange(1, DaysIn(y, m)).Draw(t, "d"))
	})
}

// ShortDecimal against DecimalText (BigDecimal's rules, HALF_UP to the
// scale, NULL past the precision): whenever it reads a value, the general
// path reads the same; and it reads every value that needs no rounding,
// fits 18 digits and the precision.
func TestShortDecimal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		lit := rapid.StringMatching(`[+-]?[0-9]{0,20}(\.[0-9]{0,20})?([eE][+-]?[0-9])?`).Draw(t, "text")
		p := rapid.IntRange(1, 38).Draw(t, "p")
		s := rapid.IntRange(0, p).Draw(t, "s")
		u, ok := ShortDecimal([]byte(lit), p, s)
		var d DecimalText
		gok := d.Parse([]byte(lit))
		var want decimal128.Num
		if gok {
			want, gok = d.ToDecimal128(p, s)
		}
		if ok && (!gok || decimal128.FromI64(u) != want) {
			t.Fatalf("%s as DECIMAL(%d, %d): %d; general %v %v", lit, p, s, u, want, gok)
		}
		// Completeness: plain literals within the limits take the short path.
		intPart, fracPart, hasDot := strings.Cut(strings.TrimPrefix(lit, "-"), ".")
		plain := !strings.ContainsAny(lit, "+eE") && intPart != "" && (!hasDot || fracPart != "")
		if plain && gok && len(intPart)+len(fracPart) <= 18 && len(fracPart) <= s && len(intPart)+s <= 18 && !ok {
			t.Fatalf("%s as DECIMAL(%d, %d): not read, though short", lit, p, s)
		}
	})
}

// TestStampCache: op_ts and current_ts read through a cache that holds
// the minute of the text before give the instant and verdict a fresh
// parse gives, for every byte value at every position after a text that
// filled the cache (so the same minute with anything after it, and a
// minute one byte off), and for texts cut short.
func TestStampCache(t *testing.T) {
	for _, tmpl := range []string{"2020-05-13 12:38:40.214000", "2020-02-29 23:59:59", "2021-02-30T23:59:59.999999", "2020-05-13T12:38:40.214000", "2020-12-31 23:59:59.9"} {
		for i := 0; i <= len(tmpl); i++ {
			for c := 0; c < 256; c++ {
				b := []byte(tmpl)
				if i < len(b) {
					b[i] = byte(c)
				} else {
					b = append(b, byte(c))
				}
				checkStampCache(t, [][]byte{[]byte(tmpl), b, b[:i], []byte(tmpl)})
			}
		}
	}
}

// FuzzStampCache is TestStampCache over any sequence of texts (the input
// cut at each '|').
func FuzzStampCache(f *testing.F) {
	f.Add([]byte("2020-05-13 12:38:40.214000|2020-05-13 12:38:41.5|2020-05-13 12:38:4x|2020-05-13 12:39:00"))
	f.Add([]byte("2020-05-13T12:38:40.214000|2020-05-13T12:38:59.999999|2020-05-13T12:38:60.000000|2020-05-13T12:38:01.00000"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			return
		}
		checkStampCache(t, bytes.Split(data, []byte("|")))
	})
}

// checkStampCache reads texts in order through one cache per field and
// compares each answer with a fresh parse's.
func checkStampCache(t *testing.T, texts [][]byte) {
	t.Helper()
	var op, cur StampCache
	for _, b := range texts {
		c, ok := op.OggOpTS(b)
		if fc, fok := ParseOggOpTS(b); c != fc || ok != fok {
			t.Fatalf("op_ts %q after %q: %v %v through the cache, %v %v fresh", b, texts, c, ok, fc, fok)
		}
		c, ok = cur.OggCurrentTS(b)
		if fc, fok := ParseOggCurrentTS(b); c != fc || ok != fok {
			t.Fatalf("current_ts %q after %q: %v %v through the cache, %v %v fresh", b, texts, c, ok, fc, fok)
		}
	}
}

// TestFraction: a fraction of up to nine digits as nanoseconds, the rest
// of the text left to the caller, and no fraction without a point.
func TestFraction(t *testing.T) {
	for _, c := range []struct {
		in   string
		ns   int
		next int
	}{
		{"", 0, 0},
		{"Z", 0, 0},
		{".", 0, 1},
		{".5", 500_000_000, 2},
		{".12", 120_000_000, 3},
		{".856", 856_000_000, 4},
		{".8561", 856_100_000, 5},
		{".85612", 856_120_000, 6},
		{".856123", 856_123_000, 7},
		{".8561234", 856_123_400, 8},
		{".85612345", 856_123_450, 9},
		{".856123456", 856_123_456, 10},
		{".8561234567", 856_123_456, 10}, // a tenth digit is not read
		{".007+08:00", 7_000_000, 4},
		{".12a", 120_000_000, 3},
	} {
		cur := Cursor{B: []byte(c.in)}
		ns, ok := cur.Fraction()
		if !ok || ns != c.ns || cur.I != c.next {
			t.Errorf("Fraction(%q) = %d, %v, next %d; want %d, true, next %d", c.in, ns, ok, cur.I, c.ns, c.next)
		}
	}
}
