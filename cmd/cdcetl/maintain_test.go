package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/cdcetl/cdcetl/lake"
)

// TestMaintain loads an upsert table (and a changelog table beside it)
// in six runs, then runs maintain --older-than 0s: each table holds the
// same rows (the changelog in the same order) in one data file without
// deletes and one snapshot, a
// stray data file nobody refers to is removed while the table
// directory's other files stay, and a rerun of every input without the
// journal loads nothing twice (the expired snapshots' inputs were kept).
func TestMaintain(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	os.MkdirAll(in, 0o755)
	var inputs []string
	for f := range 6 {
		var b strings.Builder
		for r := range 300 {
			id := (f*131 + r*7) % 500
			for _, tb := range []string{"up", "log"} {
				src := fmt.Sprintf(`"source":{"db":"inv","table":"%s"}`, tb)
				if r%11 == 5 {
					fmt.Fprintf(&b, `{"before":{"id":%d},"after":null,%s,"op":"d","ts_ms":1}`+"\n", id, src)
				} else {
					fmt.Fprintf(&b, `{"before":null,"after":{"id":%d,"name":"f%dr%d"},%s,"op":"u","ts_ms":1}`+"\n", id, f, r, src)
				}
			}
		}
		p := filepath.Join(in, fmt.Sprintf("f%d.json", f))
		os.WriteFile(p, []byte(b.String()), 0o644)
		inputs = append(inputs, p)
	}
	up, log := filepath.Join(dir, "up"), filepath.Join(dir, "log")
	load := func(wh string, mode string, paths ...string) {
		t.Helper()
		var stderr bytes.Buffer
		args := append([]string{"convert", "--quiet", "--no-maintain", "--to", "iceberg", "--table-mode", mode, "--primary-key", "inv.*=id", "-o", wh}, paths...)
		if code := run(args, io.Discard, &stderr); code != 0 {
			t.Fatalf("%s: exit %d: %s", mode, code, stderr.String())
		}
	}
	for _, p := range inputs {
		load(up, "upsert", p)
		load(log, "changelog", p)
	}
	show := func(wh, tbl string) string {
		t.Helper()
		var out, stderr bytes.Buffer
		if code := run([]string{"show", wh, tbl}, &out, &stderr); code != 0 {
			t.Fatalf("show: %s", stderr.String())
		}
		return out.String()
	}
	before := map[string]string{up: show(up, "inv.up"), log: show(log, "inv.log")}
	stray := filepath.Join(up, "inv", "up", "data", "stray-20260101T000000-00000000.parquet")
	os.WriteFile(stray, []byte("PAR1"), 0o644)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(stray, old, old)
	logFiles, _ := filepath.Glob(filepath.Join(log, "inv", "log", "data", "*.parquet"))
	for _, wh := range []string{up, log} {
		var out, stderr bytes.Buffer
		if code := run([]string{"maintain", "-o", wh, "--older-than", "0s"}, &out, &stderr); code != 0 {
			t.Fatalf("maintain: exit %d: %s", code, stderr.String())
		}
		t.Log(strings.TrimSpace(out.String()))
	}
	for wh, tbl := range map[string]string{up: "inv.up", log: "inv.log"} {
		got, want := show(wh, tbl), before[wh]
		if wh == up {
			// A current state has no order.
			got, want = sortedLines(got), sortedLines(want)
		}
		if got != want {
			t.Errorf("%s: maintain changed the rows", tbl)
		}
	}
	l, err := lake.Open(context.Background(), up, "")
	if err != nil {
		t.Fatal(err)
	}
	tbl := loadIceberg(t, l, "inv", "up")
	if n := len(tbl.Metadata().Snapshots()); n != 1 {
		t.Errorf("inv.up: %d snapshots after maintain, want 1", n)
	}
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 1 || len(tasks[0].DeletionVectorFiles)+len(tasks[0].DeleteFiles) > 0 {
		t.Errorf("inv.up: %d data files after maintain, want 1 without deletes", len(tasks))
	}
	refs, err := l.Referenced(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	filepath.WalkDir(filepath.Join(up, "inv", "up"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".parquet") || strings.HasSuffix(p, ".puffin")) && !refs[p] {
			t.Errorf("left after maintain, referred to by no snapshot: %s", p)
		}
		return err
	})
	if _, err := os.Stat(filepath.Join(up, "inv", "up", "metadata", "version-hint.text")); err != nil {
		t.Errorf("maintain removed version-hint.text: %v", err)
	}
	after, _ := filepath.Glob(filepath.Join(log, "inv", "log", "data", "*.parquet"))
	if len(logFiles) != 6 || len(after) != 1 {
		t.Errorf("the changelog table had %d data files, %d after maintain, want 6 then 1", len(logFiles), len(after))
	}
	for _, wh := range []string{up, log} {
		os.Remove(filepath.Join(wh, "_cdcetl_journal.jsonl"))
		var stderr bytes.Buffer
		args := []string{"convert", "--to", "iceberg", "--primary-key", "inv.*=id", "-o", wh, in}
		if wh == up {
			args = append(args, "--table-mode", "upsert")
		}
		if code := run(args, io.Discard, &stderr); code != 0 || !strings.Contains(stderr.String(), "0 parts committed") {
			t.Errorf("rerun after maintain: exit %d: %s", code, stderr.String())
		}
	}
}

func loadIceberg(t *testing.T, l *lake.Lake, ns, name string) *table.Table {
	t.Helper()
	tbl, err := l.Catalog().LoadTable(context.Background(), table.Identifier{ns, name})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// sortedLines is text's lines sorted.
func sortedLines(text string) string {
	lines := strings.Split(text, "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
