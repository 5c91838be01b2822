package pipeline

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
	if _, err := Run(context.Background(), Config{Options: opts, Workers: 2, Stdout: &printed}, paths); err != nil {
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
	if _, err := Run(context.Background(), Config{Options: opts, Workers: 2, OutDir: pq, To: ToParquet, Materialize: true}, paths); err != nil {
		t.Fatal(err)
	}
	if got := show(ShowOptions{Dir: pq, Table: "shop.t0"}); !slices.Equal(got, want) {
		t.Fatalf("Parquet changelog: %d rows, --to print %d:\n%s", len(got), len(want), firstDiff(got, want))
	}
	if got := show(ShowOptions{Dir: pq, Table: "shop.t0", Limit: 7}); !slices.Equal(got, want[:7]) {
		t.Errorf("--limit 7: %q", got)
	}
	if _, err := Run(context.Background(), Config{Options: opts, Workers: 2, OutDir: wh, To: ToIceberg}, paths); err != nil {
		t.Fatal(err)
	}
	got := show(ShowOptions{Dir: wh, Table: "shop.t0"})
	slices.Sort(got)
	sorted := slices.Sorted(slices.Values(want))
	if !slices.Equal(got, sorted) {
		t.Fatalf("Iceberg changelog: %d rows, --to print %d:\n%s", len(got), len(sorted), firstDiff(got, sorted))
	}
	if _, err := Run(context.Background(), Config{Options: opts, Workers: 2, OutDir: up, To: ToIceberg, TableMode: lake.ModeUpsert}, paths); err != nil {
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
