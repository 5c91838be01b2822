package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/infer"
)

// inside reports whether p is below dir.
func inside(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && !filepath.IsAbs(rel) && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// FuzzRoutedPaths: for any two tables, versions and input stems, the
// outputs of a routed conversion stay below the output directory and two
// different (table, version, stem) never share a path, even on a file
// system that ignores case; no output is a schema file.
func FuzzRoutedPaths(f *testing.F) {
	f.Add("inventory", "products", "inventory", "Products", uint8(1), uint8(1), "a.json", "a.json")
	f.Add("..", "..", "", "", uint8(1), uint8(2), "v2/x.json", "x.json")
	f.Add("shop", "CON", "shop", "con", uint8(1), uint8(1), "v2~/x.json", "v2/x.json")
	f.Add("a.b", "c", "a", "b.c", uint8(3), uint8(3), "_schema.sql", "x")
	f.Fuzz(func(t *testing.T, ns1, t1, ns2, t2 string, v1, v2 uint8, stem1, stem2 string) {
		out := "/out"
		clean := func(s string) string {
			// Stems are input paths relative to their argument: clean,
			// relative, without '.' or '..' elements.
			var parts []string
			for _, p := range strings.Split(filepath.ToSlash(s), "/") {
				if p != "" && p != "." && p != ".." {
					parts = append(parts, p)
				}
			}
			if len(parts) == 0 {
				return "x"
			}
			return filepath.Join(parts...)
		}
		stem1, stem2 = clean(stem1), clean(stem2)
		ver := func(v uint8) int { return int(v%4) + 1 }
		// An output directory on a file system that ignores case.
		dirs := readTableDirs(out)
		dirs.fold = true
		p1 := filepath.Join(out, dirs.dir(infer.Key{Namespace: ns1, Name: t1}, ver(v1)), routedStem(stem1)) + ".parquet"
		p2 := filepath.Join(out, dirs.dir(infer.Key{Namespace: ns2, Name: t2}, ver(v2)), routedStem(stem2)) + ".parquet"
		for _, p := range []string{p1, p2} {
			if !inside(out, p) {
				t.Fatalf("%s is not below %s", p, out)
			}
			if filepath.Base(p) == SchemaFile {
				t.Fatalf("%s is a schema file", p)
			}
		}
		// Two tables (or versions) never meet, even ignoring case; two
		// inputs of one table never meet byte for byte (that their own
		// names may differ only in case is the inputs' matter).
		sameTable := ns1 == ns2 && t1 == t2 && ver(v1) == ver(v2)
		if !sameTable && foldEqual(p1, p2) || sameTable && stem1 != stem2 && p1 == p2 {
			t.Fatalf("(%q.%q v%d %q) and (%q.%q v%d %q) share %s", ns1, t1, ver(v1), stem1, ns2, t2, ver(v2), stem2, p1)
		}
		s1 := filepath.Join(out, dirs.dir(infer.Key{Namespace: ns1, Name: t1}, ver(v1)), SchemaFile)
		s2 := filepath.Join(out, dirs.dir(infer.Key{Namespace: ns2, Name: t2}, ver(v2)), SchemaFile)
		if !(ns1 == ns2 && t1 == t2 && ver(v1) == ver(v2)) && strings.EqualFold(s1, s2) {
			t.Fatalf("two tables share the schema file %s", s1)
		}
	})
}

// foldEqual: equal ignoring case as a file system might (Unicode folding
// for UTF-8 text, ASCII folding for other bytes).
func foldEqual(a, b string) bool {
	if utf8.ValidString(a) && utf8.ValidString(b) {
		return strings.EqualFold(a, b)
	}
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

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
		cfg := Config{Format: format, Options: decode.Options{Producer: true}, To: ToParquet, OutDir: out, Workers: 2}
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
			lt, err := infer.LoadTable(mustRead(t, filepath.Join(out, tb.Dir, SchemaFile)))
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
	st, err := Run(context.Background(), Config{Format: f, Options: decode.Options{Producer: true}, To: ToParquet, OutDir: out, Workers: 1}, []string{in})
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
