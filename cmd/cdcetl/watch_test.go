package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cdcetl/cdcetl/internal/cdcgen"
)

// TestWatchLandingDirectory drops 200 files into a watched landing
// directory — some written slowly, some renamed in from a temporary name,
// some with a malformed line — restarts the watcher halfway, and checks that
// every valid row is in the output exactly once and every bad line is in a
// dead-letter file.
func TestWatchLandingDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("real file-system watching")
	}
	dir := t.TempDir()
	landing, out := filepath.Join(dir, "landing"), filepath.Join(dir, "out")
	os.MkdirAll(landing, 0o755)
	args := []string{"--quiet", "--format", "debezium-json", "--schema", "id BIGINT, name STRING",
		"--option", "debezium-json.ignore-parse-errors=true", "--to", "json", "--settle", "300ms", landing, "-o", out}

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

	const files, rows = 200, 20
	bad := 0
	for f := 0; f < files; f++ {
		var b strings.Builder
		for r := 0; r < rows; r++ {
			id := f*rows + r
			fmt.Fprintf(&b, `{"before":null,"after":{"id":%d,"name":"n%d"},"op":"c"}`+"\n", id, id)
		}
		if f%4 == 3 {
			b.WriteString("{this line is broken\n")
			bad++
		}
		data := []byte(b.String())
		name := filepath.Join(landing, fmt.Sprintf("f%03d.json", f))
		switch f % 4 {
		case 1: // written slowly, in three parts
			fh, _ := os.Create(name)
			for k := 0; k < 3; k++ {
				fh.Write(data[k*len(data)/3 : (k+1)*len(data)/3])
				time.Sleep(20 * time.Millisecond)
			}
			fh.Close()
		case 2: // renamed into place
			tmp := filepath.Join(landing, fmt.Sprintf(".f%03d.json.tmp", f))
			os.WriteFile(tmp, data, 0o644)
			os.Rename(tmp, name)
		default:
			os.WriteFile(name, data, 0o644)
		}
		if f == files/2 {
			cancel() // restart the watcher halfway
			wg.Wait()
			cancel, wg = start()
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		outs, _ := filepath.Glob(filepath.Join(out, "f*.jsonl"))
		if len(outs) == files || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	wg.Wait()

	outs, _ := filepath.Glob(filepath.Join(out, "f*.jsonl"))
	if len(outs) != files {
		t.Fatalf("%d outputs, want %d", len(outs), files)
	}
	eachRowOnce(t, outs, files*rows)
	deads, _ := filepath.Glob(filepath.Join(out, "_dead_letters", "*.jsonl"))
	got := 0
	for _, p := range deads {
		data, _ := os.ReadFile(p)
		got += strings.Count(string(data), `"raw":"{this line is broken"`)
	}
	if got != bad {
		t.Errorf("%d bad lines in dead-letter files, want %d", got, bad)
	}
}

// TestWatchNoSchema: a watcher with no --format and no --schema, moving
// converted inputs away (--on-success move) after a settle time, restarted
// between drifts, keeps every table's schema in its _schema.sql: its
// outputs are byte for byte what one batch conversion of the same inputs
// gives, the incompatible change included (v2).
func TestWatchNoSchema(t *testing.T) {
	if testing.Short() {
		t.Skip("real file-system watching")
	}
	// Canal's types are in every message; Maxwell's come from values
	// (and DDL records) merged with what _schema.sql kept.
	for _, format := range []string{"canal-json", "maxwell-json"} {
		t.Run(format, func(t *testing.T) { watchNoSchema(t, format) })
	}
}

func watchNoSchema(t *testing.T, format string) {
	dir := t.TempDir()
	landing, out, done, batch := filepath.Join(dir, "landing"), filepath.Join(dir, "out"), filepath.Join(dir, "done"), filepath.Join(dir, "batch")
	archive := cdcgen.Archive(format, 30)
	os.MkdirAll(landing, 0o755)
	for _, f := range archive {
		os.WriteFile(filepath.Join(landing, f.Name), f.Data, 0o644)
	}
	var stderr bytes.Buffer
	if code := run([]string{"convert", "--quiet", "-o", batch, landing}, io.Discard, &stderr); code != 0 {
		t.Fatalf("batch: exit %d: %s", code, stderr.String())
	}
	for _, f := range archive {
		os.Remove(filepath.Join(landing, f.Name))
	}

	args := []string{"--quiet", "--settle", "200ms", "--on-success", "move=" + done, landing, "-o", out}
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
	waitMoved := func(name string) {
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(filepath.Join(done, name)); err == nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("%s was not converted and moved", name)
	}
	cancel, wg := start()
	for i, f := range archive {
		os.WriteFile(filepath.Join(landing, f.Name), f.Data, 0o644)
		waitMoved(f.Name)
		if i == 1 {
			cancel() // restart before the incompatible change
			wg.Wait()
			cancel, wg = start()
		}
	}
	cancel()
	wg.Wait()

	n := 0
	filepath.WalkDir(batch, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".parquet") && !strings.HasSuffix(p, "_schema.sql") {
			return err
		}
		rel, _ := filepath.Rel(batch, p)
		want, _ := os.ReadFile(p)
		got, err := os.ReadFile(filepath.Join(out, rel))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: the watcher's differs from the batch conversion's (%v)", rel, err)
		}
		n++
		return nil
	})
	if _, err := os.Stat(filepath.Join(out, "inventory", "Order Items", "v2", "_schema.sql")); err != nil || n < 20 {
		t.Errorf("%d files compared; v2: %v", n, err)
	}
}

// TestWatchSlowWriterMove: a writer holds its file open and pauses longer
// than --settle between writes. With --on-success move the file must not
// be converted and moved while it is still open (the writer would go on
// writing into the moved file, and those lines would be in done/ but in no
// output): every line is converted exactly once, and done/ holds the
// whole file.
func TestWatchSlowWriterMove(t *testing.T) {
	if testing.Short() {
		t.Skip("real file-system watching")
	}
	dir := t.TempDir()
	landing, out, done := filepath.Join(dir, "landing"), filepath.Join(dir, "out"), filepath.Join(dir, "done")
	os.MkdirAll(landing, 0o755)
	args := []string{"--quiet", "--format", "debezium-json", "--schema", "id BIGINT, name STRING",
		"--to", "json", "--settle", "200ms", "--on-success", "move=" + done, landing, "-o", out}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	var stderr bytes.Buffer
	go func() {
		defer wg.Done()
		if err := runWatch(ctx, args, io.Discard, &stderr); err != nil {
			t.Errorf("watch: %v", err)
		}
	}()

	const rows = 1000
	w, err := os.Create(filepath.Join(landing, "slow.json"))
	if err != nil {
		t.Fatal(err)
	}
	for r := 0; r < rows; r++ {
		if r == rows/2 {
			time.Sleep(1200 * time.Millisecond) // six quiet periods, the file open
		}
		fmt.Fprintf(w, `{"before":null,"after":{"id":%d,"name":"n%d"},"op":"c"}`+"\n", r, r)
	}
	w.Close()

	moved := filepath.Join(done, "slow.json")
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(moved); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // a late conversion or move would show
	cancel()
	wg.Wait()
	data, err := os.ReadFile(moved)
	if err != nil {
		t.Fatalf("not moved: %v\n%s", err, stderr.String())
	}
	if n := bytes.Count(data, []byte("\n")); n != rows {
		t.Errorf("done/slow.json holds %d lines, want %d", n, rows)
	}
	eachRowOnce(t, []string{filepath.Join(out, "slow.json.jsonl")}, rows)
}

// TestWatchRetriesAfterDiskFull: a file that fails for a reason that is
// not its own (the output disk is full) is tried again after a backoff,
// and converted once space is freed, without being dropped in again.
func TestWatchRetriesAfterDiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("real file-system watching")
	}
	dir := t.TempDir()
	landing, out := filepath.Join(dir, "landing"), filepath.Join(dir, "out")
	os.MkdirAll(landing, 0o755)
	os.MkdirAll(out, 0o755)
	if err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", out).Run(); err != nil {
		t.Skipf("cannot mount a small tmpfs here (%v): skipped", err)
	}
	defer exec.Command("umount", out).Run()
	filler := filepath.Join(out, "filler")
	os.WriteFile(filler, make([]byte, 200<<10), 0o644)
	args := []string{"--quiet", "--format", "debezium-json", "--schema", "id BIGINT, name STRING",
		"--to", "json", "--settle", "100ms", landing, "-o", out}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	var stderr syncBuffer
	go func() {
		defer wg.Done()
		if err := runWatch(ctx, args, io.Discard, &stderr); err != nil {
			t.Errorf("watch: %v", err)
		}
	}()
	var b strings.Builder
	for r := 0; r < 3000; r++ {
		fmt.Fprintf(&b, `{"before":null,"after":{"id":%d,"name":"%s"},"op":"c"}`+"\n", r, strings.Repeat("n", r%50))
	}
	os.WriteFile(filepath.Join(landing, "a.json"), []byte(b.String()), 0o644)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && !strings.Contains(stderr.String(), "trying again later") {
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(stderr.String(), "trying again later") {
		cancel()
		wg.Wait()
		t.Fatalf("no temporary failure logged:\n%s", stderr.String())
	}
	os.Remove(filler)
	output := filepath.Join(out, "a.json.jsonl")
	for time.Now().Before(deadline) {
		if _, err := os.Stat(output); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	if _, err := os.Stat(output); err != nil {
		t.Fatalf("not converted once space was freed: %v\n%s", err, stderr.String())
	}
	eachRowOnce(t, []string{output}, 3000)
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestWatchFailedAndReport: a watcher journals a file that fails and moves
// it to --failed with its .err, as convert does, and --report is the
// session's report, written after each file and when it stops: its
// counts, failed inputs included, and each file's status.
func TestWatchFailedAndReport(t *testing.T) {
	if testing.Short() {
		t.Skip("real file-system watching")
	}
	dir := t.TempDir()
	landing, out, failed, rep := filepath.Join(dir, "landing"), filepath.Join(dir, "out"), filepath.Join(dir, "failed"), filepath.Join(dir, "report.json")
	os.MkdirAll(landing, 0o755)
	args := []string{"--quiet", "--format", "debezium-json", "--schema", "id BIGINT, name STRING", "--to", "json",
		"--settle", "100ms", "--failed", failed, "--report", rep, landing, "-o", out}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := runWatch(ctx, args, io.Discard, io.Discard); err != nil {
			t.Errorf("watch: %v", err)
		}
	}()
	os.WriteFile(filepath.Join(landing, "good.json"), []byte(`{"before":null,"after":{"id":1,"name":"a"},"op":"c"}`+"\n"), 0o644)
	os.WriteFile(filepath.Join(landing, "bad.json"), []byte(`{"before":null,"after":{"id":"x"},"op":"c"}`+"\n"), 0o644)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		_, e1 := os.Stat(filepath.Join(failed, "bad.json.err"))
		_, e2 := os.Stat(filepath.Join(out, "good.json.jsonl"))
		if e1 == nil && e2 == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	if _, err := os.Stat(filepath.Join(failed, "bad.json.err")); err != nil {
		t.Fatalf("the failed file was not moved with its .err: %v", err)
	}
	var r struct {
		Status  string `json:"status"`
		Files   int    `json:"files"`
		Failed  int    `json:"failed_inputs"`
		PerFile []struct {
			Path   string `json:"path"`
			Status string `json:"status"`
		} `json:"per_file"`
	}
	data, err := os.ReadFile(rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	if r.Status != "stopped" || r.Failed != 1 || len(r.PerFile) != 2 {
		t.Fatalf("report: %s", data)
	}
	for _, f := range r.PerFile {
		if want := map[bool]string{true: "failed", false: "ok"}[strings.HasSuffix(f.Path, "bad.json")]; f.Status != want {
			t.Errorf("%s: %q, want %q", f.Path, f.Status, want)
		}
	}
}

// TestWatchRefusesUpsert: a watcher goes on past a failed file, which
// an upsert table cannot; it says so before watching.
func TestWatchRefusesUpsert(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run([]string{"watch", "--to", "iceberg", "--table-mode", "upsert", dir, "-o", filepath.Join(dir, "out")}, &stdout, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "convert on a schedule") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
}
