package writer

import (
	"fmt"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go/format"
	"math/rand/v2"
	"testing"
)

// BenchmarkDictFind looks up values of a dictionary of 32 Ki distinct
// values (30-byte strings, the table out of L1 and L2 with many columns)
// that are mostly absent (a column of distinct values, before it gives
// its dictionary up) or present, with the tagged and the untagged slot
// layouts: what the tags save is the reads of other values' bytes.
func BenchmarkDictFind(b *testing.B) {
	rng := rand.New(rand.NewPCG(34, 3))
	gen := func() []byte { return fmt.Appendf(nil, "%08x lamp drill %010d x", rng.Uint32(), rng.Uint64()%1e10) }
	const n = 32 << 10
	var vals dictValues
	present := make([][]byte, n)
	absent := make([][]byte, n)
	for i := range n {
		present[i], absent[i] = gen(), gen()
	}
	for _, tagged := range []bool{true, false} {
		tab := newDictTable()
		tab.useTags(tagged)
		vals.reset()
		for _, v := range present {
			tab.add(vals.add(v), &vals)
		}
		for _, c := range []struct {
			name string
			vs   [][]byte
		}{{"absent", absent}, {"present", present}} {
			b.Run(fmt.Sprintf("%s/tagged=%v", c.name, tagged), func(b *testing.B) {
				for b.Loop() {
					for _, v := range c.vs {
						tab.find(v, &vals)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(c.vs)), "ns/find")
			})
		}
	}
}

// BenchmarkPutStrings puts batches of 3,400 strings drawn from 12,000
// distinct names (the products shape's name column: the dictionary's
// slots and values out of the first cache) into a dictionary leaf.
func BenchmarkPutStrings(b *testing.B) {
	rng := rand.New(rand.NewPCG(34, 4))
	names := make([]string, 12000)
	for i := range names {
		names[i] = fmt.Sprintf("%s %d", []string{"jacket", "tire", "drill", "lamp", "battery"}[i%5], i)
	}
	const rows = 3400
	bld := array.NewStringBuilder(memory.DefaultAllocator)
	var arrs []*array.String
	for range 32 {
		for range rows {
			bld.Append(names[rng.IntN(len(names))])
		}
		arrs = append(arrs, bld.NewStringArray())
	}
	l := &leaf{dict: true, dictIdx: newDictTable(), phys: format.ByteArray, maxDef: 1}
	b.SetBytes(rows)
	for k := range b.N {
		a := arrs[k%len(arrs)]
		putStrings(l, validityOf(a), a, 0, rows)
		l.idx, l.def = l.idx[:0], l.def[:0]
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/value")
}
