package decode

import (
	"bytes"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/cdcetl/cdcetl/internal/javatext"
	"github.com/cdcetl/cdcetl/internal/simdscan"
)

// slowScanString is scanStringEsc a byte at a time, with no word or vector
// skipping: the twin the fast scanner must agree with on every input.
func slowScanString(b []byte, i int) (end int, esc bool, ok bool) {
	for i++; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			return i + 1, esc, true
		case c == '\\':
			esc = true
			if i+1 >= len(b) {
				return 0, false, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return 0, false, false
				}
				for k := i + 2; k < i+6; k++ {
					if javatext.HexVal(b[k]) < 0 {
						return 0, false, false
					}
				}
				i += 6
			default:
				return 0, false, false
			}
		case c < 0x80:
			i++
		default:
			n := 0
			switch {
			case c >= 0xC0 && c < 0xE0:
				n = 1
			case c >= 0xE0 && c < 0xF0:
				n = 2
			case c >= 0xF0 && c < 0xF8:
				n = 3
			default:
				return 0, false, false
			}
			for k := 1; k <= n; k++ {
				if i+k >= len(b) || b[i+k]&0xC0 != 0x80 {
					return 0, false, false
				}
			}
			i += n + 1
		}
	}
	return 0, false, false
}

func checkScanTwin(t testing.TB, b []byte) {
	t.Helper()
	end, esc, err := scanStringEsc(b, 0)
	wend, wesc, ok := slowScanString(b, 0)
	if (err == nil) != ok || ok && (end != wend || esc != wesc) {
		t.Fatalf("scanStringEsc(%q) [%s] = %d, %v, %v; byte at a time: %d, %v, ok %v", b, simdscan.Impl(), end, esc, err, wend, wesc, ok)
	}
}

// eachScanner runs f with each vector scanner this CPU runs (AVX-512,
// AVX2, portable Go) in turn, not only the one chosen for it.
func eachScanner(t *testing.T, f func(t *testing.T)) {
	for _, name := range simdscan.Implementations() {
		t.Run(name, func(t *testing.T) {
			restore, _ := simdscan.Use(name)
			defer restore()
			f(t)
		})
	}
}

// TestScanStringTwin: long strings (where the vector scanner takes over)
// with quotes, escapes, UTF-8 and invalid bytes at random places agree
// with the byte-at-a-time scan.
func TestScanStringTwin(t *testing.T) { eachScanner(t, scanStringTwin) }

func scanStringTwin(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 2))
	pieces := [][]byte{[]byte(`\"`), []byte(`\\`), []byte(`\n`), []byte(`\u00e9`), []byte(`\uZZ`), []byte(`\x`), []byte("é"), []byte("€"), {0xff}, {0xc3}, []byte(`"`), {0x01}}
	for n := 0; n < 3000; n++ {
		b := []byte{'"'}
		b = append(b, bytes.Repeat([]byte{'a'}, rng.IntN(300))...)
		for k := rng.IntN(4) + rng.IntN(2)*rng.IntN(40); k > 0; k-- { // few, or many to a block
			at := 1 + rng.IntN(len(b))
			p := pieces[rng.IntN(len(pieces))]
			b = append(b[:at], append(append([]byte(nil), p...), b[at:]...)...)
		}
		if rng.IntN(4) > 0 {
			b = append(b, '"')
		}
		b = append(b, bytes.Repeat([]byte{','}, rng.IntN(80))...)
		checkScanTwin(t, b)
	}
}

// TestScanStringBlockEdges puts each escape, UTF-8 sequence and bad byte
// at each place around the vector scanner's block edges (from the fifth
// word on, 64-byte blocks), after dense escapes or after plain text.
func TestScanStringBlockEdges(t *testing.T) { eachScanner(t, scanStringBlockEdges) }

func scanStringBlockEdges(t *testing.T) {
	pieces := [][]byte{[]byte(`\"`), []byte(`\\`), []byte(`\n`), []byte(`\u00e9`), []byte(`\uZZ`), []byte(`\x`), []byte("é"), []byte("€"), []byte("𝄞"), {0xff}, {0xc3}, {0xe2, 0x82}, []byte(`"`), {0x01}}
	for _, fill := range [][]byte{[]byte("a"), []byte(`\"`), []byte("é")} {
		for at := 28; at < 170; at++ {
			for _, p := range pieces {
				b := []byte{'"'}
				for len(b) < at {
					b = append(b, fill...)
				}
				b = append(b, p...)
				b = append(b, bytes.Repeat([]byte{'b'}, 70)...)
				b = append(b, '"')
				checkScanTwin(t, b)
				checkScanTwin(t, b[:len(b)-40]) // unterminated, or ends in the last block
			}
		}
	}
}

func FuzzScanString(f *testing.F) {
	f.Add([]byte(`"The desk is ergonomic, rated for 1536 hours. \"Pro\" edition.The rocks is café-grade, rated for 4057 hours.\n","category":"home"`))
	f.Add([]byte(`"` + string(bytes.Repeat([]byte("x"), 100)) + `\u00e9` + string(bytes.Repeat([]byte("y"), 70)) + `"`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 || b[0] != '"' {
			b = append([]byte{'"'}, b...)
		}
		for _, name := range simdscan.Implementations() {
			restore, _ := simdscan.Use(name)
			checkScanTwin(t, b)
			restore()
		}
	})
}

// TestSpecialBytes holds specialBytes to its contract: its lowest flag is
// at the first '"', '\\' or byte >= 0x80 of the word (little-endian), and
// there is none when the word has none. Every byte value at every
// position, below it plain bytes, above it anything (seeded).
func TestSpecialBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 3))
	special := func(c byte) bool { return c == '"' || c == '\\' || c >= 0x80 }
	plain := func() byte {
		for {
			if c := byte(rng.IntN(0x80)); !special(c) {
				return c
			}
		}
	}
	for p := 0; p < 8; p++ {
		for c := 0; c < 256; c++ {
			for range 64 {
				var w [8]byte
				for k := range w {
					switch {
					case k < p:
						w[k] = plain()
					case k == p:
						w[k] = byte(c)
					default:
						w[k] = byte(rng.IntN(256))
					}
				}
				want := 8
				for k, b := range w {
					if special(b) {
						want = k
						break
					}
				}
				m := specialBytes(load64(w[:], 0))
				got := 8
				if m != 0 {
					got = bits.TrailingZeros64(m) >> 3
				}
				if got != want {
					t.Fatalf("specialBytes(% x): first flag at %d, want %d", w, got, want)
				}
			}
		}
	}
}
