package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/lake"
)

// TestShow: Show prints a loaded table's rows as --to print prints the
// conversion: a Parquet changelog in input order, exactly; an Iceberg
// changelog table the same rows; the current state of a --materialize
// snapshot and of an upsert table the same rows; --limit stops early.
func TestShow(t *testing.T) {
	in := t.TempDir()
	paths := upsertArchive(t, in, 4, 150)
	opts := decode.Options{Producer: true, CaseInsensitive: true}
	var printed bytes.Buffer
	if _, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{Stdout: &printed}, RunOptions: RunOptions{Workers: 2}}, paths); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range strings.Split(strings.TrimSuffix(printed.String(), "\n"), "\n") {
		if r, ok := strings.CutPrefix(l, "shop.t0 "); ok {
			want = append(want, r)
		}
	}
	show := func(o ShowOptions) []string {
		t.Helper()
		var b bytes.Buffer
		n, err := Show(context.Background(), o, &b)
		if err != nil {
			t.Fatal(err)
		}
		rows := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if n != len(rows) {
			t.Fatalf("Show says %d rows, printed %d", n, len(rows))
		}
		return rows
	}
	pq, wh, up := t.TempDir(), t.TempDir(), t.TempDir()
	if _, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{OutDir: pq, To: ToParquet, Materialize: true}, RunOptions: RunOptions{Workers: 2}}, paths); err != nil {
		t.Fatal(err)
	}
	if got := show(ShowOptions{Dir: pq, Table: "shop.t0"}); !slices.Equal(got, want) {
		t.Fatalf("Parquet changelog: %d rows, --to print %d:\n%s", len(got), len(want), firstDiff(got, want))
	}
	if got := show(ShowOptions{Dir: pq, Table: "shop.t0", Limit: 7}); !slices.Equal(got, want[:7]) {
		t.Errorf("--limit 7: %q", got)
	}
	if _, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{OutDir: wh, To: ToIceberg}, RunOptions: RunOptions{Workers: 2}}, paths); err != nil {
		t.Fatal(err)
	}
	got := show(ShowOptions{Dir: wh, Table: "shop.t0"})
	slices.Sort(got)
	sorted := slices.Sorted(slices.Values(want))
	if !slices.Equal(got, sorted) {
		t.Fatalf("Iceberg changelog: %d rows, --to print %d:\n%s", len(got), len(sorted), firstDiff(got, sorted))
	}
	if _, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{OutDir: up, To: ToIceberg}, LakeOptions: LakeOptions{TableMode: lake.ModeUpsert}, RunOptions: RunOptions{Workers: 2}}, paths); err != nil {
		t.Fatal(err)
	}
	cur := show(ShowOptions{Dir: pq, Table: "shop.t0", Current: true})
	upsert := show(ShowOptions{Dir: up, Table: "shop.t0", Current: true})
	slices.Sort(cur)
	slices.Sort(upsert)
	if !slices.Equal(cur, upsert) || len(cur) < 10 {
		t.Errorf("current state: the snapshot has %d rows, the upsert table %d:\n%s", len(cur), len(upsert), firstDiff(cur, upsert))
	}
	if _, err := Show(context.Background(), ShowOptions{Dir: wh, Table: "shop.t0", Current: true}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "changelog table") {
		t.Errorf("--current of a changelog table: %v", err)
	}
	if _, err := Show(context.Background(), ShowOptions{Dir: filepath.Join(pq), Table: "shop.none"}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "cdcetl inspect") {
		t.Errorf("a missing table: %v", err)
	}
}

// TestShowFiles: --files lists exactly the Parquet files that hold a
// table's rows: an Iceberg changelog table's current data files (not the
// ones a grown input's new load replaced, which its directory still
// holds), a Parquet changelog's files; an upsert table, whose data files
// alone hold removed rows, is refused.
func TestShowFiles(t *testing.T) {
	in := t.TempDir()
	paths := upsertArchive(t, in, 3, 120)
	opts := decode.Options{Producer: true, CaseInsensitive: true}
	whole, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(whole, []byte("\n"))
	wh, pq, up := t.TempDir(), t.TempDir(), t.TempDir()
	// The first input half written, loaded, then whole and loaded again.
	if err := os.WriteFile(paths[0], bytes.Join(lines[:len(lines)/2], nil), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{OutDir: wh, To: ToIceberg}, RunOptions: RunOptions{Workers: 2}}, paths[:1]); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(paths[0], whole, 0o644); err != nil {
		t.Fatal(err)
	}
	// The upsert table in two runs: the second deletes rows of the first's
	// data file.
	if _, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{OutDir: up, To: ToIceberg}, LakeOptions: LakeOptions{TableMode: lake.ModeUpsert, NoMaintain: true}, RunOptions: RunOptions{Workers: 2}}, paths[1:2]); err != nil {
		t.Fatal(err)
	}
	for _, c := range []Config{{OutputOptions: OutputOptions{OutDir: wh, To: ToIceberg}}, {OutputOptions: OutputOptions{OutDir: pq, To: ToParquet}}, {OutputOptions: OutputOptions{OutDir: up, To: ToIceberg}, LakeOptions: LakeOptions{TableMode: lake.ModeUpsert, NoMaintain: true}}} {
		c.Options, c.Workers = opts, 2
		if _, err := Run(context.Background(), c, paths); err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range []string{wh, pq} {
		var rows, files bytes.Buffer
		n, err := Show(context.Background(), ShowOptions{Dir: dir, Table: "shop.t0"}, &rows)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Show(context.Background(), ShowOptions{Dir: dir, Table: "shop.t0", Files: true}, &files); err != nil {
			t.Fatal(err)
		}
		var inFiles int64
		listed := strings.Fields(files.String())
		for _, f := range listed {
			r, err := file.OpenParquetFile(f, false)
			if err != nil {
				t.Fatal(err)
			}
			inFiles += r.NumRows()
			r.Close()
		}
		if inFiles != int64(n) {
			t.Errorf("%s: the listed files hold %d rows, the table %d", dir, inFiles, n)
		}
		if dir == wh {
			all, _ := filepath.Glob(filepath.Join(wh, "shop", "t0", "data", "*.parquet"))
			if len(all) <= len(listed) {
				t.Errorf("the table's data directory holds %d files, %d listed: no replaced file to leave out", len(all), len(listed))
			}
		}
	}
	if _, err := Show(context.Background(), ShowOptions{Dir: up, Table: "shop.t0", Files: true}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "delete files") {
		t.Errorf("--files of an upsert table: %v", err)
	}
}
