package writer_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/internal/cdcgen"
	"github.com/cdcetl/cdcetl/pipeline"
	"github.com/cdcetl/cdcetl/writer"
)

// The comparison the lake-tables issue asks for: cdcetl's page encoder
// against arrow-go's pqarrow, on the same decoded batches (the benchmark
// generator's 32 MiB per format), the same codec (snappy), dictionary
// strings, DELTA_BINARY_PACKED integers and DATA_PAGE_V2 pages on both
// sides, one core. Run:
//
//	go test ./writer -run '^$' -bench 'Encoder' -count 5 -cpu 1

type decoded struct {
	schema *arrowconv.Schema
	recs   []arrow.RecordBatch
	bytes  int64
}

var decodedOnce = map[string]*decoded{}
var decodedMu sync.Mutex

func decodedBatches(b *testing.B, format string) *decoded {
	decodedMu.Lock()
	defer decodedMu.Unlock()
	if d := decodedOnce[format]; d != nil {
		return d
	}
	dir := b.TempDir()
	data := cdcgen.Lines(format, 1, 32<<20)
	path := filepath.Join(dir, "in.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	f, _ := decode.Lookup(format)
	s, err := arrowconv.ParseColumns(cdcgen.SchemaFor(format))
	if err != nil {
		b.Fatal(err)
	}
	d := &decoded{schema: s, bytes: int64(len(data))}
	cfg := pipeline.Config{DecodingOptions: pipeline.DecodingOptions{Format: f, Schema: s}, OutputOptions: pipeline.OutputOptions{To: pipeline.ToPrint, Batches: func(_ context.Context, rec arrow.RecordBatch) error {
		rec.Retain()
		d.recs = append(d.recs, rec)
		return nil
	}}, RunOptions: pipeline.RunOptions{Workers: 1}}
	if _, err := pipeline.Run(context.Background(), cfg, []string{path}); err != nil {
		b.Fatal(err)
	}
	decodedOnce[format] = d
	return d
}

func BenchmarkEncoderOwn(b *testing.B) {
	for _, format := range []string{"canal-json", "maxwell-json", "ogg-json", "debezium-json"} {
		b.Run(format, func(b *testing.B) {
			d := decodedBatches(b, format)
			out := filepath.Join(b.TempDir(), "own.parquet")
			b.SetBytes(d.bytes)
			b.ResetTimer()
			for range b.N {
				w, err := writer.NewParquet(out, d.schema, writer.ParquetOptions{Concurrency: 1})
				if err != nil {
					b.Fatal(err)
				}
				for _, rec := range d.recs {
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

func BenchmarkEncoderPqarrow(b *testing.B) {
	for _, format := range []string{"canal-json", "maxwell-json", "ogg-json", "debezium-json"} {
		b.Run(format, func(b *testing.B) {
			d := decodedBatches(b, format)
			out := filepath.Join(b.TempDir(), "pqarrow.parquet")
			sch := d.recs[0].Schema()
			opts := []parquet.WriterProperty{
				parquet.WithCompression(compress.Codecs.Snappy),
				parquet.WithDictionaryDefault(false),
				parquet.WithDataPageVersion(parquet.DataPageV2),
				parquet.WithMaxRowGroupLength(128 << 10),
			}
			for _, f := range sch.Fields() {
				switch f.Type.ID() {
				case arrow.STRING, arrow.DICTIONARY:
					opts = append(opts, parquet.WithDictionaryFor(f.Name, true))
				case arrow.INT32, arrow.INT64, arrow.DATE32, arrow.TIMESTAMP, arrow.TIME32, arrow.TIME64:
					opts = append(opts, parquet.WithEncodingFor(f.Name, parquet.Encodings.DeltaBinaryPacked))
				}
			}
			props := parquet.NewWriterProperties(opts...)
			b.SetBytes(d.bytes)
			b.ResetTimer()
			for range b.N {
				fh, err := os.Create(out)
				if err != nil {
					b.Fatal(err)
				}
				w, err := pqarrow.NewFileWriter(sch, fh, props, pqarrow.NewArrowWriterProperties())
				if err != nil {
					b.Fatal(err)
				}
				for _, rec := range d.recs {
					if err := w.WriteBuffered(rec); err != nil {
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
