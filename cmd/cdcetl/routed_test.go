package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/internal/cdcgen"
	"github.com/cdcetl/cdcetl/internal/testutil"
	"github.com/cdcetl/cdcetl/pipeline"
)

// expectedTables are the schemas a person who knows the producers would
// write for the multi-table archive (internal/cdcgen/multi.go), from the
// evidence each format carries: Canal's mysqlType and Debezium's Connect
// schema give the MySQL types; Maxwell's DDL records ("def") give them for
// orders and Order Items; otherwise only values speak (integers INT,
// decimal literals DECIMAL(38, s), date-time text TIMESTAMP(p)).
// Keys are "namespace.table" or "namespace.table@v2".
var expectedTables = map[string]map[string]string{
	"canal-json": {
		"inventory.products":       "id BIGINT, name STRING, weight DECIMAL(10, 3), in_stock BOOLEAN, created TIMESTAMP(3), rating DOUBLE",
		"inventory.orders":         "order_id INT, customer STRING, total DECIMAL(12, 2), placed DATE, note STRING",
		"inventory.Order Items":    "item_id INT, order_id INT, qty INT",
		"inventory.Order Items@v2": "item_id INT, order_id INT, qty STRING",
		"../etc.passwd":            "id BIGINT, line STRING",
		"shop.CON":                 "id INT, v DOUBLE",
		"shop.con":                 "id INT, label STRING",
		"商店.客户":                    "`编号` BIGINT, `名字` STRING",
	},
	"maxwell-json": {
		"inventory.products":       "id INT, name STRING, weight DECIMAL(38, 3), in_stock INT, created TIMESTAMP(3), rating DECIMAL(38, 3)",
		"inventory.orders":         "order_id INT, customer STRING, total DECIMAL(12, 2), placed DATE, note STRING",
		"inventory.Order Items":    "item_id INT, order_id INT, qty INT",
		"inventory.Order Items@v2": "item_id INT, order_id INT, qty STRING",
		"../etc.passwd":            "id INT, line STRING",
		"shop.CON":                 "id INT, v DECIMAL(38, 3)",
		"shop.con":                 "id INT, label STRING",
		"商店.客户":                    "`编号` INT, `名字` STRING",
	},
	"ogg-json": {
		"INVENTORY.PRODUCTS":       "id INT, name STRING, weight DECIMAL(38, 3), in_stock INT, created TIMESTAMP(6), rating DECIMAL(38, 3)",
		"INVENTORY.ORDERS":         "order_id INT, customer STRING, total DECIMAL(38, 2), placed TIMESTAMP(0), note STRING",
		"INVENTORY.ORDER ITEMS":    "item_id INT, order_id INT, qty INT",
		"INVENTORY.ORDER ITEMS@v2": "item_id INT, order_id INT, qty STRING",
		// GoldenGate's SCHEMA.TABLE splits at its first dot.
		"../ETC.PASSWD": "id INT, line STRING",
		"SHOP.CON":      "id INT, v DECIMAL(38, 3)",
		"SHOP.con":      "id INT, label STRING",
		"商店.客户":         "`编号` INT, `名字` STRING",
	},
	"debezium-json": {
		"inventory.products":       "id BIGINT, name STRING, weight DECIMAL(10, 3), in_stock SMALLINT, created TIMESTAMP(3), rating DOUBLE",
		"inventory.orders":         "order_id INT, customer STRING, total DECIMAL(12, 2), placed DATE, note STRING",
		"inventory.Order Items":    "item_id INT, order_id INT, qty INT",
		"inventory.Order Items@v2": "item_id INT, order_id INT, qty STRING",
		"../etc.passwd":            "id BIGINT, line STRING",
		"shop.CON":                 "id INT, v DOUBLE",
		"shop.con":                 "id INT, label STRING",
		"商店.客户":                    "`编号` BIGINT, `名字` STRING",
	},
}

// routedReport is the part of --report a routed run is checked with.
type routedReport struct {
	Lines, Messages, Blank, DDL, Filtered, Dropped, Control int64
	Rows                                                    map[string]int64
	PerFile                                                 []struct {
		Path   string `json:"path"`
		Tables []struct {
			Table   string           `json:"table"`
			Dir     string           `json:"dir"`
			Outputs []string         `json:"outputs"`
			Rows    map[string]int64 `json:"rows"`
		} `json:"tables"`
	} `json:"per_file"`
	SchemaChanges []struct {
		Table, File, Change string
		Line, Version       int
	} `json:"schema_changes"`
}

func readRoutedReport(t *testing.T, path string) routedReport {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r routedReport
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	for k, dst := range map[string]*int64{"lines": &r.Lines, "messages": &r.Messages, "blank": &r.Blank, "ddl_skipped": &r.DDL,
		"filtered": &r.Filtered, "dropped": &r.Dropped, "control": &r.Control} {
		if v, ok := raw[k]; ok {
			json.Unmarshal(v, dst)
		}
	}
	return r
}

func writeArchive(t *testing.T, dir, format string, rows int) []string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range cdcgen.Archive(format, rows) {
		p := filepath.Join(dir, f.Name)
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// explicitDDL is the CREATE TABLE a person writes for one table of the
// archive: the expected columns, producer semantics, the table named.
func explicitDDL(format, ns, table, columns string) string {
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	with := ""
	if format == "debezium-json" {
		with = ", 'debezium-json.schema-include' = 'true'" // JsonConverter with schemas
	}
	return fmt.Sprintf("CREATE TABLE t (%s, _unchanged ARRAY<STRING> METADATA FROM 'unchanged-columns' VIRTUAL, _file STRING METADATA FROM 'file.path' VIRTUAL, _line BIGINT METADATA FROM 'file.line' VIRTUAL, _source_pos STRING METADATA FROM 'source-position' VIRTUAL) WITH ('format' = %s, 'cdcetl.semantics' = 'producer', 'cdcetl.namespace' = %s, 'cdcetl.table' = %s%s)",
		columns, q(format), q(ns), q(table), with)
}

func normalColumns(t *testing.T, cols string) string {
	t.Helper()
	s, err := arrowconv.ParseColumns(cols)
	if err != nil {
		t.Fatalf("%s: %v", cols, err)
	}
	return s.ColumnList()
}

// TestMixedArchiveNoSchema: the mixed archive of every format converts
// with no --format and no --schema; each table gets the expected schema
// (drift: an added column, an incompatible change to v2), and each
// table's Parquet equals, row for row, what an explicit DDL of that table
// gives over the same inputs. Small chunks (the schema is guessed from
// the first and every drift makes an input be read again) give the same
// bytes as one chunk per input.
func TestMixedArchiveNoSchema(t *testing.T) {
	for _, format := range []string{"canal-json", "maxwell-json", "ogg-json", "debezium-json"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			inputs := writeArchive(t, filepath.Join(dir, "in"), format, 40)
			out := filepath.Join(dir, "out")
			var stderr bytes.Buffer
			if code := run([]string{"convert", "--chunk-size", "4096", "--workers", "3", "-o", out, "--report", filepath.Join(dir, "r.json"), filepath.Join(dir, "in")}, &bytes.Buffer{}, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			rep := readRoutedReport(t, filepath.Join(dir, "r.json"))
			if got := rep.Messages + rep.Control + rep.Blank + rep.DDL + rep.Filtered + rep.Dropped; got != rep.Lines {
				t.Errorf("counts do not reconcile: %d lines, %d accounted for", rep.Lines, got)
			}
			// The added note and qty's incompatible change; where messages
			// carry their types (Canal's mysqlType, Debezium's schema),
			// qty's change within part-3 too (its first rows say INT).
			changes := 2
			if format == "canal-json" || format == "debezium-json" {
				changes = 3
			}
			if len(rep.SchemaChanges) != changes || changes == 3 && !strings.Contains(rep.SchemaChanges[1].Change, "qty INT became STRING within the input") {
				t.Errorf("schema changes: %+v, want the added note, qty's incompatible change (and its change within its input)", rep.SchemaChanges)
			}

			// Every table's schema file says what the expected schema says.
			want := expectedTables[format]
			seen := map[string]bool{}
			type group struct {
				ns, table, key, dir string
				inputs              []string
				outputs             []string
			}
			groups := map[string]*group{}
			var rowsTotal int64
			for _, pf := range rep.PerFile {
				for _, tb := range pf.Tables {
					text, err := os.ReadFile(filepath.Join(out, tb.Dir, "_schema.sql"))
					if err != nil {
						t.Fatalf("%s: %v", tb.Table, err)
					}
					s, err := arrowconv.ParseDDL(string(text))
					if err != nil {
						t.Fatalf("%s: %v\n%s", tb.Dir, err, text)
					}
					key := s.Options["cdcetl.namespace"] + "." + s.Options["cdcetl.table"]
					if key != tb.Table {
						t.Errorf("%s: schema file names %s", tb.Dir, key)
					}
					if v := s.Options["cdcetl.schema-version"]; v != "" {
						key += "@v" + v
					}
					var cols []arrowconv.Field // the table's own: not _unchanged and the lineage columns
					for _, c := range s.Columns {
						if !c.IsMetadata() {
							cols = append(cols, c)
						}
					}
					got := (&arrowconv.Schema{Columns: cols}).ColumnList()
					if w, ok := want[key]; !ok {
						t.Errorf("unexpected table %s (%s)", key, tb.Dir)
					} else if got != normalColumns(t, w) {
						t.Errorf("%s: inferred\n  %s\nwant\n  %s", key, got, normalColumns(t, w))
					}
					seen[key] = true
					g := groups[tb.Dir]
					if g == nil {
						g = &group{ns: s.Options["cdcetl.namespace"], table: s.Options["cdcetl.table"], key: key, dir: tb.Dir}
						groups[tb.Dir] = g
					}
					g.inputs = append(g.inputs, pf.Path)
					g.outputs = append(g.outputs, tb.Outputs...)
					for _, n := range tb.Rows {
						rowsTotal += n
					}
				}
			}
			for k := range want {
				if !seen[k] {
					t.Errorf("table %s has no outputs", k)
				}
			}
			var repRows int64
			for _, n := range rep.Rows {
				repRows += n
			}
			if rowsTotal != repRows {
				t.Errorf("tables' rows %d, run's rows %d", rowsTotal, repRows)
			}

			// Each table's Parquet against an explicit DDL of it.
			dirs := make([]string, 0, len(groups))
			for d := range groups {
				dirs = append(dirs, d)
			}
			sort.Strings(dirs)
			for i, d := range dirs {
				g := groups[d]
				ddl := filepath.Join(dir, fmt.Sprintf("t%d.sql", i))
				os.WriteFile(ddl, []byte(explicitDDL(format, g.ns, g.table, want[g.key])), 0o644)
				exp := filepath.Join(dir, fmt.Sprintf("exp%d", i))
				args := append([]string{"convert", "--quiet", "--ddl", ddl, "-o", exp}, g.inputs...)
				if code := run(args, &bytes.Buffer{}, &stderr); code != 0 {
					t.Fatalf("%s: explicit DDL: exit %d: %s", g.key, code, stderr.String())
				}
				for _, o := range g.outputs {
					gotCols, gotRows, err := testutil.ReadColumns(filepath.Join(out, o))
					if err != nil {
						t.Fatal(err)
					}
					wantCols, wantRows, err := testutil.ReadColumns(filepath.Join(exp, filepath.Base(o)))
					if err != nil {
						t.Fatal(err)
					}
					compareRows(t, g.key+" "+filepath.Base(o), gotCols, gotRows, wantCols, wantRows)
				}
			}

			// The same archive in one chunk per input: the same bytes.
			one := filepath.Join(dir, "one")
			if code := run([]string{"convert", "--quiet", "-o", one, filepath.Join(dir, "in")}, &bytes.Buffer{}, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			for _, g := range groups {
				for _, o := range g.outputs {
					a, _ := os.ReadFile(filepath.Join(out, o))
					b, err := os.ReadFile(filepath.Join(one, o))
					if err != nil || !bytes.Equal(a, b) {
						t.Errorf("%s: small chunks and one chunk differ (%v)", o, err)
					}
				}
			}
			_ = inputs
		})
	}
}

// compareRows checks that got (a routed output) holds want's rows (an
// explicit output) in order: columns by name; a column got lacks (added
// to the table after this input) must be NULL in want.
func compareRows(t *testing.T, what string, gotCols []string, got [][]string, wantCols []string, want [][]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d rows, explicit schema gives %d", what, len(got), len(want))
		return
	}
	// Columns the table gained after this input are not in got; where an
	// update or delete image lacked them, want lists them unchanged.
	var missing []string
	for _, name := range wantCols {
		if !slices.Contains(gotCols, name) {
			missing = append(missing, name)
		}
	}
	for c, name := range wantCols {
		gc := slices.Index(gotCols, name)
		for r := range want {
			w := want[r][c]
			if name == "_unchanged" && len(missing) > 0 {
				w = dropListed(w, missing)
			}
			switch {
			case gc < 0 && want[r][c] != "null":
				t.Errorf("%s row %d: column %s missing, explicit schema has %s", what, r, name, want[r][c])
				return
			case gc >= 0 && got[r][gc] != w:
				t.Errorf("%s row %d column %s: %s, explicit schema gives %s", what, r, name, got[r][gc], w)
				return
			}
		}
	}
	for _, name := range gotCols {
		if !slices.Contains(wantCols, name) {
			t.Errorf("%s: column %s the explicit schema lacks", what, name)
		}
	}
}

// dropListed removes names from a printed list ("[a, b]").
func dropListed(list string, names []string) string {
	inner := strings.TrimSuffix(strings.TrimPrefix(list, "["), "]")
	var keep []string
	for _, x := range strings.Split(inner, ", ") {
		if x != "" && !slices.Contains(names, x) {
			keep = append(keep, x)
		}
	}
	return "[" + strings.Join(keep, ", ") + "]"
}

// TestInspectRoundTrip: inspect's DDLs reproduce the conversion. For
// every table, convert --ddl with its DDL gives byte-identical Parquet to
// the no-schema conversion for the inputs from the table's last schema
// change on (before it the table had fewer columns or another version);
// convert --ddl-dir with all of them gives, per table, what --ddl gives.
func TestInspectRoundTrip(t *testing.T) {
	for _, format := range []string{"canal-json", "maxwell-json", "ogg-json", "debezium-json"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			inputs := writeArchive(t, filepath.Join(dir, "in"), format, 30)
			ddls := filepath.Join(dir, "ddl")
			var stdout, stderr bytes.Buffer
			if code := run([]string{"inspect", "--json", "--ddl-out", ddls, filepath.Join(dir, "in")}, &stdout, &stderr); code != 0 {
				t.Fatalf("inspect: exit %d: %s", code, stderr.String())
			}
			var ins struct {
				Files []struct {
					Path, Format string
					Tables       []struct{ Table string }
				}
				Tables []struct {
					Table, Namespace, Name, Dir, DDL string
					Changes                          []struct{ File string } `json:"schema_changes"`
				}
			}
			if err := json.Unmarshal(stdout.Bytes(), &ins); err != nil {
				t.Fatalf("%v\n%s", err, stdout.String())
			}
			if len(ins.Files) != 3 || len(ins.Tables) != len(expectedTables[format])-1 {
				t.Fatalf("%d files, %d tables", len(ins.Files), len(ins.Tables))
			}
			for _, f := range ins.Files {
				if f.Format != format {
					t.Errorf("%s detected as %s", f.Path, f.Format)
				}
			}
			out := filepath.Join(dir, "out")
			if code := run([]string{"convert", "--quiet", "-o", out, filepath.Join(dir, "in")}, &bytes.Buffer{}, &stderr); code != 0 {
				t.Fatalf("convert: exit %d: %s", code, stderr.String())
			}
			pinned := filepath.Join(dir, "pinned")
			if code := run([]string{"convert", "--quiet", "--ddl-dir", ddls, "-o", pinned, filepath.Join(dir, "in")}, &bytes.Buffer{}, &stderr); code != 0 {
				t.Fatalf("convert --ddl-dir: exit %d: %s", code, stderr.String())
			}
			for i, tb := range ins.Tables {
				from := 0 // the first input the table's last schema holds for
				for _, c := range tb.Changes {
					if k := slices.Index(inputs, c.File); k > from {
						from = k
					}
				}
				ddl := filepath.Join(ddls, pipeline.DDLFileName(tb.Namespace, tb.Name))
				text, err := os.ReadFile(ddl)
				if err != nil || string(text) != tb.DDL {
					t.Fatalf("%s: --ddl-out file %s: %v", tb.Table, ddl, err)
				}
				one := filepath.Join(dir, fmt.Sprintf("one%d", i))
				if code := run(append([]string{"convert", "--quiet", "--ddl", ddl, "-o", one}, inputs...), &bytes.Buffer{}, &stderr); code != 0 {
					t.Fatalf("%s: convert --ddl: exit %d: %s", tb.Table, code, stderr.String())
				}
				compared := 0
				for k, in := range inputs {
					name := filepath.Base(in) + ".parquet"
					explicit, err := os.ReadFile(filepath.Join(one, name))
					if err != nil {
						t.Fatal(err)
					}
					// --ddl-dir pins the table in its first directory.
					pin, err := os.ReadFile(filepath.Join(pinned, strings.Split(tb.Dir, "/v")[0], name))
					if err == nil && !bytes.Equal(pin, explicit) {
						t.Errorf("%s %s: --ddl-dir and --ddl differ", tb.Table, name)
					}
					if k < from {
						continue
					}
					routed, err := os.ReadFile(filepath.Join(out, tb.Dir, name))
					if errors.Is(err, os.ErrNotExist) {
						continue // the table had no rows in this input
					}
					if err != nil || !bytes.Equal(routed, explicit) {
						t.Errorf("%s %s: the no-schema conversion and --ddl with inspect's DDL differ (%v)", tb.Table, name, err)
					}
					compared++
				}
				if compared == 0 {
					t.Errorf("%s: no output compared", tb.Table)
				}
			}
		})
	}
}
