package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/infer"
	"github.com/cdcetl/cdcetl/internal/outdir"
)

// FuzzRoutedConversion runs a routed conversion of Canal messages of two
// tables with fuzzed names: every file written is below the output
// directory, each table's rows are in its own directory only, and its
// schema file names it (on this file system; FuzzRoutedPaths models one
// that ignores case).
func FuzzRoutedConversion(f *testing.F) {
	f.Add("inventory", "products", "inventory", "Products")
	f.Add("../..", "etc", "..", "passwd")
	f.Add("shop", "CON", "shop", "con")
	f.Add("a.b", "c", "a", "b.c")
	f.Add("\x00", "/", "\\", "nul")
	format, _ := decode.Lookup("canal-json")
	f.Fuzz(func(t *testing.T, ns1, t1, ns2, t2 string) {
		if ns1 == ns2 && t1 == t2 {
			return
		}
		dir := t.TempDir()
		in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
		os.MkdirAll(in, 0o755)
		q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
		var msgs strings.Builder
		for i := 0; i < 6; i++ {
			ns, tb := ns1, t1
			if i%2 == 1 {
				ns, tb = ns2, t2
			}
			fmt.Fprintf(&msgs, `{"data":[{"id":"%d"}],"database":%s,"table":%s,"mysqlType":{"id":"int"},"isDdl":false,"type":"INSERT"}`+"\n", i, q(ns), q(tb))
		}
		os.WriteFile(filepath.Join(in, "a.json"), []byte(msgs.String()), 0o644)
		cfg := Config{DecodingOptions: DecodingOptions{Format: format, Options: decode.Options{Producer: true}}, OutputOptions: OutputOptions{To: ToParquet, OutDir: out}, RunOptions: RunOptions{Workers: 2}}
		st, err := Run(context.Background(), cfg, []string{in})
		if err != nil {
			t.Fatalf("%v", err)
		}
		if st.TotalRows() != 6 || len(st.PerFile) != 1 || len(st.PerFile[0].Tables) != 2 {
			t.Fatalf("rows %d, tables %+v", st.TotalRows(), st.PerFile)
		}
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !inside(out, p) && !inside(in, p) {
				t.Errorf("%s written outside the output directory", p)
			}
			return nil
		})
		dirs := map[string]bool{}
		for _, tb := range st.PerFile[0].Tables {
			if tb.Rows[0] != 3 || dirs[tb.Dir] {
				t.Fatalf("table %s: %v rows in %s", tb.Table, tb.Rows, tb.Dir)
			}
			dirs[tb.Dir] = true
			lt, err := infer.LoadTable(mustRead(t, filepath.Join(out, tb.Dir, outdir.SchemaFile)))
			if err != nil || lt.String() != tb.Table {
				t.Fatalf("%s: schema file names %s (%v)", tb.Dir, lt, err)
			}
		}
	})
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// routedInserts converts msgs (one input of format, producer semantics,
// one worker) routed without a schema and returns the inserts per table.
func routedInserts(t *testing.T, format, msgs string) map[string]int64 {
	t.Helper()
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	os.MkdirAll(in, 0o755)
	os.WriteFile(filepath.Join(in, "a.json"), []byte(msgs), 0o644)
	f, _ := decode.Lookup(format)
	st, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Format: f, Options: decode.Options{Producer: true}}, OutputOptions: OutputOptions{To: ToParquet, OutDir: out}, RunOptions: RunOptions{Workers: 1}}, []string{in})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, tb := range st.PerFile[0].Tables {
		got[tb.Table] = tb.Rows[0]
	}
	return got
}

// TestRoutedTrailingContent: a message followed by more JSON (decoding
// ignores it, as Jackson does) is routed by its own envelope, not by what
// follows, though Canal's is read from the end.
func TestRoutedTrailingContent(t *testing.T) {
	msgs := `{"data":[{"id":"1"}],"database":"a","table":"t1","mysqlType":{"id":"int"},"isDdl":false,"type":"INSERT"}` + "\n" +
		`{"data":[{"id":"2"}],"database":"b","table":"t2","mysqlType":{"id":"int"},"isDdl":false,"type":"INSERT"}` + "\n" +
		`{"data":[{"id":"3"}],"database":"a","table":"t1","mysqlType":{"id":"int"},"isDdl":false,"type":"INSERT"} {"database":"b","table":"t2"}` + "\n"
	got := routedInserts(t, "canal-json", msgs)
	if got["a.t1"] != 2 || got["b.t2"] != 1 {
		t.Errorf("rows by table: %v, want a.t1 2, b.t2 1", got)
	}
}

// TestRoutedRepeatedKey: a Maxwell message that names its table twice is
// routed by the last, as decoding reads it, though routing stops at the
// first.
func TestRoutedRepeatedKey(t *testing.T) {
	msgs := `{"database":"a","table":"t1","type":"insert","data":{"id":1}}` + "\n" +
		`{"database":"a","table":"t2","type":"insert","data":{"id":2}}` + "\n" +
		`{"database":"a","table":"t1","type":"insert","data":{"id":3},"table":"t2"}` + "\n"
	got := routedInserts(t, "maxwell-json", msgs)
	if got["a.t1"] != 1 || got["a.t2"] != 2 {
		t.Errorf("rows by table: %v, want a.t1 1, a.t2 2", got)
	}
}

// alternate is n messages, the i-th from template a or b (two of one,
// then two of the other) with i for its %d.
func alternate(a, b string, n int) string {
	var msgs strings.Builder
	for i := range n {
		tmpl := a
		if i%4 >= 2 {
			tmpl = b
		}
		fmt.Fprintf(&msgs, tmpl, i)
	}
	return msgs.String()
}

// TestRoutedGuessMisled: Debezium messages whose source block gains a
// "schema" after the keys the routing guess remembers (so the guess names
// the last message's table, which exists) still land in their own tables:
// decoding reads the schema and the message is decoded again.
func TestRoutedGuessMisled(t *testing.T) {
	plain := `{"before":null,"after":{"id":%d},"source":{"db":"inv","table":"t"},"op":"c"}` + "\n"
	withSchema := `{"before":null,"after":{"id":%d},"source":{"db":"inv","table":"t","schema":"s"},"op":"c"}` + "\n"
	got := routedInserts(t, "debezium-json", alternate(plain, withSchema, 8))
	if got["inv.t"] != 4 || got["s.t"] != 4 || len(got) != 2 {
		t.Errorf("rows by table: %v, want inv.t 4, s.t 4", got)
	}
}

// TestRoutedCanalGuessMisled: a Canal message with a column named
// "database" exactly as far from its end as the last message's
// "database" key was (so the routing guess reads the column's value, a
// database whose table exists) still lands in its own table: decoding
// reads the envelope's database and the message is decoded again.
func TestRoutedCanalGuessMisled(t *testing.T) {
	decoy := `{"data":[{"id":"%d","database":"inv"}],"database":"other","table":"t","type":"INSERT"}` + "\n"
	tail := decoy[strings.Index(decoy, `"database":"inv"`) : len(decoy)-1]
	// Padded so that its "database" key is len(tail) from its end.
	pad := strings.Repeat("x", len(tail)-len(`"database":"inv","table":"t","type":"INSERT","pad":""}`))
	plain := `{"data":[{"id":"%d","database":"inv"}],"database":"inv","table":"t","type":"INSERT","pad":"` + pad + `"}` + "\n"
	if p := fmt.Sprintf(plain, 0); len(p)-1-strings.LastIndex(p, `"database":`) != len(tail) {
		t.Fatalf("the padding is off: %q against %q", p, tail)
	}
	got := routedInserts(t, "canal-json", alternate(plain, decoy, 8))
	if got["inv.t"] != 4 || got["other.t"] != 4 || len(got) != 2 {
		t.Errorf("rows by table: %v, want inv.t 4, other.t 4", got)
	}
}

// inside reports whether p is below dir.
func inside(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && !filepath.IsAbs(rel) && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
