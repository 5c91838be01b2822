package writer

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestIndexPageEnd: indexPageEnd cuts index pages where the entry-by-entry
// loop does (the one writePages keeps for PLAIN pages, with 4 bytes a
// value), for flat, optional and repeated levels with NULLs at any depth,
// pages of any size and any start.
func TestIndexPageEnd(t *testing.T) {
	seededInputs(t, 1, 2000, 1, 300, checkIndexPageEnd)
}

// seededInputs calls check with n inputs of random bytes (seed picks
// them), each of minLen plus fewer than spread bytes.
func seededInputs(t *testing.T, seed uint64, n, minLen, spread int, check func(*testing.T, []byte)) {
	rng := rand.New(rand.NewPCG(34, seed))
	for range n {
		data := make([]byte, minLen+rng.IntN(spread))
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		check(t, data)
	}
}

// FuzzIndexPageEnd is TestIndexPageEnd's twin over any input: its first
// bytes choose the levels' depths and the page size, the rest the levels.
func FuzzIndexPageEnd(f *testing.F) {
	f.Add([]byte{1, 2, 40, 0, 1, 1, 0, 3, 3, 2, 0})
	f.Add(bytes.Repeat([]byte{7, 1, 3, 0, 255}, 60))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<12 {
			return
		}
		checkIndexPageEnd(t, data)
	})
}

func checkIndexPageEnd(t *testing.T, data []byte) {
	if len(data) < 3 {
		return
	}
	l := &leaf{maxRep: int(data[0] & 1), maxDef: int(data[0]>>1) % 4, pageBytes: int(data[1]) - 8}
	for i, b := range data[2:] {
		if l.maxRep > 0 {
			r := b & 1
			if i == 0 {
				r = 0 // a chunk starts a row
			}
			l.rep = append(l.rep, r)
		}
		if l.maxDef > 0 {
			d := int(b>>1) % (l.maxDef + 2) // the top level (a value) twice as often
			l.def = append(l.def, uint8(min(d, l.maxDef)))
		}
	}
	l.nValues = len(data) - 2
	for start := 0; start < l.nValues; {
		end, nulls, rows := l.indexPageEnd(start)
		wantEnd, wantNulls, wantRows := pageEndLoop(l, start)
		if end != wantEnd || nulls != wantNulls || rows != wantRows {
			t.Fatalf("maxRep %d maxDef %d pageBytes %d from %d: indexPageEnd gives end %d, %d NULLs, %d rows; the loop %d, %d, %d\nrep %v\ndef %v",
				l.maxRep, l.maxDef, l.pageBytes, start, end, nulls, rows, wantEnd, wantNulls, wantRows, l.rep, l.def)
		}
		if end <= start {
			t.Fatalf("from %d: the page ends at %d", start, end)
		}
		start = end
	}
}

// pageEndLoop is writePages' loop over the levels for index pages, entry
// by entry.
func pageEndLoop(l *leaf, start int) (end, nNulls, nRows int) {
	end, size := start, 0
	for end < l.nValues {
		if end > start && (l.maxRep == 0 || l.rep[end] == 0) && size >= l.pageBytes {
			break
		}
		if l.maxRep == 0 || l.rep[end] == 0 {
			nRows++
		}
		if l.maxDef > 0 && int(l.def[end]) < l.maxDef {
			nNulls++
		} else {
			size += 4
		}
		end++
	}
	return end, nNulls, nRows
}

// TestFillLevels: fillLevels sets every byte of slices of any length, and
// nothing past them.
func TestFillLevels(t *testing.T) {
	for n := range 40 {
		b := bytes.Repeat([]byte{9}, n+8)
		fillLevels(b[:n], 3)
		if want := append(bytes.Repeat([]byte{3}, n), bytes.Repeat([]byte{9}, 8)...); !bytes.Equal(b, want) {
			t.Fatalf("length %d: %v", n, b)
		}
	}
}

// TestDefLevels: defLevels gives the levels and the count of present rows
// the bit-by-bit loop gives, over validity bitmaps at any offset and row
// ranges that start and end anywhere within their bytes.
func TestDefLevels(t *testing.T) {
	seededInputs(t, 3, 3000, 3, 40, checkDefLevels)
}

// FuzzDefLevels is TestDefLevels' twin over any input: its first bytes
// choose the bitmap's offset and the rows, the rest the bitmap.
func FuzzDefLevels(f *testing.F) {
	f.Add([]byte{3, 5, 70, 0xff, 0x0f, 0xa5, 0, 1, 0x80, 0x7e, 0x33, 0xcc})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<10 {
			return
		}
		checkDefLevels(t, data)
	})
}

// TestValidRows: validity.rows lists, a word at a time, the rows with a
// value that a test of each row's bit finds, for any bitmap offset, any
// rows, and bitmaps that end within a word of the rows.
func TestValidRows(t *testing.T) {
	seededInputs(t, 4, 3000, 3, 40, checkValidRows)
}

// FuzzValidRows is TestValidRows' twin over any input, laid out as
// FuzzDefLevels' is.
func FuzzValidRows(f *testing.F) {
	f.Add([]byte{3, 5, 70, 0xff, 0x0f, 0xa5, 0, 1, 0x80, 0x7e, 0x33, 0xcc})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<10 {
			return
		}
		checkValidRows(t, data)
	})
}

func checkValidRows(t *testing.T, data []byte) {
	v, from, to, ok := validityCase(data)
	if !ok {
		return
	}
	var got []int
	var at [56]uint8
	for i := from; i < to; {
		ks, n := v.rows(i, to, &at)
		if n < 1 || n > to-i {
			t.Fatalf("offset %d rows %d-%d of %x: rows(%d) covers %d rows", v.off, from, to, v.bits, i, n)
		}
		for _, k := range ks {
			got = append(got, i+int(k))
		}
		i += n
	}
	var want []int
	for i := from; i < to; i++ {
		if v.bits[(v.off+i)>>3]>>((v.off+i)&7)&1 == 1 {
			want = append(want, i)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("offset %d rows %d-%d of %x: rows with a value %v, want %v", v.off, from, to, v.bits, got, want)
	}
}

// validityCase reads a bitmap and rows of it from a fuzz input: the first
// three bytes choose the bitmap's offset (under 16 bits) and the rows, the
// rest is the bitmap; ok false for an input too short.
func validityCase(data []byte) (v validity, from, to int, ok bool) {
	if len(data) < 4 {
		return v, 0, 0, false
	}
	v = validity{bits: data[3:]}
	v.off = int(data[0]) % min(16, 8*len(v.bits))
	rows := 8*len(v.bits) - v.off
	from = int(data[1]) % (rows + 1)
	to = from + int(data[2])%(rows-from+1)
	return v, from, to, true
}

func checkDefLevels(t *testing.T, data []byte) {
	v, from, to, ok := validityCase(data)
	if !ok {
		return
	}
	levels := func(fast bool) ([]uint8, int, int) {
		defer func(f bool) { defBytesFast = f }(defBytesFast)
		defBytesFast = fast
		l := &leaf{maxDef: 1, def: []uint8{7, 7}} // levels already there stay
		p := l.defLevels(v, from, to)
		return l.def, p, l.nNulls
	}
	got, gotPresent, gotNulls := levels(true)
	want, wantPresent, wantNulls := levels(false)
	if !bytes.Equal(got, want) || gotPresent != wantPresent || gotNulls != wantNulls {
		t.Fatalf("offset %d rows %d-%d of %x: levels %v, %d present, %d NULLs; bit by bit %v, %d, %d", v.off, from, to, v.bits, got, gotPresent, gotNulls, want, wantPresent, wantNulls)
	}
	for i, d := range want[2:] {
		if d != uint8(v.bits[(v.off+from+i)>>3]>>((v.off+from+i)&7)&1) {
			t.Fatalf("offset %d row %d: level %d", v.off, from+i, d)
		}
	}
}
