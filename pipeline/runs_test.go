package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/internal/testutil"
)

// TestTablesInRuns: an input whose tables come in runs (a snapshot, an
// export sorted by table) is converted, when the first chunk lacks its
// later tables, from a routing-only sample of each table's first
// messages and a second strict attempt, not a full reading for its
// evidence; a value the sample did not foresee still gets the full
// reading, whose evidence replaces the samples' (no second version of a
// table within one input). Either way the tables, their schemas and
// their rows are those of the same input converted as one chunk (all of
// it the evidence), and no schema change is reported.
func TestTablesInRuns(t *testing.T) {
	defer func(n int) { sampleBytes = n }(sampleBytes)
	sampleBytes = 3000 // about 40 messages of each table
	for _, tc := range []struct {
		name     string
		surprise string // this table's 250th message has text where its first had integers
		readings int64
	}{
		{"sampled", "", 0},
		{"surprise after the sample", "b", 1},
		{"surprise in the first chunk's table", "a", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := writeRuns(t, dir, func(table string, i int) string {
				if table == tc.surprise && i == 250 {
					return `"x7"`
				}
				return ""
			})
			convert := func(out string, chunk int) (Stats, map[string][]string) {
				t.Helper()
				st, err := Run(context.Background(), Config{InputOptions: InputOptions{ChunkSize: chunk}, OutputOptions: OutputOptions{OutDir: out, To: ToParquet}, RunOptions: RunOptions{Workers: 2}}, []string{in})
				if err != nil {
					t.Fatal(err)
				}
				tables := map[string][]string{}
				for _, table := range []string{"a", "b", "c"} {
					tdir := filepath.Join(out, "d", table)
					if _, err := os.Stat(filepath.Join(tdir, "v2")); err == nil {
						t.Errorf("table %s has a second version", table)
					}
					ddl, err := os.ReadFile(filepath.Join(tdir, "_schema.sql"))
					if err != nil {
						t.Fatal(err)
					}
					cols, rows, err := testutil.ReadColumns(filepath.Join(tdir, "in.json.parquet"))
					if err != nil {
						t.Fatal(err)
					}
					got := []string{string(ddl), strings.Join(cols, ",")}
					for _, r := range rows {
						got = append(got, strings.Join(r, ","))
					}
					tables[table] = got
				}
				return st, tables
			}
			before := fullReadings.Load()
			st, got := convert(filepath.Join(dir, "runs"), 2000)
			if n := fullReadings.Load() - before; n != tc.readings {
				t.Errorf("read in full for evidence %d times, want %d", n, tc.readings)
			}
			if st.Messages != 900 || st.Rows[0] != 900 || len(st.SchemaChanges) > 0 {
				t.Errorf("stats %+v, want 900 messages and inserts, no schema change", st)
			}
			_, want := convert(filepath.Join(dir, "one"), 1<<20)
			for _, table := range []string{"a", "b", "c"} {
				g, w := got[table], want[table]
				if table == tc.surprise && !strings.Contains(g[0], "`v` STRING") {
					t.Errorf("table %s has no v STRING:\n%s", table, g[0])
				}
				if !slices.Equal(g, w) {
					t.Errorf("table %s:\n%s\nwant (one chunk)\n%s", table, strings.Join(g[:3], "\n"), strings.Join(w[:3], "\n"))
				}
			}
		})
	}
}

// TestTablesInRunsSkippingErrors: tables in runs with a message that
// cannot be decoded in a later table, errors skipped: the strict attempts
// stop (one at the new table, one at the bad message), the full reading
// decodes the input as asked, and the counts reconcile with one dead
// letter and no row lost.
func TestTablesInRunsSkippingErrors(t *testing.T) {
	defer func(n int) { sampleBytes = n }(sampleBytes)
	sampleBytes = 3000
	dir := t.TempDir()
	in := writeRuns(t, dir, func(table string, i int) string {
		if table == "c" && i == 200 {
			return cutShort
		}
		return ""
	})
	f, _ := decode.Lookup("maxwell-json")
	opts, err := decode.ParseOptions(f, map[string]string{"maxwell-json.ignore-parse-errors": "true"}, false)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	cfg := Config{InputOptions: InputOptions{ChunkSize: 2000}, DecodingOptions: DecodingOptions{FormatOptions: map[string]decode.Options{"maxwell-json": opts}}, OutputOptions: OutputOptions{OutDir: out, To: ToParquet, DeadLetterDir: filepath.Join(dir, "dead")}, RunOptions: RunOptions{Workers: 2}}
	before := fullReadings.Load()
	st, err := Run(context.Background(), cfg, []string{in})
	if err != nil {
		t.Fatal(err)
	}
	if n := fullReadings.Load() - before; n != 1 {
		t.Errorf("read in full for evidence %d times, want 1", n)
	}
	rows := 0
	for _, table := range []string{"a", "b", "c"} {
		_, r, err := testutil.ReadColumns(filepath.Join(out, "d", table, "in.json.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		rows += len(r)
	}
	if st.Lines != 900 || st.Messages+st.Dropped != 900 || int64(rows) != st.Rows[0] || rows+int(st.Dropped)+int(st.Nulled) < 900 || st.DeadLetters != st.Dropped+st.Nulled || st.DeadLetters != 1 {
		t.Errorf("stats %+v, %d rows written: want 900 lines, one dead letter, the rest written", st, rows)
	}
}

// cutShort, as writeRuns' v, ends the message after "v":.
const cutShort = "\x00cut"

// writeRuns writes dir/in.json: 300 Maxwell inserts of each of the
// tables d.a, d.b and d.c in turn, (id, v, s) with v = 7*id unless
// v(table, id) gives its JSON.
func writeRuns(t *testing.T, dir string, v func(table string, i int) string) string {
	t.Helper()
	var b strings.Builder
	for _, table := range []string{"a", "b", "c"} {
		for i := range 300 {
			val := v(table, i)
			if val == cutShort {
				fmt.Fprintf(&b, `{"database":"d","table":%q,"type":"insert","ts":1,"data":{"id":%d,"v":`+"\n", table, i)
				continue
			}
			if val == "" {
				val = fmt.Sprint(i * 7)
			}
			fmt.Fprintf(&b, `{"database":"d","table":%q,"type":"insert","ts":1,"data":{"id":%d,"v":%s,"s":"t%d"}}`+"\n", table, i, val, i%5)
		}
	}
	in := filepath.Join(dir, "in.json")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return in
}

// TestOptimisticAttemptChanges: the schema changes an input makes to a
// table of an earlier input are reported once, when its optimistic
// attempt stands (from the sample) or, when a value the sample did not
// foresee stops it, from the full reading alone (the sample's undone).
func TestOptimisticAttemptChanges(t *testing.T) {
	defer func(n int) { sampleBytes = n }(sampleBytes)
	sampleBytes = 3000
	for _, tc := range []struct {
		name     string
		surprise bool // the second input's 250th message has text in w
		want     string
		readings int64
	}{
		{"attempt stands", false, "added column w INT", 0},
		{"attempt stops", true, "added column w STRING", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var in []string
			for n, cols := range []string{`"id":%d,"v":1`, `"id":%d,"v":1,"w":%s`} {
				var b strings.Builder
				for i := range 300 {
					w := fmt.Sprint(i)
					if tc.surprise && i == 250 {
						w = `"x"`
					}
					row := fmt.Sprintf(cols, i, w)
					if n == 0 {
						row = fmt.Sprintf(cols, i)
					}
					fmt.Fprintf(&b, `{"database":"d","table":"a","type":"insert","ts":1,"data":{%s}}`+"\n", row)
				}
				p := filepath.Join(dir, fmt.Sprintf("in%d.json", n))
				if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				in = append(in, p)
			}
			before := fullReadings.Load()
			st, err := Run(context.Background(), Config{InputOptions: InputOptions{ChunkSize: 2000}, OutputOptions: OutputOptions{OutDir: filepath.Join(dir, "out"), To: ToParquet}, RunOptions: RunOptions{Workers: 2}}, in)
			if err != nil {
				t.Fatal(err)
			}
			if n := fullReadings.Load() - before; n != tc.readings {
				t.Errorf("read in full for evidence %d times, want %d", n, tc.readings)
			}
			var got []string
			for _, c := range st.SchemaChanges {
				got = append(got, c.Change)
			}
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("schema changes %q, want [%q]", got, tc.want)
			}
		})
	}
}

// FuzzOptimisticConversion: inputs converted in small chunks (the
// optimistic attempt from a small sample, the sampling of tables in runs,
// the full reading when a value surprises it) give the tables, schemas,
// versions and rows of the same inputs converted each as one chunk,
// whatever order their tables and value kinds come in (0xff starts the
// next input).
func FuzzOptimisticConversion(f *testing.F) {
	// Each seed in each format: Maxwell, Debezium without a schema,
	// GoldenGate.
	add := func(data []byte) {
		for format := range uint8(3) {
			f.Add(format, data)
		}
	}
	// m is the byte of a message of table (0-2) with a value of kind (0-14).
	m := func(table, kind int) byte { return byte(table*15 + kind) }
	runOf := func(n int, b byte) []byte { return bytes.Repeat([]byte{b}, n) }
	var all []byte
	for i := range 45 {
		all = append(all, byte(i))
	}
	add(all)
	add(bytes.Repeat([]byte{m(0, 0), m(1, 0), m(2, 0), m(0, 2), m(1, 2), m(2, 2), m(0, 8), m(1, 8), m(2, 8)}, 20))
	add([]byte{m(0, 2), m(0, 5), m(0, 2)})                                                       // booleans and decimals: one DECIMAL column
	add(append(runOf(60, m(0, 0)), m(0, 3)))                                                     // integers, then text past the sample
	add(append(runOf(60, m(1, 4)), m(1, 2)))                                                     // nulls, then decimals
	add(append(runOf(60, m(0, 2)), m(0, 8)))                                                     // decimals of two places, then one of one
	add(append(runOf(60, m(0, 8)), m(0, 2)))                                                     // one place, then two: no rounding to the sample's scale
	add(append(runOf(60, m(0, 0)), m(0, 7)))                                                     // integers, then integer text
	add(append(runOf(60, m(0, 0)), m(0, 9)))                                                     // nine digits, then ten
	add(append(runOf(60, m(0, 11)), m(0, 12)))                                                   // TIMESTAMP(3) text, then six digits
	add(append(append(runOf(60, m(0, 0)), 0xff), bytes.Repeat([]byte{m(0, 3), m(0, 0)}, 40)...)) // an input with text after one of integers: version 2
	// Decimals of 25 integer digits past the sample leave DECIMAL(38, 2)
	// as it is, but an input with 15 places then gets DECIMAL(38, 13).
	add(append(append(append(runOf(60, m(0, 2)), m(0, 13)), 0xff), runOf(20, m(0, 14))...))
	f.Fuzz(optimisticCase)
}

// optimisticCase is FuzzOptimisticConversion's check of one input.
func optimisticCase(t *testing.T, format uint8, data []byte) {
	if len(data) == 0 || len(data) > 300 {
		return
	}
	// The message of each format, of table %[1]s, id %[2]d, value %[3]s.
	msg := [...]string{
		`{"database":"d","table":%[1]q,"type":"insert","ts":1,"data":{"id":%[2]d,"v":%[3]s}}`,
		`{"before":null,"after":{"id":%[2]d,"v":%[3]s},"source":{"db":"d","table":%[1]q},"op":"c","ts_ms":1}`,
		`{"table":"d.%[1]s","op_type":"I","op_ts":"2020-05-13 12:38:35.053000","current_ts":"2020-05-13T12:38:36.553000","pos":"%020[2]d","after":{"id":%[2]d,"v":%[3]s}}`,
	}[format%3]
	defer func(n int) { sampleBytes = n }(sampleBytes)
	sampleBytes = 250
	dir := t.TempDir()
	var b strings.Builder
	var inputs []string
	next := func() {
		if b.Len() > 0 {
			p := filepath.Join(dir, fmt.Sprintf("in%d.json", len(inputs)))
			if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			inputs = append(inputs, p)
			b.Reset()
		}
	}
	for i, c := range data {
		if c == 0xff {
			next() // the next input: schemas go on from the last one's
			continue
		}
		table := string("abc"[c/15%3])
		var v string
		switch c % 15 {
		case 0:
			v = fmt.Sprint(i)
		case 1:
			v = fmt.Sprint(int64(i) * 10_000_000_000)
		case 2:
			v = fmt.Sprintf("%d.%d5", i, i%7)
		case 3:
			v = fmt.Sprintf(`"t%d"`, i)
		case 4:
			v = "null"
		case 5:
			v = "true"
		case 6:
			v = fmt.Sprint(i) + `,"w":"x"`
		case 7:
			v = fmt.Sprintf(`"%d"`, i) // integer text
		case 8:
			v = fmt.Sprintf("%d.5", i) // one decimal place
		case 9:
			v = fmt.Sprint(1_000_000_000 + i) // ten digits: past INT's evidence
		case 10:
			v = fmt.Sprintf(`"2020-01-%02d"`, 1+i%28)
		case 11:
			v = fmt.Sprintf(`"2020-01-01 10:00:%02d.125"`, i%60)
		case 12:
			v = fmt.Sprintf(`"2020-01-01 10:00:%02d.123456"`, i%60)
		case 13:
			v = fmt.Sprintf("1234567890123456789012%03d.5", i) // 25 integer digits
		case 14:
			v = fmt.Sprintf("%d.123456789012345", i) // 15 places
		}
		fmt.Fprintf(&b, msg+"\n", table, i, v)
	}
	next()
	if len(inputs) == 0 {
		return
	}
	convert := func(out string, chunk int) map[string]string {
		t.Helper()
		if _, err := Run(context.Background(), Config{InputOptions: InputOptions{ChunkSize: chunk}, OutputOptions: OutputOptions{OutDir: out, To: ToParquet}, RunOptions: RunOptions{Workers: 2}}, inputs); err != nil {
			t.Fatal(err)
		}
		files := map[string]string{}
		err := filepath.WalkDir(filepath.Join(out, "d"), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(out, p)
			if strings.HasSuffix(p, ".parquet") {
				cols, rows, err := testutil.ReadColumns(p)
				if err != nil {
					return err
				}
				var s strings.Builder
				fmt.Fprintln(&s, strings.Join(cols, ","))
				for _, r := range rows {
					fmt.Fprintln(&s, strings.Join(r, ","))
				}
				files[rel] = s.String()
				return nil
			}
			text, err := os.ReadFile(p)
			files[rel] = string(text)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	got, want := convert(filepath.Join(dir, "chunks"), 200), convert(filepath.Join(dir, "one"), 1<<20)
	if len(want) == 0 {
		t.Fatal("no outputs")
	}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%s in small chunks:\n%s\nas one chunk:\n%s", p, got[p], w)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s written in small chunks only", p)
		}
	}
}
