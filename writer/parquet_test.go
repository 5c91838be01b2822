package writer

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// TestParquetReadBack writes random rows (dictionary strings and DELTA_BINARY_PACKED integers, or PLAIN) over many small pages and row
// groups, then reads the file with parquet-go's reader (independent of
// this writer's encoding code): every value with its levels, the chunk
// statistics, and the page indexes, against what the test computes from
// its own input.
//
// With a small dictSample, dictionary leaves write their index pages as
// they fill (streamPages), and some fall back to PLAIN after that: chunks
// of index pages, then the dictionary page, then PLAIN pages.
func TestParquetReadBack(t *testing.T) {
	for _, c := range []struct {
		dict     bool
		sample   int
		maxBatch int // small batches: dictionaries overflow after pages were streamed
	}{{false, dictSample, 900}, {true, dictSample, 900}, {true, 100, 900}, {true, 100, 40}} {
		var files [][]byte
		for _, conc := range []int{1, 4} {
			t.Run(fmt.Sprintf("dictionary=%v,sample=%d,batch=%d,concurrency=%d", c.dict, c.sample, c.maxBatch, conc), func(t *testing.T) {
				defer func(p, d, m, s int) { pageBytes, dictLimitBytes, minConcurrentRows, dictSample = p, d, m, s }(pageBytes, dictLimitBytes, minConcurrentRows, dictSample)
				pageBytes, dictLimitBytes = 512, 1200 // many pages; some row groups keep their dictionary, others fall back to PLAIN mid-chunk
				minConcurrentRows = 1                 // columns encoded concurrently however small the batch
				dictSample = c.sample
				files = append(files, testParquetReadBack(t, c.dict, conc, c.maxBatch))
			})
		}
		// Columns encoded concurrently give the same file, byte for byte.
		if len(files) == 2 && !bytes.Equal(files[0], files[1]) {
			t.Errorf("dictionary=%v, sample=%d, batch=%d: concurrency 4 wrote a different file than concurrency 1", c.dict, c.sample, c.maxBatch)
		}
	}
}

// tval is one expected leaf value: rep and def levels and, when defined,
// its PLAIN bytes (byte arrays without length) and an ordering key.
type tval struct {
	rep, def int
	null     bool
	plain    []byte
	nan      bool
}

func testParquetReadBack(t *testing.T, dict bool, concurrency, maxBatch int) []byte {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s, err := arrowconv.ParseColumns("i BIGINT, s STRING, d DOUBLE, dec DECIMAL(30, 3), b BOOLEAN, l ARRAY<STRING>")
	if err != nil {
		t.Fatal(err)
	}
	bld := arrowconv.NewBuilder(mem, s)
	defer bld.Release()
	rng := rand.New(rand.NewPCG(1, 2))
	const rows, rgRows, leaves = 3000, 700, 7
	strs := []string{"", "a", "b", "zz", "\xff\xfe", "a long string that is longer than sixteen bytes", "m"}
	// want[row][leaf] are the leaf values of each row.
	want := make([][leaves][]tval, rows)
	le64 := func(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
	w, err := NewParquet(filepath.Join(t.TempDir(), "out.parquet"), s, ParquetOptions{RowGroupRows: rgRows, PlainStrings: !dict, PlainIntegers: !dict, Concurrency: concurrency, Metadata: map[string]string{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	path := w.file.path
	for n := 0; n < rows; {
		batch := min(rows-n, 1+rng.IntN(maxBatch))
		for range batch {
			r := &want[n]
			kind := arrowconv.RowKind(rng.IntN(4))
			bld.AppendKind(kind)
			r[0] = []tval{{plain: []byte(kind.String())}}
			if rng.IntN(5) > 0 {
				v := rng.Int64N(2000) - 1000
				if rng.IntN(20) == 0 { // deltas that wrap around
					v = []int64{math.MinInt64, math.MaxInt64}[rng.IntN(2)]
				}
				bld.Column(0).(*arrowconv.FixedCol[int64]).Append(v)
				r[1] = []tval{{def: 1, plain: le64(uint64(v))}}
			} else {
				bld.Column(0).AppendNull()
				r[1] = []tval{{null: true}}
			}
			if rng.IntN(5) > 0 {
				v := strs[rng.IntN(len(strs))]
				if rng.IntN(3) == 0 {
					v = fmt.Sprintf("u%d", n) // unique values grow the dictionary
				}
				bld.Column(1).(*arrowconv.BytesCol).AppendString(v)
				r[2] = []tval{{def: 1, plain: []byte(v)}}
			} else {
				bld.Column(1).AppendNull()
				r[2] = []tval{{null: true}}
			}
			if rng.IntN(5) > 0 {
				v := []float64{math.NaN(), 0, math.Copysign(0, -1), 1.5, -2.25, math.Inf(1)}[rng.IntN(6)]
				if rng.IntN(2) == 0 {
					v = rng.NormFloat64()
				}
				bld.Column(2).(*arrowconv.FixedCol[float64]).Append(v)
				r[3] = []tval{{def: 1, plain: le64(math.Float64bits(v)), nan: v != v}}
			} else {
				bld.Column(2).AppendNull()
				r[3] = []tval{{null: true}}
			}
			if rng.IntN(5) > 0 {
				v := new(big.Int).Mul(big.NewInt(rng.Int64N(1e12)-5e11), big.NewInt(1e12))
				num, _ := decimal128.FromString(v.String(), 38, 0)
				bld.Column(3).(*arrowconv.FixedCol[decimal128.Num]).Append(num)
				r[4] = []tval{{def: 1, plain: twosComplement(v, 13)}}
			} else {
				bld.Column(3).AppendNull()
				r[4] = []tval{{null: true}}
			}
			if rng.IntN(5) > 0 {
				v := rng.IntN(2) == 0
				bld.Column(4).(*arrowconv.BoolCol).Append(v)
				b := byte(0)
				if v {
					b = 1
				}
				r[5] = []tval{{def: 1, plain: []byte{b}}}
			} else {
				bld.Column(4).AppendNull()
				r[5] = []tval{{null: true}}
			}
			switch lc := bld.Column(5).(*arrowconv.ListCol); rng.IntN(4) {
			case 0:
				lc.AppendNull()
				r[6] = []tval{{null: true}}
			case 1:
				lc.Start()
				r[6] = []tval{{def: 1, null: true}} // empty list
			default:
				lc.Start()
				for k := range 1 + rng.IntN(3) {
					e := strs[rng.IntN(len(strs))]
					lc.Child.(*arrowconv.BytesCol).AppendString(e)
					r[6] = append(r[6], tval{rep: min(k, 1), def: 3, plain: []byte(e)})
				}
			}
			n++
		}
		rec := bld.Flush()
		err := w.Write(context.Background(), rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	pf := openParquet(t, path)
	md := pf.Metadata()
	if md.NumRows != rows || len(md.RowGroups) != (rows+rgRows-1)/rgRows {
		t.Fatalf("%d rows in %d row groups", md.NumRows, len(md.RowGroups))
	}
	if len(md.KeyValueMetadata) != 1 || md.KeyValueMetadata[0].Key != "k" || md.KeyValueMetadata[0].Value != "v" {
		t.Errorf("key/value metadata %v", md.KeyValueMetadata)
	}
	// The BIGINT column's chunks are DELTA_BINARY_PACKED, or PLAIN.
	for g, rg := range md.RowGroups {
		want := format.DeltaBinaryPacked
		if !dict {
			want = format.Plain
		}
		if enc := rg.Columns[1].MetaData.Encoding; !slices.Contains(enc, want) {
			t.Errorf("row group %d: BIGINT chunk encodings %v, want %v among them", g, enc, want)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first, multiPage := 0, 0
	for g, rg := range pf.RowGroups() {
		n := int(rg.NumRows())
		group := want[first : first+n]
		for c, cc := range rg.ColumnChunks() {
			got := chunkValues(t, cc, fmt.Sprintf("row group %d column %d", g, c))
			var exp []tval
			for _, r := range group {
				exp = append(exp, r[c]...)
			}
			if len(got) != len(exp) {
				t.Fatalf("row group %d column %d: %d values, want %d", g, c, len(got), len(exp))
			}
			for k, v := range got {
				e := exp[k]
				if v.RepetitionLevel() != e.rep || v.DefinitionLevel() != e.def && !e.null || v.IsNull() != e.null ||
					!e.null && !bytes.Equal(v.Bytes(), e.plain) {
					t.Fatalf("row group %d column %d value %d: got %v (r%d d%d), want %+v", g, c, k, v, v.RepetitionLevel(), v.DefinitionLevel(), e)
				}
			}
			// Chunk statistics.
			stats := md.RowGroups[g].Columns[c].MetaData.Statistics
			lo, hi, nulls := expectBounds(c, exp)
			if stats.NullCount != nulls || !bytes.Equal(stats.MinValue, lo) || !bytes.Equal(stats.MaxValue, hi) {
				t.Errorf("row group %d column %d: statistics nulls %d min %x max %x, want %d %x %x", g, c, stats.NullCount, stats.MinValue, stats.MaxValue, nulls, lo, hi)
			}
			// Page indexes: each page's rows hold its null count and lie
			// within its bounds, which are exact unless truncated.
			oi, err := cc.OffsetIndex()
			if err != nil {
				t.Fatal(err)
			}
			ci, err := cc.ColumnIndex()
			if err != nil {
				if c == 3 {
					continue // NaN-only pages leave the DOUBLE column without a column index
				}
				t.Fatalf("row group %d column %d: %v", g, c, err)
			}
			if oi.NumPages() > 1 {
				multiPage++
			}
			checkPageLocations(t, data, md.RowGroups[g].Columns[c].MetaData, oi, fmt.Sprintf("row group %d column %d", g, c))
			if ci.NumPages() != oi.NumPages() {
				t.Errorf("row group %d column %d: %d column-index pages, %d offset-index pages", g, c, ci.NumPages(), oi.NumPages())
			}
			for p := range oi.NumPages() {
				from, to := int(oi.FirstRowIndex(p)), n
				if p+1 < oi.NumPages() {
					to = int(oi.FirstRowIndex(p + 1))
				}
				var pv []tval
				for _, r := range group[from:to] {
					pv = append(pv, r[c]...)
				}
				lo, hi, nulls := expectBounds(c, pv)
				gotLo, gotHi := ci.MinValue(p).Bytes(), ci.MaxValue(p).Bytes()
				if ci.NullCount(p) != nulls || ci.NullPage(p) != (int(nulls) == len(pv)) {
					t.Errorf("row group %d column %d page %d: %d nulls (null page %v), want %d of %d", g, c, p, ci.NullCount(p), ci.NullPage(p), nulls, len(pv))
				}
				if c == 2 || c == 6 { // strings: truncated to 16 bytes, still bounds
					if len(gotLo) > 16 || len(gotHi) > 16 || !strings.HasPrefix(string(lo), string(gotLo)) || bytes.Compare(gotHi, hi) < 0 {
						t.Errorf("row group %d column %d page %d: bounds %q %q do not cover %q %q", g, c, p, gotLo, gotHi, lo, hi)
					}
				} else if !bytes.Equal(gotLo, lo) || !bytes.Equal(gotHi, hi) {
					t.Errorf("row group %d column %d page %d: bounds %x %x, want %x %x", g, c, p, gotLo, gotHi, lo, hi)
				}
			}
		}
		first += n
	}
	if multiPage < 10 {
		t.Errorf("only %d column chunks have several pages", multiPage)
	}
	return data
}

// pageHeaderAt decodes the page header at off into h and returns its length.
func pageHeaderAt(data []byte, off int64, h *format.PageHeader) (int64, error) {
	r := bytes.NewReader(data[off:])
	err := thrift.NewDecoder(new(thrift.CompactProtocol).NewReader(r)).Decode(h)
	return int64(len(data)) - off - int64(r.Len()), err
}

// checkPageLocations checks a chunk's offset index against the file: the
// first location is the chunk's first data page, each is a data page
// header whose page ends where the next begins, and the last ends the
// chunk (after a dictionary page at the chunk's start, when it has one).
func checkPageLocations(t *testing.T, data []byte, md format.ColumnMetaData, oi parquet.OffsetIndex, what string) {
	t.Helper()
	start := md.DataPageOffset
	if md.DictionaryPageOffset != 0 {
		start = md.DictionaryPageOffset
		var h format.PageHeader
		if _, err := pageHeaderAt(data, start, &h); err != nil || h.Type != format.DictionaryPage {
			t.Errorf("%s: no dictionary page at %d (%v, %v)", what, start, h.Type, err)
		}
	}
	next := md.DataPageOffset
	for p := range oi.NumPages() {
		off, size := oi.Offset(p), int64(oi.CompressedPageSize(p))
		if off != next {
			t.Errorf("%s page %d: at %d, want %d", what, p, off, next)
			return
		}
		var h format.PageHeader
		n, err := pageHeaderAt(data, off, &h)
		if err != nil || h.Type != format.DataPageV2 || n+int64(h.CompressedPageSize) != size {
			t.Errorf("%s page %d: no data page of %d bytes at %d (%v, %d+%d, %v)", what, p, size, off, h.Type, n, h.CompressedPageSize, err)
			return
		}
		next = off + size
	}
	if next != start+md.TotalCompressedSize {
		t.Errorf("%s: pages end at %d, the chunk at %d", what, next, start+md.TotalCompressedSize)
	}
}

// expectBounds computes the Parquet min/max (PLAIN) and null count of
// leaf c's values in the leaf's sort order, NaN excluded, zero bounds
// signed as the format asks.
func expectBounds(c int, vals []tval) (lo, hi []byte, nulls int64) {
	less := func(a, b []byte) bool { return bytes.Compare(a, b) < 0 }
	switch c {
	case 1: // INT64
		less = func(a, b []byte) bool {
			return int64(binary.LittleEndian.Uint64(a)) < int64(binary.LittleEndian.Uint64(b))
		}
	case 3: // DOUBLE
		less = func(a, b []byte) bool {
			return math.Float64frombits(binary.LittleEndian.Uint64(a)) < math.Float64frombits(binary.LittleEndian.Uint64(b))
		}
	case 4: // DECIMAL as two's complement
		less = func(a, b []byte) bool { return fromTwosComplement(a).Cmp(fromTwosComplement(b)) < 0 }
	}
	for _, v := range vals {
		if v.null {
			nulls++
			continue
		}
		if v.nan {
			continue
		}
		if lo == nil || less(v.plain, lo) {
			lo = v.plain
		}
		if hi == nil || less(hi, v.plain) {
			hi = v.plain
		}
	}
	if c == 3 && lo != nil {
		if math.Float64frombits(binary.LittleEndian.Uint64(lo)) == 0 {
			lo = binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.Copysign(0, -1)))
		}
		if math.Float64frombits(binary.LittleEndian.Uint64(hi)) == 0 {
			hi = make([]byte, 8)
		}
	}
	return lo, hi, nulls
}

func twosComplement(v *big.Int, n int) []byte {
	x := new(big.Int).Set(v)
	if x.Sign() < 0 {
		x.Add(x, new(big.Int).Lsh(big.NewInt(1), uint(8*n)))
	}
	return x.FillBytes(make([]byte, n))
}

func fromTwosComplement(b []byte) *big.Int {
	x := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return x
}

// TestFloatBounds checks the statistics rules for floating point: NaN is
// never a bound, a zero min is written -0 and a zero max +0.
func TestFloatBounds(t *testing.T) {
	negZero := math.Copysign(0, -1)
	for _, c := range []struct {
		in     []float64
		lo, hi float64
		has    bool
	}{
		{[]float64{0}, negZero, 0, true},
		{[]float64{negZero}, negZero, 0, true},
		{[]float64{math.NaN(), 3, negZero, math.NaN()}, negZero, 3, true},
		{[]float64{-1, 0}, -1, 0, true},
		{[]float64{math.NaN()}, 0, 0, false},
	} {
		var b bounds
		for _, v := range c.in {
			b.float(v)
		}
		if b.has != c.has {
			t.Errorf("%v: has bounds %v", c.in, b.has)
			continue
		}
		if !b.has {
			continue
		}
		lo, hi := b.encode(format.Double)
		for _, k := range []struct {
			got  []byte
			want float64
		}{{lo, c.lo}, {hi, c.hi}} {
			if g := binary.LittleEndian.Uint64(k.got); g != math.Float64bits(k.want) {
				t.Errorf("%v: bound %v, want %v", c.in, math.Float64frombits(g), k.want)
			}
		}
		lo32, hi32 := b.encode(format.Float)
		if math.Float32frombits(binary.LittleEndian.Uint32(lo32)) != float32(c.lo) || math.Float32frombits(binary.LittleEndian.Uint32(hi32)) != float32(c.hi) ||
			math.Signbit(float64(math.Float32frombits(binary.LittleEndian.Uint32(lo32)))) != math.Signbit(c.lo) {
			t.Errorf("%v: FLOAT bounds %x %x", c.in, lo32, hi32)
		}
	}
}

// TestParquetLongValues: a value larger than a page comes back whole,
// chunk statistics leave out bounds longer than 4 KiB, and the page index
// keeps 16-byte bounds.
func TestParquetLongValues(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s, err := arrowconv.ParseColumns("s STRING, short STRING")
	if err != nil {
		t.Fatal(err)
	}
	bld := arrowconv.NewBuilder(mem, s)
	defer bld.Release()
	long := strings.Repeat("x", 3<<20)
	for i, v := range []string{"a", long, "b" + long[:5000]} {
		bld.AppendKind(arrowconv.Insert)
		bld.Column(0).(*arrowconv.BytesCol).AppendString(v)
		bld.Column(1).(*arrowconv.BytesCol).AppendString(fmt.Sprint(i))
	}
	path := filepath.Join(t.TempDir(), "long.parquet")
	w, err := NewParquet(path, s, ParquetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec := bld.Flush()
	err = w.Write(context.Background(), rec)
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	pf := openParquet(t, path)
	cols := pf.Metadata().RowGroups[0].Columns
	if s := cols[1].MetaData.Statistics; s.MinValue != nil || s.MaxValue != nil || s.NullCount != 0 {
		t.Errorf("long strings: statistics %q..%q nulls %d, want no bounds", s.MinValue, s.MaxValue, s.NullCount)
	}
	if s := cols[2].MetaData.Statistics; string(s.MinValue) != "0" || string(s.MaxValue) != "2" {
		t.Errorf("short strings: statistics %q..%q", s.MinValue, s.MaxValue)
	}
	ci, err := pf.RowGroups()[0].ColumnChunks()[1].ColumnIndex()
	if err != nil {
		t.Fatal(err)
	}
	if lo, hi := ci.MinValue(0).Bytes(), ci.MaxValue(0).Bytes(); string(lo) != "a" || string(hi) != strings.Repeat("x", 15)+"y" {
		t.Errorf("page index bounds %q %q, want \"a\" and 15 x then y (the max truncated, its last byte incremented)", lo, hi)
	}
	rows := make([]parquet.Row, 3)
	rr := pf.RowGroups()[0].Rows()
	defer rr.Close()
	n, _ := rr.ReadRows(rows)
	if n != 3 || rows[1][1].String() != long {
		t.Errorf("read %d rows; the long value did not come back whole", n)
	}
}

// openParquet opens a file with parquet-go's reader; it is closed when the
// test ends.
func openParquet(t *testing.T, path string) *parquet.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	return pf
}

// TestCodecsCompress: every codec makes a compressible file smaller than
// no compression does (gzip once wrote level 0, "store", and grew it).
func TestCodecsCompress(t *testing.T) {
	s, err := arrowconv.ParseColumns("id BIGINT, name STRING, note STRING")
	if err != nil {
		t.Fatal(err)
	}
	sizes := map[string]int64{}
	for _, codec := range []string{"none", "snappy", "zstd", "gzip"} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		bld := arrowconv.NewBuilder(mem, s)
		for i := range 20000 {
			bld.AppendKind(arrowconv.Insert)
			bld.Column(0).(*arrowconv.FixedCol[int64]).Append(int64(i * 7919 % 100003))
			bld.Column(1).(*arrowconv.BytesCol).AppendString(fmt.Sprintf("name-%d", i))
			bld.Column(2).(*arrowconv.BytesCol).AppendString(strings.Repeat("the same words again and again ", 1+i%3))
		}
		rec := bld.Flush()
		path := filepath.Join(t.TempDir(), codec+".parquet")
		w, err := NewParquet(path, s, ParquetOptions{Compression: codec, PlainStrings: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		bld.Release()
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		mem.AssertSize(t, 0)
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		sizes[codec] = st.Size()
	}
	for _, codec := range []string{"snappy", "zstd", "gzip"} {
		if sizes[codec] >= sizes["none"]*3/4 {
			t.Errorf("%s: %d bytes, none: %d; want clearly smaller", codec, sizes[codec], sizes["none"])
		}
	}
}

// TestFooterForJavaReaders reads the footer with arrow-go's metadata
// reader: a string chunk whose minimum is "" still has both bounds
// (parquet-java prunes only with both), created_by parses as the spec's
// "<app> version <v> (build <hash>)", only FIXED_LEN_BYTE_ARRAY leaves
// carry a type length, and every chunk has encoding_stats.
func TestFooterForJavaReaders(t *testing.T) {
	s, err := arrowconv.ParseColumns("id INT, s STRING, d DECIMAL(30, 2)")
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, plain := range []bool{false, true} {
		bld := arrowconv.NewBuilder(mem, s)
		for i, v := range []string{"", "b", "a"} {
			bld.AppendKind(arrowconv.Insert)
			bld.Column(0).(*arrowconv.FixedCol[int32]).Append(int32(i))
			bld.Column(1).(*arrowconv.BytesCol).AppendString(v)
			bld.Column(2).(*arrowconv.FixedCol[decimal128.Num]).Append(decimal128.FromI64(int64(i)))
		}
		rec := bld.Flush()
		path := filepath.Join(t.TempDir(), "f.parquet")
		w, err := NewParquet(path, s, ParquetOptions{PlainStrings: plain, CreatedBy: "cdcetl version 0.2.0 (build 1a2b3c4d5e6f)"})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		bld.Release()
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		rdr, err := file.OpenParquetFile(path, false)
		if err != nil {
			t.Fatal(err)
		}
		md := rdr.MetaData()
		if v := md.WriterVersion(); v.App != "cdcetl" || v.Build != "1a2b3c4d5e6f" || v.Version.Major != 0 || v.Version.Minor != 2 {
			t.Errorf("created_by %q parsed as %+v", md.GetCreatedBy(), v)
		}
		rg := md.RowGroup(0)
		for c := 0; c < rg.NumColumns(); c++ {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			if len(cc.EncodingStats()) == 0 {
				t.Errorf("plain=%v: column %s has no encoding_stats", plain, cc.PathInSchema())
			}
		}
		cc, _ := rg.ColumnChunk(2) // s
		st, err := cc.Statistics()
		if err != nil || st == nil || !st.HasMinMax() {
			t.Fatalf("plain=%v: string column statistics %v, %v: want min and max", plain, st, err)
		}
		bs := st.(*metadata.ByteArrayStatistics)
		if string(bs.Min()) != "" || string(bs.Max()) != "b" {
			t.Errorf("plain=%v: bounds %q..%q, want \"\"..\"b\"", plain, bs.Min(), bs.Max())
		}
		rdr.Close()

		f, _ := os.Open(path)
		info, _ := f.Stat()
		pf, err := parquet.OpenFile(f, info.Size())
		if err != nil {
			t.Fatal(err)
		}
		// The raw footer: arrow-go tolerates a missing min_value, parquet-java
		// does not, so both must be there.
		if raw := pf.Metadata().RowGroups[0].Columns[2].MetaData.Statistics; raw.MinValue == nil || raw.MaxValue == nil {
			t.Errorf("plain=%v: string chunk min_value %v, max_value %q: want both set", plain, raw.MinValue, raw.MaxValue)
		}
		for _, el := range pf.Metadata().Schema {
			if el.TypeLength.Valid && (!el.Type.Valid || el.Type.V != format.FixedLenByteArray) {
				t.Errorf("%s: type_length %d on a %v column", el.Name, el.TypeLength.V, el.Type.V)
			}
		}
		f.Close()
	}
}

// newTestParquet is a writer of the columns to a file in a test directory,
// and a builder of their batches (released when the test ends).
func newTestParquet(t *testing.T, columns string) (*Parquet, *arrowconv.Builder, string) {
	t.Helper()
	s, err := arrowconv.ParseColumns(columns)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "f.parquet")
	w, err := NewParquet(path, s, ParquetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b := arrowconv.NewBuilder(memory.DefaultAllocator, s)
	t.Cleanup(b.Release)
	return w, b, path
}

// writeBuilt writes the rows built so far to w.
func writeBuilt(t testing.TB, w *Parquet, b *arrowconv.Builder) {
	t.Helper()
	rec := b.Flush()
	defer rec.Release()
	if err := w.Write(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
}

// TestFlushRowGroup: a writer told to end its row group early gives its
// buffered bytes back and writes a file with the row groups it was told.
func TestFlushRowGroup(t *testing.T) {
	w, b, path := newTestParquet(t, "id BIGINT, name STRING")
	for part := 0; part < 3; part++ {
		for i := 0; i < 1000; i++ {
			b.AppendKind(arrowconv.Insert)
			b.Column(0).(*arrowconv.FixedCol[int64]).Append(int64(part*1000 + i))
			b.Column(1).(*arrowconv.BytesCol).Append([]byte(fmt.Sprintf("name %d", i)))
		}
		writeBuilt(t, w, b)
		before := w.Buffered()
		if err := w.FlushRowGroup(); err != nil {
			t.Fatal(err)
		}
		if after := w.Buffered(); before == 0 || after >= before {
			t.Errorf("buffered %d before, %d after ending the row group", before, after)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(pf.RowGroups()); n != 3 || pf.NumRows() != 3000 {
		t.Errorf("%d row groups, %d rows; want 3, 3000", n, pf.NumRows())
	}
}

// TestFlatListsMatchEmitter writes lists and maps of primitives (NULL
// lists, empty ones, NULL elements and values) with the column-at-a-time
// writer and with the row-at-a-time emitter: the files are the same, byte
// for byte.
func TestFlatListsMatchEmitter(t *testing.T) {
	// lb and mn have no NULL elements or values: their rows' levels are
	// set at once.
	s, err := arrowconv.ParseColumns("id BIGINT, ls ARRAY<STRING>, li ARRAY<INT>, lb ARRAY<BIGINT>, ms MAP<STRING, STRING>, mi MAP<STRING, BIGINT>, mn MAP<STRING, INT>, bag MULTISET<STRING>, deep ARRAY<ARRAY<INT>>")
	if err != nil {
		t.Fatal(err)
	}
	write := func() []byte {
		mem := memory.NewGoAllocator()
		bld := arrowconv.NewBuilder(mem, s)
		defer bld.Release()
		rng := rand.New(rand.NewPCG(9, 9))
		path := filepath.Join(t.TempDir(), "f.parquet")
		w, err := NewParquet(path, s, ParquetOptions{RowGroupRows: 300, Concurrency: 1, PlainStrings: true}) // the emitter writes nested strings PLAIN
		if err != nil {
			t.Fatal(err)
		}
		for r := 0; r < 1000; r++ {
			bld.AppendKind(arrowconv.Insert)
			bld.Column(0).(*arrowconv.FixedCol[int64]).Append(int64(r))
			for c := 1; c < len(s.Columns); c++ {
				switch col := bld.Column(c).(type) {
				case *arrowconv.ListCol:
					if rng.IntN(5) == 0 {
						col.AppendNull()
						continue
					}
					col.Start()
					for k := rng.IntN(4); k > 0; k-- {
						switch child := col.Child.(type) {
						case *arrowconv.BytesCol:
							if rng.IntN(4) == 0 {
								child.AppendNull()
							} else {
								child.AppendString(fmt.Sprint("v", rng.IntN(9)))
							}
						case *arrowconv.FixedCol[int32]:
							if rng.IntN(4) == 0 {
								child.AppendNull()
							} else {
								child.Append(int32(rng.IntN(100)))
							}
						case *arrowconv.FixedCol[int64]:
							child.Append(int64(rng.IntN(1000)))
						case *arrowconv.ListCol:
							child.Start()
							for m := rng.IntN(3); m > 0; m-- {
								child.Child.(*arrowconv.FixedCol[int32]).Append(int32(m))
							}
						}
					}
				case *arrowconv.MapCol:
					if rng.IntN(5) == 0 {
						col.AppendNull()
						continue
					}
					col.Start()
					for k := rng.IntN(4); k > 0; k-- {
						col.Keys.(*arrowconv.BytesCol).AppendString(fmt.Sprint("k", k))
						switch v := col.Values.(type) {
						case *arrowconv.BytesCol:
							if rng.IntN(4) == 0 {
								v.AppendNull()
							} else {
								v.AppendString(fmt.Sprint("x", rng.IntN(9)))
							}
						case *arrowconv.FixedCol[int64]:
							if rng.IntN(4) == 0 {
								v.AppendNull()
							} else {
								v.Append(int64(rng.IntN(1000)))
							}
						case *arrowconv.FixedCol[int32]:
							v.Append(int32(1 + rng.IntN(3)))
						}
					}
				}
			}
			if bld.Len() == 250 {
				flushTo(t, w, bld)
			}
		}
		flushTo(t, w, bld)
		return closeRead(t, w, path)
	}
	flat := write()
	flatLists = false
	defer func() { flatLists = true }()
	emitted := write()
	if !bytes.Equal(flat, emitted) {
		t.Fatalf("the column-at-a-time lists and maps wrote a different file (%d bytes) than the emitter (%d bytes)", len(flat), len(emitted))
	}
}

// TestRowGroupBytes: a row group ends once its pages hold rowGroupBytes,
// however few rows it has.
func TestRowGroupBytes(t *testing.T) {
	defer func(b int) { rowGroupBytes = b }(rowGroupBytes)
	rowGroupBytes = 64 << 10
	s, err := arrowconv.ParseColumns("id BIGINT, s STRING")
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewGoAllocator()
	bld := arrowconv.NewBuilder(mem, s)
	defer bld.Release()
	path := filepath.Join(t.TempDir(), "rg.parquet")
	w, err := NewParquet(path, s, ParquetOptions{PlainStrings: true})
	if err != nil {
		t.Fatal(err)
	}
	for r := range 20000 {
		bld.AppendKind(arrowconv.Insert)
		bld.Column(0).(*arrowconv.FixedCol[int64]).Append(int64(r))
		bld.Column(1).(*arrowconv.BytesCol).AppendString(fmt.Sprintf("%d-%s", r, strings.Repeat("x", r%64)))
		if bld.Len() == 500 {
			rec := bld.Flush()
			if err := w.Write(context.Background(), rec); err != nil {
				t.Fatal(err)
			}
			rec.Release()
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	if n := rdr.NumRowGroups(); n < 5 || rdr.NumRows() != 20000 {
		t.Fatalf("%d row groups of %d rows: the byte bound did not end row groups", n, rdr.NumRows())
	}
}

// TestPageBudget: a wide table's columns share pageBudget of pages; a
// narrow one keeps full-size pages.
func TestPageBudget(t *testing.T) {
	var cols []string
	for i := range 100 {
		cols = append(cols, fmt.Sprintf("c%d BIGINT", i))
	}
	for _, c := range []struct {
		cols []string
		want int
	}{{cols, max(minPageBytes, pageBudget/101)}, {cols[:5], pageBytes}} {
		s, err := arrowconv.ParseColumns(strings.Join(c.cols, ", "))
		if err != nil {
			t.Fatal(err)
		}
		w, err := NewParquet(filepath.Join(t.TempDir(), "w.parquet"), s, ParquetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range w.leaves {
			if l.pageBytes != c.want {
				t.Fatalf("%d columns: a page of %d bytes, want %d", len(c.cols), l.pageBytes, c.want)
			}
		}
		w.Abort()
	}
}

// TestShrink: a writer told to give its room back ends its row group,
// keeps next to nothing, and goes on writing: every row reads back, in
// the row groups it was told, its dictionaries whole.
func TestShrink(t *testing.T) {
	w, b, path := newTestParquet(t, "id BIGINT, name STRING, tag STRING, d DECIMAL(30, 2)")
	for part := range 3 {
		for i := range 5000 {
			b.AppendKind(arrowconv.Insert)
			b.Column(0).(*arrowconv.FixedCol[int64]).Append(int64(part*5000 + i))
			b.Column(1).(*arrowconv.BytesCol).Append([]byte(fmt.Sprintf("name %d", i)))
			b.Column(2).(*arrowconv.BytesCol).Append([]byte(fmt.Sprintf("tag %d", i%7)))
			b.Column(3).(*arrowconv.FixedCol[decimal128.Num]).Append(decimal128.FromI64(int64(i)))
		}
		writeBuilt(t, w, b)
		before := w.Retained()
		if err := w.Shrink(); err != nil {
			t.Fatal(err)
		}
		if after := w.Retained(); before == 0 || after != 0 || w.Buffered() != 0 {
			t.Errorf("part %d: %d bytes of room before, %d after, %d buffered", part, before, after, w.Buffered())
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	pf := openParquet(t, path)
	if n := len(pf.RowGroups()); n != 3 || pf.NumRows() != 15000 {
		t.Fatalf("%d row groups, %d rows; want 3, 15000", n, pf.NumRows())
	}
	for g, rg := range pf.RowGroups() {
		rows := rg.Rows()
		buf := make([]parquet.Row, 5000)
		n, _ := rows.ReadRows(buf)
		rows.Close()
		if n != 5000 {
			t.Fatalf("row group %d: %d rows", g, n)
		}
		for i, r := range buf[:n] {
			if id, name, tag := r[1].Int64(), r[2].String(), r[3].String(); id != int64(g*5000+i) || name != fmt.Sprintf("name %d", i) || tag != fmt.Sprintf("tag %d", i%7) {
				t.Fatalf("row group %d row %d: %v", g, i, r)
			}
		}
	}
}

// TestStringMapsMatch: maps of STRING keys written by stringMapFor and by
// the general map writer give the same file, byte for byte, with the
// dictionaries on (the default), NULL and empty maps, NULL values, values
// that repeat and that do not, and keys as the row before had them or not.
func TestStringMapsMatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 14))
	data := make([]byte, 40000)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	checkStringMaps(t, data)
}

// FuzzStringMaps is TestStringMapsMatch's twin over any maps: the input's
// bytes choose NULL and empty maps, entry counts, NULL values, and values.
func FuzzStringMaps(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 200, 201, 7, 7, 7})
	f.Add(bytes.Repeat([]byte{13, 250, 3}, 300))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		checkStringMaps(t, data)
	})
}

// checkStringMaps writes the maps data describes with stringMapFor and
// with the general writer and fails when the files differ.
func checkStringMaps(t *testing.T, data []byte) {
	s, err := arrowconv.ParseColumns("ms MAP<STRING, STRING>, mi MAP<STRING, BIGINT>, bag MULTISET<STRING>")
	if err != nil {
		t.Fatal(err)
	}
	write := func() []byte {
		bld := arrowconv.NewBuilder(memory.NewGoAllocator(), s)
		defer bld.Release()
		in := byteFeed(data)
		next := in.next
		path := filepath.Join(t.TempDir(), "m.parquet")
		w, err := NewParquet(path, s, ParquetOptions{RowGroupRows: 700, Concurrency: 1})
		if err != nil {
			t.Fatal(err)
		}
		for r := 0; len(in) > 0; r++ {
			bld.AppendKind(arrowconv.Insert)
			for c := range s.Columns {
				col := bld.Column(c).(*arrowconv.MapCol)
				b := next()
				if b%7 == 0 {
					col.AppendNull()
					continue
				}
				col.Start()
				// Mostly the keys of the row before (the bulk path), or as
				// many keys of the same lengths but other bytes, or the
				// same bytes cut elsewhere, or keys of this row only.
				keys := make([]string, int(b>>4)%12)
				for k := range keys {
					keys[k] = fmt.Sprint("key", k)
					if b&8 != 0 {
						keys[k] = fmt.Sprint("kez", k)
					}
					if b%11 == 0 {
						keys[k] = fmt.Sprint("k", r, "-", k)
					}
				}
				if b%13 == 0 && len(keys) > 1 {
					keys[0], keys[1] = keys[0]+keys[1][:1], keys[1][1:]
				}
				for k, key := range keys {
					col.Keys.(*arrowconv.BytesCol).AppendString(key)
					v := next()
					if v%5 == 0 {
						col.Values.AppendNull()
						continue
					}
					switch vc := col.Values.(type) {
					case *arrowconv.BytesCol:
						if v&1 == 0 {
							vc.AppendString(fmt.Sprint("v", v%5))
						} else {
							vc.AppendString(fmt.Sprint("u", r, "-", k, "-", v))
						}
					case *arrowconv.FixedCol[int64]:
						vc.Append(int64(v) << (v % 40))
					case *arrowconv.FixedCol[int32]:
						vc.Append(int32(1 + v%3))
					}
				}
			}
			if bld.Len() == 256 {
				flushTo(t, w, bld)
			}
		}
		flushTo(t, w, bld)
		return closeRead(t, w, path)
	}
	fast := write()
	flatStringMaps = false
	defer func() { flatStringMaps = true }()
	general := write()
	if !bytes.Equal(fast, general) {
		t.Fatalf("stringMapFor wrote a different file (%d bytes) than the general map writer (%d bytes)", len(fast), len(general))
	}
}

// flushTo writes what bld holds to w as one batch (nothing when empty).
func flushTo(t *testing.T, w *Parquet, bld *arrowconv.Builder) {
	t.Helper()
	rec := bld.Flush()
	if rec == nil {
		return
	}
	defer rec.Release()
	if err := w.Write(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
}

// closeRead closes w and returns the bytes of the file it wrote at path.
func closeRead(t *testing.T, w *Parquet, path string) []byte {
	t.Helper()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDictionaryPagesMatch: dictionary columns whose index pages are
// written as they fill read back as the same values and levels as when
// each chunk is held whole to its end, over tiny pages, dictionaries that
// give up at any point (before or after pages were written), NULLs, lists
// and batches cut anywhere; and the streamed file's offset index points
// at its pages.
func TestDictionaryPagesMatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	for range 4 {
		data := make([]byte, 6000)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		checkDictionaryPages(t, data)
	}
}

// FuzzDictionaryPages is TestDictionaryPagesMatch's twin over any input:
// its bytes choose NULLs, list lengths, repeated and distinct values, and
// where batches end.
func FuzzDictionaryPages(f *testing.F) {
	f.Add([]byte{1, 2, 3, 200, 17, 9, 9, 9, 250, 4})
	f.Add(bytes.Repeat([]byte{3, 7, 250, 11, 64}, 200))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<14 {
			return
		}
		checkDictionaryPages(t, data)
	})
}

func checkDictionaryPages(t *testing.T, data []byte) {
	defer func(p, d, s int) { pageBytes, dictLimitBytes, dictSample = p, d, s }(pageBytes, dictLimitBytes, dictSample)
	pageBytes, dictLimitBytes, dictSample = 64, 300, 8 // pages of 16 indices; dictionaries of about 30 values
	s, err := arrowconv.ParseColumns("s STRING, l ARRAY<STRING>")
	if err != nil {
		t.Fatal(err)
	}
	write := func(stream bool) string {
		streamIndexPages = stream
		defer func() { streamIndexPages = true }()
		bld := arrowconv.NewBuilder(memory.NewGoAllocator(), s)
		defer bld.Release()
		in := byteFeed(data)
		next := in.next
		path := filepath.Join(t.TempDir(), "d.parquet")
		w, err := NewParquet(path, s, ParquetOptions{RowGroupRows: 97, Concurrency: 1})
		if err != nil {
			t.Fatal(err)
		}
		for r := 0; len(in) > 0; r++ {
			str := func(v byte) string {
				if v&3 == 0 {
					return fmt.Sprint("u", r, "-", v) // distinct: grows the dictionary
				}
				return fmt.Sprint("v", v%7)
			}
			bld.AppendKind(arrowconv.Insert)
			b := next()
			if b%9 == 0 {
				bld.Column(0).AppendNull()
			} else {
				bld.Column(0).(*arrowconv.BytesCol).AppendString(str(b >> 2))
			}
			lc := bld.Column(1).(*arrowconv.ListCol)
			if b%11 == 0 {
				lc.AppendNull()
			} else {
				lc.Start()
				for range int(b >> 5) {
					if e := next(); e%13 == 0 {
						lc.Child.AppendNull()
					} else {
						lc.Child.(*arrowconv.BytesCol).AppendString(str(e))
					}
				}
			}
			if next()%16 == 0 {
				flushTo(t, w, bld)
			}
		}
		flushTo(t, w, bld)
		closeRead(t, w, path)
		return path
	}
	streamed, whole := write(true), write(false)
	got, want := leafValues(t, streamed, true), leafValues(t, whole, false)
	for c := range want {
		if !slices.Equal(got[c], want[c]) {
			t.Fatalf("column %d: %d values streamed, %d held whole, or they differ", c, len(got[c]), len(want[c]))
		}
	}
}

// leafValues reads every leaf's values with their levels, in order,
// checking the page locations against the file when check is set.
func leafValues(t *testing.T, path string, check bool) [][]string {
	t.Helper()
	pf := openParquet(t, path)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for g, rg := range pf.RowGroups() {
		for c, cc := range rg.ColumnChunks() {
			if c == len(out) {
				out = append(out, nil)
			}
			if check {
				oi, err := cc.OffsetIndex()
				if err != nil {
					t.Fatal(err)
				}
				checkPageLocations(t, data, pf.Metadata().RowGroups[g].Columns[c].MetaData, oi, fmt.Sprintf("row group %d column %d", g, c))
			}
			for _, v := range chunkValues(t, cc, fmt.Sprintf("row group %d column %d", g, c)) {
				out[c] = append(out[c], fmt.Sprintf("%d/%d/%v:%q", v.RepetitionLevel(), v.DefinitionLevel(), v.IsNull(), v.Bytes()))
			}
		}
	}
	return out
}

// chunkValues reads a column chunk's values with their levels, page by
// page; what names the chunk in failures.
func chunkValues(t *testing.T, cc parquet.ColumnChunk, what string) []parquet.Value {
	t.Helper()
	var got []parquet.Value
	pages := cc.Pages()
	defer pages.Close()
	for {
		p, err := pages.ReadPage()
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		vals := make([]parquet.Value, p.NumValues())
		if k, err := p.Values().ReadValues(vals); err != nil && err != io.EOF || k != len(vals) {
			t.Fatalf("%s: read %d of %d values: %v", what, k, len(vals), err)
		}
		got = append(got, vals...)
	}
}

// byteFeed hands a fuzz input out a byte at a time (zeros once it is
// used up).
type byteFeed []byte

func (f *byteFeed) next() byte {
	if len(*f) == 0 {
		return 0
	}
	b := (*f)[0]
	*f = (*f)[1:]
	return b
}
