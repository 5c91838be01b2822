package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdcetl/cdcetl/infer"
	"github.com/cdcetl/cdcetl/internal/outdir"
)

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
	if _, err := Run(context.Background(), Config{OutputOptions: OutputOptions{OutDir: pq, To: ToParquet}, RunOptions: RunOptions{Workers: 1}}, inputs); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Join("SCOTT", "EMP"), filepath.Join("Shop", "OrderItems")} {
		if _, err := os.Stat(filepath.Join(pq, d, outdir.SchemaFile)); err != nil {
			t.Errorf("no directory %s: %v", d, err)
		}
	}
	if _, err := Run(context.Background(), Config{OutputOptions: OutputOptions{OutDir: wh, To: ToIceberg}, RunOptions: RunOptions{Workers: 1}}, inputs); err != nil {
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
		{infer.Key{Namespace: "SCOTT", Name: "EMP"}, outdir.LegacyDir("SCOTT", "EMP"), "^^scott", "^^emp"},
	} {
		if ns, nm := lakeIdent(tc.k, tc.dir); ns != tc.ns || nm != tc.nm {
			t.Errorf("lakeIdent(%v, %s) = %q.%q, want %q.%q", tc.k, tc.dir, ns, nm, tc.ns, tc.nm)
		}
	}
}
