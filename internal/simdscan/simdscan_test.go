package simdscan

import (
	"bytes"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
	"testing"
)

func special(c byte) bool { return c == '"' || c == '\\' || c >= 0x80 }

// naiveSpecials is the mask of the special bytes of b[0:64], a byte at a time.
func naiveSpecials(b []byte) uint64 {
	var m uint64
	for i, c := range b[:64] {
		if special(c) {
			m |= 1 << i
		}
	}
	return m
}

// naiveNext is the definition of Next, a block at a time with naiveSpecials.
func naiveNext(b []byte) (int, uint64) {
	i := 0
	for ; len(b)-i >= 64; i += 64 {
		if m := naiveSpecials(b[i:]); m != 0 {
			return i, m
		}
	}
	return i, 0
}

func checkNext(t testing.TB, name string, f func([]byte) (int, uint64), b []byte) {
	t.Helper()
	off, m := f(b)
	if woff, wm := naiveNext(b); off != woff || m != wm {
		t.Fatalf("%s: Next(%q) = %d, %064b; want %d, %064b", name, b, off, m, woff, wm)
	}
}

// TestNextImplementations: plain text of every length up to 300 bytes
// with a few special bytes at random places, from every start offset
// (the vector loads must not depend on alignment).
func TestNextImplementations(t *testing.T) {
	impls := supported()
	t.Logf("chosen: %s; testing %d implementations", Impl(), len(impls))
	rng := rand.New(rand.NewPCG(34, 1))
	for n := 0; n < 300; n++ {
		for trial := 0; trial < 20; trial++ {
			b := bytes.Repeat([]byte{'a'}, n)
			for k := rng.IntN(4); k > 0 && n > 0; k-- {
				b[rng.IntN(n)] = []byte{'"', '\\', 0x80, 0xff, 0xc3}[rng.IntN(5)]
			}
			for name, f := range impls {
				checkNext(t, name, f, b)
				if n < 140 {
					for off := 1; off < n; off++ {
						checkNext(t, name, f, b[off:])
					}
				}
			}
		}
	}
}

// TestNextEveryByte puts each byte value at each place of two blocks of
// plain bytes, and of specials: only the three kinds are flagged, and the
// mask flags every special byte of the block, not only the lowest (the
// scanners walk them all).
func TestNextEveryByte(t *testing.T) {
	for name, f := range supported() {
		for _, fill := range []byte{' ', '"', '\\', 0x80, 0xff, 'a'} {
			for c := 0; c < 256; c++ {
				for at := 0; at < 128; at++ {
					b := bytes.Repeat([]byte{fill}, 130)
					b[at] = byte(c)
					checkNext(t, name, f, b)
				}
			}
		}
	}
}

func FuzzNext(f *testing.F) {
	f.Add([]byte(`The desk is ergonomic, rated for 1536 hours. \"Pro\" edition. The rocks is café-grade, rated for 4057 hours.\n`), 0)
	f.Add(bytes.Repeat([]byte("café "), 40), 3)
	f.Fuzz(func(t *testing.T, b []byte, off int) {
		if off < 0 || off > len(b) {
			off = 0
		}
		for name, f := range supported() {
			checkNext(t, name, f, b[off:])
		}
	})
}

func BenchmarkNext(b *testing.B) {
	plain := bytes.Repeat([]byte("The desk is ergonomic, rated for 1536 hours. "), 100)[:4096]
	escaped := bytes.Repeat([]byte(`The desk is ergonomic, \"rated\" for 1536 hours. `), 100)[:4096]
	for name, f := range supported() {
		b.Run(name+"/plain", func(b *testing.B) {
			b.SetBytes(4096)
			for b.Loop() {
				f(plain)
			}
		})
		b.Run(name+"/blocks", func(b *testing.B) { // a call a block, as escaped text takes
			b.SetBytes(4096)
			for b.Loop() {
				for i := 0; i+64 <= 4096; i += 64 {
					f(escaped[i : i+64])
				}
			}
		})
	}
}

// TestNoLegacySSE: the AVX functions use VEX encodings only. A legacy SSE
// instruction among AVX code can cost a state transition or a merge: with
// one (MOVQ DX, X1, to broadcast from) the AVX2 scanner took 100 ns a call,
// 40 times its work, on an AVX-512 host with it forced (2026-12-06).
func TestNoLegacySSE(t *testing.T) {
	src, err := os.ReadFile("next_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	legacy := regexp.MustCompile(`^\s+(MOV[QDL]|MOVOU|MOVUPS|PXOR|XORPS|PCMPEQB|PMOVMSKB|POR|PAND|PSHUFB)\s.*\bX[0-9]+\b`)
	for i, line := range strings.Split(string(src), "\n") {
		if legacy.MatchString(line) {
			t.Errorf("next_amd64.s:%d: legacy SSE instruction among AVX code: %s", i+1, strings.TrimSpace(line))
		}
	}
}
