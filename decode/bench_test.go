package decode

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/internal/cdcgen"
)

// BenchmarkDecode decodes generated products changelogs (see cdcgen) into
// Arrow batches of 16384 rows: MB/s of input, rows/s, allocations.
func BenchmarkDecode(b *testing.B) {
	for _, format := range []string{"canal-json", "maxwell-json", "ogg-json", "debezium-json"} {
		b.Run(format, func(b *testing.B) {
			data := cdcgen.Lines(format, 1, 8<<20)
			lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
			f, _ := Lookup(format)
			s, err := arrowconv.ParseColumns(cdcgen.SchemaFor(format))
			if err != nil {
				b.Fatal(err)
			}
			o, _ := ParseOptions(f, nil, false)
			bld := arrowconv.NewBuilder(memory.NewGoAllocator(), s)
			d, err := New(f, s, o, bld)
			if err != nil {
				b.Fatal(err)
			}
			rows := 0
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				for _, l := range lines {
					res, err := d.Decode(l)
					if err != nil {
						b.Fatal(fmt.Errorf("%s: %w", l, err))
					}
					rows += res.Rows
					if bld.Len() >= 16384 {
						bld.Flush().Release()
					}
				}
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
