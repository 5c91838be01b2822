package writer

import (
	"bytes"
	"slices"
	"testing"
)

// TestByteBounds: a page's bounds of BYTE_ARRAY values are their least
// and greatest in unsigned byte order, whatever decides them (the
// eight-byte prefixes, or the full comparison): values of any length,
// sharing prefixes, with zero bytes, short ones that prefix long ones.
func TestByteBounds(t *testing.T) {
	seededInputs(t, 2, 3000, 0, 200, checkByteBounds)
}

// FuzzByteBounds is TestByteBounds' twin over any input, cut into values.
func FuzzByteBounds(f *testing.F) {
	f.Add([]byte{3, 'a', 'b', 0, 2, 'a', 'b', 9, 0, 0, 0, 0, 0, 0, 0, 0, 1})
	f.Add(bytes.Repeat([]byte{10, 'T', 'h', 'e', ' ', 'd', 'e', 's', 'k', 0, 200}, 20))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<12 {
			return
		}
		checkByteBounds(t, data)
	})
}

// checkByteBounds cuts data into values (a length byte, then that many
// bytes, taken from a small alphabet so prefixes are shared) and checks
// bounds.bytes against the sorted values.
func checkByteBounds(t *testing.T, data []byte) {
	var vals [][]byte
	for len(data) > 0 {
		n := min(int(data[0])%20, len(data)-1)
		v := make([]byte, n)
		for i, c := range data[1 : 1+n] {
			v[i] = "\x00\x01ab\xff"[c%5] // few letters: long common prefixes, zeros, the top byte
		}
		vals = append(vals, v)
		data = data[1+n:]
	}
	if len(vals) == 0 {
		return
	}
	var b bounds
	for _, v := range vals {
		b.bytes(v, false)
	}
	sorted := slices.Clone(vals)
	slices.SortFunc(sorted, bytes.Compare)
	if lo, hi := sorted[0], sorted[len(sorted)-1]; !bytes.Equal(b.b0, lo) || !bytes.Equal(b.b1, hi) {
		t.Fatalf("bounds %q %q, want %q %q of %q", b.b0, b.b1, lo, hi, vals)
	}
}
