package writer

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// TestFixedWidthColumns writes every fixed-width type, with and without
// NULLs (a column of none, of some, of all), with DELTA_BINARY_PACKED and
// PLAIN integers, as plain Parquet and as an Iceberg data file, and reads
// each value back as the physical value the declared type asks for (the
// unit conversions included: TIMESTAMP(3) as milliseconds, Iceberg's
// microseconds), and the chunks' null counts and bounds.
func TestFixedWidthColumns(t *testing.T) {
	const cols = "ti TINYINT, si SMALLINT, i INT, bi BIGINT, f FLOAT, d DOUBLE, d9 DECIMAL(9, 2), d18 DECIMAL(18, 3), " +
		"dt DATE, t3 TIME(3), t6 TIME(6), t9 TIME(9), ts3 TIMESTAMP(3), ts6 TIMESTAMP(6), ts9 TIMESTAMP(9), ltz3 TIMESTAMP_LTZ(3), b BOOLEAN"
	s, err := arrowconv.ParseColumns(cols)
	if err != nil {
		t.Fatal(err)
	}
	for _, iceberg := range []bool{false, true} {
		for _, plain := range []bool{false, true} {
			t.Run(fmt.Sprintf("iceberg=%v,plain=%v", iceberg, plain), func(t *testing.T) {
				testFixedWidth(t, s, iceberg, plain)
			})
		}
	}
}

func testFixedWidth(t *testing.T, s *arrowconv.Schema, iceberg, plain bool) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	bld := arrowconv.NewBuilder(mem, s)
	defer bld.Release()
	rng := rand.New(rand.NewPCG(3, 4))
	const rows = 5000
	// want[c][r] is column c's physical value of row r as int64 (floats
	// as their bits), or nil for NULL.
	want := make([][]*int64, len(s.Columns))
	// Columns 0-2 of each batch: none NULL, some NULL, all NULL, in turn.
	nullShare := func(r, c int) float64 {
		switch (r/700 + c) % 3 {
		case 0:
			return 0
		case 1:
			return 0.4
		}
		return 1
	}
	p, err := NewParquet(filepath.Join(t.TempDir(), "out.parquet"), s, ParquetOptions{RowGroupRows: 1500, PlainIntegers: plain, Iceberg: iceberg, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	path := p.file.path
	for r := 0; r < rows; {
		n := min(rows-r, 1+rng.IntN(700))
		for range n {
			bld.AppendKind(arrowconv.Insert)
			for c, col := range s.Columns {
				if rng.Float64() < nullShare(r, c) {
					bld.Column(c).AppendNull()
					want[c] = append(want[c], nil)
					continue
				}
				x := int64(rng.Uint64()) // negative too
				var phys int64
				switch c := bld.Column(c).(type) {
				case *arrowconv.FixedCol[int8]:
					c.Append(int8(x))
					phys = int64(int8(x))
				case *arrowconv.FixedCol[int16]:
					c.Append(int16(x))
					phys = int64(int16(x))
				case *arrowconv.FixedCol[int32]:
					v := int32(x % 86_400_000) // fits a TIME(3) as well
					c.Append(v)
					phys = int64(v)
					if col.Type.Kind == arrowconv.Time && iceberg {
						phys *= 1000 // Iceberg's time is in microseconds
					}
				case *arrowconv.FixedCol[int64]:
					c.Append(x)
					phys = x
					switch {
					case col.Type.Kind == arrowconv.BigInt:
					case col.Type.Precision > 6 && iceberg, col.Type.Precision <= 3 && !iceberg && col.Type.Kind != arrowconv.Time:
						phys = x / 1000 // rounded down: a unit that is coarser
						if x < 0 && x%1000 != 0 {
							phys--
						}
					}
				case *arrowconv.FixedCol[float32]:
					v := float32(rng.NormFloat64())
					c.Append(v)
					phys = int64(math.Float32bits(v))
				case *arrowconv.FixedCol[float64]:
					v := rng.NormFloat64()
					c.Append(v)
					phys = int64(math.Float64bits(v))
				case *arrowconv.FixedCol[decimal128.Num]:
					v := x % 1_000_000_000
					if col.Type.Precision > 9 {
						v = x % 1_000_000_000_000_000_000
					}
					c.Append(decimal128.FromI64(v))
					phys = v
				case *arrowconv.BoolCol:
					c.Append(x&1 == 1)
					phys = x & 1
				default:
					t.Fatalf("column %s: %T", col.Name, c)
				}
				want[c] = append(want[c], &phys)
			}
			r++
		}
		writeBuilt(t, p, bld)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}

	pf := openParquet(t, path)
	md := pf.Metadata()
	first := 0
	for g, rg := range pf.RowGroups() {
		n := int(rg.NumRows())
		for k, cc := range rg.ColumnChunks()[1:] { // after _rowkind
			col := s.Columns[k]
			got := chunkValues(t, cc, fmt.Sprintf("row group %d %s", g, col.Name))
			if len(got) != n {
				t.Fatalf("row group %d %s: %d values, want %d", g, col.Name, len(got), n)
			}
			var nulls int64
			var lo, hi *parquet.Value
			for i, v := range got {
				w := want[k][first+i]
				if w == nil {
					nulls++
					if !v.IsNull() {
						t.Fatalf("row group %d %s row %d: %v, want NULL", g, col.Name, first+i, v)
					}
					continue
				}
				var x int64
				switch v.Kind() {
				case parquet.Boolean:
					if v.Boolean() {
						x = 1
					}
				case parquet.Int32:
					x = int64(v.Int32())
				case parquet.Int64:
					x = v.Int64()
				case parquet.Float:
					x = int64(math.Float32bits(v.Float()))
				case parquet.Double:
					x = int64(math.Float64bits(v.Double()))
				default:
					t.Fatalf("%s: a %v value", col.Name, v.Kind())
				}
				if v.IsNull() || x != *w {
					t.Fatalf("row group %d %s row %d: %v (%d), want %d", g, col.Name, first+i, v, x, *w)
				}
				typ := cc.Type()
				if lo == nil || typ.Compare(v, *lo) < 0 {
					lo = &got[i]
				}
				if hi == nil || typ.Compare(v, *hi) > 0 {
					hi = &got[i]
				}
			}
			st := md.RowGroups[g].Columns[k+1].MetaData.Statistics
			if st.NullCount != nulls {
				t.Errorf("row group %d %s: %d nulls in the statistics, want %d", g, col.Name, st.NullCount, nulls)
			}
			if lo == nil {
				if st.MinValue != nil || st.MaxValue != nil {
					t.Errorf("row group %d %s: bounds on a NULL chunk", g, col.Name)
				}
				continue
			}
			wantLo, wantHi := lo.Bytes(), hi.Bytes()
			if col.Type.Kind == arrowconv.Boolean {
				wantLo, wantHi = []byte{wantLo[0] & 1}, []byte{wantHi[0] & 1}
			}
			if string(st.MinValue) != string(wantLo) || string(st.MaxValue) != string(wantHi) {
				t.Errorf("row group %d %s: bounds %x %x, want %x %x", g, col.Name, st.MinValue, st.MaxValue, wantLo, wantHi)
			}
		}
		first += n
	}
	if first != rows {
		t.Fatalf("%d rows read, want %d", first, rows)
	}
}

// TestWideDecimals: DECIMAL columns of more than 18 digits written a batch
// at a time make the same file, byte for byte, as written a value at a
// time (values of every size and sign, NULLs, bounds), and read back.
func TestWideDecimals(t *testing.T) {
	s, err := arrowconv.ParseColumns("a DECIMAL(38, 2), b DECIMAL(20, 0), c DECIMAL(30, 5)")
	if err != nil {
		t.Fatal(err)
	}
	write := func(bulk bool) ([]byte, [][]*decimal128.Num) {
		bulkColumns = bulk
		defer func() { bulkColumns = true }()
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		bld := arrowconv.NewBuilder(mem, s)
		defer bld.Release()
		rng := rand.New(rand.NewPCG(5, 6))
		p, err := NewParquet(filepath.Join(t.TempDir(), "out.parquet"), s, ParquetOptions{RowGroupRows: 1500, Concurrency: 1})
		if err != nil {
			t.Fatal(err)
		}
		path := p.file.path
		want := make([][]*decimal128.Num, len(s.Columns))
		for r := 0; r < 4000; {
			n := min(4000-r, 1+rng.IntN(600))
			for range n {
				bld.AppendKind(arrowconv.Insert)
				for c, col := range s.Columns {
					if rng.IntN(4) == 0 || (r/900)%3 == c { // some NULL, and runs of all NULL
						bld.Column(c).AppendNull()
						want[c] = append(want[c], nil)
						continue
					}
					// Up to the precision's digits, either sign.
					digits := 1 + rng.IntN(col.Type.Precision)
					v := decimal128.FromU64(rng.Uint64() >> uint(rng.IntN(64)))
					if digits > 18 {
						v = v.Mul(decimal128.FromU64(rng.Uint64() % 1_000_000_000_000_000_000))
					}
					if max, _ := decimal128.FromString(strings.Repeat("9", col.Type.Precision), int32(col.Type.Precision), 0); max.Less(v) {
						v = max
					}
					if rng.IntN(2) == 0 {
						v = v.Negate()
					}
					bld.Column(c).(*arrowconv.FixedCol[decimal128.Num]).Append(v)
					want[c] = append(want[c], &v)
				}
				r++
			}
			writeBuilt(t, p, bld)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return data, want
	}
	bulk, want := write(true)
	each, _ := write(false)
	if !bytes.Equal(bulk, each) {
		t.Fatalf("written a batch at a time (%d bytes) differs from a value at a time (%d bytes)", len(bulk), len(each))
	}
	pf, err := parquet.OpenFile(bytes.NewReader(bulk), int64(len(bulk)))
	if err != nil {
		t.Fatal(err)
	}
	row := 0
	for _, rg := range pf.RowGroups() {
		rows := rg.Rows()
		buf := make([]parquet.Row, rg.NumRows())
		n, _ := rows.ReadRows(buf)
		rows.Close()
		for _, r := range buf[:n] {
			for c := range s.Columns {
				v, w := r[c+1], want[c][row]
				if w == nil {
					if !v.IsNull() {
						t.Fatalf("row %d column %d: %v, want NULL", row, c, v)
					}
					continue
				}
				var b [16]byte
				if got := v.ByteArray(); !bytes.Equal(got, bigEndian(&b, *w, len(got))) {
					t.Fatalf("row %d column %d: %x, want %v", row, c, got, *w)
				}
			}
			row++
		}
	}
	if row != 4000 {
		t.Fatalf("%d rows read back, want 4000", row)
	}
}

// TestValidWordsSameFile: the put loops' word-at-a-time visit of the rows
// with a value writes the same file, byte for byte, as a test of each
// row's bit, for every column type the loops take, NULL shares from none
// to all (scattered at random), batches whole and sliced (arrays with an
// offset into their bitmaps), integers delta or PLAIN, strings by
// dictionary or PLAIN, plain Parquet and Iceberg.
func TestValidWordsSameFile(t *testing.T) {
	const cols = "ti TINYINT, si SMALLINT, i INT, bi BIGINT, f FLOAT, d DOUBLE, d9 DECIMAL(9, 2), d18 DECIMAL(18, 3), " +
		"dt DATE, t3 TIME(3), t6 TIME(6), ts3 TIMESTAMP(3), ts6 TIMESTAMP(6), ts9 TIMESTAMP(9), b BOOLEAN, s STRING, long STRING"
	s, err := arrowconv.ParseColumns(cols)
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []ParquetOptions{
		{},
		{PlainIntegers: true, PlainStrings: true},
		{Iceberg: true},
	} {
		write := func(words bool) []byte {
			validWords = words
			defer func() { validWords = true }()
			return writeScattered(t, s, opts)
		}
		if a, b := write(true), write(false); !bytes.Equal(a, b) {
			t.Fatalf("%+v: a word at a time (%d bytes) differs from a row at a time (%d bytes)", opts, len(a), len(b))
		}
	}
}

// writeScattered writes 6,000 rows of random values of s's columns, NULL
// at random in shares that change from batch to batch, and returns the
// file.
func writeScattered(t *testing.T, s *arrowconv.Schema, opts ParquetOptions) []byte {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	bld := arrowconv.NewBuilder(mem, s)
	defer bld.Release()
	rng := rand.New(rand.NewPCG(7, 8))
	opts.RowGroupRows, opts.Concurrency = 2500, 1
	p, err := NewParquet(filepath.Join(t.TempDir(), "out.parquet"), s, opts)
	if err != nil {
		t.Fatal(err)
	}
	path := p.file.path
	shares := []float64{0, 0.02, 0.5, 0.5, 0.9, 1}
	for r := 0; r < 6000; {
		n := min(6000-r, 1+rng.IntN(900))
		share := shares[rng.IntN(len(shares))]
		for range n {
			bld.AppendKind(arrowconv.Insert)
			for c := range s.Columns {
				if rng.Float64() < share {
					bld.Column(c).AppendNull()
					continue
				}
				x := int64(rng.Uint64())
				switch c := bld.Column(c).(type) {
				case *arrowconv.FixedCol[int8]:
					c.Append(int8(x))
				case *arrowconv.FixedCol[int16]:
					c.Append(int16(x))
				case *arrowconv.FixedCol[int32]:
					c.Append(int32(x % 86_400_000))
				case *arrowconv.FixedCol[int64]:
					c.Append(x)
				case *arrowconv.FixedCol[float32]:
					c.Append(float32(rng.NormFloat64()))
				case *arrowconv.FixedCol[float64]:
					c.Append(rng.NormFloat64())
				case *arrowconv.FixedCol[decimal128.Num]:
					c.Append(decimal128.FromI64(x % 1_000_000_000))
				case *arrowconv.BoolCol:
					c.Append(x&1 == 1)
				case *arrowconv.BytesCol:
					if rng.IntN(2) == 0 {
						c.Append([]byte(fmt.Sprintf("v%d", x%50))) // repeats: a dictionary
					} else {
						c.Append([]byte(fmt.Sprintf("%x%x", x, rng.Uint64()))) // distinct
					}
				default:
					t.Fatalf("%T", c)
				}
			}
			r++
		}
		rec := bld.Flush()
		// Half the batches go in slices: their arrays start inside a
		// bitmap byte.
		if k := rng.IntN(int(rec.NumRows())); rng.IntN(2) == 0 && k > 0 {
			for _, part := range []arrow.RecordBatch{rec.NewSlice(0, int64(k)), rec.NewSlice(int64(k), rec.NumRows())} {
				if err := p.Write(context.Background(), part); err != nil {
					t.Fatal(err)
				}
				part.Release()
			}
		} else if err := p.Write(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestSlicedStrings: a batch that is a slice of a larger one (Arrow's
// NewSlice: its string arrays' offsets count from the start of the whole
// values buffer, while ValueBytes starts at the slice's first value) is
// written with its own strings, by the column-at-a-time loop and the
// per-value one, flat and in a map. Before StringBytes both read from the
// wrong place: another row's bytes, or past the end.
func TestSlicedStrings(t *testing.T) {
	s, err := arrowconv.ParseColumns("s STRING, m MAP<STRING, STRING>")
	if err != nil {
		t.Fatal(err)
	}
	for _, bulk := range []bool{true, false} {
		bulkColumns = bulk
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		bld := arrowconv.NewBuilder(mem, s)
		for r := range 10 {
			bld.AppendKind(arrowconv.Insert)
			bld.Column(0).(*arrowconv.BytesCol).Append([]byte(fmt.Sprintf("row %d %s", r, strings.Repeat("x", r))))
			m := bld.Column(1).(*arrowconv.MapCol)
			m.Start()
			m.Keys.(*arrowconv.BytesCol).Append([]byte(fmt.Sprintf("k%d", r)))
			m.Values.(*arrowconv.BytesCol).Append([]byte(fmt.Sprintf("v%d", r)))
		}
		rec := bld.Flush()
		part := rec.NewSlice(3, 8)
		p, err := NewParquet(filepath.Join(t.TempDir(), "out.parquet"), s, ParquetOptions{Concurrency: 1})
		if err != nil {
			t.Fatal(err)
		}
		path := p.file.path
		if err := p.Write(context.Background(), part); err != nil {
			t.Fatal(err)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		part.Release()
		rec.Release()
		bld.Release()
		mem.AssertSize(t, 0)
		bulkColumns = true

		var got []string
		for _, rg := range openParquet(t, path).RowGroups() {
			for k, cc := range rg.ColumnChunks()[1:] {
				for _, v := range chunkValues(t, cc, fmt.Sprintf("leaf %d", k)) {
					got = append(got, string(v.ByteArray()))
				}
			}
		}
		want := []string{"row 3 xxx", "row 4 xxxx", "row 5 xxxxx", "row 6 xxxxxx", "row 7 xxxxxxx", "k3", "k4", "k5", "k6", "k7", "v3", "v4", "v5", "v6", "v7"}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("bulk %v: %q, want %q", bulk, got, want)
		}
	}
}

// TestEmptyListsAtOnce: a top-level list column whose batches are often
// all empty (cdcetl's _unchanged) makes the same file, byte for byte,
// with their levels written at once and row by row: batches all empty,
// mixed with values and NULLs, a whole slice of empty rows inside a batch
// that is not, and pages cut among them.
func TestEmptyListsAtOnce(t *testing.T) {
	defer func(p int) { pageBytes = p }(pageBytes)
	pageBytes = 512
	s, err := arrowconv.ParseColumns("id INT, l ARRAY<STRING>")
	if err != nil {
		t.Fatal(err)
	}
	write := func(atOnce bool) []byte {
		emptyListsAtOnce = atOnce
		defer func() { emptyListsAtOnce = true }()
		rng := rand.New(rand.NewPCG(7, 8))
		bld := arrowconv.NewBuilder(memory.NewGoAllocator(), s)
		defer bld.Release()
		p, err := NewParquet(filepath.Join(t.TempDir(), "out.parquet"), s, ParquetOptions{RowGroupRows: 700, Concurrency: 1})
		if err != nil {
			t.Fatal(err)
		}
		path := p.file.path
		for b := range 40 {
			kind := b % 4 // 0, 1: all empty; 2: some values; 3: some NULLs
			n := 1 + rng.IntN(300)
			for r := range n {
				bld.AppendKind(arrowconv.Insert)
				bld.Column(0).(*arrowconv.FixedCol[int32]).Append(int32(b*1000 + r))
				l := bld.Column(1).(*arrowconv.ListCol)
				switch {
				case kind == 3 && rng.IntN(3) == 0:
					l.AppendNull()
				case kind == 2 && rng.IntN(3) == 0:
					l.Start()
					for k := range 1 + rng.IntN(3) {
						l.Child.(*arrowconv.BytesCol).AppendString(fmt.Sprint("c", k))
					}
				default:
					l.Start()
				}
			}
			rec := bld.Flush()
			// A slice of the batch: its rows from an offset on.
			if b%5 == 4 && n > 2 {
				part := rec.NewSlice(1, int64(n))
				if err := p.Write(context.Background(), part); err != nil {
					t.Fatal(err)
				}
				part.Release()
			} else if err := p.Write(context.Background(), rec); err != nil {
				t.Fatal(err)
			}
			rec.Release()
		}
		return closeRead(t, p, path)
	}
	atOnce, byRow := write(true), write(false)
	if !bytes.Equal(atOnce, byRow) {
		t.Fatalf("empty lists at once wrote a different file (%d bytes) than row by row (%d bytes)", len(atOnce), len(byRow))
	}
}
