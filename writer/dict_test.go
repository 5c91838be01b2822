package writer

import (
	"context"
	"fmt"
	"io"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// dictTable against a Go map: every value added is found at its index,
// and values never added are not found, with values of every short-hash
// shape (empty, 1-3, 4-7, 8-16 bytes, longer) that share prefixes and
// suffixes. A probe bound of 1 or 2 forces the fallbacks (maphash for all,
// then spreading out); indexes of 7 bits make the values outgrow the
// tagged layout half way.
func TestDictTable(t *testing.T) {
	defer func(p, s int) { maxProbe, tagShift = p, s }(maxProbe, tagShift)
	for _, c := range []struct{ probe, shift int }{{64, 24}, {2, 24}, {1, 24}, {64, 7}, {1, 7}} {
		probe := c.probe
		maxProbe, tagShift = probe, c.shift
		rng := rand.New(rand.NewPCG(7, uint64(probe)))
		for round := range 3 {
			tab := newDictTable()
			var vals dictValues
			ref := map[string]int32{}
			gen := func() string {
				switch rng.IntN(5) {
				case 0:
					return fmt.Sprint(rng.IntN(300))
				case 1:
					return fmt.Sprintf("user_%06d_x", rng.IntN(3000))
				case 2:
					return fmt.Sprintf("A %d with %d and tail", rng.IntN(40), rng.IntN(40))
				case 3:
					return string(rune('a' + rng.IntN(26)))
				}
				return ""
			}
			for range 5000 {
				v := gen()
				i := tab.find([]byte(v), &vals)
				want, ok := ref[v]
				if !ok {
					want = -1
				}
				if i != want {
					t.Fatalf("probe %d round %d: find(%q) = %d, want %d", probe, round, v, i, want)
				}
				if i < 0 {
					i = vals.add([]byte(v))
					tab.add(i, &vals)
					ref[v] = i
				}
			}
			for v, want := range ref {
				if i := tab.find([]byte(v), &vals); i != want {
					t.Fatalf("probe %d: find(%q) = %d, want %d", probe, v, i, want)
				}
				if got := string(vals.get(want)); got != v {
					t.Fatalf("probe %d: value %d is %q, want %q", probe, want, got, v)
				}
			}
			if i := tab.find([]byte("never added, and long enough"), &vals); i != -1 {
				t.Fatalf("found a value never added at %d", i)
			}
			if probe == 1 && !tab.full {
				t.Errorf("probe bound 1: the table never fell back to maphash")
			}
			if untagged := tab.tmask == 0; untagged != (1<<c.shift-1 < len(ref)) {
				t.Errorf("untagged layout %v with %d values and %d index bits", untagged, len(ref), c.shift)
			}
			// The size follows the number of values, whatever collided: a
			// table that doubled until nothing collided reached 2^35 slots.
			if limit := 2 << bits.Len(uint(max(64, 2*len(ref))-1)); len(tab.slots) > limit {
				t.Fatalf("probe %d: %d slots for %d values (at most %d)", probe, len(tab.slots), len(ref), limit)
			}
			tab.reset()
			if i := tab.find(vals.get(0), &vals); i != -1 {
				t.Fatalf("after reset: found %q at %d", vals.get(0), i)
			}
		}
	}
}

// An empty value that ends the arena exactly (its length word fills
// plain to capacity) reads back as empty without making a pointer past
// the arena's end: such a pointer may point into the next object, and
// checkptr (on under -race) stops the program on it.
func TestDictEmptyValueAtArenaEnd(t *testing.T) {
	for _, pre := range []string{"", "abcd"} {
		n := 4
		if pre != "" {
			n += 4 + len(pre)
		}
		vals := dictValues{plain: make([]byte, 0, n)}
		if pre != "" {
			vals.add([]byte(pre))
		}
		i := vals.add(nil)
		if len(vals.plain) != cap(vals.plain) {
			t.Fatalf("setup: plain is %d of %d bytes, want it full", len(vals.plain), cap(vals.plain))
		}
		if got := vals.get(i); len(got) != 0 {
			t.Fatalf("empty value reads back as %q", got)
		}
		if !vals.is(i, nil) || vals.is(i, []byte("x")) {
			t.Fatalf("is() wrong for the empty value")
		}
		if pre != "" && string(vals.get(0)) != pre {
			t.Fatalf("value 0 is %q, want %q", vals.get(0), pre)
		}
	}
}

// TestDictValuesGrowthCapped: a dictionary's values grow by doubling,
// but not past dictLimitBytes and a quarter while what they hold fits in
// that (a dictionary past the limit is given up after its batch: doubling
// half the limit would touch twice the limit). Past it they double again,
// and every value reads back throughout.
func TestDictValuesGrowthCapped(t *testing.T) {
	lim := dictLimitBytes + dictLimitBytes/4
	var vals dictValues
	var want []string
	for k := 0; vals.size() < 3*dictLimitBytes; k++ {
		v := fmt.Sprintf("value %08d of a column of long, distinct strings", k)
		if i := vals.add([]byte(v)); int(i) != len(want) {
			t.Fatalf("add gave index %d, want %d", i, len(want))
		}
		want = append(want, v)
		if vals.size() <= lim && cap(vals.plain) > lim {
			t.Fatalf("%d bytes held in a buffer of %d: past the cap of %d", vals.size(), cap(vals.plain), lim)
		}
	}
	if cap(vals.plain) < 3*dictLimitBytes {
		t.Fatalf("buffer of %d for %d bytes", cap(vals.plain), vals.size())
	}
	for i, v := range want {
		if string(vals.get(int32(i))) != v {
			t.Fatalf("value %d reads back as %q, want %q", i, vals.get(int32(i)), v)
		}
	}
}

// TestDictionaryGivenUpStaysPlain: a column of distinct values gives its
// dictionary up in its first chunk; the chunks after it start PLAIN (no
// value goes through the dictionary) but one in redictEvery tries it
// again, so a column whose values start to repeat gets its dictionary
// back. A low-cardinality column keeps its dictionary throughout, and
// every value reads back.
func TestDictionaryGivenUpStaysPlain(t *testing.T) {
	w, b, path := newTestParquet(t, "pos STRING, cat STRING")
	const groups, repeatFrom = 20, 12
	rows := dictSample + 904
	var want [][2]string
	for g := range groups {
		for i := range rows {
			pos := fmt.Sprintf("mysql-bin.000001/%d", g*rows+i)
			if g >= repeatFrom {
				pos = fmt.Sprintf("p%d", i%7)
			}
			cat := fmt.Sprintf("c%d", i%5)
			b.AppendKind(arrowconv.Insert)
			b.Column(0).(*arrowconv.BytesCol).AppendString(pos)
			b.Column(1).(*arrowconv.BytesCol).AppendString(cat)
			want = append(want, [2]string{pos, cat})
		}
		rec := b.Flush()
		if err := w.Write(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		// A chunk that starts PLAIN puts nothing in the dictionary.
		sticky := g > 0 && g%redictEvery != 0 && g < 2*redictEvery
		if n := w.leaves[1].dictVals.len(); sticky && n != 0 {
			t.Errorf("row group %d: %d values in the dictionary of a column that gave it up", g, n)
		}
		if err := w.FlushRowGroup(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	pf := openParquet(t, path)
	md := pf.Metadata()
	if len(md.RowGroups) != groups {
		t.Fatalf("%d row groups, want %d", len(md.RowGroups), groups)
	}
	for g, rg := range md.RowGroups {
		// Distinct until repeatFrom; then PLAIN while sticky, until the
		// retry at 2*redictEvery finds that the values repeat.
		wantDict := g >= 2*redictEvery
		if got := slices.Contains(rg.Columns[1].MetaData.Encoding, format.RLEDictionary); got != wantDict {
			t.Errorf("row group %d: pos dictionary-encoded %v, want %v (encodings %v)", g, got, wantDict, rg.Columns[1].MetaData.Encoding)
		}
		if !slices.Contains(rg.Columns[2].MetaData.Encoding, format.RLEDictionary) {
			t.Errorf("row group %d: cat lost its dictionary (encodings %v)", g, rg.Columns[2].MetaData.Encoding)
		}
	}
	if got := readPairs(t, pf); !slices.Equal(got, want) {
		t.Errorf("read %d rows back, not the %d written", len(got), len(want))
	}
}

// TestDictionaryGivenUpWithNulls: the distinct share that gives a
// dictionary up is of the values, not of the rows: a column of distinct
// values, NULL every other row, goes PLAIN after dictSample values as one
// without NULLs does (counted over rows, its share stayed at one half and
// every value went through a dictionary that grew to its limit).
func TestDictionaryGivenUpWithNulls(t *testing.T) {
	w, b, path := newTestParquet(t, "note STRING, cat STRING")
	rows := 4 * dictSample
	var want [][2]string
	for i := range rows {
		note := ""
		if i%2 == 0 {
			note = fmt.Sprintf("note %d", i)
			b.Column(0).(*arrowconv.BytesCol).AppendString(note)
		} else {
			b.Column(0).AppendNull()
		}
		cat := fmt.Sprintf("c%d", i%5)
		b.AppendKind(arrowconv.Insert)
		b.Column(1).(*arrowconv.BytesCol).AppendString(cat)
		want = append(want, [2]string{note, cat})
	}
	rec := b.Flush()
	if err := w.Write(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	rec.Release()
	if !w.leaves[1].plainChunk {
		t.Errorf("the column of distinct values (half NULL) kept its dictionary of %d values", w.leaves[1].dictVals.len())
	}
	if w.leaves[2].plainChunk {
		t.Error("the low-cardinality column gave its dictionary up")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	pf := openParquet(t, path)
	for g, rg := range pf.Metadata().RowGroups {
		if slices.Contains(rg.Columns[1].MetaData.Encoding, format.RLEDictionary) {
			t.Errorf("row group %d: note dictionary-encoded (encodings %v)", g, rg.Columns[1].MetaData.Encoding)
		}
	}
	if got := readPairs(t, pf); !slices.Equal(got, want) {
		t.Errorf("read %d rows back, not the %d written", len(got), len(want))
	}
}

// readPairs reads the two columns after the row kind back, a NULL as "".
func readPairs(t *testing.T, pf *parquet.File) [][2]string {
	t.Helper()
	var got [][2]string
	r := parquet.NewReader(pf)
	defer r.Close()
	buf := make([]parquet.Row, 512)
	for {
		n, err := r.ReadRows(buf)
		for _, row := range buf[:n] {
			var p [2]string
			for k := range p {
				if v := row[k+1]; !v.IsNull() {
					p[k] = v.String()
				}
			}
			got = append(got, p)
		}
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkDictTables looks values up in the dictionaries of 1 and of 20
// tables' writers taken in turn, a batch of a chunk's rows each (a routed
// input's): with 20, every table's dictionary is out of cache when its
// turn comes, and each dependent read of a lookup is a miss.
func BenchmarkDictTables(b *testing.B) {
	words := []string{"scooter", "battery", "drill", "hammer", "rocks", "jacket", "tire", "lamp", "chair", "desk", "cable", "phone"}
	value := func(r *rand.Rand) []byte { return []byte(words[r.IntN(len(words))] + " " + strconv.Itoa(r.IntN(1000))) }
	for _, tables := range []int{1, 20} {
		b.Run(fmt.Sprintf("tables=%d", tables), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			tabs := make([]*dictTable, tables)
			vals := make([]dictValues, tables)
			for i := range tabs {
				tabs[i] = newDictTable()
				for range 22000 { // a row group's names: 12000 distinct
					if v := value(r); tabs[i].find(v, &vals[i]) < 0 {
						tabs[i].add(vals[i].add(v), &vals[i])
					}
				}
			}
			probe := make([][]byte, 1<<16)
			size := 0
			for i := range probe {
				probe[i] = value(r)
				size += len(probe[i])
			}
			b.SetBytes(int64(size / len(probe)))
			batch := 2700 / tables // a 1 MiB chunk's rows, spread over the tables
			found := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t := (i / batch) % tables
				if tabs[t].find(probe[i&(len(probe)-1)], &vals[t]) >= 0 {
					found++
				}
			}
			dictSink = found
		})
	}
}

var dictSink int
