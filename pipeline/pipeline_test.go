package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/internal/cdcgen"
	"github.com/cdcetl/cdcetl/internal/outdir"
	"github.com/cdcetl/cdcetl/internal/testutil"
)

func canalConfig(t *testing.T, workers int) Config {
	t.Helper()
	s, err := arrowconv.ParseColumns("id INT, name STRING, f STRING METADATA FROM 'file.name' VIRTUAL")
	if err != nil {
		t.Fatal(err)
	}
	f, _ := decode.Lookup("canal-json")
	return Config{DecodingOptions: DecodingOptions{Format: f, Schema: s}, RunOptions: RunOptions{Workers: workers, BatchRows: 7, Mem: memory.NewCheckedAllocator(arrowconv.NewPool())}}
}

// writeInputs makes n files of rows messages each under dir/in.
func writeInputs(t *testing.T, dir string, n, rows int) string {
	in := filepath.Join(dir, "in")
	for i := 0; i < n; i++ {
		var b strings.Builder
		for r := 0; r < rows; r++ {
			fmt.Fprintf(&b, `{"data":[{"id":"%d","name":"n%d"}],"type":"INSERT"}`+"\n", i*1000+r, r)
		}
		p := filepath.Join(in, fmt.Sprintf("sub%d", i%3), fmt.Sprintf("f%02d.json", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(b.String()), 0o644)
	}
	return in
}

// TestOrderIndependentOfWorkers: stdout output is in file order, row order
// within a file kept, whatever the number of workers.
func TestOrderIndependentOfWorkers(t *testing.T) {
	in := writeInputs(t, t.TempDir(), 12, 50)
	var want string
	for _, w := range []int{1, 2, 8} {
		cfg := canalConfig(t, w)
		cfg.ChunkSize = 300 // several chunks per file, decoded out of order
		var out bytes.Buffer
		cfg.To, cfg.Stdout = ToPrint, &out
		st, err := Run(context.Background(), cfg, []string{in})
		if err != nil {
			t.Fatal(err)
		}
		if st.Files != 12 || st.Lines != 600 || st.Rows[0] != 600 || st.Messages != 600 {
			t.Errorf("workers %d: stats %+v", w, st)
		}
		cfg.Mem.(*memory.CheckedAllocator).AssertSize(t, 0)
		if w == 1 {
			want = out.String()
			continue
		}
		if out.String() != want {
			t.Errorf("workers %d: output differs from one worker", w)
		}
	}
	if !strings.HasPrefix(want, "+I[0, n0, f00.json]\n+I[1, n1, f00.json]") {
		t.Errorf("unexpected start: %.60q", want)
	}
}

// TestParquetPerInputFile: one output per input, relative paths kept.
func TestParquetPerInputFile(t *testing.T) {
	dir := t.TempDir()
	in := writeInputs(t, dir, 5, 10)
	cfg := canalConfig(t, 3)
	cfg.To, cfg.OutDir = ToParquet, filepath.Join(dir, "out")
	if _, err := Run(context.Background(), cfg, []string{in}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		p := filepath.Join(cfg.OutDir, fmt.Sprintf("sub%d", i%3), fmt.Sprintf("f%02d.json.parquet", i))
		rows, _ := readParquetRows(t, p)
		if len(rows) != 10 || !strings.HasSuffix(rows[0], fmt.Sprintf("f%02d.json]", i)) {
			t.Errorf("%s: %d rows %v", p, len(rows), rows[:1])
		}
	}
}

// TestStrictErrorLeavesNoPartialOutput: a bad message stops the run with a
// positioned error and its file's Parquet output never appears.
func TestStrictErrorLeavesNoPartialOutput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	os.MkdirAll(in, 0o755)
	var b strings.Builder
	for r := 0; r < 100; r++ {
		fmt.Fprintf(&b, `{"data":[{"id":"%d","name":"x"}],"type":"INSERT"}`+"\n", r)
	}
	b.WriteString(`{"data":[{"id":"oops","name":"x"}],"type":"INSERT"}` + "\n")
	os.WriteFile(filepath.Join(in, "bad.json"), []byte(b.String()), 0o644)
	cfg := canalConfig(t, 1)
	cfg.To, cfg.OutDir = ToParquet, filepath.Join(dir, "out")
	_, err := Run(context.Background(), cfg, []string{in})
	var de *decode.Error
	if !errors.As(err, &de) || de.Line != 101 || !errors.Is(err, decode.ErrType) {
		t.Fatalf("err = %v, want a decode error on line 101", err)
	}
	entries, _ := os.ReadDir(cfg.OutDir)
	for _, e := range entries {
		if e.Name() != outdir.JournalName && e.Name() != outdir.LockName {
			t.Errorf("output dir holds %s after a failed run", e.Name())
		}
	}
}

func TestCancelledRun(t *testing.T) {
	in := writeInputs(t, t.TempDir(), 4, 10)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cfg := canalConfig(t, 2)
	var out bytes.Buffer
	cfg.To, cfg.Stdout = ToPrint, &out
	if _, err := Run(ctx, cfg, []string{in}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// TestFileMetadataAndHugeMessage: the filesystem metadata keys carry the
// input's path, name, size and modification time, and a 50 MB message
// decodes like any other.
func TestFileMetadataAndHugeMessage(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "big.jsonl")
	big := strings.Repeat("x", 50<<20)
	os.WriteFile(in, []byte(`{"id":1,"s":"`+big+`"}`+"\n"+`{"id":2,"s":"small"}`), 0o644)
	mtime := time.Date(2024, 2, 29, 12, 30, 15, 987654321, time.UTC)
	os.Chtimes(in, mtime, mtime)
	s, err := arrowconv.ParseColumns("id INT, s STRING, p STRING METADATA FROM 'file.path' VIRTUAL, n STRING METADATA FROM 'file.name' VIRTUAL, " +
		"z BIGINT METADATA FROM 'file.size' VIRTUAL, m TIMESTAMP_LTZ(3) METADATA FROM 'file.modification-time' VIRTUAL")
	if err != nil {
		t.Fatal(err)
	}
	f, _ := decode.Lookup("json")
	var got []string
	cfg := Config{DecodingOptions: DecodingOptions{Format: f, Schema: s}, OutputOptions: OutputOptions{Batches: func(_ context.Context, rec arrow.RecordBatch) error {
		for i := 0; i < int(rec.NumRows()); i++ {
			str := rec.Column(2).(*array.String)
			got = append(got, fmt.Sprintf("%d %d %s %s %d %s", rec.Column(1).(*array.Int32).Value(i), len(str.Value(i)),
				rec.Column(3).(*array.String).Value(i), rec.Column(4).(*array.String).Value(i), rec.Column(5).(*array.Int64).Value(i),
				rec.Column(6).(*array.Timestamp).Value(i).ToTime(arrow.Microsecond).UTC().Format(time.RFC3339Nano)))
		}
		return nil
	}}}
	if _, err := Run(context.Background(), cfg, []string{in}); err != nil {
		t.Fatal(err)
	}
	size := int64(len(big)) + 36
	want := []string{
		fmt.Sprintf("1 %d %s big.jsonl %d 2024-02-29T12:30:15.987Z", len(big), in, size),
		fmt.Sprintf("2 5 %s big.jsonl %d 2024-02-29T12:30:15.987Z", in, size),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestReencodeFiles: --to FORMAT with -o writes one .jsonl[.gz|.zst] per
// input, atomically, and reading it back gives the rows of the input.
func TestReencodeFiles(t *testing.T) {
	dir := t.TempDir()
	in := writeInputs(t, dir, 3, 20)
	var want bytes.Buffer
	cfg := canalConfig(t, 2)
	cfg.To, cfg.Stdout = ToPrint, &want
	if _, err := Run(context.Background(), cfg, []string{in}); err != nil {
		t.Fatal(err)
	}
	for comp, suffix := range map[string]string{"": ".jsonl", "gzip": ".jsonl.gz", "zstd": ".jsonl.zst"} {
		cfg := canalConfig(t, 2)
		out := filepath.Join(dir, "out-"+comp)
		f, _ := decode.Lookup("debezium-json")
		cfg.To, cfg.OutDir, cfg.Target, cfg.JSONCompression = f.Name, out, f, comp
		cfg.Encode.MergeUpdates = true
		if _, err := Run(context.Background(), cfg, []string{in}); err != nil {
			t.Fatal(err)
		}
		files, _ := filepath.Glob(filepath.Join(out, "*", "*"+suffix))
		if len(files) != 3 {
			t.Fatalf("%s: outputs %v", comp, files)
		}
		// Read back; file.name differs (suffix), so compare id and name only.
		s, _ := arrowconv.ParseColumns("id INT, name STRING")
		var got bytes.Buffer
		back := Config{DecodingOptions: DecodingOptions{Format: f, Schema: s}, OutputOptions: OutputOptions{To: ToPrint, Stdout: &got}}
		if _, err := Run(context.Background(), back, []string{out}); err != nil {
			t.Fatal(err)
		}
		// The canal inputs hold only inserts; compare the id/name pairs.
		wantIDs := regexpIDs(want.String())
		if g := regexpIDs(got.String()); g != wantIDs || len(g) < 100 {
			t.Errorf("%s: rows read back differ:\n%s", comp, testutil.Diff(wantIDs, g))
		}
	}
}

func regexpIDs(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if i := strings.LastIndex(l, ", f"); i > 0 {
			l = l[:i]
		}
		out = append(out, strings.TrimSuffix(l, "]"))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// TestCountsReconcile: every line is accounted for, and every dropped
// message and nulled value is in the dead-letter file, over several files
// and chunks.
func TestCountsReconcile(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	os.MkdirAll(in, 0o755)
	lines := []string{
		`{"data":[{"id":"1","name":"a"}],"type":"INSERT","database":"d"}`,
		``,
		`{"data":[{"id":"x","name":"b"}],"type":"INSERT","database":"d"}`,
		`{"data":null,"type":"CREATE","database":"d"}`,
		`{"data":[{"id":"2","name":"c"}],"type":"INSERT","database":"other"}`,
		`{"data":[{"id":"3"}],"type":"ALTER","database":"d"}`,
		"garbage \xff",
	}
	for f := 0; f < 3; f++ {
		var b strings.Builder
		for r := 0; r < 200; r++ {
			b.WriteString(lines[r%len(lines)] + "\n")
		}
		os.WriteFile(filepath.Join(in, fmt.Sprintf("f%d.json", f)), []byte(b.String()), 0o644)
	}
	cfg := canalConfig(t, 2)
	cfg.ChunkSize = 1000
	cfg.Options, _ = decode.ParseOptions(cfg.Format, map[string]string{"canal-json.ignore-parse-errors": "true", "canal-json.database.include": "d"}, false)
	var out bytes.Buffer
	cfg.To, cfg.Stdout, cfg.DeadLetterDir = ToPrint, &out, filepath.Join(dir, "dead")
	st, err := Run(context.Background(), cfg, []string{in})
	if err != nil {
		t.Fatal(err)
	}
	if st.Lines != 600 || st.Messages+st.Blank+st.DDL+st.Filtered+st.Dropped != st.Lines {
		t.Errorf("lines do not reconcile: %+v", st)
	}
	if st.Dropped == 0 || st.Nulled == 0 || st.DeadLetters != st.Dropped+st.Nulled {
		t.Errorf("dead letters %d, want dropped %d + nulled %d", st.DeadLetters, st.Dropped, st.Nulled)
	}
	var data []byte
	for f := 0; f < 3; f++ {
		d, err := os.ReadFile(filepath.Join(cfg.DeadLetterDir, fmt.Sprintf("f%d.json.jsonl", f)))
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, d...)
	}
	if n := strings.Count(string(data), "\n"); int64(n) != st.DeadLetters {
		t.Errorf("dead-letter file has %d lines, want %d", n, st.DeadLetters)
	}
	if !strings.Contains(string(data), `"raw_base64":"Z2FyYmFnZSD/"`) {
		t.Error("invalid UTF-8 line not kept as base64")
	}
}

// TestRoutedBatchRows: a worker's table builders share the batch size
// among the tables it has met (an input whose tables come in runs would
// otherwise leave each builder holding a full batch), down to
// minRoutedBatch; one table keeps the whole batch.
func TestRoutedBatchRows(t *testing.T) {
	var rd routedDecoders
	for _, c := range []struct{ tables, want int }{{0, 16384}, {1, 16384}, {2, 8192}, {4, 4096}, {20, minRoutedBatch}, {100, minRoutedBatch}} {
		rd.byID = map[[2]int]*tableDecoder{}
		for i := range c.tables {
			rd.byID[[2]int{i, 0}] = nil
		}
		if got := rd.batchRows(16384); got != c.want {
			t.Errorf("%d tables: %d rows a batch, want %d", c.tables, got, c.want)
		}
		if got := rd.batchRows(16); got != 16 && c.tables > 0 {
			t.Errorf("%d tables, batches of 16 rows asked for: %d", c.tables, got)
		}
	}
}

// TestGatherEvidence: an input read for its evidence in small chunks by
// several goroutines says what it says read whole by one, in every format
// (tables in runs and interleaved).
func TestGatherEvidence(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"canal-json", "maxwell-json", "ogg-json", "debezium-json"} {
		for _, run := range []int{0, 300} {
			g := cdcgen.New(f, 11)
			g.Tables, g.Run = 5, run
			var data []byte
			for range 3000 {
				data = append(g.Next(data), '\n')
			}
			p := filepath.Join(dir, fmt.Sprintf("%s-%d.jsonl", f, run))
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			inspect := func(chunk, workers int) string {
				ins, err := Inspect(context.Background(), Config{InputOptions: InputOptions{ChunkSize: chunk}, RunOptions: RunOptions{Workers: workers}}, []string{p})
				if err != nil {
					t.Fatal(err)
				}
				js, _ := json.Marshal(ins)
				return string(js)
			}
			whole := inspect(64<<20, 1)
			if !strings.Contains(strings.ToLower(whole), "products_04") {
				t.Fatalf("%s: the input's tables are not all there: %s", p, whole)
			}
			for _, w := range []int{2, 3} {
				if got := inspect(4096, w); got != whole {
					t.Fatalf("%s: read in 4 KiB chunks by %d goroutines:\n%s\nread whole:\n%s", p, w, got, whole)
				}
			}
		}
	}
}

// slowWriter takes a while over each write, as a pipe to a slow reader
// does.
type slowWriter struct {
	bytes.Buffer
	delay time.Duration
}

func (w *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(w.delay)
	return w.Buffer.Write(p)
}

// TestKeepGoingPrintsEveryGoodRow: with KeepGoing, an input that fails
// does not cost the others their printed rows, however far behind the
// reader of the output is when the last input is done.
func TestKeepGoingPrintsEveryGoodRow(t *testing.T) {
	in := writeInputs(t, t.TempDir(), 8, 3000)
	os.WriteFile(filepath.Join(in, "a-bad.json"), []byte(`{"data":[{"id":"x","name":"n"}],"type":"INSERT"}`+"\n"), 0o644)
	cfg := canalConfig(t, 2)
	out := &slowWriter{delay: 20 * time.Millisecond}
	cfg.To, cfg.Stdout, cfg.KeepGoing = ToPrint, out, true
	st, err := Run(context.Background(), cfg, []string{in})
	if !errors.Is(err, ErrPartial) {
		t.Fatalf("err = %v, want ErrPartial", err)
	}
	if got := strings.Count(out.String(), "\n"); got != 8*3000 || st.Rows[0] != 8*3000 {
		t.Errorf("printed %d rows, counted %d; want %d", got, st.Rows[0], 8*3000)
	}
}

// TestTableFilterRuns: --include-table and --table decide for a run of
// messages of one table once (filterCache); the decisions must be the ones
// made message by message: tables in runs and alternating, a table named
// with an escape (the same table), another one's name that only the raw
// bytes tell apart, and messages naming none.
func TestTableFilterRuns(t *testing.T) {
	dir := t.TempDir()
	lines := []string{
		`{"data":[{"id":"1","name":"a"}],"type":"INSERT","database":"inv","table":"a"}`,
		`{"data":[{"id":"2","name":"a"}],"type":"INSERT","database":"inv","table":"a"}`,
		`{"data":[{"id":"3","name":"b"}],"type":"INSERT","database":"inv","table":"b"}`,
		`{"data":[{"id":"4","name":"a"}],"type":"INSERT","database":"inv","table":"\u0061"}`,
		`{"data":[{"id":"5","name":"a"}],"type":"INSERT","database":"inv","table":"a"}`,
		`{"data":[{"id":"6","name":"-"}],"type":"INSERT"}`,
		`{"data":[{"id":"7","name":"ab"}],"type":"INSERT","database":"inv","table":"ab"}`,
		`{"data":[{"id":"8","name":"a"}],"type":"INSERT","database":"inv","table":"a"}`,
		`{"data":[{"id":"9","name":"a"}],"type":"INSERT","database":"crm","table":"a"}`, // another namespace's table a
	}
	in := filepath.Join(dir, "in.json")
	rng := rand.New(rand.NewPCG(5, 8))
	var picks []int // runs of one to five messages of a table
	for len(picks) < 300 {
		l := rng.IntN(len(lines))
		for range 1 + rng.IntN(5) {
			picks = append(picks, l)
		}
	}
	picks = picks[:300]
	var b strings.Builder
	for _, l := range picks {
		b.WriteString(lines[l] + "\n")
	}
	os.WriteFile(in, []byte(b.String()), 0o644)
	f, _ := decode.Lookup("canal-json")
	only := &TableKey{Namespace: "inv", Name: "a"}
	include, _ := FullMatch(`inv\.a`)
	exclude, _ := FullMatch(`inv\.b`)
	for name, set := range map[string]func(*Config){
		"include": func(c *Config) { c.IncludeTable = include },
		"exclude": func(c *Config) { c.ExcludeTable = exclude },
		"only":    func(c *Config) { c.OnlyTable = only },
	} {
		cfg := canalConfig(t, 1)
		cfg.ChunkSize = 700
		set(&cfg)
		var want strings.Builder
		kept := 0
		for _, p := range picks {
			l := lines[p]
			if ns, tbl, ok := decode.Route(f, false, []byte(l)); ok && !tableFilter(&cfg, ns, tbl) {
				continue
			}
			kept++
			var row struct{ Data []struct{ ID, Name string } }
			json.Unmarshal([]byte(l), &row)
			fmt.Fprintf(&want, "+I[%s, %s, in.json]\n", row.Data[0].ID, row.Data[0].Name)
		}
		var out bytes.Buffer
		cfg.To, cfg.Stdout = ToPrint, &out
		st, err := Run(context.Background(), cfg, []string{in})
		if err != nil {
			t.Fatal(err)
		}
		if out.String() != want.String() || st.Filtered != int64(300-kept) {
			t.Errorf("%s: %d filtered, want %d; rows\n%s\nwant\n%s", name, st.Filtered, 300-kept, out.String(), want.String())
		}
	}
}
