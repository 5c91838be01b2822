package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/internal/outdir"
)

// TestIncrementalReruns: a rerun converts only new or changed inputs;
// --force redoes all; a changed input's output is replaced.
func TestIncrementalReruns(t *testing.T) {
	dir := t.TempDir()
	in := writeInputs(t, dir, 4, 5)
	out := filepath.Join(dir, "out")
	run := func(force bool) Stats {
		cfg := canalConfig(t, 2)
		cfg.To, cfg.OutDir, cfg.Force = ToParquet, out, force
		st, err := Run(context.Background(), cfg, []string{in})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	if st := run(false); st.Files != 4 || st.Skipped != 0 {
		t.Fatalf("first run: %+v", st)
	}
	if st := run(false); st.Files != 0 || st.Skipped != 4 {
		t.Fatalf("rerun: files %d skipped %d, want 0 and 4", st.Files, st.Skipped)
	}
	// Touch one (same content: skipped after hashing), change another.
	touched := filepath.Join(in, "sub1", "f01.json")
	later := time.Now().Add(time.Hour)
	os.Chtimes(touched, later, later)
	changed := filepath.Join(in, "sub2", "f02.json")
	os.WriteFile(changed, []byte(`{"data":[{"id":"7","name":"new"}],"type":"INSERT"}`+"\n"), 0o644)
	st := run(false)
	if st.Files != 1 || st.Skipped != 3 || len(st.PerFile) != 4 || st.PerFile[3].Path != changed || st.PerFile[3].Status != "ok" || st.PerFile[0].Status != "skipped" {
		t.Fatalf("after a change: %+v", st)
	}
	rows, _ := readParquetRows(t, filepath.Join(out, "sub2", "f02.json.parquet"))
	if len(rows) != 1 || !strings.HasPrefix(rows[0], "+I[7, new") {
		t.Errorf("changed input's output: %v", rows)
	}
	if st := run(true); st.Files != 4 || st.Skipped != 0 {
		t.Fatalf("--force: %+v", st)
	}
}

// TestKeepGoingAndOnSuccess: a bad input is journaled as failed and moved
// to the failed directory with its error; good inputs are moved away once
// converted; the run reports ErrPartial.
func TestKeepGoingAndOnSuccess(t *testing.T) {
	dir := t.TempDir()
	in := writeInputs(t, dir, 3, 5)
	bad := filepath.Join(in, "sub0", "bad.json")
	os.WriteFile(bad, []byte(`{"data":[{"id":"x"}],"type":"INSERT"}`+"\n"), 0o644)
	cfg := canalConfig(t, 2)
	cfg.To, cfg.OutDir = ToParquet, filepath.Join(dir, "out")
	cfg.KeepGoing, cfg.FailedDir = true, filepath.Join(dir, "failed")
	cfg.OnSuccess = "move=" + filepath.Join(dir, "done")
	st, err := Run(context.Background(), cfg, []string{in})
	var de *decode.Error
	if !errors.Is(err, ErrPartial) || !errors.As(err, &de) || de.Line != 1 {
		t.Fatalf("err = %v, want ErrPartial with the decode error", err)
	}
	if st.Failed != 1 || st.Files != 4 {
		t.Errorf("stats %+v", st)
	}
	if msg, err := os.ReadFile(filepath.Join(dir, "failed", "sub0", "bad.json.err")); err != nil || !strings.Contains(string(msg), "bad.json:1:") {
		t.Errorf("failed input's .err: %q %v", msg, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "done", "sub1", "f01.json")); err != nil {
		t.Errorf("converted input not moved: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(in, "*", "*"))
	if len(left) != 0 {
		t.Errorf("inputs left in the landing directory: %v", left)
	}
	j, err := outdir.OpenJournal(cfg.OutDir, "")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	abs, _ := filepath.Abs(bad)
	if e, ok := j.Lookup(abs); !ok || e.Status != "failed" || e.Error == "" {
		t.Errorf("journal entry for the bad input: %+v", e)
	}
}

// TestTornJournalAndTempFiles: a journal line cut by a crash is ignored and
// temporary files of a killed run are removed.
func TestTornJournalAndTempFiles(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, outdir.JournalName), []byte(`{"path":"/a","size":1,"mtime_ns":2,"status":"ok"}`+"\n"+`{"path":"/b","si`), 0o644)
	os.MkdirAll(filepath.Join(dir, "x"), 0o755)
	tmp := filepath.Join(dir, "x", ".f.json.parquet.123.tmp")
	os.WriteFile(tmp, []byte("partial"), 0o644)
	if err := outdir.CleanTemp(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Error("temp file not removed")
	}
	j, err := outdir.OpenJournal(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if _, ok := j.Lookup("/a"); !ok {
		t.Error("whole entry lost")
	}
	if _, ok := j.Lookup("/b"); ok {
		t.Error("torn entry read")
	}
}

// TestOutputDirLock: a second run on the same output directory waits for
// the first; shards of one count run side by side, but wait for a whole
// run, which waits for them; a shard of another count is refused.
func TestOutputDirLock(t *testing.T) {
	dir := t.TempDir()
	bg := context.Background()
	lock := func(sh Shard) (*outdir.Lock, error) {
		ctx, cancel := context.WithTimeout(bg, 200*time.Millisecond)
		defer cancel()
		return outdir.LockDir(ctx, dir, sh)
	}
	whole, err := outdir.LockDir(bg, dir, Shard{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock(Shard{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second lock: %v, want to wait until the deadline", err)
	}
	if _, err := lock(Shard{Index: 1, Count: 3}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a shard beside a whole run: %v, want to wait", err)
	}
	whole.Release()
	s0, err := lock(Shard{Index: 0, Count: 3})
	if err != nil {
		t.Fatal(err)
	}
	s1, err := lock(Shard{Index: 1, Count: 3})
	if err != nil {
		t.Fatalf("shards of one count must not wait for each other: %v", err)
	}
	if s1.MayClean("0-of-3") || !s1.MayClean("1-of-3") || !s1.MayClean("") {
		t.Error("shard 1 may clean only its own and whole runs' leftovers while shard 0 runs")
	}
	if _, err := lock(Shard{Index: 1, Count: 3}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the same shard twice: %v, want to wait", err)
	}
	if _, err := lock(Shard{Index: 0, Count: 7}); err == nil || !strings.Contains(err.Error(), "another sharding") {
		t.Fatalf("a shard of another count: %v, want it refused", err)
	}
	if _, err := lock(Shard{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a whole run beside shards: %v, want to wait", err)
	}
	s0.Release()
	// Shard 0 is gone: shard 2 may clean up after it (and holds its lock
	// while it does).
	s2, err := lock(Shard{Index: 2, Count: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !s2.MayClean("0-of-3") || s2.MayClean("1-of-3") {
		t.Error("shard 2 may clean the idle shard 0's leftovers, not the running shard 1's")
	}
	if _, err := lock(Shard{Index: 0, Count: 3}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("shard 0 must wait while shard 2 cleans up after it")
	}
	s2.ReleaseIdle()
	s0, err = lock(Shard{Index: 0, Count: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []*outdir.Lock{s0, s1, s2} {
		l.Release()
	}
	whole, err = lock(Shard{})
	if err != nil {
		t.Fatal(err)
	}
	whole.Release()
}

// TestJournalUnionOfShards: a journal reads every shard's file; where two
// disagree about an input, the later entry wins, and compaction rewrites
// only the run's own file.
func TestJournalUnionOfShards(t *testing.T) {
	dir := t.TempDir()
	line := func(path string, size int, at string) string {
		return fmt.Sprintf(`{"path":%q,"size":%d,"mtime_ns":1,"status":"ok","time":%q}`+"\n", path, size, at)
	}
	os.WriteFile(filepath.Join(dir, "_cdcetl_journal.0-of-3.jsonl"), []byte(line("/a", 1, "2026-01-01T00:00:00Z")+line("/b", 1, "2026-01-01T00:00:00Z")), 0o644)
	os.WriteFile(filepath.Join(dir, "_cdcetl_journal.1-of-7.jsonl"), []byte(line("/a", 2, "2026-01-02T00:00:00Z")), 0o644)
	os.WriteFile(filepath.Join(dir, "_cdcetl_journal.2-of-3.jsonl"), []byte(line("/b", 3, "2025-12-31T00:00:00Z")+`{"path":"/c","si`), 0o644)
	j, err := outdir.OpenJournal(dir, "2-of-3")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	for path, size := range map[string]int64{"/a": 2, "/b": 1} {
		if e, ok := j.Lookup(path); !ok || e.Size != size {
			t.Errorf("%s: %+v, want the later entry (size %d)", path, e, size)
		}
	}
	own, _ := os.ReadFile(filepath.Join(dir, "_cdcetl_journal.2-of-3.jsonl"))
	if string(own) != strings.TrimSuffix(line("/b", 3, "2025-12-31T00:00:00Z"), "\n")+"\n" && !strings.Contains(string(own), `"path":"/b"`) || strings.Contains(string(own), `"/a"`) || strings.Contains(string(own), `"/c"`) {
		t.Errorf("the own file, compacted, holds only its own entries:\n%s", own)
	}
}
