package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cdcetl/cdcetl/internal/testutil"
)

// Data-loss regressions: each test is a combination of features users run
// together, and each failed before its fix.

// debeziumLines renders one insert per id.
func debeziumLines(ids ...int) string {
	var b strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&b, `{"before":null,"after":{"id":%d,"name":"n%d"},"op":"c"}`+"\n", id, id)
	}
	return b.String()
}

func seq(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// parquetIDs reads every Parquet file under dir and returns the ids of
// their rows, sorted, and the files.
func parquetIDs(t *testing.T, dir string) ([]int, []string) {
	t.Helper()
	var ids []int
	var files []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".parquet") {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		files = append(files, rel)
		rows, _, err := testutil.ReadParquet(p, testutil.ReadMem)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			var id int
			if _, err := fmt.Sscanf(r, "+I[%d,", &id); err != nil {
				t.Fatalf("%s: row %q", p, r)
			}
			ids = append(ids, id)
		}
		return nil
	})
	sort.Ints(ids)
	sort.Strings(files)
	return ids, files
}

// jsonIDs returns the ids of the debezium messages in every file under dir.
func jsonIDs(t *testing.T, dir string) []int {
	t.Helper()
	var ids []int
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".err") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var id int
			if _, err := fmt.Sscanf(l, `{"before":null,"after":{"id":%d,`, &id); err == nil {
				ids = append(ids, id)
			}
		}
		return nil
	})
	sort.Ints(ids)
	return ids
}

func sameInts(a, b []int) bool {
	return fmt.Sprint(a) == fmt.Sprint(b)
}

// TestWatchMoveHonoursSettle: with --on-success move, the watcher's own
// move of a finished file used to make the next new file "complete" at
// once, whatever --settle said. A file written in two steps was then
// converted after its first half and moved; the second half landed as a
// new file under the same name and replaced the output. Every row must be
// in the outputs and in done/ exactly once, and the two-step file must be
// converted once, whole.
func TestWatchMoveHonoursSettle(t *testing.T) {
	if testing.Short() {
		t.Skip("real file-system watching")
	}
	dir := t.TempDir()
	landing, out, done := filepath.Join(dir, "landing"), filepath.Join(dir, "out"), filepath.Join(dir, "done")
	os.MkdirAll(landing, 0o755)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	var stderr bytes.Buffer
	go func() {
		defer wg.Done()
		args := []string{"--format", "debezium-json", "--schema", "id BIGINT, name STRING", "--settle", "1500ms",
			"--on-success", "move=" + done, landing, "-o", out}
		if err := runWatch(ctx, args, io.Discard, &stderr); err != nil {
			t.Errorf("watch: %v", err)
		}
	}()
	waitFor := func(p string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(p); err == nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("%s never appeared", p)
	}
	// A first file, converted and moved away by the watcher.
	writeFile(t, filepath.Join(landing, "a.json"), []byte(debeziumLines(seq(100, 102)...)))
	waitFor(filepath.Join(done, "a.json"))
	// Then a file written in two steps, less than --settle apart.
	b := filepath.Join(landing, "b.json")
	writeFile(t, b, []byte(debeziumLines(seq(1, 4)...)))
	time.Sleep(700 * time.Millisecond)
	fh, err := os.OpenFile(b, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	fh.WriteString(debeziumLines(seq(5, 10)...))
	fh.Close()
	waitFor(filepath.Join(done, "b.json"))
	time.Sleep(2500 * time.Millisecond) // time for a wrong second conversion to show
	cancel()
	wg.Wait()

	ids, files := parquetIDs(t, out)
	if want := append(seq(1, 10), seq(100, 102)...); !sameInts(ids, want) {
		t.Errorf("ids in the Parquet outputs %v, want %v\n%s", ids, want, stderr.String())
	}
	if want := []string{"a.json.parquet", "b.json.parquet"}; fmt.Sprint(files) != fmt.Sprint(want) {
		t.Errorf("outputs %v, want %v (b.json converted once, whole)", files, want)
	}
	if got, want := jsonIDs(t, done), append(seq(1, 10), seq(100, 102)...); !sameInts(got, want) {
		t.Errorf("ids in done/ %v, want %v", got, want)
	}
}

// TestOutputNamesNeverCollide: two arguments holding the same relative
// path used to write one output (the second input's rows), both journaled
// as converted. Each input gets outputs of its own, dead letters included,
// and a rerun skips both.
func TestOutputNamesNeverCollide(t *testing.T) {
	dir := t.TempDir()
	day1, day2 := filepath.Join(dir, "col", "day1"), filepath.Join(dir, "col", "day2")
	os.MkdirAll(day1, 0o755)
	os.MkdirAll(day2, 0o755)
	writeFile(t, filepath.Join(day1, "part-0.json"), []byte(debeziumLines(1, 2, 3)+"{broken\n"))
	writeFile(t, filepath.Join(day2, "part-0.json"), []byte(debeziumLines(4, 5)+"{broken too\n"))
	out := filepath.Join(dir, "out")
	args := []string{"convert", "--format", "debezium-json", "--schema", "id BIGINT, name STRING",
		"--option", "debezium-json.ignore-parse-errors=true", "-o", out, day1, day2}
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	ids, files := parquetIDs(t, out)
	if !sameInts(ids, seq(1, 5)) {
		t.Errorf("ids %v, want 1..5 (outputs %v)", ids, files)
	}
	if want := []string{"part-0.json.parquet", "part-0.json~2.parquet"}; fmt.Sprint(files) != fmt.Sprint(want) {
		t.Errorf("outputs %v, want %v", files, want)
	}
	for _, d := range []string{"part-0.json.jsonl", "part-0.json~2.jsonl"} {
		if data, err := os.ReadFile(filepath.Join(out, "_dead_letters", d)); err != nil || !bytes.Contains(data, []byte("{broken")) {
			t.Errorf("dead letters %s: %q %v", d, data, err)
		}
	}
	stderr.Reset()
	if code := run(args, &stdout, &stderr); code != 0 || !strings.Contains(stderr.String(), "all 2 inputs were already converted") {
		t.Errorf("rerun: exit %d: %s", code, stderr.String())
	}
	if ids2, _ := parquetIDs(t, out); !sameInts(ids2, seq(1, 5)) {
		t.Errorf("after the rerun: ids %v", ids2)
	}
}

// TestReusedNameGetsOutputsOfItsOwn: with --on-success move or delete, a
// new file under the name of one converted earlier used to replace the
// earlier output and the earlier copy in done/. It is a new input: outputs
// of its own and a done/ name of its own. The same bytes landing again are
// recognised as converted and not converted twice.
func TestReusedNameGetsOutputsOfItsOwn(t *testing.T) {
	for _, action := range []string{"move", "delete"} {
		t.Run(action, func(t *testing.T) {
			dir := t.TempDir()
			in, out, done := filepath.Join(dir, "in"), filepath.Join(dir, "out"), filepath.Join(dir, "done")
			os.MkdirAll(in, 0o755)
			onSuccess := "delete"
			if action == "move" {
				onSuccess = "move=" + done
			}
			args := []string{"convert", "--quiet", "--format", "debezium-json", "--schema", "id BIGINT, name STRING",
				"--on-success", onSuccess, "-o", out, in}
			convert := func(ids ...int) {
				t.Helper()
				writeFile(t, filepath.Join(in, "x.json"), []byte(debeziumLines(ids...)))
				var stdout, stderr bytes.Buffer
				if code := run(args, &stdout, &stderr); code != 0 {
					t.Fatalf("exit %d: %s", code, stderr.String())
				}
			}
			convert(1, 2, 3)
			convert(4, 5, 6)
			convert(1, 2, 3) // delivered again: already converted
			convert(7)
			ids, files := parquetIDs(t, out)
			if !sameInts(ids, seq(1, 7)) {
				t.Errorf("ids %v, want 1..7 once each (outputs %v)", ids, files)
			}
			if want := []string{"x.json.parquet", "x.json~2.parquet", "x.json~3.parquet"}; fmt.Sprint(files) != fmt.Sprint(want) {
				t.Errorf("outputs %v, want %v", files, want)
			}
			if action == "move" {
				// Every delivery is kept, the repeated one too.
				if got, want := jsonIDs(t, done), []int{1, 1, 2, 2, 3, 3, 4, 5, 6, 7}; !sameInts(got, want) {
					t.Errorf("ids in done/ %v, want %v", got, want)
				}
			}
			if left, _ := os.ReadDir(in); len(left) != 0 {
				t.Errorf("inputs left: %v", left)
			}
		})
	}
}

// TestOwnDirectoriesAreNeverInputs: with -o (and dead letters, --failed and
// done/) inside the input directory, a rerun used to read its own Parquet
// as input and fail. Those directories are skipped, in convert and watch.
func TestOwnDirectoriesAreNeverInputs(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	os.MkdirAll(in, 0o755)
	writeFile(t, filepath.Join(in, "a.json"), []byte(debeziumLines(1, 2)))
	writeFile(t, filepath.Join(in, "bad.json"), []byte("{not json\n"))
	args := []string{"convert", "--quiet", "--format", "debezium-json", "--schema", "id BIGINT, name STRING",
		"-o", filepath.Join(in, "out"), "--failed", filepath.Join(in, "failed"), "--on-success", "move=" + filepath.Join(in, "done")}
	for k := 0; k < 3; k++ {
		var stdout, stderr bytes.Buffer
		code := run(append(args, in), &stdout, &stderr)
		if k == 0 && code != exitPartial || k > 0 && code != 0 {
			t.Fatalf("run %d: exit %d: %s", k, code, stderr.String())
		}
		writeFile(t, filepath.Join(in, fmt.Sprintf("n%d.json", k)), []byte(debeziumLines(10+k)))
	}
	ids, _ := parquetIDs(t, filepath.Join(in, "out"))
	if !sameInts(ids, []int{1, 2, 10, 11}) {
		t.Errorf("ids %v", ids)
	}
	// Dead letters inside the input directory too.
	lenient := []string{"convert", "--quiet", "--format", "debezium-json", "--schema", "id BIGINT, name STRING",
		"-o", filepath.Join(in, "out2"), "--dead-letter", filepath.Join(in, "dead"), in}
	writeFile(t, filepath.Join(in, "bad2.json"), []byte(debeziumLines(20)+"{not json either\n"))
	for k := 0; k < 2; k++ {
		var stdout, stderr bytes.Buffer
		if code := run(lenient, &stdout, &stderr); code != 0 {
			t.Fatalf("lenient run %d: exit %d: %s", k, code, stderr.String())
		}
	}
	if data, err := os.ReadFile(filepath.Join(in, "dead", "bad2.json.jsonl")); err != nil || !bytes.Contains(data, []byte("not json either")) {
		t.Errorf("dead letters: %q %v", data, err)
	}
	var stdout, stderr bytes.Buffer
	if code := run(append(args, filepath.Join(in, "out")), &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "never read as inputs") {
		t.Errorf("the output directory as input: exit %d: %s", code, stderr.String())
	}
}

// TestConversionFingerprint: after the schema changes, a rerun used to say
// "already converted" while new files got the new columns, mixing the
// lake. The journal remembers what its outputs were made with; another
// conversion stops before reading (exit 2) and says what to do; --force
// converts everything again, and the next run is incremental again.
func TestConversionFingerprint(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	os.MkdirAll(in, 0o755)
	writeFile(t, filepath.Join(in, "a.json"), []byte(`{"before":null,"after":{"id":1,"name":"a","note":"n"},"op":"c"}`+"\n"))
	conv := func(schema string, extra ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		args := append([]string{"convert", "--format", "debezium-json", "--schema", schema, "-o", out}, extra...)
		code := run(append(args, in), &stdout, &stderr)
		return code, stderr.String()
	}
	if code, msg := conv("id BIGINT, name STRING"); code != 0 {
		t.Fatalf("first run: %d %s", code, msg)
	}
	writeFile(t, filepath.Join(in, "b.json"), []byte(`{"before":null,"after":{"id":2,"name":"b","note":"m"},"op":"c"}`+"\n"))
	code, msg := conv("id BIGINT, name STRING, note STRING")
	if code != exitUsage || !strings.Contains(msg, "--force") || !strings.Contains(msg, "new -o") || !strings.Contains(msg, "schema was") {
		t.Fatalf("changed schema: exit %d: %s", code, msg)
	}
	if _, err := os.Stat(filepath.Join(out, "b.json.parquet")); err == nil {
		t.Error("b.json was converted although the run should have stopped first")
	}
	if code, msg := conv("id BIGINT, name STRING", "--compression", "zstd"); code != exitUsage || !strings.Contains(msg, `compression was "snappy", now "zstd"`) {
		t.Errorf("changed compression: exit %d: %s", code, msg)
	}
	// ignore-parse-errors decides only what happens to bad messages.
	if code, msg := conv("id BIGINT, name STRING", "--option", "debezium-json.ignore-parse-errors=true"); code != 0 {
		t.Errorf("ignore-parse-errors changed: exit %d: %s", code, msg)
	}
	if code, msg := conv("id BIGINT, name STRING, note STRING", "--force"); code != 0 {
		t.Fatalf("--force: %d %s", code, msg)
	}
	for _, f := range []string{"a.json.parquet", "b.json.parquet"} {
		rows, _, err := testutil.ReadParquet(filepath.Join(out, f), testutil.ReadMem)
		if err != nil || len(rows) != 1 || !strings.HasSuffix(rows[0], ", n]") && !strings.HasSuffix(rows[0], ", m]") {
			t.Errorf("%s after --force: %v %v", f, rows, err)
		}
	}
	if code, msg := conv("id BIGINT, name STRING, note STRING"); code != 0 || !strings.Contains(msg, "all 2 inputs were already converted") {
		t.Errorf("after --force: exit %d: %s", code, msg)
	}
}
