package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cdcetl/cdcetl/infer"
	"github.com/cdcetl/cdcetl/internal/outdir"
	"github.com/cdcetl/cdcetl/internal/testutil"
)

// TestMessagesNamingNoTable: without a schema, rows of messages that name
// no table (Canal without "database" and "table") get a table of their
// own, infer.Unnamed, with their columns and values: never rows of no
// columns. They may come after the first chunk's tables (the strict
// attempt stops and samples them); the result is that of the input
// converted as one chunk. Heartbeats and transaction markers, which name
// no table either, make no table.
func TestMessagesNamingNoTable(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.json")
	var b strings.Builder
	b.WriteString(shopLines("t", 0, 30))
	for id := 100; id < 130; id++ {
		fmt.Fprintf(&b, `{"data":[{"id":"%d","v":"u%d"}],"old":null,"pkNames":["id"],"isDdl":false,"type":"INSERT","es":1700000000000,"ts":1700000000001,"mysqlType":{"id":"int","v":"varchar(8)"}}`+"\n", id, id)
	}
	os.WriteFile(in, []byte(b.String()), 0o644)
	tables := func(out string, chunk int) map[string][]string {
		t.Helper()
		st, err := Run(context.Background(), Config{InputOptions: InputOptions{ChunkSize: chunk}, DecodingOptions: DecodingOptions{NoLineage: true}, OutputOptions: OutputOptions{OutDir: out, To: ToParquet}, RunOptions: RunOptions{Workers: 2}}, []string{in})
		if err != nil {
			t.Fatal(err)
		}
		if st.Rows[0] != 60 {
			t.Fatalf("%d inserts, want 60", st.Rows[0])
		}
		got := map[string][]string{}
		for _, tbl := range []string{filepath.Join("shop", "t"), filepath.Join(infer.Unnamed.Namespace, infer.Unnamed.Name)} {
			cols, rows, err := testutil.ReadColumns(filepath.Join(out, tbl, "in.json.parquet"))
			if err != nil {
				t.Fatal(err)
			}
			got[tbl] = []string{strings.Join(cols, ",")}
			for _, r := range rows {
				got[tbl] = append(got[tbl], strings.Join(r, ","))
			}
		}
		return got
	}
	whole := tables(filepath.Join(dir, "whole"), 1<<20)
	small := tables(filepath.Join(dir, "small"), 600)
	unnamed := filepath.Join(infer.Unnamed.Namespace, infer.Unnamed.Name)
	if got := whole[unnamed]; len(got) != 31 || got[0] != "_rowkind,id,v,_unchanged" || got[1] != "+I,100,u100,[]" {
		t.Fatalf("the unnamed table: %q", got)
	}
	for k := range whole {
		if !slices.Equal(whole[k], small[k]) {
			t.Errorf("%s: converted in small chunks %q, as one %q", k, small[k], whole[k])
		}
	}

	// Debezium heartbeats and transaction markers between rows: no table.
	dbz := filepath.Join(dir, "dbz.json")
	var d strings.Builder
	for id := 0; id < 40; id++ {
		fmt.Fprintf(&d, `{"before":null,"after":{"id":%d},"source":{"db":"inv","table":"a"},"op":"c","ts_ms":1700000000000}`+"\n", id)
		if id%10 == 9 {
			d.WriteString(`{"status":"END","id":"571:53195829","event_count":10,"data_collections":[{"data_collection":"inv.a","event_count":10}],"ts_ms":1700000000001}` + "\n")
			d.WriteString(`{"ts_ms":1700000000002}` + "\n")
		}
	}
	os.WriteFile(dbz, []byte(d.String()), 0o644)
	out := filepath.Join(dir, "dbz")
	if _, err := Run(context.Background(), Config{InputOptions: InputOptions{ChunkSize: 700}, OutputOptions: OutputOptions{OutDir: out, To: ToParquet}, RunOptions: RunOptions{Workers: 2}}, []string{dbz}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, unnamed)); !os.IsNotExist(err) {
		t.Errorf("heartbeats and markers made a table: %v", err)
	}
}

// TestTimeIntervals: a column the producer types TIME whose values go
// beyond a day (MySQL TIME is an interval: -838:59:59 to 838:59:59) is
// inferred as what holds them, STRING for text and BIGINT for Debezium's
// MicroTime, by inspect and convert alike; values past the first chunk
// count too, and every row converts.
func TestTimeIntervals(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for id := 0; id < 60; id++ {
		v := fmt.Sprintf("%02d:%02d:%02d", id%24, id%60, id%60)
		if id == 50 {
			v = "838:59:59"
		}
		fmt.Fprintf(&b, `{"data":[{"id":"%d","t":"%s"}],"old":null,"database":"shop","table":"a","pkNames":["id"],"isDdl":false,"type":"INSERT","es":1700000000000,"ts":1700000000001,"mysqlType":{"id":"int","t":"time"}}`+"\n", id, v)
	}
	for id := 0; id < 60; id++ {
		v := int64(id) * 1_000_000
		if id == 55 {
			v = -45296123456
		}
		fmt.Fprintf(&b, `{"schema":{"type":"struct","fields":[{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"int64","optional":true,"name":"io.debezium.time.MicroTime","version":1,"field":"t"}],"optional":true,"name":"v","field":"after"},{"type":"string","optional":false,"field":"op"}],"optional":false,"name":"e"},"payload":{"before":null,"after":{"id":%d,"t":%d},"op":"c","source":{"db":"shop","table":"b"}}}`+"\n", id, v)
	}
	// One format per file.
	all := strings.SplitAfter(b.String(), "\n")
	canal, dbz := filepath.Join(dir, "canal.json"), filepath.Join(dir, "dbz.json")
	os.WriteFile(canal, []byte(strings.Join(all[:60], "")), 0o644)
	os.WriteFile(dbz, []byte(strings.Join(all[60:], "")), 0o644)
	ins, err := Inspect(context.Background(), Config{RunOptions: RunOptions{Workers: 2}}, []string{canal, dbz})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"shop.a": "STRING", "shop.b": "BIGINT"}
	for _, tbl := range ins.Tables {
		for _, c := range tbl.Columns {
			if c.Name == "t" && c.Type != want[tbl.Table] {
				t.Errorf("inspect: %s.t is %s, want %s", tbl.Table, c.Type, want[tbl.Table])
			}
		}
	}
	for _, chunk := range []int{1 << 20, 2000} {
		out := filepath.Join(dir, fmt.Sprintf("out%d", chunk))
		st, err := Run(context.Background(), Config{InputOptions: InputOptions{ChunkSize: chunk}, OutputOptions: OutputOptions{OutDir: out, To: ToParquet}, RunOptions: RunOptions{Workers: 2}}, []string{canal, dbz})
		if err != nil {
			t.Fatalf("chunk %d: %v", chunk, err)
		}
		if st.Rows[0] != 120 {
			t.Errorf("chunk %d: %d rows, want 120", chunk, st.Rows[0])
		}
		for tbl, typ := range want {
			ddl, _ := os.ReadFile(filepath.Join(out, "shop", tbl[len("shop."):], outdir.SchemaFile))
			if !strings.Contains(string(ddl), "`t` "+typ) {
				t.Errorf("chunk %d: %s:\n%s", chunk, tbl, ddl)
			}
		}
	}
}
