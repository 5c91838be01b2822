package pipeline

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/cdcetl/cdcetl/internal/cdcgen"
	"github.com/cdcetl/cdcetl/internal/lazysubstrait"
	"github.com/cdcetl/cdcetl/lake"
)

var (
	lakeMB     = flag.Int("lake.mb", 60, "BenchmarkLakeArchive: the archive's size in MiB")
	lakeInputs = flag.Int("lake.inputs", 480, "BenchmarkLakeArchive: the inputs it is cut into")
	lakeNights = flag.Int("lake.nights", 8, "BenchmarkLakeArchive: the runs of the nightly case")
)

// BenchmarkLakeArchive loads an archive shaped as real ones are (one
// generated Canal change stream of the products table cut, in order, into
// many small inputs, as hourly files are) into an Iceberg table, changelog
// and upsert, in one run and in nightly runs, and reports what the table
// costs its readers: data files, delete files, delete-file references in
// the scan plan (each data file counts the delete files applied to it) and
// the time of an iceberg-go scan of the whole table. Run it once:
//
//	go test -run '^$' -bench LakeArchive -benchtime 1x ./pipeline [-args -lake.mb=60 -lake.inputs=480 -lake.nights=8]
func BenchmarkLakeArchive(b *testing.B) {
	in := b.TempDir()
	data := cdcgen.Lines("canal-json", 7, *lakeMB<<20)
	lines := bytes.SplitAfter(data, []byte("\n"))
	var paths []string
	for i := 0; i < *lakeInputs; i++ {
		part := lines[i*len(lines) / *lakeInputs : (i+1)*len(lines) / *lakeInputs]
		p := filepath.Join(in, fmt.Sprintf("%05d.json", i))
		if err := os.WriteFile(p, bytes.Join(part, nil), 0o644); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, p)
	}
	for _, mode := range []string{lake.ModeChangelog, lake.ModeUpsert} {
		for _, nights := range []int{1, *lakeNights} {
			b.Run(fmt.Sprintf("%s/runs=%d", mode, nights), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					wh := b.TempDir()
					cfg := Config{To: ToIceberg, TableMode: mode, OutDir: wh, Workers: 2}
					var st Stats
					for n := 0; n < nights; n++ {
						var err error
						if st, err = Run(context.Background(), cfg, paths[n*len(paths)/nights:(n+1)*len(paths)/nights]); err != nil {
							b.Fatal(err)
						}
					}
					b.StopTimer()
					reportTable(b, wh, st)
					b.StartTimer()
				}
			})
		}
	}
}

// reportTable reports the scan plan and scan time of the table st loaded.
func reportTable(b *testing.B, wh string, st Stats) {
	l, err := lake.Open(context.Background(), wh, "")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	dir := st.PerFile[0].Tables[0].Dir
	ns, name := lakeIdent(tableKeyOf(b, filepath.Join(wh, dir)), dir)
	tbl, err := l.Catalog().LoadTable(context.Background(), table.Identifier{ns, name})
	if err != nil {
		b.Fatal(err)
	}
	if err := lazysubstrait.Ensure(); err != nil {
		b.Fatal(err)
	}
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	refs, deletes := 0, map[string]bool{}
	for _, t := range tasks {
		for _, d := range append(append(t.DeleteFiles, t.EqualityDeleteFiles...), t.DeletionVectorFiles...) {
			refs++
			deletes[d.FilePath()] = true
		}
	}
	start := time.Now()
	_, it, err := tbl.Scan().ToArrowRecords(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	rows := 0
	for rec, err := range it {
		if err != nil {
			b.Fatal(err)
		}
		rows += int(rec.NumRows())
		rec.Release()
	}
	b.ReportMetric(float64(len(tasks)), "datafiles")
	b.ReportMetric(float64(len(deletes)), "deletefiles")
	b.ReportMetric(float64(refs), "deleterefs")
	b.ReportMetric(float64(time.Since(start).Milliseconds()), "scan-ms")
	b.ReportMetric(float64(rows), "rows")
}
