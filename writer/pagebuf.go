package writer

// pageBuf holds a column chunk's pages, as they are encoded, in segments:
// appending never moves what is there. One growing slice copied the whole
// chunk again at each growth and zeroed fresh memory for it: a quarter of
// a one-worker conversion of wide rows (runtime.growslice, 2026-12-04).
// Segments double from pageSegMin up to pageSegMax, so a small chunk (a
// column of few distinct values) holds little, and they are kept for the
// next row group.
type pageBuf struct {
	segs [][]byte // the segments; those past used are empty, kept for reuse
	used int      // segments holding bytes
	n    int      // bytes held
}

const (
	pageSegMin = 16 << 10
	pageSegMax = 1 << 20
)

func (b *pageBuf) append(p []byte) {
	b.n += len(p)
	for len(p) > 0 {
		if b.used == 0 || len(b.segs[b.used-1]) == cap(b.segs[b.used-1]) {
			if b.used == len(b.segs) {
				size := pageSegMin
				if b.used > 0 {
					size = min(2*cap(b.segs[b.used-1]), pageSegMax)
				}
				b.segs = append(b.segs, make([]byte, 0, size))
			}
			b.used++
		}
		s := &b.segs[b.used-1]
		k := min(len(p), cap(*s)-len(*s))
		*s = append(*s, p[:k]...)
		p = p[k:]
	}
}

// len is the bytes held.
func (b *pageBuf) len() int { return b.n }

// retained is the room the segments hold, used or not.
func (b *pageBuf) retained() int {
	n := 0
	for _, s := range b.segs {
		n += cap(s)
	}
	return n
}

// each calls f with the bytes held, in order, until f fails.
func (b *pageBuf) each(f func([]byte) error) error {
	for _, s := range b.segs[:b.used] {
		if err := f(s); err != nil {
			return err
		}
	}
	return nil
}

// reset empties the buffer and keeps its segments.
func (b *pageBuf) reset() {
	for i := range b.segs[:b.used] {
		b.segs[i] = b.segs[i][:0]
	}
	b.used, b.n = 0, 0
}
