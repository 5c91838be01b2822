package pipeline

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/cdcetl/cdcetl/decode"
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
					cfg := Config{OutputOptions: OutputOptions{To: ToIceberg, OutDir: wh}, LakeOptions: LakeOptions{TableMode: mode}, RunOptions: RunOptions{Workers: 2}}
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

// reportTable reports the scan plan of the table st loaded, and the best
// of five scans of it.
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
	if snap := tbl.CurrentSnapshot(); snap != nil {
		fs, err := tbl.FS(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		mfs, err := snap.Manifests(fs)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(mfs)), "manifests")
	}
	b.ReportMetric(float64(len(tasks)), "datafiles")
	b.ReportMetric(float64(len(deletes)), "deletefiles")
	b.ReportMetric(float64(refs), "deleterefs")
	b.ReportMetric(bestScan(b, wh, st), "scan-ms") // best of five
	b.ReportMetric(float64(rows), "rows")
}

var yearNights = flag.Int("lake.year", 365, "BenchmarkLakeYear: the nightly runs")

// yearArchive writes nights inputs of one Canal table over keys keys:
// the first inserts every key, each later one changes perNight of them
// (updates, deletes, inserts again), so the table holds about keys rows
// every night.
func yearArchive(tb testing.TB, dir string, keys, nights, perNight int) []string {
	rng := rand.New(rand.NewPCG(11, 3))
	live := make([]int, keys) // version, -1: deleted
	var paths []string
	for n := range nights {
		var b bytes.Buffer
		emit := func(typ string, k, v int, old string) {
			fmt.Fprintf(&b, `{"data":[{"id":"%d","name":"item-%d","qty":"%d","note":"night %d"}],"old":%s,"database":"shop","table":"items","pkNames":["id"],"isDdl":false,"type":"%s","es":%d,"ts":%d,"mysqlType":{"id":"bigint","name":"varchar(32)","qty":"int","note":"varchar(32)"}}`+"\n",
				k, k, v, n, old, typ, 1700000000000+int64(n)*86400000, 1700000000001+int64(n)*86400000)
		}
		if n == 0 {
			for k := range keys {
				emit("INSERT", k, 0, "null")
			}
		} else {
			for range perNight {
				k := rng.IntN(keys)
				switch v := live[k]; {
				case v < 0:
					live[k] = 0
					emit("INSERT", k, 0, "null")
				case rng.IntN(8) == 0:
					live[k] = -1
					emit("DELETE", k, v, "null")
				default:
					live[k] = v + 1
					emit("UPDATE", k, v+1, fmt.Sprintf(`[{"qty":"%d"}]`, v))
				}
			}
		}
		p := filepath.Join(dir, fmt.Sprintf("night-%03d.json", n))
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			tb.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// BenchmarkLakeYear loads an upsert table in a year of nightly runs (one
// small input each, the loads maintaining the table on their own at the
// default thresholds) and reports the iceberg-go scan time of the table
// after the first night and after the last, which hold about the same
// number of keys, their ratio, and the last night's files:
//
//	go test -run '^$' -bench LakeYear -benchtime 1x ./pipeline [-args -lake.year=365]
func BenchmarkLakeYear(b *testing.B) {
	paths := yearArchive(b, b.TempDir(), 50000, *yearNights, 2000)
	for b.Loop() {
		wh := b.TempDir()
		var first, last float64
		var st Stats
		for n, p := range paths {
			var err error
			// Snapshots are kept a second (a year's nights run in minutes:
			// five days would keep them all), as five days keep five nights.
			cfg := Config{DecodingOptions: DecodingOptions{Options: decode.Options{Producer: true}}, OutputOptions: OutputOptions{To: ToIceberg, OutDir: wh}, LakeOptions: LakeOptions{TableMode: lake.ModeUpsert, TableProperties: map[string]string{"history.expire.max-snapshot-age-ms": "1000"}}, RunOptions: RunOptions{Workers: 2}}
			if st, err = Run(context.Background(), cfg, []string{p}); err != nil {
				b.Fatal(err)
			}
			if n == 0 || n == len(paths)-1 {
				b.StopTimer()
				ms := bestScan(b, wh, st)
				if n == 0 {
					first = ms
				} else {
					last = ms
				}
				b.StartTimer()
			}
		}
		b.StopTimer()
		reportTable(b, wh, st)
		b.ReportMetric(first, "first-scan-ms")
		b.ReportMetric(last, "last-scan-ms")
		b.ReportMetric(last/first, "last/first")
		b.StartTimer()
	}
}

// bestScan is the best of five iceberg-go scans of the table st loaded,
// in milliseconds.
func bestScan(b *testing.B, wh string, st Stats) float64 {
	l, err := lake.Open(context.Background(), wh, "")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	dir := st.PerFile[0].Tables[0].Dir
	ns, name := lakeIdent(tableKeyOf(b, filepath.Join(wh, dir)), dir)
	best := time.Duration(1 << 62)
	bestPlan := best
	for range 5 {
		tbl, err := l.Catalog().LoadTable(context.Background(), table.Identifier{ns, name})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if _, err := tbl.Scan().PlanFiles(context.Background()); err != nil {
			b.Fatal(err)
		}
		bestPlan = min(bestPlan, time.Since(start))
		start = time.Now()
		_, it, err := tbl.Scan().ToArrowRecords(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		for rec, err := range it {
			if err != nil {
				b.Fatal(err)
			}
			rec.Release()
		}
		best = min(best, time.Since(start))
	}
	b.Logf("plan %v, scan %v", bestPlan, best)
	return float64(best.Microseconds()) / 1000
}
