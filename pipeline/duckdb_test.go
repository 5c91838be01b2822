package pipeline

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/internal/cdcgen"
	"github.com/cdcetl/cdcetl/lake"
	"github.com/cdcetl/cdcetl/partition"
)

// TestDuckDBReadsPlannedFiles loads archives into changelog tables (one
// partitioned), plans each table's scan with iceberg-go (PlanFiles), and
// has DuckDB (benchmarks/duckpeer, a cgo build) read exactly those data
// files: per row kind, its row count and every column's non-NULL count
// must be what iceberg-go's scanner reads.
func TestDuckDBReadsPlannedFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds DuckDB's Go binding")
	}
	duck := filepath.Join(t.TempDir(), "duckpeer")
	build := exec.Command("go", "build", "-o", duck, "./duckpeer")
	build.Dir = filepath.Join("..", "benchmarks")
	build.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building benchmarks/duckpeer (DuckDB): %v\n%s", err, out)
	}
	for _, c := range []struct{ format, partitionBy string }{{"canal-json", ""}, {"debezium-json", "bucket(3, _line)"}, {"maxwell-json", ""}, {"ogg-json", "truncate(2, _source_pos)"}} {
		t.Run(c.format, func(t *testing.T) {
			in := t.TempDir()
			var paths []string
			for _, f := range cdcgen.Archive(c.format, 20) {
				p := filepath.Join(in, f.Name)
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.WriteFile(p, f.Data, 0o644)
				paths = append(paths, p)
			}
			wh := t.TempDir()
			cfg := Config{DecodingOptions: DecodingOptions{Options: decode.Options{Producer: true, CaseInsensitive: true}}, OutputOptions: OutputOptions{To: ToIceberg, OutDir: wh}, RunOptions: RunOptions{Workers: 2}}
			if c.partitionBy != "" {
				spec, err := partition.ParsePartitionBy(c.partitionBy)
				if err != nil {
					t.Fatal(err)
				}
				cfg.PartitionBy = spec
			}
			st, err := Run(context.Background(), cfg, paths)
			if err != nil {
				t.Fatal(err)
			}
			l, err := lake.Open(context.Background(), wh, "")
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			seen := map[string]bool{}
			for _, fs := range st.PerFile {
				for _, ts := range fs.Tables {
					if seen[ts.Dir] {
						continue
					}
					seen[ts.Dir] = true
					ns, name := lakeIdent(tableKeyOf(t, filepath.Join(wh, ts.Dir)), ts.Dir)
					tbl, err := l.Catalog().LoadTable(context.Background(), table.Identifier{ns, name})
					if err != nil {
						t.Fatal(err)
					}
					compareWithDuckDB(t, duck, tbl)
				}
			}
			if len(seen) < 2 {
				t.Fatalf("%d tables", len(seen))
			}
		})
	}
}

func compareWithDuckDB(t *testing.T, duck string, tbl *table.Table) {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var files, dels []string
	seenDel := map[string]bool{}
	quote := func(loc string) string {
		u, err := url.Parse(loc)
		if err != nil {
			t.Fatal(err)
		}
		return "'" + strings.ReplaceAll(u.Path, "'", "''") + "'"
	}
	for _, task := range tasks {
		if len(task.DeletionVectorFiles)+len(task.EqualityDeleteFiles) > 0 {
			t.Fatalf("%s: deletes DuckDB cannot apply by hand (a v2 table's position deletes only)", task.File.FilePath())
		}
		for _, d := range task.DeleteFiles {
			if !seenDel[d.FilePath()] {
				seenDel[d.FilePath()] = true
				dels = append(dels, quote(d.FilePath()))
			}
		}
		files = append(files, quote(task.File.FilePath()))
	}
	if len(files) == 0 {
		t.Fatalf("%v: no files planned", tbl.Identifier())
	}
	var cols []string
	for _, f := range tbl.Schema().Fields() {
		if f.Name != "_rowkind" {
			cols = append(cols, f.Name)
		}
	}
	sort.Strings(cols)
	// iceberg-go's scanner: per row kind, rows and non-NULL counts.
	want := map[string][]int64{}
	_, it, err := tbl.Scan().ToArrowRecords(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		idx := map[string]int{}
		for i, f := range rec.Schema().Fields() {
			idx[f.Name] = i
		}
		kinds := canonical(t, rec.Column(idx["_rowkind"]))
		for r, k := range kinds {
			v := want[k]
			if v == nil {
				v = make([]int64, 1+len(cols))
				want[k] = v
			}
			v[0]++
			for j, c := range cols {
				if i, ok := idx[c]; ok && rec.Column(i).IsValid(r) {
					v[1+j]++
				}
			}
		}
		rec.Release()
	}
	var b strings.Builder
	for k := range want {
		v := want[k]
		parts := []string{k}
		for _, n := range v {
			parts = append(parts, fmt.Sprint(n))
		}
		b.WriteString(strings.Join(parts, "\t") + "\n")
	}
	wantLines := strings.Split(strings.TrimSpace(b.String()), "\n")
	sort.Strings(wantLines)
	sel := []string{"_rowkind", "count(*)"}
	for _, c := range cols {
		sel = append(sel, `count("`+strings.ReplaceAll(c, `"`, `""`)+`")`)
	}
	q := fmt.Sprintf("SELECT %s FROM read_parquet([%s], union_by_name = true) GROUP BY 1 ORDER BY 1", strings.Join(sel, ", "), strings.Join(files, ", "))
	if len(dels) > 0 {
		// Position deletes applied by hand: a row goes when a delete
		// file names its file (by URL) and its position in it.
		q = fmt.Sprintf(`WITH d AS (SELECT * FROM read_parquet([%s], union_by_name = true, filename = true, file_row_number = true)),
			x AS (SELECT replace(file_path, 'file://', '') AS f, pos FROM read_parquet([%s]))
			SELECT %s FROM d ANTI JOIN x ON d.filename = x.f AND d.file_row_number = x.pos GROUP BY 1 ORDER BY 1`,
			strings.Join(files, ", "), strings.Join(dels, ", "), strings.Join(sel, ", "))
	}
	out, err := exec.Command(duck, "query", q).CombinedOutput()
	if err != nil {
		t.Fatalf("duckdb: %v\n%s\nquery: %s", err, out, q)
	}
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	sort.Strings(got)
	if strings.Join(got, "\n") != strings.Join(wantLines, "\n") {
		t.Fatalf("%v (%d files): DuckDB reads\n%s\niceberg-go scans (row kind, rows, non-NULL per column of %v)\n%s", tbl.Identifier(), len(files), strings.Join(got, "\n"), cols, strings.Join(wantLines, "\n"))
	}
}

// TestDuckDBAppliesPositionDeletes: format-v2 tables with position
// deletes (an upsert table loaded over several runs; a changelog table
// whose grown input's earlier rows sit in a packed file): DuckDB reads
// the planned data files, applies the position-delete files by hand, and
// counts per row kind what iceberg-go's scanner reads.
func TestDuckDBAppliesPositionDeletes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds DuckDB's Go binding")
	}
	duck := filepath.Join(t.TempDir(), "duckpeer")
	build := exec.Command("go", "build", "-o", duck, "./duckpeer")
	build.Dir = filepath.Join("..", "benchmarks")
	build.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building benchmarks/duckpeer (DuckDB): %v\n%s", err, out)
	}
	opts := decode.Options{Producer: true, CaseInsensitive: true}
	for _, mode := range []string{lake.ModeUpsert, lake.ModeChangelog} {
		t.Run(mode, func(t *testing.T) {
			paths := upsertArchive(t, t.TempDir(), 6, 300)
			whole, _ := os.ReadFile(paths[0])
			lines := strings.SplitAfter(string(whole), "\n")
			os.WriteFile(paths[0], []byte(strings.Join(lines[:100], "")), 0o644)
			wh := t.TempDir()
			cfg := Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToIceberg, OutDir: wh}, LakeOptions: LakeOptions{TableMode: mode, NoMaintain: true, TableProperties: map[string]string{"format-version": "2"}}, RunOptions: RunOptions{Workers: 2}}
			for n, ps := range [][]string{paths[:3], paths[3:5], paths} {
				if n == 2 {
					os.WriteFile(paths[0], whole, 0o644) // grown
				}
				if _, err := Run(context.Background(), cfg, ps); err != nil {
					t.Fatal(err)
				}
			}
			l, err := lake.Open(context.Background(), wh, "")
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			withDeletes := 0
			for _, name := range []string{"t0", "t1"} {
				tbl, err := l.Catalog().LoadTable(context.Background(), table.Identifier{"shop", name})
				if err != nil {
					t.Fatal(err)
				}
				tasks, err := tbl.Scan().PlanFiles(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				for _, task := range tasks {
					if len(task.DeleteFiles) > 0 {
						withDeletes++
					}
				}
				compareWithDuckDB(t, duck, tbl)
			}
			if withDeletes == 0 {
				t.Fatal("no data file has position deletes: the check checks nothing")
			}
		})
	}
}
