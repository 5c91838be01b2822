package writer_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/internal/testutil"
	"github.com/cdcetl/cdcetl/writer"
)

// TestCoalescedBatches: small batches (a routed input's, a few hundred
// rows per table per chunk) are held and written together, column by
// column (ParquetOptions.HoldRows). Whatever the batch sizes (ones that
// cross row groups, a large one after small ones), the file holds the
// rows in order, and it is the same file, byte for byte (pages and row
// groups end where they would), as writing every batch at once; every
// batch held is let go (after Close and after Abort).
func TestCoalescedBatches(t *testing.T) {
	s, err := arrowconv.ParseColumns("id BIGINT, name STRING, tags ARRAY<STRING>, w DECIMAL(10, 2)")
	if err != nil {
		t.Fatal(err)
	}
	const rgRows = 700
	defer writer.SetPageBytes(2 << 10)() // pages end within batches and between them
	sizes := []int{0, 1, 3, 50, 299, 1023, 5000}
	type variant struct {
		name        string
		rows, bytes int
	}
	var files [][]byte
	for _, v := range []variant{{"off", 0, 0}, {"rows", 1000, 0}, {"bytes", 1 << 30, 4 << 10}} {
		t.Run(v.name, func(t *testing.T) {
			if v.bytes > 0 {
				defer writer.SetHoldBytes(v.bytes)()
			}
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			b := arrowconv.NewBuilder(mem, s)
			defer b.Release()
			path := filepath.Join(t.TempDir(), "f.parquet")
			w, err := writer.NewParquet(path, s, writer.ParquetOptions{RowGroupRows: rgRows, HoldRows: v.rows})
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(7, 8))
			var want []string
			id := 0
			for range 60 {
				n := sizes[r.IntN(len(sizes))]
				for range n {
					b.AppendKind(arrowconv.Insert)
					b.Column(0).(*arrowconv.FixedCol[int64]).Append(int64(id))
					if id%7 == 0 {
						b.Column(1).AppendNull()
					} else {
						b.Column(1).(*arrowconv.BytesCol).AppendString(fmt.Sprintf("name %d", id%300))
					}
					tags := b.Column(2).(*arrowconv.ListCol)
					tags.Start()
					for k := range id % 3 {
						tags.Child.(*arrowconv.BytesCol).AppendString(fmt.Sprintf("t%d", k))
					}
					b.Column(3).(*arrowconv.FixedCol[decimal128.Num]).Append(decimal128.FromI64(int64(id)))
					id++
				}
				rec := b.Flush()
				if rec == nil {
					continue // no rows: the builder gives no batch
				}
				want = append(want, testutil.PrintedRows(rec)...)
				if err := w.Write(context.Background(), rec); err != nil {
					t.Fatal(err)
				}
				rec.Release()
				if n > 0 && w.Buffered() == 0 {
					t.Fatalf("a batch of %d rows written, nothing buffered: the writer's memory bound cannot see held batches", n)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			got, _, err := testutil.ReadParquet(path, testutil.ReadMem)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("read back %d rows, wrote %d; first difference at %d", len(got), len(want), firstDiff(got, want))
			}
			if n := rowGroups(t, path); n != (len(want)+rgRows-1)/rgRows {
				t.Errorf("%d row groups of %d rows, want %d", n, len(want), (len(want)+rgRows-1)/rgRows)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, data)
		})
	}
	for i := 1; i < len(files); i++ {
		if !bytes.Equal(files[0], files[i]) {
			t.Errorf("variant %d wrote another file than writing every batch at once", i)
		}
	}
	// The routed memory bound shrinks a writer between its batches: what
	// it holds is written first, and the writer takes batches after.
	t.Run("shrink", func(t *testing.T) {
		w, path, row := heldWriter(t, s)
		var want []string
		for i := range 30 {
			rec := row(i)
			want = append(want, testutil.PrintedRows(rec)...)
			if err := w.Write(context.Background(), rec); err != nil {
				t.Fatal(err)
			}
			rec.Release()
			if i%10 == 9 {
				if err := w.Shrink(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		got, _, err := testutil.ReadParquet(path, testutil.ReadMem)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("read back %d rows, wrote %d; first difference at %d", len(got), len(want), firstDiff(got, want))
		}
		if n := rowGroups(t, path); n != 3 {
			t.Errorf("%d row groups, want 3 (one per Shrink)", n)
		}
	})
	t.Run("abort", func(t *testing.T) {
		w, path, row := heldWriter(t, s)
		for i := range 10 {
			rec := row(i)
			if err := w.Write(context.Background(), rec); err != nil {
				t.Fatal(err)
			}
			rec.Release()
		}
		if err := w.Abort(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("after Abort: %v, want no file", err)
		}
	})
}

// heldWriter returns a writer of schema s (id, name, tags, w) that holds
// batches of under 1000 rows, its path, and row(i), a batch of one row
// (i, "n<i>", NULL, NULL) from a checked allocator: when t ends, every
// batch must have been let go.
func heldWriter(t *testing.T, s *arrowconv.Schema) (*writer.Parquet, string, func(i int) arrow.RecordBatch) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	b := arrowconv.NewBuilder(mem, s)
	t.Cleanup(b.Release)
	path := filepath.Join(t.TempDir(), "f.parquet")
	w, err := writer.NewParquet(path, s, writer.ParquetOptions{HoldRows: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return w, path, func(i int) arrow.RecordBatch {
		b.AppendKind(arrowconv.Insert)
		b.Column(0).(*arrowconv.FixedCol[int64]).Append(int64(i))
		b.Column(1).(*arrowconv.BytesCol).AppendString(fmt.Sprintf("n%d", i))
		b.Column(2).AppendNull()
		b.Column(3).AppendNull()
		return b.Flush()
	}
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func rowGroups(t *testing.T, path string) int {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	return rdr.NumRowGroups()
}
