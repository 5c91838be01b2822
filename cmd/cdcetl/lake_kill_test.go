package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/cdcetl/cdcetl/internal/cdcgen"
	"github.com/cdcetl/cdcetl/lake"
)

// TestIcebergKillAndRestart loads a 2-table archive into Iceberg tables
// (partitioned by bucket(4, id), so an input writes several files), two
// new inputs landing before each of 60 runs, and SIGKILLs the load every
// time: 45 times at a random moment within the time a run of two inputs
// takes (calibrated on a real run first: delays that ignore how long a
// run takes killed runs that had finished, and the test failed by chance
// when too few kills landed), 15 times right after its k-th commit
// (before the input is journaled, or between the two tables' commits of
// one input). After every kill both tables are readable (every file they
// refer to is there); after a last full run every input row is in its
// table exactly once, and no data file is left that no table refers to.
func TestIcebergKillAndRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := buildCLI(t, dir)
	in, wh := filepath.Join(dir, "in"), filepath.Join(dir, "wh")
	const rounds, perRound, rows = 60, 2, 400
	os.MkdirAll(in, 0o755)
	write := func(into string, f int) {
		var b strings.Builder
		for r := 0; r < rows; r++ {
			id := f*rows + r
			fmt.Fprintf(&b, `{"before":null,"after":{"id":%d,"name":"n%d"},"source":{"db":"inv","table":"t%d"},"op":"c","ts_ms":1700000000000}`+"\n", id, id, id%2)
		}
		os.WriteFile(filepath.Join(into, fmt.Sprintf("f%03d.json", f)), []byte(b.String()), 0o644)
	}
	args := func(wh, in string) []string {
		return []string{"convert", "--quiet", "--to", "iceberg", "--partition-by", "bucket(4, id)", "-o", wh, "--workers", "2", in}
	}
	// Calibration: a whole run of one round's inputs into a warehouse of
	// its own.
	cal := filepath.Join(dir, "cal")
	os.MkdirAll(cal, 0o755)
	for f := 0; f < perRound; f++ {
		write(cal, 10000+f)
	}
	start := time.Now()
	if out, err := exec.Command(bin, args(filepath.Join(dir, "calwh"), cal)...).CombinedOutput(); err != nil {
		t.Fatalf("calibration run: %v\n%s", err, out)
	}
	span := time.Since(start)
	t.Logf("a run of %d inputs takes %s", perRound, span)
	rng := rand.New(rand.NewPCG(11, 5))
	killed := 0
	for k := 0; k < rounds; k++ {
		for f := 0; f < perRound; f++ {
			write(in, k*perRound+f)
		}
		cmd := exec.Command(bin, args(wh, in)...)
		if k%4 == 3 {
			cmd.Env = append(os.Environ(), "CDCETL_FAULT_AFTER_COMMITS="+strconv.Itoa(1+rng.IntN(4)))
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if k%4 != 3 {
			time.Sleep(time.Duration(rng.Int64N(int64(span))))
			cmd.Process.Signal(syscall.SIGKILL)
		}
		if cmd.Wait() != nil {
			killed++
		}
		if _, err := os.Stat(filepath.Join(wh, lake.CatalogFile)); err == nil {
			icebergIDs(t, wh, -1) // readable, and no row twice
		}
	}
	if out, err := exec.Command(bin, args(wh, in)...).CombinedOutput(); err != nil {
		t.Fatalf("final run: %v\n%s", err, out)
	}
	t.Logf("%d of %d runs were killed before they finished", killed, rounds)
	if killed < rounds/2 {
		t.Errorf("only %d of %d runs were killed mid-way: the test did not test much", killed, rounds)
	}
	icebergIDs(t, wh, rounds*perRound*rows)
	// No file is left that no snapshot refers to, and no temporary file,
	// but a killed compaction's output (the loads maintain their tables),
	// which maintain removes once it is older than --older-than (another
	// process may be writing it); after maintain --older-than 0s, none.
	unreferenced(t, wh, true)
	if out, err := exec.Command(bin, "maintain", "-o", wh, "--older-than", "0s").CombinedOutput(); err != nil {
		t.Fatalf("maintain: %v\n%s", err, out)
	}
	icebergIDs(t, wh, rounds*perRound*rows)
	unreferenced(t, wh, false)
}

// unreferenced fails t for each data or delete file under wh that no
// snapshot refers to (but compactions' outputs, with compactions), and
// each temporary file.
func unreferenced(t *testing.T, wh string, compactions bool) {
	t.Helper()
	l, err := lake.Open(context.Background(), wh, "")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	refs, err := l.Referenced(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(wh, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.HasSuffix(p, ".tmp") {
			t.Errorf("temporary file left: %s", p)
		}
		if compactions && strings.HasPrefix(d.Name(), "compact-") {
			return nil
		}
		sep := string(filepath.Separator)
		if (strings.Contains(p, sep+"data"+sep) || strings.Contains(p, sep+lake.DeletesDir+sep)) && !refs[p] {
			t.Errorf("file no snapshot refers to: %s", p)
		}
		return nil
	})
}

// icebergIDs scans the tables inv.t0 and inv.t1 of the warehouse and checks
// that no id is there twice, and, when n ≥ 0, that the ids are 0..n-1.
func icebergIDs(t *testing.T, wh string, n int) {
	t.Helper()
	l, err := lake.Open(context.Background(), wh, "")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	seen := map[int64]int{}
	for _, name := range []string{"t0", "t1"} {
		tbl, err := l.Catalog().LoadTable(context.Background(), table.Identifier{"inv", name})
		if err != nil {
			if n < 0 {
				continue // not made yet
			}
			t.Fatal(err)
		}
		_, it, err := tbl.Scan(table.WithSelectedFields("id")).ToArrowRecords(context.Background())
		if err != nil {
			t.Fatalf("inv.%s: %v", name, err)
		}
		for rec, err := range it {
			if err != nil {
				t.Fatalf("inv.%s is not readable: %v", name, err)
			}
			col := rec.Column(0)
			for i := 0; i < col.Len(); i++ {
				var id int64
				switch a := col.(type) {
				case *array.Int64:
					id = a.Value(i)
				case *array.Int32:
					id = int64(a.Value(i))
				default:
					t.Fatalf("id is %s", col.DataType())
				}
				if seen[id]++; seen[id] > 1 {
					t.Fatalf("id %d is in the tables twice", id)
				}
			}
			rec.Release()
		}
	}
	if n >= 0 && len(seen) != n {
		t.Fatalf("%d ids in the tables, want %d", len(seen), n)
	}
}

// TestWatchIceberg: a watcher loading partitioned Iceberg tables, with
// --on-success move and --settle, restarted mid-way (before a schema
// version change), ends with the same tables as one batch load of the
// same archive.
func TestWatchIceberg(t *testing.T) {
	if testing.Short() {
		t.Skip("real file-system watching")
	}
	dir := t.TempDir()
	landing, wh, done, batch := filepath.Join(dir, "landing"), filepath.Join(dir, "wh"), filepath.Join(dir, "done"), filepath.Join(dir, "batch")
	archive := cdcgen.Archive("canal-json", 30)
	os.MkdirAll(landing, 0o755)
	for _, f := range archive {
		os.WriteFile(filepath.Join(landing, f.Name), f.Data, 0o644)
	}
	var stderr bytes.Buffer
	if code := run([]string{"convert", "--quiet", "--to", "iceberg", "--partition-by", "truncate(1, _source_pos)", "-o", batch, landing}, io.Discard, &stderr); code != 0 {
		t.Fatalf("batch: exit %d: %s", code, stderr.String())
	}
	for _, f := range archive {
		os.Remove(filepath.Join(landing, f.Name))
	}
	args := []string{"--quiet", "--to", "iceberg", "--partition-by", "truncate(1, _source_pos)", "--settle", "200ms", "--on-success", "move=" + done, landing, "-o", wh}
	start := func() (context.CancelFunc, *sync.WaitGroup) {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			var stderr bytes.Buffer
			if err := runWatch(ctx, args, io.Discard, &stderr); err != nil {
				t.Errorf("watch: %v\n%s", err, stderr.String())
			}
		}()
		return cancel, &wg
	}
	cancel, wg := start()
	for i, f := range archive {
		os.WriteFile(filepath.Join(landing, f.Name), f.Data, 0o644)
		deadline := time.Now().Add(30 * time.Second)
		for {
			if _, err := os.Stat(filepath.Join(done, f.Name)); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s was not loaded and moved", f.Name)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if i == 1 {
			cancel()
			wg.Wait()
			cancel, wg = start()
		}
	}
	cancel()
	wg.Wait()
	want, got := lakeRows(t, batch), lakeRows(t, wh)
	if len(want) < 5 {
		t.Fatalf("only %d tables", len(want))
	}
	for name, rows := range want {
		if !slices.Equal(got[name], rows) {
			t.Errorf("%s: the watcher's table has %d rows, the batch load's %d:\n%s", name, len(got[name]), len(rows), diffRows(got[name], rows))
		}
	}
}

// lakeRows reads every table of a warehouse: name → sorted rows without
// the lineage columns (which name the input's path).
func lakeRows(t *testing.T, wh string) map[string][]string {
	t.Helper()
	l, err := lake.Open(context.Background(), wh, "")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return lakeRowsOf(t, l)
}

// lakeRowsOf is lakeRows for an open lake (a warehouse in a bucket, say).
func lakeRowsOf(t *testing.T, l *lake.Lake) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	nss, err := l.Catalog().ListNamespaces(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range nss {
		for ident, err := range l.Catalog().ListTables(context.Background(), ns) {
			if err != nil {
				t.Fatal(err)
			}
			tbl, err := l.Catalog().LoadTable(context.Background(), ident)
			if err != nil {
				t.Fatal(err)
			}
			var cols []string
			for _, f := range tbl.Schema().Fields() {
				if f.Name != "_file" && f.Name != "_line" {
					cols = append(cols, f.Name)
				}
			}
			slices.Sort(cols)
			_, it, err := tbl.Scan(table.WithSelectedFields(cols...)).ToArrowRecords(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var rows []string
			for rec, err := range it {
				if err != nil {
					t.Fatal(err)
				}
				// By column name: a table that grew a column by a later
				// input has it last, one loaded at once where inference
				// put it.
				idx := map[string]int{}
				for i, f := range rec.Schema().Fields() {
					idx[f.Name] = i
				}
				for r := range int(rec.NumRows()) {
					var b strings.Builder
					for _, c := range cols {
						b.WriteString(c + "=" + rec.Column(idx[c]).ValueStr(r) + "|")
					}
					rows = append(rows, b.String())
				}
				rec.Release()
			}
			slices.Sort(rows)
			out[strings.Join(ident, ".")] = rows
		}
	}
	return out
}

// diffRows shows the first rows two sorted lists do not share.
func diffRows(got, want []string) string {
	for i := 0; i < len(got) && i < len(want); i++ {
		if got[i] != want[i] {
			return "got:  " + got[i] + "\nwant: " + want[i]
		}
	}
	return fmt.Sprintf("%d rows against %d", len(got), len(want))
}

// TestRecoveryKeepsHistory: a load killed between its commit and its
// journal, then a maintain that compacts the file the load committed,
// then a rerun: the rerun's clean-up must not remove that file, which the
// snapshots before the compaction still refer to (time travel to them
// reads it). Before, the clean-up kept only what the current snapshot
// referred to.
func TestRecoveryKeepsHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := buildCLI(t, dir)
	in := filepath.Join(dir, "in")
	os.MkdirAll(in, 0o755)
	var paths []string
	for f := range 3 {
		var b strings.Builder
		for r := range 50 {
			fmt.Fprintf(&b, `{"before":null,"after":{"id":%d,"name":"f%d"},"source":{"db":"inv","table":"t"},"op":"c","ts_ms":1}`+"\n", f*50+r, f)
		}
		p := filepath.Join(in, fmt.Sprintf("f%d.json", f))
		os.WriteFile(p, []byte(b.String()), 0o644)
		paths = append(paths, p)
	}
	wh := filepath.Join(dir, "wh")
	load := func(env []string, ps ...string) error {
		cmd := exec.Command(bin, append([]string{"convert", "--quiet", "--no-maintain", "--to", "iceberg", "-o", wh}, ps...)...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil && env == nil {
			t.Fatalf("load: %v\n%s", err, out)
		}
		return err
	}
	load(nil, paths[0])
	// Killed right after committing f1 (before its journal entry).
	if err := load([]string{"CDCETL_FAULT_AFTER_COMMITS=1"}, paths[1]); err == nil {
		t.Fatal("the faulty load finished")
	}
	// Compaction: f0's and f1's files become one; the snapshots before it
	// keep referring to them.
	if out, err := exec.Command(bin, "maintain", "-o", wh).CombinedOutput(); err != nil {
		t.Fatalf("maintain: %v\n%s", err, out)
	}
	load(nil, paths...) // recovers, then loads f2 (f1 is in the table)
	l, err := lake.Open(context.Background(), wh, "")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tbl := loadIceberg(t, l, "inv", "t")
	snaps := tbl.Metadata().Snapshots()
	if len(snaps) < 4 {
		t.Fatalf("%d snapshots", len(snaps))
	}
	for _, s := range snaps {
		_, it, err := tbl.Scan(table.WithSnapshotID(s.SnapshotID)).ToArrowRecords(context.Background())
		if err == nil {
			for rec, e := range it {
				if e != nil {
					err = e
					break
				}
				rec.Release()
			}
		}
		if err != nil {
			t.Errorf("snapshot %d (%s) cannot be read: %v", s.SnapshotID, s.Summary.Operation, err)
		}
	}
}
