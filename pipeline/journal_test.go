package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdcetl/cdcetl/decode"
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
	j, err := OpenJournal(cfg.OutDir)
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
	os.WriteFile(filepath.Join(dir, JournalName), []byte(`{"path":"/a","size":1,"mtime_ns":2,"status":"ok"}`+"\n"+`{"path":"/b","si`), 0o644)
	os.MkdirAll(filepath.Join(dir, "x"), 0o755)
	tmp := filepath.Join(dir, "x", ".f.json.parquet.123.tmp")
	os.WriteFile(tmp, []byte("partial"), 0o644)
	if err := CleanTemp(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Error("temp file not removed")
	}
	j, err := OpenJournal(dir)
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
// the first.
func TestOutputDirLock(t *testing.T) {
	dir := t.TempDir()
	unlock, err := lockDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := lockDir(ctx, dir); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second lock: %v, want to wait until the deadline", err)
	}
	unlock()
	unlock2, err := lockDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	unlock2()
}
