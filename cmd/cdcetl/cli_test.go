package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// TestExitCodesAndReport: usage errors exit 2 before reading input; a bad
// file stops a run with 1; with --keep-going the others are converted, the
// run exits 3 and the report accounts for every line.
func TestExitCodesAndReport(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	os.MkdirAll(in, 0o755)
	os.WriteFile(filepath.Join(in, "a.json"), []byte(`{"data":[{"id":"1"}],"type":"INSERT"}`+"\n\n"), 0o644)
	os.WriteFile(filepath.Join(in, "b.json"), []byte(`{"data":[{"id":"x"}],"type":"INSERT"}`+"\n"), 0o644)
	base := []string{"convert", "--quiet", "--format", "canal-json", "--schema", "id INT"}
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"convert", "--format", "canal-json", "--schema", "id INTEGR", in}, exitUsage},
		{append(append([]string{}, base...), "--option", "canal-json.ignore-parse-errors=maybe", in), exitUsage},
		{append(append([]string{}, base...), "--option", "maxwell-json.ignore-parse-errors=true", in), exitUsage},
		{append(append([]string{}, base...), "--schema", "id INT, t STRING METADATA FROM 'nope' VIRTUAL", in), exitUsage},
		{append(append([]string{}, base...), "-o", filepath.Join(dir, "o1"), in), exitFailed},
		{append(append([]string{}, base...), "--keep-going", "-o", filepath.Join(dir, "o2"), "--report", filepath.Join(dir, "r.json"), in), exitPartial},
		{[]string{"frobnicate"}, exitUsage},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(tt.args, &stdout, &stderr); code != tt.code {
			t.Errorf("%v: exit %d, want %d (%s)", tt.args, code, tt.code, stderr.String())
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "r.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Status   string `json:"status"`
		Error    string `json:"error"`
		Lines    int    `json:"lines"`
		Messages int    `json:"messages"`
		Blank    int    `json:"blank"`
		Failed   int    `json:"failed_inputs"`
		PerFile  []struct {
			Path  string `json:"path"`
			Error string `json:"error"`
		} `json:"per_file"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Status != "partial" || rep.Failed != 1 || len(rep.PerFile) != 2 || !strings.Contains(rep.PerFile[1].Error, "b.json:1:") {
		t.Errorf("report: %s", data)
	}
	if _, err := os.Stat(filepath.Join(dir, "o2", "a.json.parquet")); err != nil {
		t.Errorf("the good file was not converted: %v", err)
	}
}

// TestParquetEncodingFlags: by default integers are DELTA_BINARY_PACKED
// and strings dictionary-encoded; --parquet-delta=false and
// --parquet-dictionary=false each give PLAIN for theirs.
func TestParquetEncodingFlags(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.json")
	os.WriteFile(in, []byte(`{"data":[{"id":"1","name":"a"},{"id":"2","name":"b"}],"type":"INSERT"}`+"\n"), 0o644)
	encodings := func(flags ...string) map[string][]format.Encoding {
		out := filepath.Join(dir, strings.Join(append([]string{"o"}, flags...), ""))
		args := append([]string{"convert", "--quiet", "--format", "canal-json", "--schema", "id BIGINT, name STRING", "-o", out}, flags...)
		var stdout, stderr bytes.Buffer
		if code := run(append(args, in), &stdout, &stderr); code != 0 {
			t.Fatalf("%v: exit %d: %s", flags, code, stderr.String())
		}
		f, err := os.Open(filepath.Join(out, "in.json.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		st, _ := f.Stat()
		pf, err := parquet.OpenFile(f, st.Size())
		if err != nil {
			t.Fatal(err)
		}
		got := map[string][]format.Encoding{}
		for _, c := range pf.Metadata().RowGroups[0].Columns {
			got[c.MetaData.PathInSchema[0]] = c.MetaData.Encoding
		}
		return got
	}
	for _, tt := range []struct {
		flags    []string
		id, name format.Encoding
	}{
		{nil, format.DeltaBinaryPacked, format.RLEDictionary},
		{[]string{"--parquet-delta=false"}, format.Plain, format.RLEDictionary},
		{[]string{"--parquet-dictionary=false"}, format.DeltaBinaryPacked, format.Plain},
	} {
		got := encodings(tt.flags...)
		if !slices.Contains(got["id"], tt.id) || !slices.Contains(got["name"], tt.name) {
			t.Errorf("%v: encodings id %v, name %v; want %v and %v among them", tt.flags, got["id"], got["name"], tt.id, tt.name)
		}
		if slices.Contains(got["id"], format.DeltaBinaryPacked) != (tt.id == format.DeltaBinaryPacked) {
			t.Errorf("%v: id encodings %v", tt.flags, got["id"])
		}
	}
}

// TestMaterializeWithTableFlag: --materialize with --schema names its
// table with --table (the flag was read only after the check that needs
// it, so this combination was always refused).
func TestMaterializeWithTableFlag(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.json")
	os.WriteFile(in, []byte(`{"before":null,"after":{"id":1,"v":"a"},"op":"c"}`+"\n"+`{"before":{"id":1,"v":"a"},"after":{"id":1,"v":"b"},"op":"u"}`+"\n"), 0o644)
	var stdout, stderr bytes.Buffer
	code := run([]string{"convert", "--format", "debezium-json", "--schema", "id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED",
		"--table", "inv.kv", "--materialize", "-o", filepath.Join(dir, "out"), in}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "out", "_current", "inv", "kv", "*.parquet")); len(m) != 1 {
		t.Errorf("snapshot files: %v", m)
	}
	// show --current reads it, though a conversion with a schema writes
	// its changelog one file per input, not in a table directory.
	stdout.Reset()
	if code := run([]string{"show", "--current", filepath.Join(dir, "out"), "inv.kv"}, &stdout, &stderr); code != 0 || stdout.String() != "+I[1, b]\n" {
		t.Errorf("show --current: exit %d, %q\n%s", code, stdout.String(), stderr.String())
	}
}

// TestProfiles: --cpuprofile and --memprofile each leave a pprof profile
// (gzipped protobuf), the second with allocation samples.
func TestProfiles(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "a.json")
	os.WriteFile(in, []byte(`{"data":[{"id":"1"}],"type":"INSERT"}`+"\n"), 0o644)
	cpu, mem := filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "mem.prof")
	var stdout, stderr bytes.Buffer
	args := []string{"convert", "--quiet", "--format", "canal-json", "--schema", "id INT", "--cpuprofile", cpu, "--memprofile", mem, "-o", filepath.Join(dir, "out"), in}
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, p := range []string{cpu, mem} {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("%s: not a pprof profile: %v", p, err)
		}
		body, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if p == mem && !bytes.Contains(body, []byte("alloc_space")) {
			t.Errorf("%s has no allocation samples", p)
		}
	}
}

// TestReportCheckedFirst: --report into a directory that does not exist is
// a usage error before anything is read or written.
func TestReportCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "a.json")
	os.WriteFile(in, []byte(`{"data":[{"id":"1"}],"type":"INSERT"}`+"\n"), 0o644)
	var stderr bytes.Buffer
	code := run([]string{"convert", "--format", "canal-json", "--schema", "id INT", "-o", filepath.Join(dir, "out"),
		"--report", filepath.Join(dir, "missing", "r.json"), in}, io.Discard, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), "--report") {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(err) {
		t.Errorf("the conversion ran before the report was found unwritable: %v", err)
	}
}

// TestRerunFinishesPendingMoves: a move that failed (its target on a
// read-only mount) leaves the input converted with its move pending, exit
// 3; once the target is writable, a rerun says it finished the move rather
// than "nothing to do".
func TestRerunFinishesPendingMoves(t *testing.T) {
	dir := t.TempDir()
	done := filepath.Join(dir, "done")
	os.MkdirAll(done, 0o755)
	if err := exec.Command("mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", done).Run(); err != nil {
		t.Skipf("cannot mount a read-only tmpfs here (%v): skipped", err)
	}
	defer exec.Command("umount", done).Run()
	in := filepath.Join(dir, "in")
	os.MkdirAll(in, 0o755)
	os.WriteFile(filepath.Join(in, "a.json"), []byte(`{"data":[{"id":"1"}],"type":"INSERT"}`+"\n"), 0o644)
	args := []string{"convert", "--format", "canal-json", "--schema", "id INT", "-o", filepath.Join(dir, "out"), "--on-success", "move=" + done, in}
	var stderr bytes.Buffer
	if code := run(args, io.Discard, &stderr); code != exitPartial || !strings.Contains(stderr.String(), "--on-success keep") {
		t.Fatalf("first run: exit %d: %s", code, stderr.String())
	}
	if err := exec.Command("mount", "-o", "remount,rw", done).Run(); err != nil {
		t.Skipf("cannot remount: %v", err)
	}
	stderr.Reset()
	if code := run(args, io.Discard, &stderr); code != exitOK || !strings.Contains(stderr.String(), "1 moved") || strings.Contains(stderr.String(), "nothing to do") {
		t.Fatalf("rerun: exit %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(done, "a.json")); err != nil {
		t.Error(err)
	}
}

// TestControlOnlyFilesAndUntellable: files of records without rows (Canal
// and Maxwell DDL records, a Debezium transaction topic, Debezium schema
// changes) are normal in real archives: without a schema their format is
// told from those records and they convert to zero rows, counted as
// control. A file whose format really cannot be told is, with
// --keep-going, a failed input: journaled, moved to --failed with its
// .err, "failed" in the report, exit 3; the other files are converted.
func TestControlOnlyFilesAndUntellable(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	os.MkdirAll(in, 0o755)
	files := map[string]string{
		"canal-ddl.json":     `{"data":null,"database":"shop","es":1589373515000,"id":3,"isDdl":true,"mysqlType":null,"old":null,"pkNames":null,"sql":"CREATE TABLE t (id int)","sqlType":null,"table":"t","ts":1589373515983,"type":"CREATE"}`,
		"maxwell-ddl.json":   `{"type":"table-create","database":"shop","table":"t","def":{"database":"shop","table":"t","columns":[{"type":"int","name":"id","signed":true}],"primary-key":["id"]},"ts":1452637552000,"sql":"create table t (id int)"}`,
		"dbz-tx.json":        `{"status":"BEGIN","id":"571:53195829","event_count":null,"data_collections":null,"ts_ms":1700000000000}` + "\n" + `{"status":"END","id":"571:53195829","event_count":2,"data_collections":[{"data_collection":"s1.a","event_count":2}],"ts_ms":1700000000001}`,
		"dbz-schema.json":    `{"source":{"version":"2.5.0.Final","connector":"mysql","name":"srv","ts_ms":0,"db":"inventory","table":"t"},"databaseName":"inventory","ddl":"CREATE TABLE t (id INT)","tableChanges":[]}`,
		"good.json":          `{"data":[{"id":"1"}],"database":"shop","table":"t","type":"INSERT","pkNames":["id"],"mysqlType":{"id":"int"},"isDdl":false}`,
		"not-cdc/notes.json": `{"hello":"world"}`,
	}
	for name, content := range files {
		p := filepath.Join(in, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content+"\n"), 0o644)
	}
	out, failed, report := filepath.Join(dir, "out"), filepath.Join(dir, "failed"), filepath.Join(dir, "r.json")
	var stderr bytes.Buffer
	code := run([]string{"convert", "--keep-going", "--failed", failed, "--report", report, "-o", out, in}, io.Discard, &stderr)
	if code != exitPartial {
		t.Fatalf("exit %d, want %d: %s", code, exitPartial, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(failed, "not-cdc", "notes.json.err")); err != nil {
		t.Errorf("the untellable file was not moved to --failed with its .err: %v", err)
	}
	var rep struct {
		Failed  int   `json:"failed_inputs"`
		Control int64 `json:"control"`
		PerFile []struct {
			Path   string `json:"path"`
			Status string `json:"status"`
		} `json:"per_file"`
	}
	data, _ := os.ReadFile(report)
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Failed != 1 || len(rep.PerFile) != len(files) || rep.Control != 5 {
		t.Errorf("report: %s", data)
	}
	for _, f := range rep.PerFile {
		want := "ok"
		if strings.HasSuffix(f.Path, "notes.json") {
			want = "failed"
		}
		if f.Status != want {
			t.Errorf("%s: status %q, want %q", f.Path, f.Status, want)
		}
	}
}

// TestInterruptedSummary: a conversion stopped by Ctrl-C says so, and what
// it kept; --to print of a conversion without a schema does not count
// tables it wrote none of.
func TestInterruptedSummary(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "a.json")
	var b strings.Builder
	for i := 0; i < 20000; i++ {
		b.WriteString(`{"data":[{"id":"1"}],"database":"shop","table":"t","type":"INSERT","pkNames":["id"],"mysqlType":{"id":"int"},"isDdl":false}` + "\n")
	}
	os.WriteFile(in, []byte(b.String()), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stderr bytes.Buffer
	err := runConvert(ctx, []string{"--format", "canal-json", "--schema", "id INT", "-o", filepath.Join(dir, "out"), in}, io.Discard, &stderr)
	if !errors.Is(err, context.Canceled) || !strings.Contains(stderr.String(), "interrupted: 0 inputs finished") || !strings.Contains(stderr.String(), "run again") {
		t.Errorf("err %v, stderr %q", err, stderr.String())
	}
	stderr.Reset()
	if code := run([]string{"convert", in, "--to", "print"}, io.Discard, &stderr); code != exitOK || strings.Contains(stderr.String(), "tables") {
		t.Errorf("--to print: exit %d, %q", code, stderr.String())
	}
}

// TestDDLPathRelativeToDDL: a DDL's relative 'path' is the DDL file's
// neighbour, whatever the working directory.
func TestDDLPathRelativeToDDL(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "sub", "data"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "data", "a.json"), []byte(`{"data":[{"id":"7"}],"type":"INSERT"}`+"\n"), 0o644)
	ddl := filepath.Join(dir, "sub", "t.sql")
	os.WriteFile(ddl, []byte("CREATE TABLE t (id INT) WITH ('connector' = 'filesystem', 'path' = 'data', 'format' = 'canal-json');\n"), 0o644)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"convert", "--ddl", ddl, "--to", "print"}, &stdout, &stderr); code != exitOK || stdout.String() != "+I[7]\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}

// TestShowCommand: 'cdcetl show OUT TABLE' prints a loaded table's rows as
// --to print does; a missing table says how to list them.
func TestShowCommand(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "a.json")
	os.WriteFile(in, []byte(`{"data":[{"id":"1","v":"x"}],"database":"shop","table":"k","pkNames":["id"],"type":"INSERT","mysqlType":{"id":"int","v":"varchar(8)"},"isDdl":false}`+"\n"), 0o644)
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"convert", "--no-lineage", "-o", out, in}, io.Discard, &stderr); code != exitOK {
		t.Fatalf("convert: exit %d: %s", code, stderr.String())
	}
	if code := run([]string{"show", out, "shop.k"}, &stdout, &stderr); code != exitOK || stdout.String() != "+I[1, x, []]\n" {
		t.Errorf("show: exit %d, %q, %s", code, stdout.String(), stderr.String())
	}
	stderr.Reset()
	if code := run([]string{"show", out, "shop.nope"}, io.Discard, &stderr); code != exitFailed || !strings.Contains(stderr.String(), "cdcetl inspect") {
		t.Errorf("a missing table: exit %d, %s", code, stderr.String())
	}
	if code := run([]string{"show", out}, io.Discard, &stderr); code != exitUsage {
		t.Errorf("show without TABLE: exit %d", code)
	}
}
