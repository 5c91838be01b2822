package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/internal/outdir"
	"github.com/cdcetl/cdcetl/partition"
)

// TestHivePartitions converts a 2-table archive to routed Parquet twice,
// unpartitioned and partitioned by grp and bucket(3, id) with files
// rolling at 1 KiB and success files, and checks: every file lies in
// key=value directories only, every row's grp is its directory's, both
// conversions hold the same rows, partitions roll, each partition has
// _SUCCESS, a rerun converts nothing, and --materialize over the
// partitioned change files (partitioned by the key) gives the snapshot
// the unpartitioned ones give.
func TestHivePartitions(t *testing.T) {
	in := t.TempDir()
	paths := upsertArchive(t, in, 6, 400)
	opts := decode.Options{Producer: true, CaseInsensitive: true}
	flat, parted := t.TempDir(), t.TempDir()
	if _, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToParquet, OutDir: flat}, RunOptions: RunOptions{Workers: 2}}, paths); err != nil {
		t.Fatal(err)
	}
	spec, err := partition.ParsePartitionBy("grp, bucket(3, id)")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToParquet, OutDir: parted, PartitionBy: spec, Filesystem: FilesystemOptions{RollBytes: 1 << 10, SuccessFile: "_SUCCESS"}}, RunOptions: RunOptions{Workers: 2, BatchRows: 16}}
	st, err := Run(context.Background(), cfg, paths)
	if err != nil {
		t.Fatal(err)
	}
	cols := []string{"_rowkind", "_file", "_line", "grp", "id", "v"}
	rolled, dirs := 0, map[string]bool{}
	for _, name := range []string{"t0", "t1"} {
		table := filepath.Join(parted, "shop", name)
		filepath.WalkDir(table, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".parquet") {
				return err
			}
			rel, _ := filepath.Rel(table, p)
			segs := strings.Split(filepath.Dir(rel), string(filepath.Separator))
			if len(segs) != 2 || !strings.HasPrefix(segs[0], "grp=") || !strings.HasPrefix(segs[1], "id_bucket=") {
				t.Fatalf("%s: not in grp=/id_bucket= directories", rel)
			}
			dirs[filepath.Dir(p)] = true
			if strings.Contains(filepath.Base(p), "~") {
				rolled++
			}
			grp := strings.TrimPrefix(segs[0], "grp=")
			for _, r := range parquetRows(t, p, []string{"grp"}) {
				if r != "grp="+grp+"|" {
					t.Fatalf("%s: a row of %s", rel, r)
				}
			}
			return nil
		})
		want := parquetRows(t, filepath.Join(flat, "shop", name), cols)
		got := parquetRows(t, table, cols)
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Fatalf("shop.%s: partitioned %d rows, unpartitioned %d:\n%s", name, len(got), len(want), firstDiff(got, want))
		}
	}
	if rolled == 0 {
		t.Error("no partition rolled to a second file at 1 KiB")
	}
	for d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "_SUCCESS")); err != nil {
			t.Errorf("no success file: %v", err)
		}
	}
	var outs int
	for _, f := range st.PerFile {
		outs += len(f.Outputs)
	}
	if outs < len(dirs) {
		t.Errorf("the report lists %d outputs for %d partition directories", outs, len(dirs))
	}
	st, err = Run(context.Background(), cfg, paths)
	if err != nil || st.Skipped != len(paths) {
		t.Fatalf("rerun: %d skipped of %d, err %v", st.Skipped, len(paths), err)
	}

	// --materialize over change files partitioned by the key.
	byKey, err := partition.ParsePartitionBy("bucket(4, id)")
	if err != nil {
		t.Fatal(err)
	}
	pm, fm := t.TempDir(), t.TempDir()
	if _, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToParquet, OutDir: pm, PartitionBy: byKey, Materialize: true}, RunOptions: RunOptions{Workers: 2}}, paths); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToParquet, OutDir: fm, Materialize: true}, RunOptions: RunOptions{Workers: 2}}, paths); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"t0", "t1"} {
		got := parquetRows(t, filepath.Join(pm, outdir.SnapshotDir(filepath.Join("shop", name))), []string{"id", "v"})
		want := parquetRows(t, filepath.Join(fm, outdir.SnapshotDir(filepath.Join("shop", name))), []string{"id", "v"})
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Fatalf("shop.%s snapshot: partitioned %d rows, unpartitioned %d", name, len(got), len(want))
		}
	}
}

// TestHiveRecoversPending: outputs of a run killed before its journal
// entries (left in partition directories, listed in the pending file) are
// removed at the next start, and the rerun writes each row once.
func TestHiveRecoversPending(t *testing.T) {
	in := t.TempDir()
	paths := upsertArchive(t, in, 3, 200)
	opts := decode.Options{Producer: true, CaseInsensitive: true}
	out := t.TempDir()
	spec, _ := partition.ParsePartitionBy("bucket(2, id)")
	cfg := Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToParquet, OutDir: out, PartitionBy: spec}, RunOptions: RunOptions{Workers: 2}}
	if _, err := Run(context.Background(), cfg, paths); err != nil {
		t.Fatal(err)
	}
	// The rerun has one input fewer (gone since the kill): its outputs,
	// never journaled, must go.
	ref := t.TempDir()
	if _, err := Run(context.Background(), Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToParquet, OutDir: ref, PartitionBy: spec}, RunOptions: RunOptions{Workers: 2}}, paths[:2]); err != nil {
		t.Fatal(err)
	}
	want := parquetRows(t, filepath.Join(ref, "shop", "t0"), []string{"_file", "_line", "id", "v"})
	// As if killed after the outputs and before the journal: the pending
	// file lists the stems, the journal does not.
	if err := os.Remove(filepath.Join(out, outdir.JournalName)); err != nil {
		t.Fatal(err)
	}
	var planned []outdir.PendingStem
	for _, p := range paths {
		planned = append(planned, outdir.PendingStem{Stem: filepath.Base(p), Routed: true, Partitioned: true})
	}
	if err := outdir.WritePending(out, outdir.PendingName, planned); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), cfg, paths[:2]); err != nil {
		t.Fatal(err)
	}
	if got := parquetRows(t, filepath.Join(out, "shop", "t0"), []string{"_file", "_line", "id", "v"}); !slices.Equal(got, want) {
		t.Fatalf("after recovery: %d rows, want %d", len(got), len(want))
	}
}
