package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cdcetl/cdcetl/decode"
)

// TestMaterializeIsCurrentState converts a changelog in three runs (3, 6,
// then 8 inputs) with --materialize and a memory limit small enough to
// spill many sorted runs, and checks after each that every table's
// _current/ snapshot holds exactly the state the changelog replayed per
// key gives; a run with nothing new leaves the snapshot alone.
func TestMaterializeIsCurrentState(t *testing.T) {
	in := t.TempDir()
	paths := upsertArchive(t, in, 8, 300)
	opts := decode.Options{Producer: true, CaseInsensitive: true}
	out := t.TempDir()
	for _, n := range []int{3, 6, 8, 8} {
		cfg := Config{Options: opts, To: ToParquet, OutDir: out, Workers: 2, Materialize: true, MaterializeMem: 16 << 10}
		st, err := Run(context.Background(), cfg, paths[:n])
		if err != nil {
			t.Fatal(err)
		}
		if n == 8 && len(st.Materialized) == 0 && st.Skipped != 8 {
			t.Fatalf("run of 8: nothing materialized, %d skipped", st.Skipped)
		}
		for _, m := range st.Materialized {
			if m.Runs < 2 {
				t.Errorf("%s: %d sorted runs: the memory limit did not make it spill", m.Table, m.Runs)
			}
		}
		for _, name := range []string{"t0", "t1"} {
			dir := filepath.Join(out, "shop", name)
			key := []string{"id"}
			cols := []string{"_file", "_line", "_source_pos", "_unchanged", "grp", "id", "v"}
			want := replay(t, dir, key, append([]string{"_rowkind"}, cols...))
			// The snapshot has no _rowkind: compare without it.
			for i, r := range want {
				want[i] = r[len("_rowkind=+I|"):]
			}
			slices.Sort(want)
			got := parquetRows(t, filepath.Join(dir, CurrentDir), cols)
			if len(want) < 10 {
				t.Fatalf("shop.%s: only %d live keys", name, len(want))
			}
			if !slices.Equal(got, want) {
				t.Fatalf("run of %d, shop.%s: the snapshot has %d rows, the replayed changelog %d:\n%s", n, name, len(got), len(want), firstDiff(got, want))
			}
			if left, _ := filepath.Glob(filepath.Join(dir, CurrentDir+".*")); len(left) > 0 {
				t.Fatalf("left behind: %v", left)
			}
			if runs, _ := filepath.Glob(filepath.Join(dir, CurrentDir, ".materialize-run-*")); len(runs) > 0 {
				t.Fatalf("spilled runs left: %v", runs)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(out, "shop", "t0", CurrentDir, currentState)); err != nil {
		t.Fatal(err)
	}
}
