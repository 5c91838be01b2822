package writer

import (
	"fmt"
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
