package pipeline

import (
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
// reading. Either way the tables, their schemas and their rows are those
// of the same input converted as one chunk (all of it the evidence).
func TestTablesInRuns(t *testing.T) {
	defer func(n int) { sampleBytes = n }(sampleBytes)
	sampleBytes = 3000 // about 40 messages of each table
	for _, tc := range []struct {
		name     string
		surprise bool // table b's 250th message has text where its first had integers
		readings int64
	}{
		{"sampled", false, 0},
		{"surprise after the sample", true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := writeRuns(t, dir, func(table string, i int) string {
				if tc.surprise && table == "b" && i == 250 {
					return `"x7"`
				}
				return ""
			})
			convert := func(out string, chunk int) (Stats, map[string][]string) {
				t.Helper()
				st, err := Run(context.Background(), Config{Workers: 2, ChunkSize: chunk, OutDir: out, To: ToParquet}, []string{in})
				if err != nil {
					t.Fatal(err)
				}
				tables := map[string][]string{}
				for _, table := range []string{"a", "b", "c"} {
					tdir := filepath.Join(out, "d", table)
					if _, err := os.Stat(filepath.Join(tdir, "v2")); err == nil {
						tdir = filepath.Join(tdir, "v2")
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
			if st.Messages != 900 || st.Rows[0] != 900 {
				t.Errorf("stats %+v, want 900 messages and inserts", st)
			}
			_, want := convert(filepath.Join(dir, "one"), 1<<20)
			for _, table := range []string{"a", "b", "c"} {
				g, w := got[table], want[table]
				if tc.surprise && table == "b" {
					// As for a table of the first chunk, the sample's INT and
					// the full reading's text are two versions of the table.
					if !strings.Contains(g[0], "'cdcetl.schema-version' = '2'") || !strings.Contains(g[0], "`v` STRING") {
						t.Errorf("table b is not at version 2 with v STRING:\n%s", g[0])
					}
					g, w = g[1:], w[1:]
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
	cfg := Config{Workers: 2, ChunkSize: 2000, OutDir: out, To: ToParquet, FormatOptions: map[string]decode.Options{"maxwell-json": opts}, DeadLetterDir: filepath.Join(dir, "dead")}
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
