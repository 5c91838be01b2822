package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdcetl/cdcetl/infer"
	"github.com/cdcetl/cdcetl/route"
)

func writeSchema(t *testing.T, dir string, k infer.Key) {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	ddl := "CREATE TABLE `" + k.Namespace + "`.`" + k.Name + "` (`id` INT) WITH ('format' = 'canal-json', 'cdcetl.namespace' = '" + k.Namespace + "', 'cdcetl.table' = '" + k.Name + "');\n"
	if err := os.WriteFile(filepath.Join(dir, SchemaFile), []byte(ddl), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTableDirs: tables keep their names as directories; where the file
// system ignores case, a table whose directory another table has (in this
// run, or an earlier one, in whatever case) gets "~2", and keeps it in
// later runs; a table an earlier version wrote under the old escaping
// stays there.
func TestTableDirs(t *testing.T) {
	out := t.TempDir()
	lower, upper, oracle := infer.Key{Namespace: "shop", Name: "orders"}, infer.Key{Namespace: "shop", Name: "Orders"}, infer.Key{Namespace: "SCOTT", Name: "EMP"}

	plain := readTableDirs(out)
	if a, b := plain.dir(lower, 1), plain.dir(upper, 2); a != filepath.Join("shop", "orders") || b != filepath.Join("shop", "Orders", "v2") {
		t.Errorf("a file system that keeps case: %s and %s", a, b)
	}

	folding := readTableDirs(out)
	folding.fold = true
	if a, b := folding.dir(lower, 1), folding.dir(upper, 1); a != filepath.Join("shop", "orders") || b != filepath.Join("shop", "Orders~2") {
		t.Errorf("one run on a file system that ignores case: %s and %s", a, b)
	}

	// An earlier run made SHOP/Orders for shop.Orders: this run's
	// shop.orders, the first of the two now, does not take it.
	writeSchema(t, filepath.Join(out, "SHOP", "Orders"), upper)
	later := readTableDirs(out)
	later.fold = true
	if a, b := later.dir(lower, 1), later.dir(upper, 1); a != filepath.Join("shop", "orders~2") || b != filepath.Join("shop", "Orders") {
		t.Errorf("a later run: %s and %s", a, b)
	}

	// The old escaping's directory of SCOTT.EMP is where it stays.
	legacy := route.LegacyDir(oracle.Namespace, oracle.Name)
	writeSchema(t, filepath.Join(out, legacy), oracle)
	if got := readTableDirs(out).dir(oracle, 1); got != legacy {
		t.Errorf("SCOTT.EMP: %s, want the earlier version's %s", got, legacy)
	}
	if got := readTableDirs(t.TempDir()).dir(oracle, 1); got != filepath.Join("SCOTT", "EMP") {
		t.Errorf("SCOTT.EMP in a new directory: %s", got)
	}
}

// TestReadableNames: Oracle's upper-case names and CamelCase MySQL names
// become directories and Iceberg identifiers as the source wrote them;
// show finds them by those names.
func TestReadableNames(t *testing.T) {
	dir := t.TempDir()
	ogg := `{"table":"SCOTT.EMP","op_type":"I","op_ts":"2020-05-13 15:40:06.000000","current_ts":"2020-05-13T15:40:06.000000","pos":"00000000000000000000143","primary_keys":["EMPNO"],"after":{"EMPNO":7369,"ENAME":"SMITH"}}` + "\n"
	canal := `{"data":[{"id":"1"}],"database":"Shop","table":"OrderItems","pkNames":["id"],"type":"INSERT","mysqlType":{"id":"int"},"isDdl":false}` + "\n"
	os.WriteFile(filepath.Join(dir, "ogg.json"), []byte(ogg), 0o644)
	os.WriteFile(filepath.Join(dir, "canal.json"), []byte(canal), 0o644)
	inputs := []string{filepath.Join(dir, "ogg.json"), filepath.Join(dir, "canal.json")}
	pq, wh := filepath.Join(dir, "pq"), filepath.Join(dir, "wh")
	if _, err := Run(context.Background(), Config{Workers: 1, OutDir: pq, To: ToParquet}, inputs); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Join("SCOTT", "EMP"), filepath.Join("Shop", "OrderItems")} {
		if _, err := os.Stat(filepath.Join(pq, d, SchemaFile)); err != nil {
			t.Errorf("no directory %s: %v", d, err)
		}
	}
	if _, err := Run(context.Background(), Config{Workers: 1, OutDir: wh, To: ToIceberg}, inputs); err != nil {
		t.Fatal(err)
	}
	for _, id := range [][2]string{{"SCOTT", "EMP"}, {"Shop", "OrderItems"}} {
		loadTable(t, wh, "", id[0], id[1]) // fails the test when absent
		var b strings.Builder
		if n, err := Show(context.Background(), ShowOptions{Dir: wh, Table: id[0] + "." + id[1]}, &b); err != nil || n != 1 {
			t.Errorf("show %s.%s: %d rows, %v", id[0], id[1], n, err)
		}
	}
}

// TestLakeIdent: identifiers are the source's names, escaped only where
// iceberg-go refuses them or a '%' could make two meet; a table an earlier
// version made keeps its identifier.
func TestLakeIdent(t *testing.T) {
	for _, tc := range []struct {
		k      infer.Key
		dir    string
		ns, nm string
	}{
		{infer.Key{Namespace: "SCOTT", Name: "EMP"}, filepath.Join("SCOTT", "EMP"), "SCOTT", "EMP"},
		{infer.Key{Namespace: "inventory", Name: "Order Items"}, filepath.Join("inventory", "Order Items", "v2"), "inventory", "Order Items_v2"},
		{infer.Key{Namespace: "..", Name: "a/b"}, "x", "%2e%2e", "a%2fb"},
		{infer.Key{Namespace: "a", Name: "100%"}, "x", "a", "100%25"},
		{infer.Key{Namespace: "SCOTT", Name: "EMP"}, route.LegacyDir("SCOTT", "EMP"), "^^scott", "^^emp"},
	} {
		if ns, nm := lakeIdent(tc.k, tc.dir); ns != tc.ns || nm != tc.nm {
			t.Errorf("lakeIdent(%v, %s) = %q.%q, want %q.%q", tc.k, tc.dir, ns, nm, tc.ns, tc.nm)
		}
	}
}
