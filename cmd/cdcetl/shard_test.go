package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// shardArchive writes 100 debezium inputs under two arguments that share
// relative paths (a/d0/f00.json and b/d0/f00.json), so outputs need "~2"
// names. Rows carry their id;
// ids are unique across the archive, rows in all: files*rows.
func shardArchive(t *testing.T, dir string) (args []string, total int) {
	t.Helper()
	const files, rows = 100, 200
	for f := 0; f < files; f++ {
		var b strings.Builder
		for r := 0; r < rows; r++ {
			id := f*rows + r
			fmt.Fprintf(&b, `{"before":null,"after":{"id":%d,"name":"n%d"},"source":{"db":"inv","table":"t%d"},"op":"c","ts_ms":1700000000000}`+"\n", id, id, id%3)
		}
		arg := []string{"a", "b"}[f%2]
		pair := f / 2 // a and b each hold every relative path once
		p := filepath.Join(dir, arg, fmt.Sprintf("d%d", pair%5), fmt.Sprintf("f%02d.json", pair/5))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return []string{filepath.Join(dir, "a"), filepath.Join(dir, "b")}, files * rows
}

// runShards starts n processes, shard 0/n to n-1/n, at once, and waits for
// all of them.
func runShards(t *testing.T, bin string, n int, args []string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, n)
	outs := make([][]byte, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(bin, args...)
			// The shard from the environment, as the Indexed Job sets it.
			cmd.Env = append(os.Environ(), fmt.Sprintf("CDCETL_SHARD=%d/%d", i, n))
			outs[i], errs[i] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("shard %d/%d: %v\n%s", i, n, err, outs[i])
		}
	}
}

// outputFiles maps every output file below dir (relative path) to its
// bytes, leaving out cdcetl's own bookkeeping (journals, locks).
func outputFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	got := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if strings.HasPrefix(d.Name(), "_cdcetl") {
			return nil
		}
		b, err := os.ReadFile(p)
		got[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func sameOutputs(t *testing.T, what string, got, want map[string][]byte) {
	t.Helper()
	var names []string
	for k := range want {
		names = append(names, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: %s is not an output of the unsharded run", what, k)
		}
	}
	slices.Sort(names)
	for _, k := range names {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s: %s is missing", what, k)
			continue
		}
		if !bytes.Equal(g, want[k]) {
			t.Errorf("%s: %s differs from the unsharded run's", what, k)
		}
	}
}

// TestShardsEqualOneRun: n ∈ {1, 3, 7} shard processes at once over the
// same 100-file archive (two arguments sharing relative paths) write,
// together, exactly the files one unsharded run writes, byte for byte
// (so row for row), for Parquet with a schema and routed Parquet without
// one; a rerun with another n, or without --shard, converts nothing; and
// 4 shard processes at once load the same Iceberg tables as one run.
func TestShardsEqualOneRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := buildCLI(t, dir)
	inputs, total := shardArchive(t, filepath.Join(dir, "in"))
	modes := map[string][]string{
		"schema": {"--format", "debezium-json", "--schema", "id BIGINT, name STRING"},
		"routed": {"--format", "debezium-json"},
	}
	for _, mode := range []string{"schema", "routed"} {
		flags := append([]string{"convert", "--quiet", "--workers", "1"}, modes[mode]...)
		ref := filepath.Join(dir, mode+"-whole")
		if out, err := exec.Command(bin, append(append(flags, "-o", ref), inputs...)...).CombinedOutput(); err != nil {
			t.Fatalf("%s: unsharded run: %v\n%s", mode, err, out)
		}
		want := outputFiles(t, ref)
		if mode == "schema" {
			var parquets []string
			for k := range want {
				if strings.HasSuffix(k, ".parquet") {
					parquets = append(parquets, filepath.Join(ref, k))
				}
			}
			if len(parquets) != 100 {
				t.Fatalf("the unsharded run wrote %d Parquet files, want 100", len(parquets))
			}
			ids, _ := parquetIDs(t, ref)
			if len(ids) != total {
				t.Fatalf("the unsharded run holds %d rows, want %d", len(ids), total)
			}
		}
		for _, n := range []int{1, 3, 7} {
			out := filepath.Join(dir, fmt.Sprintf("%s-%d", mode, n))
			runShards(t, bin, n, append(append(flags, "-o", out), inputs...))
			sameOutputs(t, fmt.Sprintf("%s, %d shards", mode, n), outputFiles(t, out), want)
			if n == 1 {
				continue
			}
			journals, _ := filepath.Glob(filepath.Join(out, "_cdcetl_journal.*-of-*.jsonl"))
			if len(journals) != n {
				t.Errorf("%s: %d shard journals, want %d", mode, len(journals), n)
			}
			// Another shard count, then a whole run: every input is
			// known converted, whichever shard did it.
			for _, again := range []string{"5", ""} {
				var env []string
				if again != "" {
					env = []string{"CDCETL_SHARD=" + "2/" + again}
				}
				loud := slices.DeleteFunc(slices.Clone(flags), func(a string) bool { return a == "--quiet" })
				cmd := exec.Command(bin, append(append(loud, "-o", out), inputs...)...)
				cmd.Env = append(os.Environ(), env...)
				msg, err := cmd.CombinedOutput()
				if err != nil || !strings.Contains(string(msg), "nothing to do") {
					t.Errorf("%s: rerun of %d shards with shard %q: %v\n%s", mode, n, again, err, msg)
				}
			}
		}
	}

	// Iceberg: 4 shards commit to the same tables of one catalog at once.
	ice := []string{"convert", "--quiet", "--workers", "1", "--format", "debezium-json", "--to", "iceberg"}
	ref := filepath.Join(dir, "ice-whole")
	if out, err := exec.Command(bin, append(append(slices.Clone(ice), "-o", ref), inputs...)...).CombinedOutput(); err != nil {
		t.Fatalf("iceberg: unsharded run: %v\n%s", err, out)
	}
	want := lakeRows(t, ref)
	for _, n := range []int{1, 3, 4, 7} {
		wh := filepath.Join(dir, fmt.Sprintf("ice-%d", n))
		runShards(t, bin, n, append(append(slices.Clone(ice), "-o", wh), inputs...))
		got := lakeRows(t, wh)
		if len(got) != len(want) || len(want) != 3 {
			t.Fatalf("iceberg, %d shards: %d tables, want %d (and 3)", n, len(got), len(want))
		}
		for tbl, rows := range want {
			if !slices.Equal(got[tbl], rows) {
				t.Errorf("iceberg table %s, %d shards: the shards' rows differ from one run's: %s", tbl, n, diffRows(got[tbl], rows))
			}
		}
	}
}

// TestShardsKilledAndRestarted: three shards run side by side on one
// output directory; at random moments one of them is killed with SIGKILL
// and started again, 40 times. A shard's start cleans up after killed
// shards (their temporary and pending files) but never touches a running
// one's: after a last run of each, every row is in the outputs exactly
// once and nothing temporary is left.
func TestShardsKilledAndRestarted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := buildCLI(t, dir)
	inputs, total := shardArchive(t, filepath.Join(dir, "in"))
	out := filepath.Join(dir, "out")
	args := append([]string{"convert", "--quiet", "--format", "debezium-json", "--schema", "id BIGINT, name STRING", "--to", "json", "-o", out, "--workers", "1"}, inputs...)
	const n = 3
	killShards(t, bin, args, n, 40, 40, 3, 9)
	outs, _ := filepath.Glob(filepath.Join(out, "*", "*.jsonl"))
	if len(outs) != 100 {
		t.Fatalf("%d outputs, want 100", len(outs))
	}
	eachRowOnce(t, outs, total)
	filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err == nil && (strings.HasSuffix(p, ".tmp") || strings.HasPrefix(d.Name(), "_cdcetl_pending")) {
			t.Errorf("left behind: %s", p)
		}
		return nil
	})
}

// TestShardsEvolveOneTable: 4 shards at once load inputs that each add a
// column to the same routed Iceberg table, so the shards evolve its
// schema concurrently (a conflicting schema change is retried like a
// conflicting commit); the table ends with every column and one run's
// rows.
func TestShardsEvolveOneTable(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := buildCLI(t, dir)
	in := filepath.Join(dir, "in")
	os.MkdirAll(in, 0o755)
	for f := 0; f < 24; f++ {
		var b strings.Builder
		for r := 0; r < 50; r++ {
			id := f*50 + r
			fmt.Fprintf(&b, `{"before":null,"after":{"id":%d,"name":"n%d","c%d":%d},"source":{"db":"inv","table":"wide"},"op":"c"}`+"\n", id, id, f%8, id)
		}
		os.WriteFile(filepath.Join(in, fmt.Sprintf("f%02d.json", f)), []byte(b.String()), 0o644)
	}
	ice := []string{"convert", "--quiet", "--workers", "1", "--format", "debezium-json", "--to", "iceberg", in}
	ref := filepath.Join(dir, "ref")
	if out, err := exec.Command(bin, append(slices.Clone(ice), "-o", ref)...).CombinedOutput(); err != nil {
		t.Fatalf("one run: %v\n%s", err, out)
	}
	want := lakeRows(t, ref)
	wh := filepath.Join(dir, "shards")
	runShards(t, bin, 4, append(slices.Clone(ice), "-o", wh))
	got := lakeRows(t, wh)
	if len(want["inv.wide"]) != 24*50 {
		t.Fatalf("one run loaded %d rows", len(want["inv.wide"]))
	}
	if !slices.Equal(got["inv.wide"], want["inv.wide"]) {
		t.Errorf("4 shards evolving one table: %s", diffRows(got["inv.wide"], want["inv.wide"]))
	}
}

// killShards runs shards 0/n..n-1/n of the command side by side; rounds
// times, after a random pause below maxMs milliseconds, it kills one of
// them with SIGKILL and starts it again. Then every shard runs once more
// to its end, which must succeed.
func killShards(t *testing.T, bin string, args []string, n, rounds, maxMs int, seed1, seed2 uint64) {
	t.Helper()
	start := func(i int) (*exec.Cmd, chan error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), fmt.Sprintf("CDCETL_SHARD=%d/%d", i, n))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ch := make(chan error, 1)
		go func() { ch <- cmd.Wait() }()
		return cmd, ch
	}
	procs, done := make([]*exec.Cmd, n), make([]chan error, n)
	for i := range procs {
		procs[i], done[i] = start(i)
	}
	rng := rand.New(rand.NewPCG(seed1, seed2))
	for k := 0; k < rounds; k++ {
		time.Sleep(time.Duration(rng.IntN(maxMs)) * time.Millisecond)
		i := rng.IntN(n)
		procs[i].Process.Signal(syscall.SIGKILL)
		<-done[i]
		procs[i], done[i] = start(i)
	}
	// Killed runs fail; the last start of each may still be at work.
	for i := range procs {
		<-done[i]
	}
	for i := 0; i < n; i++ {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), fmt.Sprintf("CDCETL_SHARD=%d/%d", i, n))
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("last run of shard %d: %v\n%s", i, err, msg)
		}
	}
}
