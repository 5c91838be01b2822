package writer

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"
)

// TestPageBuf: a pageBuf holds what a plain slice holds, appended in any
// pieces, across resets.
func TestPageBuf(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var b pageBuf
		var want []byte
		for range rapid.IntRange(1, 4).Draw(t, "rounds") {
			for _, n := range rapid.SliceOfN(rapid.IntRange(0, 3*pageSegMin), 0, 40).Draw(t, "pieces") {
				p := make([]byte, n)
				for i := range p {
					p[i] = byte(len(want) + i)
				}
				b.append(p)
				want = append(want, p...)
			}
			var got []byte
			b.each(func(s []byte) error { got = append(got, s...); return nil })
			if !bytes.Equal(got, want) || b.len() != len(want) || b.retained() < len(want) {
				t.Fatalf("holds %d bytes (len %d, retained %d), want %d", len(got), b.len(), b.retained(), len(want))
			}
			b.reset()
			want = want[:0]
		}
	})
}
