package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/internal/cdcgen"
)

// BenchmarkConvertParquet converts a generated 32 MiB file per format to
// snappy Parquet, end to end (read, decode, write, fsync, rename).
func BenchmarkConvertParquet(b *testing.B) {
	for _, format := range []string{"canal-json", "maxwell-json", "ogg-json", "debezium-json"} {
		b.Run(format, func(b *testing.B) {
			dir := b.TempDir()
			in := filepath.Join(dir, "in.jsonl")
			data := cdcgen.Lines(format, 1, 32<<20)
			if err := os.WriteFile(in, data, 0o644); err != nil {
				b.Fatal(err)
			}
			f, _ := decode.Lookup(format)
			s, err := arrowconv.ParseColumns(cdcgen.SchemaFor(format))
			if err != nil {
				b.Fatal(err)
			}
			cfg := Config{DecodingOptions: DecodingOptions{Format: f, Schema: s}, OutputOptions: OutputOptions{To: ToParquet, OutDir: filepath.Join(dir, "out")}, RunOptions: RunOptions{Workers: 1}}
			var rows int64
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				st, err := Run(context.Background(), cfg, []string{in})
				if err != nil {
					b.Fatal(err)
				}
				rows += st.TotalRows()
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

func writeFileB(b *testing.B, path string, data []byte) {
	b.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
}
