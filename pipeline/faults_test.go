package pipeline

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cdcetl/cdcetl/reader"
)

// noTemp fails the test when a temporary output is left under dir.
func noTemp(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".tmp") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

// TestFullDisk converts into a 256 KiB tmpfs: the file that does not fit
// fails with ENOSPC and leaves nothing; the one converted before it stays,
// journaled.
func TestFullDisk(t *testing.T) {
	out := t.TempDir()
	if err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", out).Run(); err != nil {
		t.Skipf("cannot mount a small tmpfs here (%v): skipped", err)
	}
	defer exec.Command("umount", out).Run()
	in := filepath.Join(t.TempDir(), "in")
	os.MkdirAll(in, 0o755)
	os.WriteFile(filepath.Join(in, "a-small.json"), []byte(`{"data":[{"id":"1","name":"x"}],"type":"INSERT"}`+"\n"), 0o644)
	var b strings.Builder
	for r := 0; r < 40000; r++ {
		fmt.Fprintf(&b, `{"data":[{"id":"%d","name":"%s"}],"type":"INSERT"}`+"\n", r, strings.Repeat("z", r%97))
	}
	os.WriteFile(filepath.Join(in, "b-big.json"), []byte(b.String()), 0o644)
	cfg := canalConfig(t, 1)
	cfg.To, cfg.OutDir = "json", out
	cfg.Target = cfg.Format
	_, err := Run(context.Background(), cfg, []string{in})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("err = %v, want ENOSPC", err)
	}
	if _, err := os.Stat(filepath.Join(out, "a-small.json.jsonl")); err != nil {
		t.Errorf("the file converted before the disk filled is gone: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "b-big.json.jsonl")); !os.IsNotExist(err) {
		t.Errorf("partial output of the file that did not fit: %v", err)
	}
	noTemp(t, out)
}

// TestUnreadableAndCorruptInputs: an input that cannot be read and a
// corrupt gzip fail with a clear error, leave no output, and with
// KeepGoing do not stop the other inputs.
func TestUnreadableAndCorruptInputs(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	os.MkdirAll(in, 0o755)
	good := []byte(`{"data":[{"id":"1","name":"x"}],"type":"INSERT"}` + "\n")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(bytes.Repeat(good, 1000))
	zw.Close()
	corrupt := gz.Bytes()
	corrupt[len(corrupt)/2] ^= 0xff
	os.WriteFile(filepath.Join(in, "corrupt.json.gz"), corrupt, 0o644)
	os.WriteFile(filepath.Join(in, "good.json"), good, 0o644)
	os.MkdirAll(filepath.Join(in, "isdir.json"), 0o755)
	files := []reader.File{
		{Path: filepath.Join(in, "corrupt.json.gz"), Rel: "corrupt.json.gz"},
		{Path: filepath.Join(in, "isdir.json"), Rel: "isdir.json"}, // opens, but cannot be read
		{Path: filepath.Join(in, "gone.json"), Rel: "gone.json"},   // deleted after it was listed
		{Path: filepath.Join(in, "good.json"), Rel: "good.json", Size: int64(len(good))},
	}
	cfg := canalConfig(t, 2)
	cfg.To, cfg.OutDir, cfg.KeepGoing = ToParquet, filepath.Join(dir, "out"), true
	st, err := RunFiles(context.Background(), cfg, files)
	if !errors.Is(err, ErrPartial) || st.Failed != 3 {
		t.Fatalf("err = %v, failed %d; want ErrPartial and 3 failures", err, st.Failed)
	}
	for _, want := range []string{"corrupt.json.gz", "isdir.json", "gone.json"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not name %s: %v", want, err)
		}
	}
	entries, _ := os.ReadDir(cfg.OutDir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "_cdcetl.lock _cdcetl_journal.jsonl good.json.parquet" {
		t.Errorf("outputs: %v", names)
	}
	noTemp(t, cfg.OutDir)
}

// TestInputDeletedWhileRead: a file removed after it was opened is read to
// the end (POSIX keeps its data), so nothing is lost.
func TestInputDeletedWhileRead(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f.json")
	os.WriteFile(p, bytes.Repeat([]byte("line\n"), 100000), 0o644)
	c, err := reader.OpenChunks(p, p, 4096, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	lines := 0
	first := true
	for {
		ch, ok := c.Next()
		if !ok {
			break
		}
		if first {
			os.Remove(p)
			first = false
		}
		lines += bytes.Count(ch.Data, []byte("\n"))
	}
	if c.Err() != nil || lines != 100000 {
		t.Errorf("read %d lines, err %v", lines, c.Err())
	}
}

// TestOutputNotWritable: an output directory that cannot be created stops
// the run before any input is read.
func TestOutputNotWritable(t *testing.T) {
	dir := t.TempDir()
	in := writeInputs(t, dir, 2, 3)
	blocker := filepath.Join(dir, "file")
	os.WriteFile(blocker, nil, 0o644)
	cfg := canalConfig(t, 1)
	cfg.To, cfg.OutDir = ToParquet, filepath.Join(blocker, "out")
	_, err := Run(context.Background(), cfg, []string{in})
	if !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("err = %v, want ENOTDIR", err)
	}
}

// TestKeepGoingManyChunks: files that fail in their first chunk, each of
// many chunks, with --keep-going: the chunks still in flight are drained
// (their slots freed), so the run goes on to the good file instead of
// waiting forever.
func TestKeepGoingManyChunks(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in")
	os.MkdirAll(in, 0o755)
	var bad strings.Builder
	bad.WriteString("{not json\n")
	for r := 0; r < 5000; r++ {
		fmt.Fprintf(&bad, `{"data":[{"id":"%d","name":"n"}],"type":"INSERT"}`+"\n", r)
	}
	for i := 0; i < 4; i++ {
		os.WriteFile(filepath.Join(in, fmt.Sprintf("a%d-bad.json", i)), []byte(bad.String()), 0o644)
	}
	os.WriteFile(filepath.Join(in, "b-good.json"), []byte(`{"data":[{"id":"1","name":"x"}],"type":"INSERT"}`+"\n"), 0o644)
	cfg := canalConfig(t, 2)
	cfg.To, cfg.OutDir, cfg.KeepGoing, cfg.ChunkSize = ToParquet, t.TempDir(), true, 1024
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := Run(ctx, cfg, []string{in})
	if !errors.Is(err, ErrPartial) || st.Failed != 4 || st.Files != 5 {
		t.Fatalf("err = %v, %d of %d files failed; want ErrPartial, 4 of 5", err, st.Failed, st.Files)
	}
	if _, err := os.Stat(filepath.Join(cfg.OutDir, "b-good.json.parquet")); err != nil {
		t.Errorf("the good file: %v", err)
	}
}
