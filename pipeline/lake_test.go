package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/infer"
	"github.com/cdcetl/cdcetl/internal/cdcgen"
	"github.com/cdcetl/cdcetl/internal/lazysubstrait"
	"github.com/cdcetl/cdcetl/internal/outdir"
	"github.com/cdcetl/cdcetl/internal/setting"
	"github.com/cdcetl/cdcetl/internal/testutil"
	"github.com/cdcetl/cdcetl/lake"
	"github.com/cdcetl/cdcetl/partition"
)

// canonical turns a column into comparable text per row: the types
// Iceberg stores differently (TINYINT as int, milliseconds as
// microseconds, the row kind as plain strings) are cast to one form first.
func canonical(t *testing.T, arr arrow.Array) []string {
	t.Helper()
	var to arrow.DataType
	switch dt := arr.DataType().(type) {
	case *arrow.DictionaryType:
		to = dt.ValueType
	case *arrow.Int8Type, *arrow.Int16Type:
		to = arrow.PrimitiveTypes.Int32
	case *arrow.TimestampType:
		if dt.Unit != arrow.Microsecond {
			to = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: dt.TimeZone}
		}
	case *arrow.Time32Type:
		to = arrow.FixedWidthTypes.Time64us
	case *arrow.Time64Type:
		if dt.Unit != arrow.Microsecond {
			to = arrow.FixedWidthTypes.Time64us
		}
	}
	if to != nil {
		out, err := compute.CastArray(context.Background(), arr, compute.UnsafeCastOptions(to))
		if err != nil {
			t.Fatalf("cast %s to %s: %v", arr.DataType(), to, err)
		}
		defer out.Release()
		arr = out
	}
	s := make([]string, arr.Len())
	for i := range s {
		if arr.IsNull(i) {
			s[i] = "NULL"
		} else {
			s[i] = arr.ValueStr(i)
		}
	}
	return s
}

// rowsOf renders every row of rec as "col=value" pairs in column-name
// order, the columns absent from rec as NULL when they are in cols.
func rowsOf(t *testing.T, rec arrow.RecordBatch, cols []string) []string {
	t.Helper()
	byName := map[string][]string{}
	for i, f := range rec.Schema().Fields() {
		byName[f.Name] = canonical(t, rec.Column(i))
	}
	out := make([]string, rec.NumRows())
	for r := range out {
		var b strings.Builder
		for _, c := range cols {
			v := "NULL"
			if vs, ok := byName[c]; ok {
				v = vs[r]
			}
			fmt.Fprintf(&b, "%s=%s|", c, v)
		}
		out[r] = b.String()
	}
	return out
}

// scanTable reads a table back with iceberg-go's scanner (which applies
// deletes), as canonical rows over its current columns.
func scanTable(t *testing.T, tbl *table.Table) (cols, rows []string) {
	t.Helper()
	for _, f := range tbl.Schema().Fields() {
		cols = append(cols, f.Name)
	}
	slices.Sort(cols)
	return cols, scanRows(t, tbl, cols)
}

// scanRows scans a table (with opts) as sorted canonical rows over cols.
func scanRows(t *testing.T, tbl *table.Table, cols []string, opts ...table.ScanOption) []string {
	t.Helper()
	// A row filter needs substrait's function catalogue, which a
	// conversion that only appends never loads.
	if err := lazysubstrait.Ensure(); err != nil {
		t.Fatal(err)
	}
	_, it, err := tbl.Scan(opts...).ToArrowRecords(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, rowsOf(t, rec, cols)...)
		rec.Release()
	}
	slices.Sort(rows)
	return rows
}

// parquetRows reads the Parquet files under dir (a routed table's
// directory, its versions' subdirectories excluded) as canonical rows.
func parquetRows(t *testing.T, dir string, cols []string) []string {
	t.Helper()
	var rows []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if d.IsDir() && p != dir && outdir.IsVersionDir(d.Name()) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".parquet") {
			return nil
		}
		rdr, err := file.OpenParquetFile(p, false)
		if err != nil {
			t.Fatal(err)
		}
		defer rdr.Close()
		fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		tb, err := fr.ReadTable(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer tb.Release()
		tr := array.NewTableReader(tb, 1<<20)
		defer tr.Release()
		for tr.Next() {
			rows = append(rows, rowsOf(t, tr.RecordBatch(), cols)...)
		}
		return nil
	})
	slices.Sort(rows)
	return rows
}

// TestIcebergChangelogMatchesParquet converts a mixed archive of every
// format to Iceberg tables and to routed Parquet, and checks that each
// table, read back with iceberg-go's scanner, holds exactly the rows of
// the Parquet outputs; a rerun commits nothing twice.
func TestIcebergChangelogMatchesParquet(t *testing.T) {
	for _, format := range []string{"canal-json", "maxwell-json", "ogg-json", "debezium-json"} {
		t.Run(format, func(t *testing.T) {
			in := t.TempDir()
			var paths []string
			for _, f := range cdcgen.Archive(format, 40) {
				p := filepath.Join(in, f.Name)
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, f.Data, 0o644); err != nil {
					t.Fatal(err)
				}
				paths = append(paths, p)
			}
			pq, wh := t.TempDir(), t.TempDir()
			opts := decode.Options{Producer: true, CaseInsensitive: true}
			if _, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToParquet, OutDir: pq}, RunOptions: RunOptions{Workers: 2}}, paths); err != nil {
				t.Fatal(err)
			}
			st, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToIceberg, OutDir: wh}, RunOptions: RunOptions{Workers: 2}}, paths)
			if err != nil {
				t.Fatal(err)
			}
			check := func() int {
				l, err := lake.Open(context.Background(), wh, "")
				if err != nil {
					t.Fatal(err)
				}
				defer l.Close()
				tables := 0
				seen := map[string]bool{}
				for _, fs := range st.PerFile {
					for _, ts := range fs.Tables {
						if seen[ts.Dir] {
							continue
						}
						seen[ts.Dir] = true
						tables++
						k := tableKeyOf(t, filepath.Join(wh, ts.Dir))
						ns, name := lakeIdent(k, ts.Dir)
						tbl, err := l.Catalog().LoadTable(context.Background(), table.Identifier{ns, name})
						if err != nil {
							t.Fatalf("%s: %v", ts.Dir, err)
						}
						cols, got := scanTable(t, tbl)
						want := parquetRows(t, filepath.Join(pq, ts.Dir), cols)
						if len(want) == 0 {
							t.Fatalf("%s: no Parquet rows", ts.Dir)
						}
						if !slices.Equal(got, want) {
							t.Errorf("%s: iceberg has %d rows, parquet %d; first difference:\n%s", ts.Dir, len(got), len(want), firstDiff(got, want))
						}
					}
				}
				return tables
			}
			if n := check(); n < 2 {
				t.Fatalf("only %d tables", n)
			}
			// A rerun with --force converts again and commits nothing.
			st2, err := Run(context.Background(), Config{InputOptions: InputOptions{Force: true}, DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToIceberg, OutDir: wh}, RunOptions: RunOptions{Workers: 2}}, paths)
			if err != nil {
				t.Fatal(err)
			}
			if st.Committed == 0 || st2.Committed != 0 || st2.Held != st.Committed {
				t.Errorf("first run committed %d parts; the rerun %d, and found %d held", st.Committed, st2.Committed, st2.Held)
			}
			check()
		})
	}
}

// tableKeyOf reads a routed table's key back from its schema file.
func tableKeyOf(t testing.TB, dir string) TableKey {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, outdir.SchemaFile))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := infer.LoadTable(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return tb.Key
}

func firstDiff(a, b []string) string {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return "iceberg: " + a[i] + "\nparquet: " + b[i]
		}
	}
	if len(a) > len(b) {
		return "iceberg extra: " + a[len(b)]
	}
	if len(b) > len(a) {
		return "parquet extra: " + b[len(a)]
	}
	return ""
}

// upsertArchive writes files of Canal messages over a small key space of
// two tables (inserts, updates, deletes, re-inserts of deleted keys, keys
// touched many times in one file): rng-driven, so every run is the same.
func upsertArchive(t *testing.T, dir string, files, perFile int) []string {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 17))
	live := [2]map[int]int{{}, {}} // key → version
	var paths []string
	for f := 0; f < files; f++ {
		var b strings.Builder
		for r := 0; r < perFile; r++ {
			tb := rng.IntN(2)
			k := rng.IntN(60)
			v, ok := live[tb][k]
			row := func(v int) string { return fmt.Sprintf(`{"id":"%d","grp":"g%d","v":"%d"}`, k, tb, v) }
			var typ, data, old string
			switch {
			case !ok:
				live[tb][k] = 0
				typ, data = "INSERT", row(0)
			case rng.IntN(4) == 0:
				delete(live[tb], k)
				typ, data = "DELETE", row(v)
			default:
				live[tb][k] = v + 1
				typ, data, old = "UPDATE", row(v+1), fmt.Sprintf(`[{"v":"%d"}]`, v)
			}
			if old == "" {
				old = "null"
			}
			fmt.Fprintf(&b, `{"data":[%s],"old":%s,"database":"shop","table":"t%d","pkNames":["id"],"isDdl":false,"type":"%s","es":1700000000000,"ts":1700000000001,"mysqlType":{"id":"int","grp":"varchar(8)","v":"int"}}`+"\n", data, old, tb, typ)
		}
		p := filepath.Join(dir, fmt.Sprintf("f%02d.json", f))
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// replay applies a table's routed Parquet changelog (files in input
// order) per key: the rows left are the table's current state.
func replay(t *testing.T, dir string, key []string, cols []string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.parquet"))
	slices.Sort(files)
	state := map[string]string{}
	for _, p := range files {
		rdr, err := file.OpenParquetFile(p, false)
		if err != nil {
			t.Fatal(err)
		}
		fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		tb, err := fr.ReadTable(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		tr := array.NewTableReader(tb, 1<<20)
		for tr.Next() {
			rec := tr.RecordBatch()
			rows := rowsOf(t, rec, cols)
			keys := rowsOf(t, rec, key)
			kinds := canonical(t, rec.Column(0))
			for i, k := range keys {
				switch kinds[i] {
				case "+I", "+U":
					state[k] = rows[i]
				default:
					delete(state, k)
				}
			}
		}
		tr.Release()
		tb.Release()
		rdr.Close()
	}
	var out []string
	for _, r := range state {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

// TestIcebergUpsertIsCurrentState loads a changelog into upsert tables in
// several runs (so later inputs update and delete rows of earlier
// commits) and checks, after each, that iceberg-go's scanner (which
// applies the equality and position deletes) sees exactly the state the
// changelog replayed per key gives; a forced rerun changes nothing.
func TestIcebergUpsertIsCurrentState(t *testing.T) {
	in := t.TempDir()
	paths := upsertArchive(t, in, 8, 300)
	opts := decode.Options{Producer: true, CaseInsensitive: true}
	pq, wh := t.TempDir(), t.TempDir()
	if _, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToParquet, OutDir: pq}, RunOptions: RunOptions{Workers: 2}}, paths); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{3, 8, 8} {
		force := n == 8 && slices.Contains([]int{8}, n)
		cfg := Config{InputOptions: InputOptions{Force: force}, DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToIceberg, OutDir: wh}, LakeOptions: LakeOptions{TableMode: lake.ModeUpsert}, RunOptions: RunOptions{Workers: 2}}
		if _, err := Run(context.Background(), cfg, paths[:n]); err != nil {
			t.Fatal(err)
		}
		if n < 8 {
			continue // the Parquet side has every input
		}
		l, err := lake.Open(context.Background(), wh, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"t0", "t1"} {
			tbl, err := l.Catalog().LoadTable(context.Background(), table.Identifier{"shop", name})
			if err != nil {
				t.Fatal(err)
			}
			var key []string
			for _, id := range tbl.Schema().IdentifierFieldIDs {
				f, _ := tbl.Schema().FindFieldByID(id)
				key = append(key, f.Name)
			}
			if !slices.Equal(key, []string{"id"}) {
				t.Fatalf("shop.%s: identifier fields %v, want [id]", name, key)
			}
			cols, got := scanTable(t, tbl)
			want := replay(t, filepath.Join(pq, "shop", name), key, cols)
			if len(want) < 10 {
				t.Fatalf("shop.%s: only %d live keys", name, len(want))
			}
			if !slices.Equal(got, want) {
				t.Fatalf("shop.%s: the table has %d rows, the replayed changelog %d; first difference:\n%s", name, len(got), len(want), firstDiff(got, want))
			}
		}
		l.Close()
	}
}

// TestIcebergPartitioned loads a changelog into tables partitioned by
// bucket(4, id) and truncate(1, grp): every row is there, and scans that
// prune by partition (id = k for each key) find exactly the key's rows,
// which they cannot when a file's partition values are wrong.
func TestIcebergPartitioned(t *testing.T) {
	in := t.TempDir()
	paths := upsertArchive(t, in, 4, 200)
	opts := decode.Options{Producer: true, CaseInsensitive: true}
	pq, wh := t.TempDir(), t.TempDir()
	if _, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToParquet, OutDir: pq}, RunOptions: RunOptions{Workers: 2}}, paths); err != nil {
		t.Fatal(err)
	}
	spec, err := partition.ParsePartitionBy("bucket(4, id), truncate(1, grp)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToIceberg, OutDir: wh, PartitionBy: spec}, RunOptions: RunOptions{Workers: 2}}, paths); err != nil {
		t.Fatal(err)
	}
	l, err := lake.Open(context.Background(), wh, "")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, name := range []string{"t0", "t1"} {
		tbl, err := l.Catalog().LoadTable(context.Background(), table.Identifier{"shop", name})
		if err != nil {
			t.Fatal(err)
		}
		if spec := tbl.Spec(); spec.NumFields() != 2 {
			t.Fatalf("shop.%s: spec %s", name, spec.String())
		}
		cols, got := scanTable(t, tbl)
		want := parquetRows(t, filepath.Join(pq, "shop", name), cols)
		if !slices.Equal(got, want) {
			t.Fatalf("shop.%s: %d rows, parquet %d:\n%s", name, len(got), len(want), firstDiff(got, want))
		}
		all, err := tbl.Scan().PlanFiles(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for k := range 60 {
			filter := iceberg.EqualTo(iceberg.Reference("id"), int32(k))
			tasks, err := tbl.Scan(table.WithRowFilter(filter)).PlanFiles(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(tasks) >= len(all) {
				t.Fatalf("shop.%s id=%d: %d of %d files planned: no pruning", name, k, len(tasks), len(all))
			}
			rows := scanRows(t, tbl, cols, table.WithRowFilter(filter))
			wantK := keyRows(want, k)
			if !slices.Equal(rows, wantK) {
				t.Fatalf("shop.%s id=%d: %d rows, want %d", name, k, len(rows), len(wantK))
			}
		}
	}
}

// TestIcebergUpsertPartitioned loads a changelog in two runs into upsert
// tables partitioned by bucket(4, id): each partition gets its own data,
// position-delete and equality-delete files (with the partition's
// values), and the scanner, pruned to one key or not, sees the state the
// replayed changelog gives. A partition field of a non-key column is
// refused, naming what to do.
func TestIcebergUpsertPartitioned(t *testing.T) {
	in := t.TempDir()
	paths := upsertArchive(t, in, 6, 300)
	opts := decode.Options{Producer: true, CaseInsensitive: true}
	pq, wh := t.TempDir(), t.TempDir()
	if _, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToParquet, OutDir: pq}, RunOptions: RunOptions{Workers: 2}}, paths); err != nil {
		t.Fatal(err)
	}
	spec, err := partition.ParsePartitionBy("bucket(4, id)")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{2, 6} {
		// Not maintained: the deletes by position are what is checked.
		cfg := Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToIceberg, OutDir: wh, PartitionBy: spec}, LakeOptions: LakeOptions{TableMode: lake.ModeUpsert, NoMaintain: true}, RunOptions: RunOptions{Workers: 2}}
		if _, err := Run(context.Background(), cfg, paths[:n]); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"t0", "t1"} {
		tbl := loadTable(t, wh, "", "shop", name)
		cols, got := scanTable(t, tbl)
		want := replay(t, filepath.Join(pq, "shop", name), []string{"id"}, cols)
		if len(want) < 10 || !slices.Equal(got, want) {
			t.Fatalf("shop.%s: the table has %d rows, the replayed changelog %d:\n%s", name, len(got), len(want), firstDiff(got, want))
		}
		tasks, err := tbl.Scan().PlanFiles(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		withDeletes := 0
		for _, task := range tasks {
			if len(task.DeleteFiles)+len(task.DeletionVectorFiles) > 0 {
				withDeletes++
			}
			if len(task.EqualityDeleteFiles) > 0 {
				t.Fatalf("%s: equality deletes apply to it", task.File.FilePath())
			}
			if task.File.Partition()[1000] == nil {
				t.Fatalf("%s: no partition value", task.File.FilePath())
			}
		}
		if withDeletes == 0 {
			t.Fatalf("shop.%s: no data file has deletes", name)
		}
		for k := range 60 {
			filter := iceberg.EqualTo(iceberg.Reference("id"), int32(k))
			rows := scanRows(t, tbl, cols, table.WithRowFilter(filter))
			if wantK := keyRows(want, k); !slices.Equal(rows, wantK) {
				t.Fatalf("shop.%s id=%d: %v, want %v", name, k, rows, wantK)
			}
		}
	}
	byGrp, _ := partition.ParsePartitionBy("grp")
	_, err = Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToIceberg, OutDir: t.TempDir(), PartitionBy: byGrp}, LakeOptions: LakeOptions{TableMode: lake.ModeUpsert}, RunOptions: RunOptions{Workers: 1}}, paths[:1])
	if err == nil || !strings.Contains(err.Error(), "primary key column") {
		t.Fatalf("partitioned by a non-key column: err = %v", err)
	}
}

// TestIcebergUpsertFillsUnchanged loads Maxwell MINIMAL images into
// upsert tables (plain and partitioned by bucket(2, id)) in two runs: the
// columns a key's last image lacks come from the input's earlier rows or,
// across commits, from the table's current row; a column no message ever
// carried stays NULL. The expected state is the generator's model.
func TestIcebergUpsertFillsUnchanged(t *testing.T) {
	paths, want, _ := minimalArchive(t)
	opts := decode.Options{Producer: true, CaseInsensitive: true}
	spec, _ := partition.ParsePartitionBy("bucket(2, id)")
	for _, parts := range [][]partition.Field{nil, spec} {
		wh := t.TempDir()
		for _, n := range []int{3, 6} {
			cfg := Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToIceberg, OutDir: wh, PartitionBy: parts}, LakeOptions: LakeOptions{TableMode: lake.ModeUpsert}, RunOptions: RunOptions{Workers: 2}}
			if _, err := Run(context.Background(), cfg, paths[:n]); err != nil {
				t.Fatal(err)
			}
		}
		got := scanRows(t, loadTable(t, wh, "", "d", "t"), []string{"id", "a", "b", "c"})
		if !slices.Equal(got, want) {
			t.Fatalf("partitioned %v: the table has %d rows, the model %d:\n%s", parts, len(got), len(want), firstDiff(got, want))
		}
	}
}

// TestIcebergUpsertFillsUnchangedCompositeKey: the table lookup of a
// two-column key (a filter of ANDs under an OR) finds the key's row.
func TestIcebergUpsertFillsUnchangedCompositeKey(t *testing.T) {
	in := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(in, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	p1 := write("a.json", `{"database":"d","table":"t","type":"insert","ts":1,"primary_key_columns":["id","k2"],"data":{"id":1,"k2":"x","a":"a1","b":"b1"}}
{"database":"d","table":"t","type":"insert","ts":1,"primary_key_columns":["id","k2"],"data":{"id":1,"k2":"y","a":"a2","b":"b2"}}
`)
	p2 := write("b.json", `{"database":"d","table":"t","type":"update","ts":2,"primary_key_columns":["id","k2"],"data":{"id":1,"k2":"y","a":"a3"},"old":{"a":"a2"}}
`)
	wh := t.TempDir()
	cfg := Config{DecodingOptions: DecodingOptions{Options: decode.Options{Producer: true, CaseInsensitive: true}}, OutputOptions: OutputOptions{To: ToIceberg, OutDir: wh}, LakeOptions: LakeOptions{TableMode: lake.ModeUpsert}, RunOptions: RunOptions{Workers: 1}}
	for _, ps := range [][]string{{p1}, {p1, p2}} {
		if _, err := Run(context.Background(), cfg, ps); err != nil {
			t.Fatal(err)
		}
	}
	got := scanRows(t, loadTable(t, wh, "", "d", "t"), []string{"id", "k2", "a", "b"})
	want := []string{"id=1|k2=x|a=a1|b=b1|", "id=1|k2=y|a=a3|b=b2|"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// loadTable loads table ns.name of the warehouse wh through catalog uri
// ("": the embedded one); the catalog closes when the test ends.
func loadTable(t *testing.T, wh, uri, ns, name string) *table.Table {
	t.Helper()
	l, err := lake.Open(context.Background(), wh, uri)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	tbl, err := l.Catalog().LoadTable(context.Background(), table.Identifier{ns, name})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// keyRows are the rows of key id=k among canonical rows.
func keyRows(rows []string, k int) []string {
	var out []string
	for _, r := range rows {
		if strings.Contains(r, fmt.Sprintf("|id=%d|", k)) {
			out = append(out, r)
		}
	}
	return out
}

// TestIcebergUpsertFreshProcess: substrait's function catalogue is loaded
// only when a load needs it. In a process that never loaded it, a
// changelog load (appends) leaves it unloaded, and an upsert load that
// merges into what the table holds (a scan with a row filter, through
// substrait) loads it and succeeds. The test runs itself again in a new
// process: in this one other tests may have loaded the catalogue.
func TestIcebergUpsertFreshProcess(t *testing.T) {
	if os.Getenv("CDCETL_FRESH_PROCESS") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestIcebergUpsertFreshProcess$", "-test.v")
		cmd.Env = append(os.Environ(), "CDCETL_FRESH_PROCESS=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestIcebergUpsertFreshProcess") {
			t.Fatalf("in a new process: %v\n%s", err, out)
		}
		return
	}
	if lazysubstrait.Loaded() {
		t.Fatal("the catalogue was loaded before any load")
	}
	// Maxwell MINIMAL images of a two-column key: the second upsert load
	// fills the column an image lacks from the table's current row, found
	// by a filter of ANDs under an OR (substrait's default functions; a
	// one-column key's IN needs only iceberg-go's own).
	in := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(in, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p1 := write("a.json", `{"database":"d","table":"t","type":"insert","ts":1,"primary_key_columns":["id","k2"],"data":{"id":1,"k2":"x","a":"a1","b":"b1"}}
{"database":"d","table":"t","type":"insert","ts":1,"primary_key_columns":["id","k2"],"data":{"id":1,"k2":"y","a":"a2","b":"b2"}}
`)
	p2 := write("b.json", `{"database":"d","table":"t","type":"update","ts":2,"primary_key_columns":["id","k2"],"data":{"id":1,"k2":"y","a":"a3"},"old":{"a":"a2"}}
`)
	opts := decode.Options{Producer: true, CaseInsensitive: true}
	if _, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToIceberg, OutDir: t.TempDir()}, RunOptions: RunOptions{Workers: 1}}, []string{p1, p2}); err != nil {
		t.Fatal(err)
	}
	if lazysubstrait.Loaded() {
		t.Fatal("a changelog load loaded the catalogue")
	}
	wh := t.TempDir()
	cfg := Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToIceberg, OutDir: wh}, LakeOptions: LakeOptions{TableMode: lake.ModeUpsert}, RunOptions: RunOptions{Workers: 1}}
	for _, ps := range [][]string{{p1}, {p1, p2}} {
		if _, err := Run(context.Background(), cfg, ps); err != nil {
			t.Fatalf("upsert load of %d inputs: %v", len(ps), err)
		}
	}
	got := scanRows(t, loadTable(t, wh, "", "d", "t"), []string{"id", "k2", "a", "b"})
	if want := []string{"id=1|k2=x|a=a1|b=b1|", "id=1|k2=y|a=a3|b=b2|"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestIcebergGrownInputReplacesItsRows: an input converted into changelog
// tables, then grown (or rewritten) and converted again, replaces its
// earlier rows in each table (an overwrite removing its earlier data
// files) as its Parquet outputs are replaced: the tables hold what the
// Parquet conversion of the same steps gives, every row once. Plain and
// partitioned tables; another input's rows stay.
func TestIcebergGrownInputReplacesItsRows(t *testing.T) {
	for _, partitioned := range []bool{false, true} {
		t.Run(fmt.Sprintf("partitioned=%v", partitioned), func(t *testing.T) {
			in := t.TempDir()
			paths := upsertArchive(t, in, 2, 400)
			whole, _ := os.ReadFile(paths[0])
			lines := strings.SplitAfter(string(whole), "\n")
			opts := decode.Options{Producer: true, CaseInsensitive: true}
			pq, wh := t.TempDir(), t.TempDir()
			var spec []partition.Field
			if partitioned {
				var err error
				if spec, err = partition.ParsePartitionBy("bucket(4, id)"); err != nil {
					t.Fatal(err)
				}
			}
			steps := []string{strings.Join(lines[:150], ""), string(whole), strings.Join(lines[100:], "")}
			for _, content := range steps {
				os.WriteFile(paths[0], []byte(content), 0o644)
				if _, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToParquet, OutDir: pq}, RunOptions: RunOptions{Workers: 2}}, paths); err != nil {
					t.Fatal(err)
				}
				if _, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToIceberg, OutDir: wh, PartitionBy: spec}, RunOptions: RunOptions{Workers: 2}}, paths); err != nil {
					t.Fatal(err)
				}
			}
			for _, name := range []string{"t0", "t1"} {
				tbl := loadTable(t, wh, "", "shop", name)
				cols, got := scanTable(t, tbl)
				want := parquetRows(t, filepath.Join(pq, "shop", name), cols)
				if !slices.Equal(got, want) {
					t.Fatalf("shop.%s: %d rows, parquet %d:\n%s", name, len(got), len(want), firstDiff(got, want))
				}
			}
		})
	}
}

// TestIcebergVersionHint: every table has metadata/version-hint.text naming
// its current metadata file, so a reader that opens the table by its
// directory, without the catalog, reads what the catalog's readers read;
// a hint naming a later version than a commit's is not written over.
func TestIcebergVersionHint(t *testing.T) {
	in := t.TempDir()
	paths := upsertArchive(t, in, 4, 100)
	opts := decode.Options{Producer: true, CaseInsensitive: true}
	wh := t.TempDir()
	for _, n := range []int{2, 4} {
		if _, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToIceberg, OutDir: wh}, RunOptions: RunOptions{Workers: 2}}, paths[:n]); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"t0", "t1"} {
		tbl := loadTable(t, wh, "", "shop", name)
		meta := filepath.Join(wh, "shop", name, "metadata")
		hint, err := os.ReadFile(filepath.Join(meta, lake.HintFile))
		if err != nil {
			t.Fatal(err)
		}
		loc := filepath.Join(meta, string(hint)+".metadata.json")
		if want, _ := lake.PathOf(tbl.MetadataLocation()); loc != want {
			t.Fatalf("shop.%s: the hint names %s, the catalog %s", name, loc, want)
		}
		byDir, err := table.NewFromLocation(context.Background(), table.Identifier{"shop", name}, loc, tbl.FS, nil)
		if err != nil {
			t.Fatal(err)
		}
		cols, want := scanTable(t, tbl)
		if got := scanRows(t, byDir, cols); !slices.Equal(got, want) || len(got) == 0 {
			t.Errorf("shop.%s: %d rows by the hint, %d by the catalog", name, len(got), len(want))
		}
	}
	// A later version's hint stays.
	hintPath := filepath.Join(wh, "shop", "t0", "metadata", lake.HintFile)
	os.WriteFile(hintPath, []byte("99999-later"), 0o644)
	os.WriteFile(paths[0], append(must(os.ReadFile(paths[0])), '\n'), 0o644) // a new version of an input
	if _, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToIceberg, OutDir: wh}, RunOptions: RunOptions{Workers: 2}}, paths[:1]); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(hintPath); string(b) != "99999-later" {
		t.Errorf("a hint naming a later version was written over: %q", b)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestIcebergDeletesApart: an upsert table's delete files are under
// deletes/, never data/: every Parquet file a data/**/*.parquet glob finds
// is a data file (it has _rowkind).
func TestIcebergDeletesApart(t *testing.T) {
	in := t.TempDir()
	paths := upsertArchive(t, in, 4, 200)
	wh := t.TempDir()
	for _, v := range []string{"2", "3"} {
		wh := filepath.Join(wh, "v"+v)
		cfg := Config{DecodingOptions: DecodingOptions{Options: decode.Options{Producer: true, CaseInsensitive: true}}, OutputOptions: OutputOptions{To: ToIceberg, OutDir: wh}, LakeOptions: LakeOptions{TableMode: lake.ModeUpsert, TableProperties: map[string]string{"format-version": v}}, RunOptions: RunOptions{Workers: 2}}
		// Two runs: the second deletes rows of the first's files.
		for _, ps := range [][]string{paths[:2], paths} {
			if _, err := Run(context.Background(), cfg, ps); err != nil {
				t.Fatal(err)
			}
		}
		checkDeletesApart(t, wh)
	}
}

func checkDeletesApart(t *testing.T, wh string) {
	deletes := 0
	for _, name := range []string{"t0", "t1"} {
		dir := filepath.Join(wh, "shop", name)
		filepath.WalkDir(filepath.Join(dir, "data"), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".parquet") {
				return err
			}
			cols, _, err := testutil.ReadColumns(p)
			if err != nil || len(cols) == 0 || cols[0] != "_rowkind" {
				t.Errorf("%s under data/ is not a data file (columns %v, %v)", p, cols, err)
			}
			return nil
		})
		for _, ext := range []string{"*.parquet", "*.puffin"} {
			m, _ := filepath.Glob(filepath.Join(dir, lake.DeletesDir, ext))
			deletes += len(m)
		}
	}
	if deletes == 0 {
		t.Errorf("%s: no delete file under deletes/: the test did not test it", wh)
	}
}

// TestUpsertRefusesSecondVersion: an upsert load whose table changes
// incompatibly stops with what to do, rather than start a second table
// that would hold some keys' current rows while the first holds others'.
func TestUpsertRefusesSecondVersion(t *testing.T) {
	dir := t.TempDir()
	msg := func(id, code, mysqlType string) string {
		return fmt.Sprintf(`{"data":[{"id":"%s","code":%s}],"old":null,"database":"shop","table":"orders","pkNames":["id"],"isDdl":false,"type":"INSERT","es":1,"ts":1,"mysqlType":{"id":"int","code":"%s"}}`+"\n", id, code, mysqlType)
	}
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	os.WriteFile(a, []byte(msg("1", `"x"`, "varchar(8)")), 0o644)
	os.WriteFile(b, []byte(msg("1", `"2"`, "int")), 0o644)
	wh := filepath.Join(dir, "wh")
	cfg := Config{DecodingOptions: DecodingOptions{Options: decode.Options{Producer: true}}, OutputOptions: OutputOptions{To: ToIceberg, OutDir: wh}, LakeOptions: LakeOptions{TableMode: lake.ModeUpsert}, RunOptions: RunOptions{Workers: 1}}
	if _, err := Run(context.Background(), cfg, []string{a}); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), cfg, []string{b})
	if err == nil || !strings.Contains(err.Error(), "cannot go on in a second table") || !strings.Contains(err.Error(), setting.ColumnType.String()+" shop.orders.COL=TYPE") {
		t.Fatalf("err = %v", err)
	}
	l, _ := lake.Open(context.Background(), wh, "")
	defer l.Close()
	if tbl, _ := l.Existing(context.Background(), "shop", "orders_v2", filepath.Join(wh, "shop", "orders", "v2")); tbl != nil {
		t.Error("a second table was made")
	}
}

// TestUpsertGroupCommit: the inputs of a run go into an upsert table as
// one snapshot that lists them all, whose rows are one packed data file
// (no delete file: the replaced rows never reach the table); a later
// run's inputs delete the rows they replace by position (one deletion
// vector per data file, no equality delete), and a rerun of every input
// commits nothing. The table equals the changelog replayed per key
// after each run.
func TestUpsertGroupCommit(t *testing.T) {
	in := t.TempDir()
	paths := upsertArchive(t, in, 8, 300)
	opts := decode.Options{Producer: true, CaseInsensitive: true}
	pq, wh := t.TempDir(), t.TempDir()
	cfg := Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToIceberg, OutDir: wh}, LakeOptions: LakeOptions{TableMode: lake.ModeUpsert, NoMaintain: true}, RunOptions: RunOptions{Workers: 2}} // each snapshot a group's
	for n, part := range [][]string{paths[:5], paths[5:], paths} {
		if n == 2 {
			// Without the journal, the tables say what they hold.
			if err := os.Remove(filepath.Join(wh, outdir.JournalName)); err != nil {
				t.Fatal(err)
			}
		}
		st, err := Run(context.Background(), cfg, part)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToParquet, OutDir: pq}, RunOptions: RunOptions{Workers: 2}}, part); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"t0", "t1"} {
			tbl := loadTable(t, wh, "", "shop", name)
			cols, got := scanTable(t, tbl)
			want := replay(t, filepath.Join(pq, "shop", name), []string{"id"}, cols)
			if len(want) < 10 || !slices.Equal(got, want) {
				t.Fatalf("run %d, shop.%s: the table has %d rows, the replayed changelog %d:\n%s", n, name, len(got), len(want), firstDiff(got, want))
			}
			snap := tbl.CurrentSnapshot()
			var ins []lake.Input
			if err := json.Unmarshal([]byte(snap.Summary.Properties[lake.SummaryInputs]), &ins); err != nil {
				t.Fatal(err)
			}
			tasks, err := tbl.Scan().PlanFiles(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			withDV := 0
			for _, task := range tasks {
				if len(task.EqualityDeleteFiles)+len(task.DeleteFiles) > 0 || len(task.DeletionVectorFiles) > 1 {
					t.Fatalf("run %d, shop.%s: %s has deletes other than one vector", n, name, task.File.FilePath())
				}
				withDV += len(task.DeletionVectorFiles)
			}
			switch n {
			case 0:
				if len(ins) != 5 || len(tasks) != 1 || withDV != 0 {
					t.Errorf("run 1, shop.%s: a snapshot of %d inputs, %d data files, %d with a vector; want 5, 1, 0", name, len(ins), len(tasks), withDV)
				}
			case 1:
				if len(ins) != 3 || len(tasks) != 2 || withDV != 1 {
					t.Errorf("run 2, shop.%s: a snapshot of %d inputs, %d data files, %d with a vector; want 3, 2, 1", name, len(ins), len(tasks), withDV)
				}
			case 2:
				if len(ins) != 3 {
					t.Errorf("the rerun made a snapshot (of %d inputs)", len(ins))
				}
			}
		}
		if n == 2 && (st.Committed != 0 || st.Held == 0) {
			t.Errorf("the rerun committed %d, held %d", st.Committed, st.Held)
		}
	}
}

// TestUpsertOverEqualityDeletes: a format-2 upsert table with an
// equality-delete file (as cdcetl wrote them before, and other writers
// do) keeps its deletes under later loads, which delete by position: the
// keys the equality deletes removed stay removed unless a later input
// brings them back, and no key is there twice.
func TestUpsertOverEqualityDeletes(t *testing.T) {
	in := t.TempDir()
	paths := upsertArchive(t, in, 6, 300)
	opts := decode.Options{Producer: true, CaseInsensitive: true}
	pq, wh := t.TempDir(), t.TempDir()
	cfg := Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToIceberg, OutDir: wh}, LakeOptions: LakeOptions{TableMode: lake.ModeUpsert, TableProperties: map[string]string{"format-version": "2"}}, RunOptions: RunOptions{Workers: 2}}
	if _, err := Run(context.Background(), cfg, paths[:5]); err != nil {
		t.Fatal(err)
	}
	// An equality delete of up to 30 keys of shop.t0 the later inputs
	// leave alone, and of 10 they touch.
	later := t.TempDir()
	if _, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToParquet, OutDir: later}, RunOptions: RunOptions{Workers: 2}}, paths[5:]); err != nil {
		t.Fatal(err)
	}
	touched := touchedKeys(t, filepath.Join(later, "shop", "t0"))
	var doomed []int
	gone := map[int]bool{}
	_, rows0 := scanTable(t, loadTable(t, wh, "", "shop", "t0"))
	for _, r := range rows0 {
		var k int
		fmt.Sscanf(r[strings.Index(r, "id="):], "id=%d|", &k)
		if n := len(doomed); touched[fmt.Sprintf("id=%d|", k)] && n < 40 || !touched[fmt.Sprintf("id=%d|", k)] && len(gone) < 30 {
			doomed = append(doomed, k)
			if !touched[fmt.Sprintf("id=%d|", k)] {
				gone[k] = true
			}
		}
	}
	l, err := lake.Open(context.Background(), wh, "")
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := l.Catalog().LoadTable(context.Background(), table.Identifier{"shop", "t0"})
	if err != nil {
		t.Fatal(err)
	}
	fld, _ := tbl.Schema().FindFieldByName("id")
	var typ arrow.DataType = arrow.PrimitiveTypes.Int64
	if fld.Type.Equals(iceberg.PrimitiveTypes.Int32) {
		typ = arrow.PrimitiveTypes.Int32
	}
	md := arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{fmt.Sprint(fld.ID)})
	sch := arrow.NewSchema([]arrow.Field{{Name: "id", Type: typ, Metadata: md}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	for _, k := range doomed {
		if typ == arrow.PrimitiveTypes.Int32 {
			b.Field(0).(*array.Int32Builder).Append(int32(k))
		} else {
			b.Field(0).(*array.Int64Builder).Append(int64(k))
		}
	}
	rec := b.NewRecordBatch()
	eqPath := filepath.Join(wh, "shop", "t0", lake.DeletesDir, "legacy.eq-deletes.parquet")
	os.MkdirAll(filepath.Dir(eqPath), 0o755)
	f, err := os.Create(eqPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := pqarrow.WriteTable(array.NewTableFromRecords(sch, []arrow.RecordBatch{rec}), f, 1024, nil, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	f.Close()
	st, _ := os.Stat(eqPath)
	db, err := iceberg.NewDataFileBuilder(*iceberg.UnpartitionedSpec, iceberg.EntryContentEqDeletes, lake.FileURL(eqPath), iceberg.ParquetFile, nil, nil, nil, int64(len(doomed)), st.Size())
	if err != nil {
		t.Fatal(err)
	}
	tx := tbl.NewTransaction()
	if err := tx.NewRowDelta(nil).AddDeletes(db.EqualityFieldIDs([]int{fld.ID}).Build()).Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if _, err := Run(context.Background(), cfg, paths); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToParquet, OutDir: pq}, RunOptions: RunOptions{Workers: 2}}, paths); err != nil {
		t.Fatal(err)
	}
	tbl = loadTable(t, wh, "", "shop", "t0")
	cols, got := scanTable(t, tbl)
	want := replay(t, filepath.Join(pq, "shop", "t0"), []string{"id"}, cols)
	// The keys the equality delete removed are gone, unless an input
	// after it touched them.
	var expect []string
	for _, r := range want {
		var k int
		fmt.Sscanf(r[strings.Index(r, "id="):], "id=%d|", &k)
		if gone[k] {
			continue
		}
		expect = append(expect, r)
	}
	if len(expect) == len(want) {
		t.Fatal("no key of the equality delete stayed deleted: the test did not test it")
	}
	if !slices.Equal(got, expect) {
		t.Fatalf("the table has %d rows, want %d:\n%s", len(got), len(expect), firstDiff(got, expect))
	}
}

// touchedKeys are the ids (as rowsOf writes them) of every row of the
// Parquet outputs in dir, whatever their kind.
func touchedKeys(t *testing.T, dir string) map[string]bool {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.parquet"))
	out := map[string]bool{}
	for _, p := range files {
		rdr, err := file.OpenParquetFile(p, false)
		if err != nil {
			t.Fatal(err)
		}
		fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		tb, err := fr.ReadTable(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		tr := array.NewTableReader(tb, 1<<20)
		for tr.Next() {
			for _, k := range rowsOf(t, tr.RecordBatch(), []string{"id"}) {
				out[k] = true
			}
		}
		tr.Release()
		tb.Release()
		rdr.Close()
	}
	return out
}

// TestUpsertNightlyStaysCompact loads an upsert table in 30 nightly runs
// of one input each, with compaction thresholds of 6 files: after every
// run the table holds at most 7 data files and 7 delete files (the loads
// compact it on their own) and equals the changelog replayed per key;
// with --no-maintain the files pile up.
func TestUpsertNightlyStaysCompact(t *testing.T) {
	in := t.TempDir()
	paths := upsertArchive(t, in, 18, 120)
	opts := decode.Options{Producer: true, CaseInsensitive: true}
	pq, wh, raw := t.TempDir(), t.TempDir(), t.TempDir()
	props := map[string]string{lake.PropMaxDataFiles: "6", lake.PropMaxDeleteFiles: "6"}
	compacted := 0
	for n, p := range paths {
		st, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToIceberg, OutDir: wh}, LakeOptions: LakeOptions{TableMode: lake.ModeUpsert, TableProperties: props}, RunOptions: RunOptions{Workers: 2}}, []string{p})
		if err != nil {
			t.Fatal(err)
		}
		compacted += len(st.Maintained)
		if _, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToIceberg, OutDir: raw}, LakeOptions: LakeOptions{TableMode: lake.ModeUpsert, TableProperties: props, NoMaintain: true}, RunOptions: RunOptions{Workers: 2}}, []string{p}); err != nil {
			t.Fatal(err)
		}
		if _, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToParquet, OutDir: pq}, RunOptions: RunOptions{Workers: 2}}, []string{p}); err != nil {
			t.Fatal(err)
		}
		if n%5 != 4 && n != len(paths)-1 {
			continue
		}
		for _, name := range []string{"t0", "t1"} {
			tbl := loadTable(t, wh, "", "shop", name)
			cols, got := scanTable(t, tbl)
			want := replay(t, filepath.Join(pq, "shop", name), []string{"id"}, cols)
			if !slices.Equal(got, want) {
				t.Fatalf("night %d, shop.%s: the table has %d rows, the replayed changelog %d:\n%s", n, name, len(got), len(want), firstDiff(got, want))
			}
			tasks, err := tbl.Scan().PlanFiles(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			dels := 0
			for _, task := range tasks {
				dels += len(task.DeletionVectorFiles) + len(task.DeleteFiles)
			}
			if len(tasks) > 7 || dels > 7 {
				t.Fatalf("night %d, shop.%s: %d data files, %d delete-file references", n, name, len(tasks), dels)
			}
		}
	}
	if compacted == 0 {
		t.Error("no load compacted its tables")
	}
	if tasks, err := loadTable(t, raw, "", "shop", "t0").Scan().PlanFiles(context.Background()); err != nil || len(tasks) < 14 {
		t.Errorf("--no-maintain: %d data files (%v): the loads compacted anyway", len(tasks), err)
	}
}

// countDataFiles counts the data and delete files of a table's current
// snapshot.
func countDataFiles(t *testing.T, tbl *table.Table) (data, dels int) {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, task := range tasks {
		data++
		for _, d := range append(append(task.DeleteFiles, task.DeletionVectorFiles...), task.EqualityDeleteFiles...) {
			k := d.FilePath()
			if off := d.ContentOffset(); off != nil {
				k += fmt.Sprint("@", *off)
			}
			if !seen[k] {
				seen[k] = true
				dels++
			}
		}
	}
	return data, dels
}

// TestChangelogPackedAndCompacted: a changelog table loaded from many
// small inputs gets one data file per run (and partition), and keeps
// exactly the Parquet changelog's rows through maintain's compaction and
// inputs that grow before, between and after it: a grown input's earlier
// rows are found in packed and compacted files by the runs of rows their
// footers record.
func TestChangelogPackedAndCompacted(t *testing.T) {
	for _, fv := range []string{"2", "3"} {
		for _, partitioned := range []bool{false, true} {
			t.Run(fmt.Sprintf("v%s/partitioned=%v", fv, partitioned), func(t *testing.T) {
				in := t.TempDir()
				paths := upsertArchive(t, in, 8, 120)
				opts := decode.Options{Producer: true, CaseInsensitive: true}
				pq, wh := t.TempDir(), t.TempDir()
				var spec []partition.Field
				if partitioned {
					var err error
					if spec, err = partition.ParsePartitionBy("bucket(2, id)"); err != nil {
						t.Fatal(err)
					}
				}
				full := map[string][]byte{}
				for _, p := range paths {
					full[p], _ = os.ReadFile(p)
				}
				cut := func(p string, n int) {
					lines := bytes.SplitAfter(full[p], []byte("\n"))
					if err := os.WriteFile(p, bytes.Join(lines[:n], nil), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				load := func(ps []string) {
					t.Helper()
					if _, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToParquet, OutDir: pq}, RunOptions: RunOptions{Workers: 2}}, ps); err != nil {
						t.Fatal(err)
					}
					cfg := Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToIceberg, OutDir: wh, PartitionBy: spec}, LakeOptions: LakeOptions{NoMaintain: true, TableProperties: map[string]string{"format-version": fv}}, RunOptions: RunOptions{Workers: 2}}
					if _, err := Run(context.Background(), cfg, ps); err != nil {
						t.Fatal(err)
					}
				}
				check := func(when string, maxData int) {
					t.Helper()
					for _, name := range []string{"t0", "t1"} {
						tbl := loadTable(t, wh, "", "shop", name)
						cols, got := scanTable(t, tbl)
						want := parquetRows(t, filepath.Join(pq, "shop", name), cols)
						if !slices.Equal(got, want) {
							t.Fatalf("%s: shop.%s: %d rows, parquet %d:\n%s", when, name, len(got), len(want), firstDiff(got, want))
						}
						if data, _ := countDataFiles(t, tbl); data > maxData {
							t.Errorf("%s: shop.%s has %d data files, want at most %d", when, name, data, maxData)
						}
					}
				}
				parts := 1
				if partitioned {
					parts = 2
				}
				// Night 1: inputs 0..3, input 0 half written.
				cut(paths[0], 60)
				load(paths[:4])
				check("night 1", parts)
				// Night 2: input 0 whole (its rows are in night 1's packed
				// file), inputs 4..5.
				os.WriteFile(paths[0], full[paths[0]], 0o644)
				cut(paths[4], 40)
				load(paths[:6])
				check("night 2", 3*parts)
				maintain := func() {
					t.Helper()
					l, err := lake.Open(context.Background(), wh, "")
					if err != nil {
						t.Fatal(err)
					}
					defer l.Close()
					for _, name := range []string{"t0", "t1"} {
						res, err := l.Maintain(context.Background(), table.Identifier{"shop", name}, lake.MaintainOptions{})
						if err != nil {
							t.Fatal(err)
						}
						if res.DataFilesAfter > parts || res.DeleteFilesAfter != 0 {
							t.Errorf("after maintain: %+v", res)
						}
						// The rewritten files carry Iceberg's field IDs.
						tbl := loadTable(t, wh, "", "shop", name)
						tasks, err := tbl.Scan().PlanFiles(context.Background())
						if err != nil {
							t.Fatal(err)
						}
						for _, task := range tasks {
							path, _ := lake.PathOf(task.File.FilePath())
							pf, err := file.OpenParquetFile(path, false)
							if err != nil {
								t.Fatal(err)
							}
							root := pf.MetaData().Schema.Root()
							for i := range root.NumFields() {
								if f := root.Field(i); f.FieldID() <= 0 {
									t.Errorf("%s: column %s has no field ID", path, f.Name())
								}
							}
							pf.Close()
						}
					}
				}
				maintain()
				check("after maintain", parts)
				// Night 3: input 4 whole (its rows are in a compacted file),
				// inputs 6..7.
				os.WriteFile(paths[4], full[paths[4]], 0o644)
				load(paths)
				check("night 3", 3*parts)
				maintain()
				check("after maintain again", parts)
			})
		}
	}
}

// TestLakeGroupOptimisticInputs: inputs larger than the schema sample
// are decoded optimistically, and the feeder waits for each one's
// verdict before the next; an input of a commit group must give its
// verdict when it joins the group, not once the group is committed (the
// group waits for the inputs after it: a load of two such inputs hung).
func TestLakeGroupOptimisticInputs(t *testing.T) {
	defer func(n int) { sampleBytes = n }(sampleBytes)
	sampleBytes = 2000
	paths := upsertArchive(t, t.TempDir(), 4, 200) // ~40 KB each
	opts := decode.Options{Producer: true, CaseInsensitive: true}
	for _, mode := range []string{lake.ModeChangelog, lake.ModeUpsert} {
		t.Run(mode, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := Run(ctx, Config{InputOptions: InputOptions{ChunkSize: 8 << 10}, DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToIceberg, OutDir: t.TempDir()}, LakeOptions: LakeOptions{TableMode: mode}, RunOptions: RunOptions{Workers: 2}}, paths)
				done <- err
			}()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the load of 4 inputs did not finish in 30 s")
			}
		})
	}
}
