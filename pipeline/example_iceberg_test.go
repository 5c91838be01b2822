package pipeline_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/cdcetl/cdcetl/internal/testutil"
	"github.com/cdcetl/cdcetl/pipeline"
)

// Loads the shipped sample into an Iceberg changelog table, then reads the
// table back with iceberg-go alone, as any Go program can: the current
// metadata file is the one metadata/version-hint.text names. This is the
// "Reading the results back" snippet of docs/iceberg.md, run.
func Example_readIcebergWithIcebergGo() {
	ctx := context.Background()
	lake, _ := os.MkdirTemp("", "lake")
	defer os.RemoveAll(lake)
	sample := filepath.Join(testutil.Root(), "testdata", "samples", "canal", "2020-05-13")
	if _, err := pipeline.Run(ctx, pipeline.Config{OutputOptions: pipeline.OutputOptions{To: pipeline.ToIceberg, OutDir: lake}}, []string{sample}); err != nil {
		fmt.Println(err)
		return
	}

	dir := filepath.Join(lake, "inventory", "products")
	hint, err := os.ReadFile(filepath.Join(dir, "metadata", "version-hint.text"))
	if err != nil {
		fmt.Println(err)
		return
	}
	meta := filepath.Join(dir, "metadata", strings.TrimSpace(string(hint))+".metadata.json")
	tbl, err := table.NewFromLocation(ctx, table.Identifier{"inventory", "products"}, meta,
		func(context.Context) (icebergio.IO, error) { return icebergio.LocalFS{}, nil }, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	_, records, err := tbl.Scan().ToArrowRecords(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	kinds := map[string]int{}
	for rec, err := range records {
		if err != nil {
			fmt.Println(err)
			return
		}
		col := rec.Column(0).(*array.String) // _rowkind
		for i := 0; i < col.Len(); i++ {
			kinds[col.Value(i)]++
		}
		rec.Release()
	}
	fmt.Println("+I", kinds["+I"], "-U", kinds["-U"], "+U", kinds["+U"], "-D", kinds["-D"])
	// Output: +I 4 -U 3 +U 3 -D 1
}
