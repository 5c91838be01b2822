package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cdcetl/cdcetl/internal/testutil"
)

// TestArchives runs inspect and a conversion without a schema over every
// archive of real producer output in testdata/archives (their sources are
// in SOURCES.md): both exit 0, they agree on the tables, each table's
// schema (columns, types, key) and its rows, no table is without columns,
// and what they print is the reviewed <archive>.golden. Regenerate with:
// go test ./cmd/cdcetl -run Archives -update
func TestArchives(t *testing.T) {
	root := filepath.Join(testutil.Root(), "testdata", "archives")
	files, _ := filepath.Glob(filepath.Join(root, "*", "*.jsonl"))
	if len(files) < 30 {
		t.Fatalf("%d archives in %s, want at least 30", len(files), root)
	}
	physical := regexp.MustCompile("(?m)^  `[^`]*` [A-Z]")
	for _, f := range files {
		name, _ := filepath.Rel(root, f)
		t.Run(name, func(t *testing.T) {
			clean := func(s string) string {
				s = strings.ReplaceAll(s, root+string(filepath.Separator), "")
				return strings.ReplaceAll(s, f, name)
			}
			var got bytes.Buffer
			// inspect, as a person reads it, and as JSON.
			var out, errb bytes.Buffer
			if code := run([]string{"inspect", f}, &out, &errb); code != 0 {
				t.Fatalf("inspect: exit %d: %s", code, errb.String())
			}
			got.WriteString("# inspect\n" + clean(out.String()))
			out.Reset()
			errb.Reset()
			if code := run([]string{"inspect", "--json", f}, &out, &errb); code != 0 {
				t.Fatalf("inspect --json: exit %d: %s", code, errb.String())
			}
			var ins struct {
				Files []struct {
					Tables []struct {
						Table string
						Rows  map[string]int64
					}
				}
				Tables []struct {
					Table, Dir, DDL string
				}
			}
			if err := json.Unmarshal(out.Bytes(), &ins); err != nil {
				t.Fatal(err)
			}
			var inspected [4]int64
			withRows := map[string]bool{}
			for _, ft := range ins.Files[0].Tables {
				for i, k := range []string{"+I", "-U", "+U", "-D"} {
					inspected[i] += ft.Rows[k]
					withRows[ft.Table] = withRows[ft.Table] || ft.Rows[k] > 0
				}
			}
			// convert -o: each table's _schema.sql is inspect's DDL.
			dir := t.TempDir()
			report := filepath.Join(dir, "report.json")
			out.Reset()
			errb.Reset()
			if code := run([]string{"convert", "-o", filepath.Join(dir, "out"), "--report", report, f}, &out, &errb); code != 0 {
				t.Fatalf("convert: exit %d: %s", code, errb.String())
			}
			// A table only DDL records name (a DDL-only file) has a schema
			// in inspect and no output.
			schemas, _ := filepath.Glob(filepath.Join(dir, "out", "*", "*", "_schema.sql"))
			more, _ := filepath.Glob(filepath.Join(dir, "out", "*", "*", "v*", "_schema.sql"))
			written := 0
			for _, tb := range ins.Tables {
				if withRows[tb.Table] {
					written++
				}
			}
			if len(schemas)+len(more) != written {
				t.Errorf("convert wrote %d schema files, inspect has %d tables with rows", len(schemas)+len(more), written)
			}
			for _, tb := range ins.Tables {
				if !withRows[tb.Table] {
					continue
				}
				ddl, err := os.ReadFile(filepath.Join(dir, "out", filepath.FromSlash(tb.Dir), "_schema.sql"))
				if err != nil {
					t.Errorf("%s: %v", tb.Table, err)
					continue
				}
				if strings.TrimSpace(string(ddl)) != strings.TrimSpace(tb.DDL) {
					t.Errorf("%s: convert's schema\n%s\ninspect's\n%s", tb.Table, ddl, tb.DDL)
				}
				if !physical.MatchString(tb.DDL) {
					t.Errorf("%s: a table without columns:\n%s", tb.Table, tb.DDL)
				}
			}
			var rep struct {
				Status string
				Rows   map[string]int64
			}
			data, err := os.ReadFile(report)
			if err != nil {
				t.Fatal(err)
			}
			json.Unmarshal(data, &rep)
			for i, k := range []string{"+I", "-U", "+U", "-D"} {
				if rep.Rows[k] != inspected[i] {
					t.Errorf("%s rows: convert %d, inspect %d", k, rep.Rows[k], inspected[i])
				}
			}
			if rep.Status != "ok" {
				t.Errorf("report status %q", rep.Status)
			}
			// --to print: the rows, as a reviewer reads them.
			out.Reset()
			errb.Reset()
			if code := run([]string{"convert", "--to", "print", f}, &out, &errb); code != 0 {
				t.Fatalf("convert --to print: exit %d: %s", code, errb.String())
			}
			got.WriteString("# convert --to print\n" + clean(out.String()))
			for _, l := range strings.Split(strings.TrimRight(errb.String(), "\n"), "\n") {
				fmt.Fprintf(&got, "# stderr: %s\n", clean(l))
			}
			testutil.Golden(t, strings.TrimSuffix(f, ".jsonl")+".golden", got.Bytes())
		})
	}
}
