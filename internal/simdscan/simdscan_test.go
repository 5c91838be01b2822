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

// naive is the definition: the index of the first special byte, or len(b).
func naive(b []byte) int {
	for i, c := range b {
		if special(c) {
			return i
		}
	}
	return len(b)
}

// check holds one implementation to Plain's contract on b: everything
// before its answer is plain, and it stops at a special byte or within a
// block of the end.
func check(t testing.TB, name string, f func([]byte) int, b []byte) {
	t.Helper()
	r := f(b)
	want := naive(b)
	if r > want || r < 0 {
		t.Fatalf("%s(%q) = %d, first special byte at %d", name, b, r, want)
	}
	if r < want && len(b)-r >= 64 {
		t.Fatalf("%s(%q) = %d, stopped %d bytes before the end with no special byte", name, b, r, len(b)-r)
	}
}

func TestPlainImplementations(t *testing.T) {
	impls := supported()
	t.Logf("chosen: %s; testing %d implementations", Impl(), len(impls))
	rng := rand.New(rand.NewPCG(34, 1))
	for n := 0; n < 300; n++ {
		for trial := 0; trial < 20; trial++ {
			b := bytes.Repeat([]byte{'a'}, n)
			// Zero, one or a few special bytes at random places.
			for k := rng.IntN(3); k > 0 && n > 0; k-- {
				b[rng.IntN(n)] = []byte{'"', '\\', 0x80, 0xff, 0xc3}[rng.IntN(5)]
			}
			for name, f := range impls {
				check(t, name, f, b)
				// Every start offset: the vector loads must not depend on
				// alignment.
				if n < 80 {
					for off := 1; off < n; off++ {
						check(t, name, f, b[off:])
					}
				}
			}
		}
	}
}

// TestPlainEveryByte puts each of the 256 byte values at each place of a
// block: only the three kinds stop the scan.
func TestPlainEveryByte(t *testing.T) {
	for name, f := range supported() {
		for c := 0; c < 256; c++ {
			for at := 0; at < 130; at++ {
				b := bytes.Repeat([]byte{' '}, 130)
				b[at] = byte(c)
				check(t, name, f, b)
			}
		}
	}
}

func FuzzPlain(f *testing.F) {
	f.Add([]byte(`The desk is ergonomic, rated for 1536 hours. \"Pro\" edition.`), 0)
	f.Add(bytes.Repeat([]byte("café "), 40), 3)
	f.Fuzz(func(t *testing.T, b []byte, off int) {
		if off < 0 || off > len(b) {
			off = 0
		}
		for name, f := range supported() {
			check(t, name, f, b[off:])
		}
	})
}

func BenchmarkPlain(b *testing.B) {
	buf := bytes.Repeat([]byte("The desk is ergonomic, rated for 1536 hours. "), 100)
	for name, f := range supported() {
		for _, n := range []int{16, 64, 256, 4096} {
			b.Run(name+"/"+itoa(n), func(b *testing.B) {
				s := buf[:n]
				b.SetBytes(int64(n))
				for b.Loop() {
					f(s)
				}
			})
		}
	}
}

func itoa(n int) string {
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}

// TestNoLegacySSE: the AVX functions use VEX encodings only. A legacy SSE
// instruction (MOVQ DX, X1 to broadcast from) costs a state transition:
// plainAVX2 took 100 ns a call, 40 times its work, until 2026-12-06.
func TestNoLegacySSE(t *testing.T) {
	src, err := os.ReadFile("plain_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	legacy := regexp.MustCompile(`^\s+(MOV[QDL]|MOVOU|MOVUPS|PXOR|XORPS|PCMPEQB|PMOVMSKB|POR|PAND|PSHUFB)\s.*\bX[0-9]+\b`)
	for i, line := range strings.Split(string(src), "\n") {
		if legacy.MatchString(line) {
			t.Errorf("plain_amd64.s:%d: legacy SSE instruction among AVX code: %s", i+1, strings.TrimSpace(line))
		}
	}
}
