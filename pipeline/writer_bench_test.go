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

// BenchmarkParquetWriter writes decoded batches to snappy Parquet (the
// writer alone): MB/s of the JSON those rows came from, for each format
// and shape (products, the envelope shape's maps and lists of metadata,
// wide rows).
func BenchmarkParquetWriter(b *testing.B) {
	type job struct{ name, shape, format string }
	jobs := []job{{"canal-json", "products", "canal-json"}, {"maxwell-json", "products", "maxwell-json"}, {"ogg-json", "products", "ogg-json"}, {"debezium-json", "products", "debezium-json"}}
	for _, shape := range []string{"envelope", "wide"} {
		for _, format := range []string{"canal-json", "maxwell-json", "ogg-json", "debezium-json"} {
			jobs = append(jobs, job{shape + "/" + format, shape, format})
		}
	}
	for _, j := range jobs {
		format := j.format
		b.Run(j.name, func(b *testing.B) {
			dir := b.TempDir()
			in := filepath.Join(dir, "in.jsonl")
			data, err := cdcgen.ShapeLines(format, j.shape, 1, 16<<20)
			if err != nil {
				b.Fatal(err)
			}
			writeFileB(b, in, data)
			f, _ := decode.Lookup(format)
			s, err := arrowconv.ParseColumns(cdcgen.SchemaForShape(format, j.shape))
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
