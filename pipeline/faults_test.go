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
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/internal/inuse"
	"github.com/cdcetl/cdcetl/internal/outdir"
	"github.com/cdcetl/cdcetl/internal/setting"
	"github.com/cdcetl/cdcetl/internal/testutil"
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
	if !strings.Contains(err.Error(), "is full") {
		t.Errorf("the error does not say the disk is full: %v", err)
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

// canalLines is n canal insert messages with ids from..from+n-1.
func canalLines(from, n int) string {
	var b strings.Builder
	for r := from; r < from+n; r++ {
		fmt.Fprintf(&b, `{"data":[{"id":"%d","name":"n%d"}],"type":"INSERT"}`+"\n", r, r)
	}
	return b.String()
}

// parquetIDs reads the id column of every Parquet file under dir.
func parquetIDs(t *testing.T, dir string) map[int64]int {
	t.Helper()
	ids := map[int64]int{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".parquet") {
			return err
		}
		if rel, _ := filepath.Rel(dir, p); strings.Contains(rel, outdir.CurrentDir) {
			return nil // a snapshot below a changelog
		}
		cols, rows, err := testutil.ReadColumns(p)
		if err != nil {
			t.Fatal(err)
		}
		c := slices.Index(cols, "id")
		for _, row := range rows {
			id, err := strconv.ParseInt(row[c], 10, 64)
			if err != nil {
				t.Fatalf("%s: row %q", p, row)
			}
			ids[id]++
		}
		return nil
	})
	return ids
}

// TestMoveWaitsForWriter: an input another process still has open for
// writing is converted but not moved (its writer would go on writing into
// the moved file); it is journaled as converted. Once the writer appended
// and closed it, the next run converts it again, replacing its outputs,
// and moves it: every row once, done/ holds the whole file.
func TestMoveWaitsForWriter(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	os.MkdirAll(in, 0o755)
	path := filepath.Join(in, "slow.json")
	w, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteString(canalLines(0, 50))
	if busy, _ := inuse.Busy(path); !busy {
		w.Close()
		t.Skip("this system cannot tell a file open for writing")
	}
	cfg := canalConfig(t, 2)
	cfg.To, cfg.OutDir = ToParquet, filepath.Join(dir, "out")
	cfg.OnSuccess = "move=" + filepath.Join(dir, "done")
	st, err := Run(context.Background(), cfg, []string{in})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.PerFile) != 1 || st.PerFile[0].Deferred == "" || st.PerFile[0].Disposed != "" {
		t.Fatalf("per file %+v: want converted, not moved", st.PerFile)
	}
	if len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], "open for writing") {
		t.Errorf("warnings %q", st.Warnings)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("moved while open for writing: %v", err)
	}
	w.WriteString(canalLines(50, 50))
	w.Close()
	st, err = Run(context.Background(), cfg, []string{in})
	if err != nil {
		t.Fatal(err)
	}
	if st.Files != 1 || st.PerFile[0].Disposed != DisposedMoved {
		t.Fatalf("second run: %+v", st.PerFile)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "done", "slow.json"))
	if n := strings.Count(string(data), "\n"); n != 100 {
		t.Errorf("done/slow.json holds %d lines, want 100", n)
	}
	ids := parquetIDs(t, cfg.OutDir)
	for id := int64(0); id < 100; id++ {
		if ids[id] != 1 {
			t.Fatalf("id %d is in the outputs %d times", id, ids[id])
		}
	}
	if len(ids) != 100 {
		t.Errorf("%d ids in the outputs, want 100", len(ids))
	}
}

// TestChangedSinceRead: a file whose size or content is no longer what
// was read is not disposed of.
func TestChangedSinceRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.json")
	os.WriteFile(path, []byte(canalLines(0, 3)), 0o644)
	f := reader.File{Path: path}
	hash, err := outdir.FileHash(f)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	e := outdir.Entry{Size: fi.Size(), ModTime: fi.ModTime().UnixNano(), Hash: hash}
	if err := changedSince(e, f, fi.Size(), fi.ModTime().UnixNano()); err != nil {
		t.Fatalf("unchanged: %v", err)
	}
	if err := changedSince(e, f, fi.Size(), fi.ModTime().UnixNano()+1); err != nil {
		t.Fatalf("touched, same bytes: %v", err)
	}
	if _, ok := deferred(changedSince(e, f, fi.Size()+10, 0)); !ok {
		t.Error("grown: not deferred")
	}
	os.WriteFile(path, []byte(strings.Replace(canalLines(0, 3), "n1", "x1", 1)), 0o644)
	if _, ok := deferred(changedSince(e, f, fi.Size(), fi.ModTime().UnixNano()+1)); !ok {
		t.Error("rewritten in place, same size: not deferred")
	}
}

// TestMoveTargetUnwritable: --on-success move into a directory that cannot
// be made does not stop the night: the input is journaled as converted
// with its move pending and the run exits with ErrNotDisposed; the next
// run converts the new inputs, and says the move is still pending; a run
// with --on-success keep leaves the input where it is and clears it. The
// target is below a regular file (the move fails before it is journaled)
// or on a read-only mount (it fails after).
func TestMoveTargetUnwritable(t *testing.T) {
	t.Run("below a file", func(t *testing.T) {
		blocker := filepath.Join(t.TempDir(), "blocker")
		os.WriteFile(blocker, []byte("a file where a directory should be\n"), 0o644)
		moveTargetUnwritable(t, filepath.Join(blocker, "done"))
	})
	t.Run("read-only mount", func(t *testing.T) {
		ro := t.TempDir()
		if err := exec.Command("mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", ro).Run(); err != nil {
			t.Skipf("cannot mount a read-only tmpfs here (%v): skipped", err)
		}
		defer exec.Command("umount", ro).Run()
		moveTargetUnwritable(t, filepath.Join(ro, "done"))
	})
}

func moveTargetUnwritable(t *testing.T, target string) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	os.MkdirAll(in, 0o755)
	os.WriteFile(filepath.Join(in, "a.json"), []byte(canalLines(0, 10)), 0o644)
	cfg := canalConfig(t, 2)
	cfg.To, cfg.OutDir = ToParquet, filepath.Join(dir, "out")
	cfg.OnSuccess = "move=" + target
	st, err := Run(context.Background(), cfg, []string{in})
	if !errors.Is(err, ErrNotDisposed) || errors.Is(err, ErrPartial) {
		t.Fatalf("first run: err = %v, want ErrNotDisposed", err)
	}
	if !strings.Contains(err.Error(), setting.OnSuccess.String()+" keep") {
		t.Errorf("the error does not say how to clear it: %v", err)
	}
	if st.Files != 1 || st.PerFile[0].Deferred == "" {
		t.Fatalf("first run: %+v", st.PerFile)
	}
	os.WriteFile(filepath.Join(in, "b.json"), []byte(canalLines(10, 10)), 0o644)
	st, err = Run(context.Background(), cfg, []string{in})
	if !errors.Is(err, ErrNotDisposed) {
		t.Fatalf("second run: err = %v, want ErrNotDisposed", err)
	}
	if st.Files != 1 || st.Skipped != 1 {
		t.Fatalf("second run converted %d, skipped %d: want the new input converted", st.Files, st.Skipped)
	}
	ids := parquetIDs(t, cfg.OutDir)
	if len(ids) != 20 {
		t.Fatalf("%d ids in the outputs, want 20", len(ids))
	}
	cfg.OnSuccess = "keep"
	if st, err = Run(context.Background(), cfg, []string{in}); err != nil || st.Skipped != 2 {
		t.Fatalf("run with keep: %v, %+v", err, st)
	}
	j, err := outdir.OpenJournal(cfg.OutDir, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range j.Entries() {
		if e.Disposed != "" {
			t.Errorf("%s: still %s after a run with keep", e.Path, e.Disposed)
		}
	}
	j.Close()
	cfg.OnSuccess = "move=" + filepath.Join(dir, "done")
	if st, err = Run(context.Background(), cfg, []string{in}); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(in, "*")); len(left) != 0 {
		t.Errorf("not moved once the target can be made: %v", left)
	}
}

var errKilled = errors.New("killed (a test's fault)")

// shopLines is n canal inserts into shop.<table>, ids from..from+n-1.
func shopLines(table string, from, n int) string {
	var b strings.Builder
	for id := from; id < from+n; id++ {
		fmt.Fprintf(&b, `{"data":[{"id":"%d","v":"v%d"}],"old":null,"database":"shop","table":"%s","pkNames":["id"],"isDdl":false,"type":"INSERT","es":1700000000000,"ts":1700000000001,"mysqlType":{"id":"int","v":"varchar(8)"}}`+"\n", id, id, table)
	}
	return b.String()
}

// TestReconvertedInputLeavesNoStaleTables: without a schema, an input whose
// content is replaced by messages of other tables is converted again, and
// its outputs in the tables it touched before are removed (the journal
// lists only the new ones): readers see every row of the input once, and
// no row of what it held before; --materialize snapshots follow. A run
// killed after the new entry but before the removal leaves the removal
// to the next start.
func TestReconvertedInputLeavesNoStaleTables(t *testing.T) {
	for _, kill := range []bool{false, true} {
		t.Run(fmt.Sprintf("killed=%v", kill), func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "in")
			os.MkdirAll(in, 0o755)
			a, b := filepath.Join(in, "a.json"), filepath.Join(in, "b.json")
			os.WriteFile(a, []byte(shopLines("products", 0, 30)+shopLines("orders", 100, 10)), 0o644)
			os.WriteFile(b, []byte(shopLines("products", 200, 5)), 0o644)
			cfg := Config{OutputOptions: OutputOptions{OutDir: filepath.Join(dir, "out"), To: ToParquet, Materialize: true}, RunOptions: RunOptions{Workers: 2}}
			if _, err := Run(context.Background(), cfg, []string{in}); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(a, []byte(shopLines("customers", 300, 7)+shopLines("orders", 100, 4)), 0o644)
			if kill {
				// As a kill would: the new entry is written, the stale
				// outputs and the pending file stay.
				faultBeforeStale = func() error { return errKilled }
				_, err := Run(context.Background(), cfg, []string{in})
				faultBeforeStale = nil
				if !errors.Is(err, errKilled) {
					t.Fatalf("killed run: %v", err)
				}
				if ids := parquetIDs(t, filepath.Join(cfg.OutDir, "shop", "products")); len(ids) != 35 {
					t.Fatalf("the killed run removed the stale outputs (%d ids left)", len(ids))
				}
			}
			if _, err := Run(context.Background(), cfg, []string{in}); err != nil {
				t.Fatal(err)
			}
			want := map[string]int{"products": 5, "orders": 4, "customers": 7}
			for table, n := range want {
				ids := parquetIDs(t, filepath.Join(cfg.OutDir, "shop", table))
				if len(ids) != n {
					t.Errorf("shop.%s: %d ids in its changelog, want %d (%v)", table, len(ids), n, ids)
				}
				for id, c := range ids {
					if c != 1 {
						t.Errorf("shop.%s: id %d %d times", table, id, c)
					}
				}
				cur := parquetIDs(t, filepath.Join(cfg.OutDir, outdir.SnapshotDir(filepath.Join("shop", table))))
				if len(cur) != n {
					t.Errorf("shop.%s/_current: %d keys, want %d", table, len(cur), n)
				}
			}
			j, err := outdir.OpenJournal(cfg.OutDir, "")
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			abs, _ := filepath.Abs(a)
			e, _ := j.Lookup(abs)
			slices.Sort(e.Outputs)
			if got := strings.Join(e.Outputs, " "); got != filepath.Join("shop", "customers", "a.json.parquet")+" "+filepath.Join("shop", "orders", "a.json.parquet") {
				t.Errorf("journal lists %s", got)
			}
		})
	}
}

// TestIcebergFullDisk: an Iceberg load whose warehouse (and catalog) fill
// their disk says the disk is full, whatever SQLite called it.
func TestIcebergFullDisk(t *testing.T) {
	out := t.TempDir()
	if err := exec.Command("mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", out).Run(); err != nil {
		t.Skipf("cannot mount a small tmpfs here (%v): skipped", err)
	}
	defer exec.Command("umount", out).Run()
	in := filepath.Join(t.TempDir(), "in")
	os.MkdirAll(in, 0o755)
	for f := 0; f < 40; f++ {
		var b strings.Builder
		for id := f * 1000; id < (f+1)*1000; id++ {
			fmt.Fprintf(&b, `{"data":[{"id":"%d","v":"%s"}],"old":null,"database":"shop","table":"t","pkNames":["id"],"isDdl":false,"type":"INSERT","es":1700000000000,"ts":1700000000001,"mysqlType":{"id":"int","v":"varchar(64)"}}`+"\n", id, fmt.Sprintf("%x%x", uint64(id)*0x9e3779b97f4a7c15, uint64(id)*0xc2b2ae3d27d4eb4f))
		}
		os.WriteFile(filepath.Join(in, fmt.Sprintf("f%02d.json", f)), []byte(b.String()), 0o644)
	}
	_, err := Run(context.Background(), Config{OutputOptions: OutputOptions{OutDir: out, To: ToIceberg}, RunOptions: RunOptions{Workers: 2}}, []string{in})
	if err == nil {
		t.Fatal("a load into a full disk succeeded")
	}
	if !strings.Contains(err.Error(), "is full") {
		t.Errorf("the error does not say the disk is full: %v", err)
	}
}

// TestChangedWhileRead: an input that fails and is not the file that was
// listed (truncated or rewritten meanwhile) says so, besides the error.
func TestChangedWhileRead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "big.json")
	full := canalLines(0, 100)
	cut := full[:len(full)/2+7] // as read after a truncation: a line cut short
	os.WriteFile(path, []byte(cut), 0o644)
	cfg := canalConfig(t, 2)
	cfg.To, cfg.OutDir = ToParquet, filepath.Join(dir, "out")
	listed := reader.File{Path: path, Rel: "big.json", Size: int64(len(full)), ModTime: 1}
	_, err := RunFiles(context.Background(), cfg, []reader.File{listed})
	if err == nil || !strings.Contains(err.Error(), "changed while it was being read") {
		t.Fatalf("err = %v, want it to say the file changed", err)
	}
	var de *decode.Error
	if !errors.As(err, &de) {
		t.Errorf("the decode error is not kept: %v", err)
	}
	fi, _ := os.Stat(path)
	same := reader.File{Path: path, Rel: "big.json", Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
	if _, err := RunFiles(context.Background(), cfg, []reader.File{same}); err == nil || strings.Contains(err.Error(), "changed") {
		t.Errorf("an unchanged file that fails: %v", err)
	}
}

// TestDuplicateInputs: a file holding exactly the bytes of an input
// converted before, under another name, is converted with a warning (its
// rows are in the outputs twice); with DedupInputs it is skipped, journaled
// as a duplicate and disposed of as --on-success says, and so is a copy
// within one run.
func TestDuplicateInputs(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	os.MkdirAll(in, 0o755)
	os.WriteFile(filepath.Join(in, "a.json"), []byte(canalLines(0, 10)), 0o644)
	cfg := canalConfig(t, 2)
	cfg.To, cfg.OutDir = ToParquet, filepath.Join(dir, "out")
	if _, err := Run(context.Background(), cfg, []string{in}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(in, "b.json"), []byte(canalLines(0, 10)), 0o644)
	st, err := Run(context.Background(), cfg, []string{in})
	if err != nil {
		t.Fatal(err)
	}
	if st.Files != 1 || len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], "same bytes as") || !strings.Contains(st.PerFile[1].Warnings[0], setting.DedupInputs.String()) {
		t.Fatalf("a copy under another name: %d converted, warnings %q", st.Files, st.Warnings)
	}

	out2 := filepath.Join(dir, "out2")
	cfg.OutDir, cfg.DedupInputs = out2, true
	cfg.OnSuccess = "move=" + filepath.Join(dir, "done")
	os.WriteFile(filepath.Join(in, "c.json"), []byte(canalLines(20, 9)), 0o644) // a size no other has
	st, err = Run(context.Background(), cfg, []string{in})
	if err != nil {
		t.Fatal(err)
	}
	if st.Files != 2 || st.Skipped != 1 || st.PerFile[1].Status != "skipped" || st.PerFile[1].Disposed != DisposedMoved {
		t.Fatalf("with DedupInputs: %d converted, %d skipped, %+v", st.Files, st.Skipped, st.PerFile)
	}
	if ids := parquetIDs(t, out2); len(ids) != 19 {
		t.Errorf("%d ids, want 19", len(ids))
	} else {
		for id, n := range ids {
			if n != 1 {
				t.Errorf("id %d %d times", id, n)
			}
		}
	}
	j, err := outdir.OpenJournal(out2, "")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	abs, _ := filepath.Abs(filepath.Join(in, "b.json"))
	if e, ok := j.Lookup(abs); !ok || !strings.HasSuffix(e.DuplicateOf, "a.json") || len(e.Outputs) != 0 {
		t.Errorf("the duplicate's entry: %+v", e)
	}
}

// TestCreatedByHasBuild: the footer's created_by is always the
// convention's "cdcetl version V (build B)", B "unknown" when the binary
// does not know its commit, so readers parse the version.
func TestCreatedByHasBuild(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "a.json")
	os.WriteFile(in, []byte(canalLines(0, 3)), 0o644)
	for _, build := range []string{"", "1a2b3c4d5e6f"} {
		cfg := canalConfig(t, 1)
		cfg.To, cfg.OutDir, cfg.Version, cfg.Build = ToParquet, filepath.Join(dir, "out"+build), "0.2.0", build
		if _, err := Run(context.Background(), cfg, []string{in}); err != nil {
			t.Fatal(err)
		}
		rdr, err := file.OpenParquetFile(filepath.Join(cfg.OutDir, "a.json.parquet"), false)
		if err != nil {
			t.Fatal(err)
		}
		md := rdr.MetaData()
		want := build
		if want == "" {
			want = "unknown"
		}
		if v := md.WriterVersion(); v.App != "cdcetl" || v.Build != want || v.Version.Minor != 2 {
			t.Errorf("created_by %q parsed as %+v", md.GetCreatedBy(), v)
		}
		rdr.Close()
	}
}
