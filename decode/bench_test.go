package decode

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/internal/cdcgen"
)

// BenchmarkDecode decodes generated products changelogs (see cdcgen) into
// Arrow batches of 16384 rows: MB/s of input, rows/s, allocations.
var benchSize = 8 << 20

// benchInput generates benchSize bytes of format's changelog and returns
// them, split into lines, and a maker of decoders (default options) for it.
func benchInput(b *testing.B, format string) ([]byte, [][]byte, func() (*base, *arrowconv.Builder)) {
	return benchInputWith(b, format, false)
}

// benchInputWith is benchInput with producer semantics on or off.
func benchInputWith(b *testing.B, format string, producer bool) ([]byte, [][]byte, func() (*base, *arrowconv.Builder)) {
	data := cdcgen.Lines(format, 1, benchSize)
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	f, _ := Lookup(format)
	s, err := arrowconv.ParseColumns(cdcgen.SchemaFor(format))
	if err != nil {
		b.Fatal(err)
	}
	o, err := ParseOptions(f, nil, false)
	if err != nil {
		b.Fatal(err)
	}
	o.Producer, o.CaseInsensitive = producer, producer
	if err := o.Check(f); err != nil {
		b.Fatal(err)
	}
	return data, lines, func() (*base, *arrowconv.Builder) {
		bld := arrowconv.NewBuilder(arrowconv.NewPool(), s) // as the pipeline does: flushed buffers are reused
		d, err := New(f, s, o, bld)
		if err != nil {
			b.Fatal(err)
		}
		return d.(*base), bld
	}
}

func BenchmarkDecode(b *testing.B) { benchDecode(b, false) }

// BenchmarkDecodeProducer is BenchmarkDecode under producer semantics.
func BenchmarkDecodeProducer(b *testing.B) { benchDecode(b, true) }

func benchDecode(b *testing.B, producer bool) {
	for _, format := range []string{"canal-json", "maxwell-json", "ogg-json", "debezium-json"} {
		b.Run(format, func(b *testing.B) {
			data, lines, newDecoder := benchInputWith(b, format, producer)
			d, bld := newDecoder()
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

// BenchmarkDecodeShape decodes each shape of cdcgen (products, envelope,
// wide) in each format with its full schema (every metadata column of
// the envelope shape declared): the decoding share of a conversion per
// data shape.
func BenchmarkDecodeShape(b *testing.B) {
	for _, shape := range cdcgen.Shapes {
		for _, format := range []string{"canal-json", "maxwell-json", "ogg-json", "debezium-json"} {
			b.Run(shape+"/"+format, func(b *testing.B) {
				data, lines := shapeInput(b, format, shape)
				f, _ := Lookup(format)
				s, err := arrowconv.ParseColumns(cdcgen.SchemaForShape(format, shape))
				if err != nil {
					b.Fatal(err)
				}
				o, err := ParseOptions(f, nil, false)
				if err != nil {
					b.Fatal(err)
				}
				bld := arrowconv.NewBuilder(arrowconv.NewPool(), s) // as the pipeline does: flushed buffers are reused
				d, err := New(f, s, o, bld)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					for _, l := range lines {
						if _, err := d.Decode(l); err != nil {
							b.Fatal(fmt.Errorf("%s: %w", l, err))
						}
						if bld.Len() >= 16384 {
							bld.Flush().Release()
						}
					}
				}
			})
		}
	}
}

// shapeInput generates benchSize bytes of format's changelog in shape and
// returns them, and split into lines.
func shapeInput(b *testing.B, format, shape string) ([]byte, [][]byte) {
	data, err := cdcgen.ShapeLines(format, shape, 1, benchSize)
	if err != nil {
		b.Fatal(err)
	}
	return data, bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
}

// BenchmarkScanFloor validates every message of each shape with the
// scanner alone (skipFast: no capture, no conversion, no builders): the
// ceiling the scanner puts on decoding.
func BenchmarkScanFloor(b *testing.B) {
	for _, shape := range cdcgen.Shapes {
		for _, format := range []string{"canal-json", "maxwell-json", "ogg-json", "debezium-json"} {
			b.Run(shape+"/"+format, func(b *testing.B) {
				data, lines := shapeInput(b, format, shape)
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					for _, l := range lines {
						if _, ok := skipFast(l, 0, 0); !ok {
							b.Fatalf("skipFast rejects %s", l)
						}
					}
				}
			})
		}
	}
}

// BenchmarkDecodeShortcuts measures what the decoder's shortcuts (raw key
// prediction, the compact-row fast path, +U value reuse) save. The
// machines here drift in speed by tens of percent within a minute, so the
// two decoders take turns on the same input every iteration and the
// reported metric is the median of the per-iteration time ratios
// (without shortcuts / with), which the drift cancels out of.
func BenchmarkDecodeShortcuts(b *testing.B) {
	for _, format := range []string{"canal-json", "maxwell-json", "ogg-json", "debezium-json"} {
		b.Run(format, func(b *testing.B) {
			data, lines, newDecoder := benchInput(b, format)
			var runs [2]func()
			for k, plain := range []bool{false, true} {
				d, bld := newDecoder()
				d.plain = plain
				runs[k] = func() {
					for _, l := range lines {
						if _, err := d.Decode(l); err != nil {
							b.Fatal(err)
						}
						if bld.Len() >= 16384 {
							bld.Flush().Release()
						}
					}
				}
			}
			var ratios []float64
			b.SetBytes(2 * int64(len(data)))
			for b.Loop() {
				var el [2]time.Duration
				for k, run := range runs {
					start := time.Now()
					run()
					el[k] = time.Since(start)
				}
				ratios = append(ratios, float64(el[1])/float64(el[0]))
			}
			slices.Sort(ratios)
			b.ReportMetric(ratios[len(ratios)/2], "plain/shortcuts")
		})
	}
}

// BenchmarkEncode re-encodes decoded products changelogs into each format
// (Flink's encoding and --merge-updates): MB/s of output.
func BenchmarkEncode(b *testing.B) {
	src := cdcgen.Lines("debezium-json", 1, 8<<20)
	lines := bytes.Split(bytes.TrimSuffix(src, []byte("\n")), []byte("\n"))
	dbz, _ := Lookup("debezium-json")
	s, err := arrowconv.ParseColumns(cdcgen.Schema)
	if err != nil {
		b.Fatal(err)
	}
	bld := arrowconv.NewBuilder(memory.NewGoAllocator(), s)
	d, _ := New(dbz, s, Options{}, bld)
	for _, l := range lines {
		if _, err := d.Decode(l); err != nil {
			b.Fatal(err)
		}
	}
	rec := bld.Flush()
	defer rec.Release()
	for _, format := range []string{"canal-json", "maxwell-json", "ogg-json", "debezium-json", "json"} {
		for _, merge := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/merge=%v", format, merge), func(b *testing.B) {
				f, _ := Lookup(format)
				o, _ := ParseOptions(f, nil, true)
				enc, err := NewEncoder(f, s, o, EncodeOptions{MergeUpdates: merge})
				if err != nil {
					b.Fatal(err)
				}
				var out []byte
				b.ReportAllocs()
				for b.Loop() {
					if out, err = enc.AppendBatch(out[:0], rec); err != nil {
						b.Fatal(err)
					}
					out = enc.Finish(out)
					b.SetBytes(int64(len(out)))
				}
				b.ReportMetric(float64(int64(b.N)*rec.NumRows())/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}

// BenchmarkUnescapedShortcut: decoding with and without setMsg's search
// for the message's first backslash, in turns on the same input (the
// machine's drift cancels); the metric is the time without it over the
// time with it.
func BenchmarkUnescapedShortcut(b *testing.B) {
	for _, shape := range cdcgen.Shapes {
		for _, format := range []string{"canal-json", "maxwell-json", "ogg-json", "debezium-json"} {
			b.Run(shape+"/"+format, func(b *testing.B) {
				data, lines := shapeInput(b, format, shape)
				f, _ := Lookup(format)
				s, err := arrowconv.ParseColumns(cdcgen.SchemaForShape(format, shape))
				if err != nil {
					b.Fatal(err)
				}
				o, err := ParseOptions(f, nil, false)
				if err != nil {
					b.Fatal(err)
				}
				var runs [2]func()
				for k := range runs {
					bld := arrowconv.NewBuilder(arrowconv.NewPool(), s) // as the pipeline does: flushed buffers are reused
					d, err := New(f, s, o, bld)
					if err != nil {
						b.Fatal(err)
					}
					on := k == 0
					runs[k] = func() {
						unescapedFast = on
						defer func() { unescapedFast = true }()
						for _, l := range lines {
							if _, err := d.Decode(l); err != nil {
								b.Fatal(err)
							}
							if bld.Len() >= 16384 {
								bld.Flush().Release()
							}
						}
					}
				}
				var ratios []float64
				b.SetBytes(2 * int64(len(data)))
				for b.Loop() {
					var el [2]time.Duration
					for k, run := range runs {
						start := time.Now()
						run()
						el[k] = time.Since(start)
					}
					ratios = append(ratios, float64(el[1])/float64(el[0]))
				}
				slices.Sort(ratios)
				b.ReportMetric(ratios[len(ratios)/2], "off/on")
			})
		}
	}
}
