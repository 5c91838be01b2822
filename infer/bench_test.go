package infer

import (
	"testing"

	"github.com/cdcetl/cdcetl/internal/cdcgen"
)

// BenchmarkObserve: evidence taken from generated messages of each format
// and shape (what inspect and a routed conversion that reads an input
// again spend per message).
func BenchmarkObserve(b *testing.B) {
	for _, f := range cdcgen.Formats {
		for _, shape := range []string{"products", "envelope", "wide"} {
			g, err := cdcgen.NewShape(f, shape, 1)
			if err != nil {
				b.Fatal(err)
			}
			var msgs [][]byte
			size := 0
			for range 2000 {
				m := g.Next(nil)
				msgs = append(msgs, m)
				size += len(m) + 1
			}
			b.Run(f+"/"+shape, func(b *testing.B) {
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for b.Loop() {
					fe := NewFileEvidence(f, 0, Options{})
					for i, m := range msgs {
						fe.Observe(m, i+1)
					}
				}
			})
		}
	}
}
