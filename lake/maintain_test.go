package lake

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// TestRemoveOrphansWhileFilesComeAndGo: other loaders of the same table
// (shards) write and remove files under it while a load's maintenance
// lists it for orphans. A file that vanishes between the listing and its
// stat is not an error (TestShardsEvolveOneTable failed in CI on one),
// and no file a snapshot refers to is removed.
func TestRemoveOrphansWhileFilesComeAndGo(t *testing.T) {
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
	sch := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	dir := filepath.Join(wh, "ns", "t")
	tbl, err := l.cat.CreateTable(ctx, table.Identifier{"ns", "t"}, sch, catalog.WithLocation(FileURL(dir)))
	if err != nil {
		t.Fatal(err)
	}
	arrSch := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	for n := range 3 {
		ib := array.NewInt64Builder(memory.DefaultAllocator)
		ib.AppendValues([]int64{int64(n)}, nil)
		rec := array.NewRecordBatch(arrSch, []arrow.Array{ib.NewArray()}, 1)
		if tbl, err = tbl.AppendTable(ctx, array.NewTableFromRecords(arrSch, []arrow.RecordBatch{rec}), 1, nil); err != nil {
			t.Fatal(err)
		}
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // another shard staging and cleaning up files
		defer wg.Done()
		for i := 0; i < 2_000_000 && !stop.Load(); i++ {
			p := filepath.Join(dir, "data", fmt.Sprintf("other-%d.parquet", i%64))
			if i%128 < 64 {
				os.WriteFile(p, []byte("x"), 0o644)
			} else {
				os.Remove(p)
			}
		}
	}()
	for range 300 {
		// Nothing is old enough to go: the files keep coming and going.
		if n, err := removeOrphans(ctx, tbl, 0); err != nil {
			stop.Store(true)
			wg.Wait()
			t.Fatal(err)
		} else if n < 0 {
			t.Fatal(n)
		}
	}
	stop.Store(true)
	wg.Wait()
	_, it, err := tbl.Scan().ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := int64(0)
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		got += rec.NumRows()
		rec.Release()
	}
	if got != 3 {
		t.Fatalf("%d rows after removing orphans, want 3", got)
	}
}
