package lake

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// TestCompactOtherWritersFiles: a table whose data files another writer
// made (iceberg-go's appends: no column list in their footers) is
// compacted through arrow-go's writer: one file, the same rows, field
// IDs kept (iceberg-go reads it back by them).
func TestCompactOtherWritersFiles(t *testing.T) {
	ctx := context.Background()
	wh := t.TempDir()
	l, err := Open(ctx, wh, "")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.cat.CreateNamespace(ctx, table.Identifier{"ns"}, nil); err != nil {
		t.Fatal(err)
	}
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String})
	ident := table.Identifier{"ns", "t"}
	tbl, err := l.cat.CreateTable(ctx, ident, sch, catalog.WithLocation(FileURL(filepath.Join(wh, "ns", "t"))))
	if err != nil {
		t.Fatal(err)
	}
	arrSch := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "name", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	var want []string
	for n := range 4 {
		ib := array.NewInt64Builder(memory.DefaultAllocator)
		sb := array.NewStringBuilder(memory.DefaultAllocator)
		for i := range 50 {
			id := int64(n*50 + i)
			ib.Append(id)
			if i%7 == 0 {
				sb.AppendNull()
				want = append(want, fmt.Sprintf("%d:NULL", id))
			} else {
				sb.Append(fmt.Sprintf("n%d", id))
				want = append(want, fmt.Sprintf("%d:n%d", id, id))
			}
		}
		rec := array.NewRecordBatch(arrSch, []arrow.Array{ib.NewArray(), sb.NewArray()}, 50)
		tb := array.NewTableFromRecords(arrSch, []arrow.RecordBatch{rec})
		if tbl, err = tbl.AppendTable(ctx, tb, 50, nil); err != nil {
			t.Fatal(err)
		}
	}
	res, err := l.Maintain(ctx, ident, MaintainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.DataFilesBefore != 4 || res.DataFilesAfter != 1 {
		t.Fatalf("maintain: %+v", res)
	}
	tbl, err = l.cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	_, it, err := tbl.Scan().ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		ids, names := rec.Column(0).(*array.Int64), rec.Column(1).(*array.String)
		for i := range int(rec.NumRows()) {
			v := "NULL"
			if names.IsValid(i) {
				v = names.Value(i)
			}
			got = append(got, fmt.Sprintf("%d:%s", ids.Value(i), v))
		}
		rec.Release()
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("after compaction: %d rows, want %d", len(got), len(want))
	}
}
