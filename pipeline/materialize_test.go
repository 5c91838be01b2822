package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/internal/outdir"
	"github.com/cdcetl/cdcetl/lake"
)

// TestMaterializeIsCurrentState converts a changelog in three runs (3, 6,
// then 8 inputs) with --materialize and a memory limit small enough to
// spill many sorted runs, and checks after each that every table's
// _current/ snapshot holds exactly the state the changelog replayed per
// key gives; a run with nothing new leaves the snapshot alone.
func TestMaterializeIsCurrentState(t *testing.T) {
	in := t.TempDir()
	paths := upsertArchive(t, in, 8, 300)
	opts := decode.Options{Producer: true, CaseInsensitive: true}
	out := t.TempDir()
	for _, n := range []int{3, 6, 8, 8} {
		cfg := Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToParquet, OutDir: out, Materialize: true, MaterializeMem: 16 << 10}, RunOptions: RunOptions{Workers: 2}}
		st, err := Run(context.Background(), cfg, paths[:n])
		if err != nil {
			t.Fatal(err)
		}
		if n == 8 && len(st.Materialized) == 0 && st.Skipped != 8 {
			t.Fatalf("run of 8: nothing materialized, %d skipped", st.Skipped)
		}
		for _, m := range st.Materialized {
			if m.Runs < 2 {
				t.Errorf("%s: %d sorted runs: the memory limit did not make it spill", m.Table, m.Runs)
			}
		}
		for _, name := range []string{"t0", "t1"} {
			dir := filepath.Join(out, "shop", name)
			key := []string{"id"}
			cols := []string{"_file", "_line", "_source_pos", "_unchanged", "grp", "id", "v"}
			want := replay(t, dir, key, append([]string{"_rowkind"}, cols...))
			// The snapshot has no _rowkind: compare without it.
			for i, r := range want {
				want[i] = r[len("_rowkind=+I|"):]
			}
			slices.Sort(want)
			got := parquetRows(t, filepath.Join(out, outdir.SnapshotDir(filepath.Join("shop", name))), cols)
			if len(want) < 10 {
				t.Fatalf("shop.%s: only %d live keys", name, len(want))
			}
			if !slices.Equal(got, want) {
				t.Fatalf("run of %d, shop.%s: the snapshot has %d rows, the replayed changelog %d:\n%s", n, name, len(got), len(want), firstDiff(got, want))
			}
			if left, _ := filepath.Glob(filepath.Join(out, outdir.SnapshotDir(filepath.Join("shop", name))+".*")); len(left) > 0 {
				t.Fatalf("left behind: %v", left)
			}
			if runs, _ := filepath.Glob(filepath.Join(out, outdir.SnapshotDir(filepath.Join("shop", name)), ".materialize-run-*")); len(runs) > 0 {
				t.Fatalf("spilled runs left: %v", runs)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(out, outdir.SnapshotDir(filepath.Join("shop", "t0")), outdir.StateFile)); err != nil {
		t.Fatal(err)
	}
}

// TestMaterializeTruncate: a truncate empties the table at its line, the
// rows after it (in its input and later ones) stay, other tables are
// untouched, and a later run with a truncate in an input holding no rows
// of the table empties its snapshot.
func TestMaterializeTruncate(t *testing.T) {
	in := t.TempDir()
	msg := func(tb, typ string, id, v int) string {
		old := "null"
		if typ == "UPDATE" {
			old = fmt.Sprintf(`[{"v":"%d"}]`, v-1)
		}
		return fmt.Sprintf(`{"data":[{"id":"%d","v":"%d"}],"old":`+old+`,"database":"shop","table":"%s","pkNames":["id"],"isDdl":false,"type":"%s","es":1,"ts":1,"mysqlType":{"id":"int","v":"int"}}`, id, v, tb, typ)
	}
	trunc := func(tb string) string {
		return fmt.Sprintf(`{"data":null,"old":null,"database":"shop","table":"%s","pkNames":null,"isDdl":true,"type":"TRUNCATE","sql":"TRUNCATE TABLE %s","es":1,"ts":1}`, tb, tb)
	}
	write := func(name string, lines ...string) string {
		p := filepath.Join(in, name)
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var f0 []string
	for k := 1; k <= 5; k++ {
		f0 = append(f0, msg("t0", "INSERT", k, 0), msg("t1", "INSERT", k, 0))
	}
	p0 := write("f0.json", f0...)
	p1 := write("f1.json", msg("t0", "UPDATE", 1, 1), msg("t1", "UPDATE", 1, 1), trunc("t0"), msg("t0", "INSERT", 7, 0), msg("t0", "INSERT", 8, 0))
	p2 := write("f2.json", msg("t0", "UPDATE", 7, 2), msg("t1", "DELETE", 2, 0))
	out := t.TempDir()
	opts := decode.Options{Producer: true, CaseInsensitive: true}
	cfg := Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToParquet, OutDir: out, Materialize: true}, RunOptions: RunOptions{Workers: 2}}
	if _, err := Run(context.Background(), cfg, []string{p0, p1, p2}); err != nil {
		t.Fatal(err)
	}
	ids := func(name string) []string {
		rows := parquetRows(t, filepath.Join(out, outdir.SnapshotDir(filepath.Join("shop", name))), []string{"id", "v"})
		return rows
	}
	if got, want := ids("t0"), []string{"id=7|v=2|", "id=8|v=0|"}; !slices.Equal(got, want) {
		t.Fatalf("t0 after the truncate: %v, want %v", got, want)
	}
	if got := ids("t1"); len(got) != 4 || got[0] != "id=1|v=1|" {
		t.Fatalf("t1 (never truncated): %v", got)
	}
	// A later input truncates t0 and has no rows of it.
	p3 := write("f3.json", trunc("t0"), msg("t1", "INSERT", 9, 0))
	if _, err := Run(context.Background(), cfg, []string{p0, p1, p2, p3}); err != nil {
		t.Fatal(err)
	}
	if got := ids("t0"); len(got) != 0 {
		t.Fatalf("t0 after the second truncate: %v, want no rows", got)
	}
	if got := ids("t1"); len(got) != 5 {
		t.Fatalf("t1: %v", got)
	}
	// And a run with nothing new leaves both alone.
	if _, err := Run(context.Background(), cfg, []string{p0, p1, p2, p3}); err != nil {
		t.Fatal(err)
	}
	if got := ids("t1"); len(got) != 5 {
		t.Fatalf("t1 after a run with nothing new: %v", got)
	}
}

// TestMaterializeBySourcePosition: a change that arrives in a later file
// but happened earlier in the producer's log (a lower es) does not win
// over the later one, and the report says how changes were ordered.
func TestMaterializeBySourcePosition(t *testing.T) {
	in := t.TempDir()
	msg := func(typ string, id, v, es int) string {
		old := "null"
		if typ == "UPDATE" {
			old = `[{"v":"0"}]`
		}
		return fmt.Sprintf(`{"data":[{"id":"%d","v":"%d"}],"old":%s,"database":"shop","table":"t","pkNames":["id"],"isDdl":false,"type":"%s","es":%d,"id":%d,"ts":1,"mysqlType":{"id":"int","v":"int"}}`, id, v, old, typ, es, es)
	}
	p0 := filepath.Join(in, "a.json")
	p1 := filepath.Join(in, "b.json")
	os.WriteFile(p0, []byte(msg("INSERT", 1, 0, 100)+"\n"+msg("UPDATE", 1, 2, 300)+"\n"+msg("INSERT", 2, 0, 100)+"\n"), 0o644)
	// b.json comes later by name, but its update of key 1 is older (es 200).
	os.WriteFile(p1, []byte(msg("UPDATE", 1, 1, 200)+"\n"+msg("UPDATE", 2, 5, 400)+"\n"), 0o644)
	// Both in one run (one sorted run), then in two (the snapshot against
	// the late file).
	for _, runs := range [][][]string{{{p0, p1}}, {{p0}, {p0, p1}}} {
		out := t.TempDir()
		cfg := Config{DecodingOptions: DecodingOptions{Options: decode.Options{Producer: true, CaseInsensitive: true}}, OutputOptions: OutputOptions{To: ToParquet, OutDir: out, Materialize: true}, RunOptions: RunOptions{Workers: 1}}
		var st Stats
		for _, paths := range runs {
			var err error
			if st, err = Run(context.Background(), cfg, paths); err != nil {
				t.Fatal(err)
			}
		}
		got := parquetRows(t, filepath.Join(out, outdir.SnapshotDir(filepath.Join("shop", "t"))), []string{"id", "v"})
		if want := []string{"id=1|v=2|", "id=2|v=5|"}; !slices.Equal(got, want) {
			t.Fatalf("%d runs: %v, want %v", len(runs), got, want)
		}
		if len(st.Materialized) != 1 || !strings.HasPrefix(st.Materialized[0].Order, "source position") {
			t.Fatalf("report: %+v", st.Materialized)
		}
	}
}

// TestUpsertMatchesMaterialize: the same changelog, with truncates (one in
// the middle of an input, one in an input without rows of the table),
// loaded into Iceberg upsert tables and materialized as Parquet: both hold
// the same current state, run after run.
func TestUpsertMatchesMaterialize(t *testing.T) {
	in := t.TempDir()
	paths := upsertArchive(t, in, 6, 200)
	tr := func(tb string) string {
		return fmt.Sprintf(`{"data":null,"old":null,"database":"shop","table":"%s","pkNames":null,"isDdl":true,"type":"TRUNCATE","sql":"TRUNCATE TABLE %s","es":1,"ts":1}`, tb, tb)
	}
	// A truncate of t0 in the middle of input 3; input 5 truncates t1 and
	// has rows of t0 only.
	b, _ := os.ReadFile(paths[3])
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	lines = append(lines[:100:100], append([]string{tr("t0")}, lines[100:]...)...)
	os.WriteFile(paths[3], []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	b, _ = os.ReadFile(paths[5])
	var keep []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.Contains(l, `"table":"t0"`) {
			keep = append(keep, l)
		}
	}
	os.WriteFile(paths[5], []byte(tr("t1")+"\n"+strings.Join(keep, "\n")+"\n"), 0o644)
	opts := decode.Options{Producer: true, CaseInsensitive: true}
	pq, wh := t.TempDir(), t.TempDir()
	for _, n := range []int{2, 4, 6} {
		if _, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToParquet, OutDir: pq, Materialize: true}, RunOptions: RunOptions{Workers: 2}}, paths[:n]); err != nil {
			t.Fatal(err)
		}
		if _, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToIceberg, OutDir: wh}, LakeOptions: LakeOptions{TableMode: lake.ModeUpsert}, RunOptions: RunOptions{Workers: 2}}, paths[:n]); err != nil {
			t.Fatal(err)
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
			cols := []string{"grp", "id", "v"}
			got := scanRows(t, tbl, cols, table.WithSelectedFields(cols...))
			want := parquetRows(t, filepath.Join(pq, outdir.SnapshotDir(filepath.Join("shop", name))), cols)
			if !slices.Equal(got, want) {
				t.Fatalf("after %d inputs, shop.%s: iceberg %d rows, materialized %d:\n%s", n, name, len(got), len(want), firstDiff(got, want))
			}
			if n == 6 && name == "t1" && len(want) != 0 {
				t.Fatalf("shop.t1 after its truncate: %d rows", len(want))
			}
		}
		l.Close()
	}
}

// minimalArchive writes 6 files of Maxwell messages as binlog_row_image
// = MINIMAL makes them (updates carry the key and the changed columns,
// deletes the key), over keys 0..39 and keys 100..104 that were inserted
// before the archive began (their column c is never sent). It returns
// the files, the generator's own model of the final state as id,a,b,c
// rows, and the model.
func minimalArchive(t *testing.T) (paths, want []string, model map[int]map[string]string) {
	t.Helper()
	in := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 9))
	cols := []string{"a", "b", "c"}
	type state = map[string]string // column → value; absent: never sent
	model = map[int]state{}
	for f := range 6 {
		var b strings.Builder
		for range 250 {
			k := rng.IntN(40)
			if rng.IntN(10) == 0 {
				k = 100 + rng.IntN(5) // never inserted
			}
			st, live := model[k]
			if k >= 100 && !live {
				st, live = state{}, true
				model[k] = st
			}
			var typ string
			data := map[string]any{"id": k}
			old := map[string]any{}
			switch {
			case !live:
				typ = "insert"
				st = state{}
				for _, c := range cols {
					v := fmt.Sprintf("%s%d", c, rng.IntN(1000))
					data[c], st[c] = v, v
				}
				model[k] = st
			case rng.IntN(6) == 0 && k < 100:
				typ = "delete" // MINIMAL: the key only
				delete(model, k)
			default:
				typ = "update"
				for _, c := range cols {
					if rng.IntN(2) == 0 && (k < 100 || c != "c") { // c of those keys is never sent
						v := fmt.Sprintf("%s%d", c, rng.IntN(1000))
						data[c], old[c] = v, st[c]
						st[c] = v
					}
				}
			}
			msg := map[string]any{"database": "d", "table": "t", "type": typ, "ts": 1, "primary_key_columns": []string{"id"}, "data": data}
			if typ == "update" {
				msg["old"] = old
			}
			line, _ := json.Marshal(msg)
			b.Write(append(line, '\n'))
		}
		p := filepath.Join(in, fmt.Sprintf("m%d.json", f))
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	for k, st := range model {
		row := fmt.Sprintf("id=%d|", k)
		for _, c := range cols {
			v, ok := st[c]
			if !ok {
				v = "NULL"
			}
			row += c + "=" + v + "|"
		}
		want = append(want, row)
	}
	slices.Sort(want)
	return paths, want, model
}

// TestMaterializeFillsUnchanged: Maxwell under binlog_row_image=MINIMAL
// sends an update's changed columns only. The snapshot takes the columns a
// key's last image lacks from its earlier changes (across inputs, spilled
// runs and the previous snapshot), and a column no change ever sent (keys
// whose insert predates the archive) stays NULL and listed in _unchanged.
// The expected state is the generator's own model.
func TestMaterializeFillsUnchanged(t *testing.T) {
	paths, want, model := minimalArchive(t)
	cols := []string{"a", "b", "c"}
	out := t.TempDir()
	for _, n := range []int{3, 6} { // the second run merges with the first's snapshot
		cfg := Config{DecodingOptions: DecodingOptions{Options: decode.Options{Producer: true, CaseInsensitive: true}}, OutputOptions: OutputOptions{To: ToParquet, OutDir: out, Materialize: true, MaterializeMem: 8 << 10}, RunOptions: RunOptions{Workers: 2}}
		st, err := Run(context.Background(), cfg, paths[:n])
		if err != nil {
			t.Fatal(err)
		}
		if n == 6 && (len(st.Materialized) != 1 || st.Materialized[0].Merged == 0 || st.Materialized[0].Unresolved == 0 || st.Materialized[0].Runs < 2) {
			t.Fatalf("report: %+v", st.Materialized)
		}
	}
	dir := filepath.Join(out, outdir.SnapshotDir(filepath.Join("d", "t")))
	got := parquetRows(t, dir, append([]string{"id"}, cols...))
	if !slices.Equal(got, want) {
		t.Fatalf("the snapshot has %d rows, the model %d:\n%s", len(got), len(want), firstDiff(got, want))
	}
	// The never-inserted keys list exactly the columns never sent.
	for _, r := range parquetRows(t, dir, []string{"id", "_unchanged"}) {
		var k int
		fmt.Sscanf(r, "id=%d|", &k)
		list := strings.Trim(strings.TrimSuffix(r[strings.Index(r, "_unchanged=")+len("_unchanged="):], "|"), "[]")
		names := strings.FieldsFunc(list, func(r rune) bool { return r == ' ' || r == ',' || r == '"' })
		for _, c := range cols {
			_, sent := model[k][c]
			if listed := slices.Contains(names, c); listed == sent {
				t.Fatalf("key %d: column %s sent=%v, but _unchanged is %s", k, c, sent, r)
			}
		}
	}
}

// TestMaterializeDedup: an archive where each file begins by replaying
// the last 30 messages of the one before (a connector restarted from an
// older offset). With --dedup the snapshot is the snapshot of the archive
// without the replays, lineage included (the first copy is kept: its file
// and line), also when sorted runs spill, and the copies are counted;
// without --dedup the replayed copies win.
func TestMaterializeDedup(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	var events [][]string // per file
	seq := 0
	live := map[int]int{}
	for range 5 {
		var evs []string
		for range 200 {
			k := rng.IntN(50)
			v, ok := live[k]
			typ, data, old := "UPDATE", fmt.Sprintf(`{"id":"%d","v":"%d"}`, k, v+1), fmt.Sprintf(`[{"v":"%d"}]`, v)
			switch {
			case !ok:
				typ, data, old = "INSERT", fmt.Sprintf(`{"id":"%d","v":"0"}`, k), "null"
				live[k] = 0
			case rng.IntN(5) == 0:
				typ, data, old = "DELETE", fmt.Sprintf(`{"id":"%d","v":"%d"}`, k, v), "null"
				delete(live, k)
			default:
				live[k] = v + 1
			}
			seq++
			evs = append(evs, fmt.Sprintf(`{"data":[%s],"old":%s,"database":"shop","table":"t","pkNames":["id"],"isDdl":false,"type":"%s","es":1700000000000,"id":%d,"ts":1,"mysqlType":{"id":"int","v":"int"}}`, data, old, typ, seq))
		}
		events = append(events, evs)
	}
	events = append(events, nil) // a restart that replayed and had nothing new
	write := func(replay bool) []string {
		dir := t.TempDir()
		var paths []string
		for f, evs := range events {
			lines := evs
			if !replay && len(evs) == 0 {
				continue
			}
			if replay && f > 0 {
				prev := events[f-1]
				lines = append(append([]string{}, prev[len(prev)-30:]...), evs...)
			}
			p := filepath.Join(dir, fmt.Sprintf("f%d.json", f))
			os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
			paths = append(paths, p)
		}
		return paths
	}
	opts := decode.Options{Producer: true, CaseInsensitive: true}
	// Rows as file name, line (in the replayed archive's numbering: the
	// clean archive's lines of files after the first move down by 30),
	// position, key, value.
	snapshot := func(paths []string, dedup bool, mem int64, shift int) ([]string, int64) {
		out := t.TempDir()
		var dups int64
		for _, n := range []int{2, len(paths)} {
			st, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToParquet, OutDir: out, Materialize: true, Dedup: dedup, MaterializeMem: mem}, RunOptions: RunOptions{Workers: 2}}, paths[:n])
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range st.Materialized {
				dups += m.Duplicates
			}
		}
		rows := parquetRows(t, filepath.Join(out, outdir.SnapshotDir(filepath.Join("shop", "t"))), []string{"_file", "_line", "_source_pos", "id", "v"})
		for i, r := range rows {
			var file string
			var line int
			parts := strings.SplitN(r, "|", 3)
			file = filepath.Base(strings.TrimPrefix(parts[0], "_file="))
			fmt.Sscanf(parts[1], "_line=%d", &line)
			if file != "f0.json" {
				line += shift
			}
			rows[i] = fmt.Sprintf("%s|%d|%s", file, line, parts[2])
		}
		slices.Sort(rows)
		return rows, dups
	}
	want, _ := snapshot(write(false), false, 0, 30)
	replayed := write(true)
	for _, mem := range []int64{0, 8 << 10} {
		got, dups := snapshot(replayed, true, mem, 0)
		if !slices.Equal(got, want) {
			t.Fatalf("mem %d: the --dedup snapshot differs from the clean archive's:\n%s\ngot %d %v\nwant %d %v", mem, firstDiff(got, want), len(got), got, len(want), want)
		}
		if dups == 0 {
			t.Errorf("mem %d: no duplicates counted", mem)
		}
	}
	if plain, _ := snapshot(replayed, false, 0, 0); slices.Equal(plain, want) {
		t.Fatal("without --dedup the snapshot is the clean one too: the test proves nothing")
	}
}

// TestSnapshotsBesideChangelogs: snapshots live in OUT/_current/<ns>/<table>/,
// so a glob of a table's directory is its changelog alone; a snapshot an
// earlier version kept in <table>/_current is moved there by the next
// run, which folds onto it as before.
func TestSnapshotsBesideChangelogs(t *testing.T) {
	in := t.TempDir()
	paths := upsertArchive(t, in, 6, 100)
	opts := decode.Options{Producer: true, CaseInsensitive: true}
	out, fresh := t.TempDir(), t.TempDir()
	run := func(out string, n int) {
		t.Helper()
		if _, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToParquet, OutDir: out, Materialize: true}, RunOptions: RunOptions{Workers: 2}}, paths[:n]); err != nil {
			t.Fatal(err)
		}
	}
	run(out, 3)
	for _, name := range []string{"t0", "t1"} {
		if m, _ := filepath.Glob(filepath.Join(out, "shop", name, "*", "*.parquet")); len(m) != 0 {
			t.Fatalf("Parquet below shop/%s's directory: %v", name, m)
		}
		// As an earlier version left it.
		if err := os.Rename(filepath.Join(out, outdir.SnapshotDir(filepath.Join("shop", name))), filepath.Join(out, "shop", name, outdir.CurrentDir)); err != nil {
			t.Fatal(err)
		}
	}
	run(out, 6)
	run(fresh, 6)
	for _, name := range []string{"t0", "t1"} {
		cols := []string{"grp", "id", "v"}
		got := parquetRows(t, filepath.Join(out, outdir.SnapshotDir(filepath.Join("shop", name))), cols)
		want := parquetRows(t, filepath.Join(fresh, outdir.SnapshotDir(filepath.Join("shop", name))), cols)
		if !slices.Equal(got, want) || len(want) == 0 {
			t.Errorf("shop.%s: %d rows after moving the earlier layout's snapshot, %d fresh", name, len(got), len(want))
		}
		if _, err := os.Stat(filepath.Join(out, "shop", name, outdir.CurrentDir)); !os.IsNotExist(err) {
			t.Errorf("shop.%s: the earlier layout's snapshot is still there (%v)", name, err)
		}
	}
}

// TestCurrentStateAcrossVersions: a table whose schema changes
// incompatibly (a second version) keeps one current state: every live
// key once, in the latest version's schema, rows of the earlier version
// cast (NULL, counted and warned, where a value does not fit), and no
// snapshot of a single version.
func TestCurrentStateAcrossVersions(t *testing.T) {
	dir := t.TempDir()
	msg := func(typ, id, code, mysqlType string) string {
		old := "null"
		if typ == "UPDATE" {
			old = `[{"code":"0"}]`
		}
		return fmt.Sprintf(`{"data":[{"id":"%s","code":%s}],"old":%s,"database":"shop","table":"orders","pkNames":["id"],"isDdl":false,"type":"%s","es":1700000000000,"ts":1700000000001,"mysqlType":{"id":"int","code":"%s"}}`+"\n", id, code, old, typ, mysqlType)
	}
	a := filepath.Join(dir, "a.json")
	b := filepath.Join(dir, "b.json")
	os.WriteFile(a, []byte(msg("INSERT", "1", `"7"`, "varchar(8)")+msg("INSERT", "2", `"abc"`, "varchar(8)")+msg("INSERT", "3", `"9"`, "varchar(8)")), 0o644)
	os.WriteFile(b, []byte(msg("UPDATE", "3", `"10"`, "int")+msg("INSERT", "4", `"11"`, "int")), 0o644)
	out := filepath.Join(dir, "out")
	opts := decode.Options{Producer: true, CaseInsensitive: true}
	for _, inputs := range [][]string{{a}, {a, b}} {
		st, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToParquet, OutDir: out, Materialize: true}, RunOptions: RunOptions{Workers: 1}}, inputs)
		if err != nil {
			t.Fatal(err)
		}
		if len(inputs) == 2 && (len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], "1 values of rows of earlier schema versions")) {
			t.Errorf("warnings %q", st.Warnings)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "shop", "orders", "v2", outdir.SchemaFile)); err != nil {
		t.Fatalf("no second version: %v", err)
	}
	got := parquetRows(t, filepath.Join(out, outdir.SnapshotDir(filepath.Join("shop", "orders"))), []string{"id", "code"})
	want := []string{"id=1|code=7|", "id=2|code=NULL|", "id=3|code=10|", "id=4|code=11|"}
	if !slices.Equal(got, want) {
		t.Errorf("current state %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(out, outdir.SnapshotDir(filepath.Join("shop", "orders", "v2")))); !os.IsNotExist(err) {
		t.Errorf("a snapshot of version 2 alone: %v", err)
	}
}
