package writer

import (
	"bytes"
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// TestPrintRendering checks Flink's Row.toString for values that the
// decoder rarely produces (negative years, far dates, signed bytes...).
func TestPrintRendering(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s, err := arrowconv.ParseColumns("d DECIMAL(10, 8), bin BYTES, dt DATE, tm TIME, ts TIMESTAMP(9), ltz TIMESTAMP_LTZ(9), f FLOAT, m MAP<STRING, ARRAY<INT>>, r ROW<a STRING>")
	if err != nil {
		t.Fatal(err)
	}
	b := arrowconv.NewBuilder(mem, s)
	defer b.Release()
	row := func(k arrowconv.RowKind, dec int64, bin []byte, days int32, ms int32, ns int64, f float32) {
		b.AppendKind(k)
		b.Column(0).(*arrowconv.FixedCol[decimal128.Num]).Append(decimal128.FromI64(dec))
		b.Column(1).(*arrowconv.BytesCol).Append(bin)
		b.Column(2).(*arrowconv.FixedCol[int32]).Append(days)
		b.Column(3).(*arrowconv.FixedCol[int32]).Append(ms)
		b.Column(4).(*arrowconv.FixedCol[int64]).Append(ns)
		b.Column(5).(*arrowconv.FixedCol[int64]).Append(ns)
		b.Column(6).(*arrowconv.FixedCol[float32]).Append(f)
		m := b.Column(7).(*arrowconv.MapCol)
		m.Start()
		m.Keys.(*arrowconv.BytesCol).AppendString("k")
		l := m.Values.(*arrowconv.ListCol)
		l.Start()
		l.Child.(*arrowconv.FixedCol[int32]).Append(1)
		l.Child.AppendNull()
		b.Column(8).(*arrowconv.StructCol).AppendValid()
		b.Column(8).(*arrowconv.StructCol).Fields[0].AppendNull()
	}
	row(arrowconv.Insert, 1, []byte{1, 2, 0xfd}, 0, 0, 0, 1)
	row(arrowconv.Delete, -123456789, nil, -719528, 3723000, -1, 1e10)
	row(arrowconv.UpdateAfter, 500000000, []byte{}, 2932897, 43200000, 1_000_000_000_000_123_000, 0.1)
	rec := b.Flush()
	defer rec.Release()
	var out bytes.Buffer
	p := NewPrint(&out, rec.Schema())
	if err := p.Write(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	p.Close()
	want := "+I[1E-8, [1, 2, -3], 1970-01-01, 00:00, 1970-01-01T00:00, 1970-01-01T00:00:00Z, 1.0, {k=[1, null]}, +I[null]]\n" +
		"-D[-1.23456789, [], 0000-01-01, 01:02:03, 1969-12-31T23:59:59.999999999, 1969-12-31T23:59:59.999999999Z, 1.0E10, {k=[1, null]}, +I[null]]\n" +
		"+U[5.00000000, [], +10000-01-01, 12:00, 2001-09-09T01:46:40.000123, 2001-09-09T01:46:40.000123Z, 0.1, {k=[1, null]}, +I[null]]\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

func TestAppendDecimalPlain(t *testing.T) {
	for _, tt := range []struct {
		v     int64
		scale int
		want  string
	}{{1, 8, "0.00000001"}, {-510, 2, "-5.10"}, {10000, 2, "100.00"}, {7, 0, "7"}} {
		if got := string(arrowconv.AppendDecimal(nil, decimal128.FromI64(tt.v), tt.scale, true)); got != tt.want {
			t.Errorf("plain %d/%d = %q, want %q", tt.v, tt.scale, got, tt.want)
		}
	}
}
