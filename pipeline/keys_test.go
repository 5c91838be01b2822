package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/infer"
	"github.com/cdcetl/cdcetl/internal/outdir"
	"github.com/cdcetl/cdcetl/internal/setting"
	"github.com/cdcetl/cdcetl/lake"
)

func canalMsg(table, id, v string, pk bool) string {
	keys := ""
	if pk {
		keys = `"pkNames":["id"],`
	}
	return `{"data":[{"id":"` + id + `","v":"` + v + `"}],"database":"shop","table":"` + table + `",` + keys + `"type":"INSERT","mysqlType":{"id":"int","v":"varchar(8)"},"isDdl":false}` + "\n"
}

// TestUpsertKeysDecidedFirst: an upsert load without a schema decides its
// tables' primary keys from all its inputs before committing anything: a
// table whose first input names no key takes a later input's, and a table
// no input names a key for stops the load with nothing committed, saying
// what to give (it committed the inputs before it, then failed).
func TestUpsertKeysDecidedFirst(t *testing.T) {
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json"), filepath.Join(dir, "c.json")
	os.WriteFile(a, []byte(canalMsg("k", "1", "x", false)+canalMsg("other", "1", "y", true)), 0o644)
	os.WriteFile(b, []byte(canalMsg("k", "2", "z", true)), 0o644)
	os.WriteFile(c, []byte(canalMsg("nokey", "3", "w", false)), 0o644)
	wh := filepath.Join(dir, "wh")
	cfg := Config{OutputOptions: OutputOptions{To: ToIceberg, OutDir: wh}, LakeOptions: LakeOptions{TableMode: lake.ModeUpsert}, RunOptions: RunOptions{Workers: 2}}
	_, err := Run(context.Background(), cfg, []string{a, b, c})
	if err == nil || !strings.Contains(err.Error(), setting.PrimaryKey.String()+" shop.nokey=") || !strings.Contains(err.Error(), "nothing was committed") {
		t.Fatalf("a table with no key: %v", err)
	}
	l, err := lake.Open(context.Background(), wh, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"k", "other"} {
		if tbl, err := l.Existing(context.Background(), "shop", name, filepath.Join(wh, "shop", name)); err != nil || tbl != nil {
			t.Errorf("shop.%s exists after the refused load (%v)", name, err)
		}
	}
	l.Close()
	st, err := Run(context.Background(), cfg, []string{a, b})
	if err != nil {
		t.Fatalf("the key named by a later input: %v", err)
	}
	if st.Committed != 3 {
		t.Errorf("%d parts committed, want 3", st.Committed)
	}
	ddl, _ := os.ReadFile(filepath.Join(wh, "shop", "k", outdir.SchemaFile))
	if !strings.Contains(string(ddl), "PRIMARY KEY (`id`)") {
		t.Errorf("shop.k:\n%s", ddl)
	}
}

// TestHints: --primary-key and --column-type say a table's key and a
// column's type over the evidence, in inspect and convert alike, for the
// tables their patterns match.
func TestHints(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.json")
	os.WriteFile(a, []byte(canalMsg("k", "1", "7", false)+canalMsg("other", "2", "8", true)), 0o644)
	vt, _ := arrowconv.ParseColumns("v BIGINT")
	hints := []infer.Hint{
		{Pattern: regexp.MustCompile(`^(?:shop\.k)$`), PrimaryKey: []string{"id", "v"}},
		{Pattern: regexp.MustCompile(`^(?:shop\..*)$`), Types: map[string]arrowconv.Type{"v": vt.Columns[0].Type}},
	}
	ins, err := Inspect(context.Background(), Config{DecodingOptions: DecodingOptions{Hints: hints}, RunOptions: RunOptions{Workers: 1}}, []string{a})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if _, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Hints: hints}, OutputOptions: OutputOptions{OutDir: out, To: ToParquet}, RunOptions: RunOptions{Workers: 1}}, []string{a}); err != nil {
		t.Fatal(err)
	}
	for _, tbl := range ins.Tables {
		ddl, _ := os.ReadFile(filepath.Join(out, "shop", tbl.Name, outdir.SchemaFile))
		if string(ddl) != tbl.DDL+"\n" && string(ddl) != tbl.DDL {
			t.Errorf("%s: inspect and convert disagree:\n%s\nvs\n%s", tbl.Table, tbl.DDL, ddl)
		}
		if !strings.Contains(tbl.DDL, "`v` BIGINT COMMENT '--column-type'") {
			t.Errorf("%s: the column type hint is not taken:\n%s", tbl.Table, tbl.DDL)
		}
		wantKey := map[string]string{"k": "PRIMARY KEY (`id`, `v`)", "other": "PRIMARY KEY (`id`)"}[tbl.Name]
		if !strings.Contains(tbl.DDL, wantKey) {
			t.Errorf("%s: want %s:\n%s", tbl.Table, wantKey, tbl.DDL)
		}
	}
}

// TestNullKeyNamesTheFix: --materialize over rows whose key column is
// NULL (the messages name it ID, the schema id) fails naming the column
// and what to do, rather than a key's index.
func TestNullKeyNamesTheFix(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "a.json")
	os.WriteFile(in, []byte(`{"data":[{"ID":"1","v":"x"}],"type":"INSERT","database":"shop","table":"k"}`+"\n"), 0o644)
	s, err := arrowconv.ParseColumns("id INT, v STRING, PRIMARY KEY (id) NOT ENFORCED")
	if err != nil {
		t.Fatal(err)
	}
	cfg := canalConfig(t, 1)
	cfg.Schema, cfg.To, cfg.OutDir, cfg.Materialize = s, ToParquet, filepath.Join(dir, "out"), true
	cfg.Table = &TableKey{Namespace: "shop", Name: "k"}
	_, err = Run(context.Background(), cfg, []string{in})
	if err == nil || !strings.Contains(err.Error(), "NULL primary key column id") || !strings.Contains(err.Error(), "column-case insensitive") {
		t.Fatalf("err = %v", err)
	}
}
