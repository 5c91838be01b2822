package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/cdcetl/cdcetl/lake"
)

// TestIcebergUpsertKillAndRestart loads a 2-table archive whose inputs
// update and delete keys of earlier ones into upsert tables (format v3:
// deletion vectors; partitioned by bucket(4, id), so a group's packed
// files and vectors span partitions), two new inputs landing before each
// of 40 runs, and SIGKILLs the load every time: 30 times at a random
// moment within the time a run takes (calibrated first), 10 times right
// after its k-th commit (before its inputs are journaled). After every
// kill both tables are readable and hold no key twice; after a last full
// run they hold exactly the state the changelog replayed per key gives,
// and no data, delete or temporary file is left that no table refers to,
// but a compaction's that a kill cut short (the loads compact their
// tables), which maintain --older-than 0s then removes, as it does in
// TestIcebergKillAndRestart.
func TestIcebergUpsertKillAndRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := buildCLI(t, dir)
	in, wh := filepath.Join(dir, "in"), filepath.Join(dir, "wh")
	const rounds, perRound, rows, keys = 40, 2, 300, 700
	os.MkdirAll(in, 0o755)
	want := map[int]string{} // id → name of its live row
	write := func(into string, f int, model bool) {
		var b strings.Builder
		for r := 0; r < rows; r++ {
			id := (f*131 + r*7) % keys
			name := fmt.Sprintf("f%dr%d", f, r)
			src := fmt.Sprintf(`"source":{"db":"inv","table":"t%d"}`, id%2)
			switch {
			case r%11 == 5:
				fmt.Fprintf(&b, `{"before":{"id":%d},"after":null,%s,"op":"d","ts_ms":1700000000000}`+"\n", id, src)
				if model {
					delete(want, id)
				}
			default:
				fmt.Fprintf(&b, `{"before":null,"after":{"id":%d,"name":"%s"},%s,"op":"u","ts_ms":1700000000000}`+"\n", id, name, src)
				if model {
					want[id] = name
				}
			}
		}
		os.WriteFile(filepath.Join(into, fmt.Sprintf("f%03d.json", f)), []byte(b.String()), 0o644)
	}
	args := func(wh, in string) []string {
		return []string{"convert", "--quiet", "--to", "iceberg", "--table-mode", "upsert", "--primary-key", "inv.*=id",
			"--partition-by", "bucket(4, id)", "-o", wh, "--workers", "2", in}
	}
	cal := filepath.Join(dir, "cal")
	os.MkdirAll(cal, 0o755)
	for f := 0; f < perRound; f++ {
		write(cal, 900+f, false)
	}
	start := time.Now()
	if out, err := exec.Command(bin, args(filepath.Join(dir, "calwh"), cal)...).CombinedOutput(); err != nil {
		t.Fatalf("calibration run: %v\n%s", err, out)
	}
	span := time.Since(start)
	t.Logf("a run of %d inputs takes %s", perRound, span)
	rng := rand.New(rand.NewPCG(12, 7))
	killed := 0
	for k := 0; k < rounds; k++ {
		for f := 0; f < perRound; f++ {
			write(in, k*perRound+f, true)
		}
		cmd := exec.Command(bin, args(wh, in)...)
		if k%4 == 3 {
			cmd.Env = append(os.Environ(), "CDCETL_FAULT_AFTER_COMMITS="+strconv.Itoa(1+rng.IntN(2)))
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
			upsertRows(t, wh) // readable, and no key twice
		}
	}
	if out, err := exec.Command(bin, args(wh, in)...).CombinedOutput(); err != nil {
		t.Fatalf("final run: %v\n%s", err, out)
	}
	t.Logf("%d of %d runs were killed before they finished", killed, rounds)
	if killed < rounds/2 {
		t.Errorf("only %d of %d runs were killed mid-way: the test did not test much", killed, rounds)
	}
	sameUpsertState(t, wh, want, "after the last run")
	// No file is left that no snapshot refers to, and no temporary file,
	// but a killed compaction's output (the loads maintain their tables),
	// which maintain removes once it is older than --older-than (another
	// process may be writing it); after maintain --older-than 0s, none.
	unreferenced(t, wh, true)
	if out, err := exec.Command(bin, "maintain", "-o", wh, "--older-than", "0s").CombinedOutput(); err != nil {
		t.Fatalf("maintain: %v\n%s", err, out)
	}
	sameUpsertState(t, wh, want, "after maintain")
	unreferenced(t, wh, false)
}

// sameUpsertState fails t unless the tables under wh hold exactly want
// (id to name), the replayed changelog.
func sameUpsertState(t *testing.T, wh string, want map[int]string, when string) {
	t.Helper()
	got := upsertRows(t, wh)
	if len(got) != len(want) {
		t.Errorf("%s the tables hold %d keys, the replayed changelog %d", when, len(got), len(want))
	}
	for id, name := range want {
		if got[id] != name {
			t.Fatalf("%s, id %d: %q, want %q", when, id, got[id], name)
		}
	}
}

// upsertRows scans inv.t0 and inv.t1 (id, name) and fails on a key held
// twice.
func upsertRows(t *testing.T, wh string) map[int]string {
	t.Helper()
	l, err := lake.Open(context.Background(), wh, "")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	out := map[int]string{}
	for _, name := range []string{"t0", "t1"} {
		tbl, err := l.Catalog().LoadTable(context.Background(), table.Identifier{"inv", name})
		if err != nil {
			continue // not made yet
		}
		_, it, err := tbl.Scan(table.WithSelectedFields("id", "name")).ToArrowRecords(context.Background())
		if err != nil {
			t.Fatalf("inv.%s: %v", name, err)
		}
		for rec, err := range it {
			if err != nil {
				t.Fatalf("inv.%s is not readable: %v", name, err)
			}
			ids, names := rec.Column(0), rec.Column(1).(*array.String)
			for i := 0; i < ids.Len(); i++ {
				var id int
				switch a := ids.(type) {
				case *array.Int64:
					id = int(a.Value(i))
				case *array.Int32:
					id = int(a.Value(i))
				default:
					t.Fatalf("id is %s", ids.DataType())
				}
				if _, twice := out[id]; twice {
					t.Fatalf("inv.%s: id %d is there twice", name, id)
				}
				out[id] = names.Value(i)
			}
			rec.Release()
		}
	}
	return out
}

// TestIcebergTableOptions: --option format-version=2 makes upsert tables
// of format 2 (position-delete files), the default is 3 (deletion
// vectors); a bad version, and a table property without --to iceberg,
// are usage errors.
func TestIcebergTableOptions(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	os.MkdirAll(in, 0o755)
	for f := range 2 {
		var b strings.Builder
		for r := range 50 {
			fmt.Fprintf(&b, `{"before":null,"after":{"id":%d,"name":"f%d"},"source":{"db":"inv","table":"t0"},"op":"u","ts_ms":1700000000000}`+"\n", r, f)
		}
		os.WriteFile(filepath.Join(in, fmt.Sprintf("f%d.json", f)), []byte(b.String()), 0o644)
	}
	for _, c := range []struct {
		opts []string
		v    int
		ext  string
	}{{nil, 3, ".puffin"}, {[]string{"--option", "format-version=2"}, 2, ".parquet"}} {
		wh := filepath.Join(dir, fmt.Sprintf("wh%d", c.v))
		for _, f := range []string{"f0.json", "f1.json"} { // two runs: the second deletes the first's rows
			args := append([]string{"convert", "--quiet", "--to", "iceberg", "--table-mode", "upsert", "--primary-key", "inv.t0=id", "-o", wh}, c.opts...)
			var stderr strings.Builder
			if code := run(append(args, filepath.Join(in, f)), io.Discard, &stderr); code != 0 {
				t.Fatalf("%v: exit %d: %s", c.opts, code, stderr.String())
			}
		}
		l, err := lake.Open(context.Background(), wh, "")
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := l.Catalog().LoadTable(context.Background(), table.Identifier{"inv", "t0"})
		if err != nil {
			t.Fatal(err)
		}
		if v := tbl.Metadata().Version(); v != c.v {
			t.Errorf("%v: format version %d, want %d", c.opts, v, c.v)
		}
		m, _ := filepath.Glob(filepath.Join(wh, "inv", "t0", lake.DeletesDir, "*"+c.ext))
		if len(m) == 0 {
			t.Errorf("%v: no %s delete file", c.opts, c.ext)
		}
		l.Close()
		if got := upsertRows(t, wh); len(got) != 50 || got[7] != "f1" {
			t.Errorf("%v: %d rows, id 7 = %q", c.opts, len(got), got[7])
		}
	}
	for _, args := range [][]string{
		{"convert", "--to", "iceberg", "--table-mode", "upsert", "--option", "format-version=4", "-o", filepath.Join(dir, "x"), in},
		{"convert", "--to", "parquet", "--option", "write.target-file-size-bytes=1000", "-o", filepath.Join(dir, "y"), in},
	} {
		var stderr strings.Builder
		if code := run(args, io.Discard, &stderr); code == 0 {
			t.Errorf("%v: exit 0", args)
		}
	}
}

// TestMaintainRacesLoads runs maintain (--older-than 10s: longer than a
// load holds a file it has not committed) alongside upsert loads, and
// SIGKILLs each at a random moment within its calibrated run time, 30
// rounds: after every round the tables are readable (no file a snapshot
// refers to was removed) and hold no key twice; a maintain or a load that
// meets the other's commit retries or gives up with an error, never
// corrupts. After a last load and maintain run in peace, the tables hold
// the replayed changelog.
func TestMaintainRacesLoads(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := buildCLI(t, dir)
	in, wh := filepath.Join(dir, "in"), filepath.Join(dir, "wh")
	const rounds, rows, keys = 30, 300, 700
	os.MkdirAll(in, 0o755)
	want := map[int]string{}
	write := func(f int) {
		var b strings.Builder
		for r := 0; r < rows; r++ {
			id := (f*131 + r*7) % keys
			src := fmt.Sprintf(`"source":{"db":"inv","table":"t%d"}`, id%2)
			if r%11 == 5 {
				fmt.Fprintf(&b, `{"before":{"id":%d},"after":null,%s,"op":"d","ts_ms":1700000000000}`+"\n", id, src)
				delete(want, id)
			} else {
				name := fmt.Sprintf("f%dr%d", f, r)
				fmt.Fprintf(&b, `{"before":null,"after":{"id":%d,"name":"%s"},%s,"op":"u","ts_ms":1700000000000}`+"\n", id, name, src)
				want[id] = name
			}
		}
		os.WriteFile(filepath.Join(in, fmt.Sprintf("f%03d.json", f)), []byte(b.String()), 0o644)
	}
	load := func() *exec.Cmd {
		return exec.Command(bin, "convert", "--quiet", "--to", "iceberg", "--table-mode", "upsert", "--primary-key", "inv.*=id",
			"--option", "cdcetl.maintain.max-data-files=3", "-o", wh, "--workers", "2", in)
	}
	maintain := func() *exec.Cmd {
		return exec.Command(bin, "maintain", "-o", wh, "--older-than", "10s")
	}
	// Calibration: a load, then a maintain, of a few rounds' inputs.
	for f := 0; f < 4; f++ {
		write(f)
	}
	start := time.Now()
	if out, err := load().CombinedOutput(); err != nil {
		t.Fatalf("calibration load: %v\n%s", err, out)
	}
	loadSpan := time.Since(start)
	start = time.Now()
	if out, err := maintain().CombinedOutput(); err != nil {
		t.Fatalf("calibration maintain: %v\n%s", err, out)
	}
	maintSpan := time.Since(start)
	t.Logf("a load takes %s, a maintain %s", loadSpan, maintSpan)
	rng := rand.New(rand.NewPCG(21, 3))
	killed, failed := 0, 0
	for k := 0; k < rounds; k++ {
		write(4 + k)
		l, m := load(), maintain()
		if err := l.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(loadSpan) / 2)))
		if err := m.Start(); err != nil {
			t.Fatal(err)
		}
		victim, span := l, loadSpan
		if k%2 == 1 {
			victim, span = m, maintSpan
		}
		time.Sleep(time.Duration(rng.Int64N(int64(span))))
		victim.Process.Signal(syscall.SIGKILL)
		for _, c := range []*exec.Cmd{l, m} {
			err := c.Wait()
			if c == victim && err != nil && strings.Contains(err.Error(), "killed") {
				killed++
			} else if err != nil {
				failed++
			}
		}
		upsertRows(t, wh) // readable, and no key twice
	}
	t.Logf("%d of %d runs killed mid-way, %d others failed (met a concurrent commit)", killed, rounds, failed)
	if killed < rounds/2 {
		t.Errorf("only %d of %d kills landed: the test did not test much", killed, rounds)
	}
	for _, c := range []*exec.Cmd{load(), maintain()} {
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", c.Args, err, out)
		}
	}
	got := upsertRows(t, wh)
	if len(got) != len(want) {
		t.Errorf("the tables hold %d keys, the replayed changelog %d", len(got), len(want))
	}
	for id, name := range want {
		if got[id] != name {
			t.Fatalf("id %d: %q, want %q", id, got[id], name)
		}
	}
}
