package pipeline

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/internal/cdcgen"
	"github.com/cdcetl/cdcetl/writer"
)

// BenchmarkParquetWriter writes decoded products batches to snappy Parquet
// (the writer alone): MB/s of the JSON those rows came from.
func BenchmarkParquetWriter(b *testing.B) {
	for _, format := range []string{"canal-json", "maxwell-json"} {
		b.Run(format, func(b *testing.B) {
			dir := b.TempDir()
			in := filepath.Join(dir, "in.jsonl")
			data := cdcgen.Lines(format, 1, 16<<20)
			writeFileB(b, in, data)
			f, _ := decode.Lookup(format)
			s, err := arrowconv.ParseColumns(cdcgen.SchemaFor(format))
			if err != nil {
				b.Fatal(err)
			}
			var recs []arrow.RecordBatch
			cfg := Config{DecodingOptions: DecodingOptions{Format: f, Schema: s}, OutputOptions: OutputOptions{Batches: func(_ context.Context, rec arrow.RecordBatch) error {
				rec.Retain()
				recs = append(recs, rec)
				return nil
			}}}
			if _, err := Run(context.Background(), cfg, []string{in}); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				w, err := writer.NewParquet(filepath.Join(dir, "out.parquet"), s, writer.ParquetOptions{})
				if err != nil {
					b.Fatal(err)
				}
				for _, rec := range recs {
					if err := w.Write(context.Background(), rec); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
