package arrowconv

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestBuilderRollback checks that a half-appended message leaves no trace
// in any column, nested ones included, and that batches own their memory.
func TestBuilderRollback(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s, err := ParseColumns("id INT, tags ARRAY<STRING>, attrs MAP<STRING, BIGINT>, r ROW<a STRING, b ARRAY<INT>>")
	if err != nil {
		t.Fatal(err)
	}
	b := NewBuilder(mem, s)
	defer b.Release()
	appendRow := func(id int32, tags []string) {
		b.AppendKind(Insert)
		b.Column(0).(*FixedCol[int32]).Append(id)
		l := b.Column(1).(*ListCol)
		l.Start()
		for _, tg := range tags {
			l.Child.(*BytesCol).AppendString(tg)
		}
		m := b.Column(2).(*MapCol)
		m.Start()
		m.Keys.(*BytesCol).AppendString("k")
		m.Values.(*FixedCol[int64]).Append(int64(id))
		r := b.Column(3).(*StructCol)
		r.AppendValid()
		r.Fields[0].(*BytesCol).AppendString("x")
		r.Fields[1].(*ListCol).Start()
		r.Fields[1].(*ListCol).Child.(*FixedCol[int32]).Append(id)
	}
	appendRow(1, []string{"a", "b"})
	mark := b.Mark()
	appendRow(2, []string{"c"})
	// a partial third row: kind and two columns only
	b.AppendKind(Delete)
	b.Column(0).(*FixedCol[int32]).Append(3)
	b.Column(1).(*ListCol).Start()
	b.Column(1).(*ListCol).Child.(*BytesCol).AppendString("zzz")
	b.Rollback(mark)
	// a copy of row 0's tags
	b.AppendKind(UpdateAfter)
	for i := 0; i < 4; i++ {
		b.Column(i).AppendCopy(0)
	}
	rec := b.Flush()
	defer rec.Release()
	if rec.NumRows() != 2 {
		t.Fatalf("rows = %d, want 2", rec.NumRows())
	}
	tags := rec.Column(2).(*array.List)
	if got := tags.String(); got != `[["a" "b"] ["a" "b"]]` {
		t.Errorf("tags = %s", got)
	}
	if got := rec.Column(4).(*array.Struct).String(); got != `{["x" "x"] [[1] [1]]}` {
		t.Errorf("row = %s", got)
	}
	if b.Len() != 0 || b.Flush() != nil {
		t.Error("builder not empty after Flush")
	}
}

// TestValidityBitmap: the validity bitmap and null count of a column built
// with NULLs at random (lengths around a multiple of eight, after
// truncations) say exactly which rows are NULL.
func TestValidityBitmap(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for n := range 70 {
		for _, share := range []float64{0, 0.1, 0.5, 0.9, 1} {
			c := &FixedCol[int32]{}
			var want []bool
			for len(want) < n {
				if rng.Float64() < share {
					c.AppendNull()
					want = append(want, false)
				} else {
					c.Append(1)
					want = append(want, true)
				}
				if rng.IntN(10) == 0 { // a rolled-back row
					k := rng.IntN(len(want) + 1)
					c.Truncate(k)
					want = want[:k]
				}
			}
			d := c.build(mem, arrow.PrimitiveTypes.Int32)
			a := array.MakeFromData(d)
			nulls := 0
			for i, ok := range want {
				if a.IsValid(i) != ok {
					t.Fatalf("n=%d share=%v: row %d valid %v, want %v", n, share, i, a.IsValid(i), ok)
				}
				if !ok {
					nulls++
				}
			}
			if a.NullN() != nulls || a.Len() != len(want) {
				t.Fatalf("n=%d share=%v: %d rows, %d NULL; want %d, %d", n, share, a.Len(), a.NullN(), len(want), nulls)
			}
			a.Release()
			d.Release()
		}
	}
}

// TestAppendCopyNested: a row copied with AppendCopy (nested values copied
// a range at a time) equals the same row appended again value by value,
// NULLs at every level included. Seeded; rows at random.
func TestAppendCopyNested(t *testing.T) {
	s, err := ParseColumns("id INT, tags ARRAY<STRING>, attrs MAP<STRING, BIGINT>, r ROW<a STRING, b ARRAY<BOOLEAN>>")
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		k    string
		v    int64
		null bool
	}
	type row struct {
		id              int32
		tagsNull, rNull bool
		tags            []*string
		attrs           []entry
		a               *string
		b               []bool
	}
	rng := rand.New(rand.NewPCG(7, 35))
	str := func() *string {
		if rng.IntN(5) == 0 {
			return nil
		}
		v := string(rune('a'+rng.IntN(26))) + string(rune('a'+rng.IntN(26)))
		return &v
	}
	gen := func() row {
		r := row{id: rng.Int32(), tagsNull: rng.IntN(6) == 0, rNull: rng.IntN(6) == 0, a: str()}
		for range rng.IntN(4) {
			r.tags = append(r.tags, str())
		}
		for range rng.IntN(5) {
			r.attrs = append(r.attrs, entry{k: *str0(str()), v: rng.Int64(), null: rng.IntN(4) == 0})
		}
		for range rng.IntN(3) {
			r.b = append(r.b, rng.IntN(2) == 0)
		}
		return r
	}
	put := func(b *Builder, r row) {
		b.AppendKind(Insert)
		b.Column(0).(*FixedCol[int32]).Append(r.id)
		l := b.Column(1).(*ListCol)
		if r.tagsNull {
			l.AppendNull()
		} else {
			l.Start()
			for _, tg := range r.tags {
				if tg == nil {
					l.Child.AppendNull()
				} else {
					l.Child.(*BytesCol).AppendString(*tg)
				}
			}
		}
		m := b.Column(2).(*MapCol)
		m.Start()
		for _, e := range r.attrs {
			m.Keys.(*BytesCol).AppendString(e.k)
			if e.null {
				m.Values.AppendNull()
			} else {
				m.Values.(*FixedCol[int64]).Append(e.v)
			}
		}
		st := b.Column(3).(*StructCol)
		if r.rNull {
			st.AppendNull()
			return
		}
		st.AppendValid()
		if r.a == nil {
			st.Fields[0].AppendNull()
		} else {
			st.Fields[0].(*BytesCol).AppendString(*r.a)
		}
		bl := st.Fields[1].(*ListCol)
		bl.Start()
		for _, v := range r.b {
			bl.Child.(*BoolCol).Append(v)
		}
	}
	for round := range 50 {
		got, want := NewBuilder(memory.NewGoAllocator(), s), NewBuilder(memory.NewGoAllocator(), s)
		var rows []row
		for range 1 + rng.IntN(40) {
			if len(rows) > 0 && rng.IntN(3) == 0 {
				i := rng.IntN(len(rows))
				got.AppendKind(Insert)
				for c := range 4 {
					got.Column(c).AppendCopy(i)
				}
				put(want, rows[i])
				rows = append(rows, rows[i])
				continue
			}
			r := gen()
			put(got, r)
			put(want, r)
			rows = append(rows, r)
		}
		g, w := got.Flush(), want.Flush()
		if !array.RecordEqual(g, w) {
			t.Fatalf("round %d: copies differ\n got %v\nwant %v", round, g, w)
		}
		g.Release()
		w.Release()
		got.Release()
		want.Release()
	}
}

func str0(s *string) *string {
	if s == nil {
		e := ""
		return &e
	}
	return s
}
