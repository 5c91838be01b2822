package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/internal/outdir"
	"github.com/cdcetl/cdcetl/materialize"
)

// Current-state snapshots (--materialize): after a Parquet conversion,
// each table's changes not yet folded into its snapshot are folded in
// (package materialize), and the snapshot, OUT/_current/<ns>/<table>[/v<n>]/
// (beside the changelogs, not under them: a reader's glob of a table's
// directory is its changelog alone), is replaced whole. The snapshot's state file lists the change files it
// holds (with their inputs' hashes), so what a crash or a failure left out
// is folded by the next run, and nothing twice.

type snapshotState struct {
	Folded []string `json:"folded"` // change file (relative) + "#" + input hash
}

// materializeTables folds the journal's changes into every table's
// snapshot.
func (s *fileSink) materializeTables(ctx context.Context) error {
	r := s.r
	cfg := r.cfg
	// One snapshot per table, whatever its schema versions: a key has one
	// current row, in the latest version's schema (rows of earlier
	// versions are cast, NULL where a value does not fit).
	type tableJob struct {
		key     TableKey
		dir     string   // the table's directory, below OutDir
		dirs    []string // its versions' directories, oldest first
		version int
		schema  *arrowconv.Schema // the latest version's
	}
	var jobs []*tableJob
	if cfg.Schema != nil {
		k := lakeTableKey(cfg)
		if k == nil {
			return errors.New("a current-state snapshot with a schema needs the table's name: NAMESPACE.NAME (or a DDL with 'cdcetl.namespace' and 'cdcetl.table')")
		}
		d := cfg.tableDir(*k, 1)
		jobs = append(jobs, &tableJob{key: *k, dir: d, dirs: []string{d}, version: 1, schema: cfg.Schema})
	} else {
		byDir := map[string]*tableJob{}
		for _, pat := range [][]string{{"*", "*", outdir.SchemaFile}, {"*", "*", "v*", outdir.SchemaFile}} {
			m, err := filepath.Glob(filepath.Join(append([]string{cfg.OutDir}, pat...)...))
			if err != nil {
				return err
			}
			for _, p := range m {
				text, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				s, err := arrowconv.ParseDDL(string(text))
				if err != nil {
					return fmt.Errorf("%s: %w", p, err)
				}
				dir, _ := filepath.Rel(cfg.OutDir, filepath.Dir(p))
				base, v := dir, 1
				if b := filepath.Base(dir); outdir.IsVersionDir(b) {
					base, v = filepath.Dir(dir), versionOf(b)
				}
				j := byDir[base]
				if j == nil {
					j = &tableJob{key: TableKey{Namespace: s.Options["cdcetl.namespace"], Name: s.Options["cdcetl.table"]}, dir: base}
					byDir[base] = j
					jobs = append(jobs, j)
				}
				j.dirs = append(j.dirs, dir)
				if v > j.version {
					j.version, j.schema = v, s
				}
			}
		}
		for _, j := range jobs {
			slices.SortFunc(j.dirs, func(a, b string) int { return versionOfDir(a, j.dir) - versionOfDir(b, j.dir) })
		}
	}
	entries := r.journal.Entries()
	truncs := make([][]Truncate, len(entries)) // each entry's, decoded once for every table
	for i, e := range entries {
		truncs[i] = truncatesOf(e)
	}
	for _, j := range jobs {
		mt, err := s.materializeTable(ctx, j.key, j.dir, j.dirs, j.schema, entries, truncs)
		if err != nil {
			return fmt.Errorf("current state of %s: %w", j.key, err)
		}
		if mt != nil {
			r.total.Materialized = append(r.total.Materialized, *mt)
			if mt.CastNulled > 0 {
				r.total.Warnings = append(r.total.Warnings, fmt.Sprintf("%s: %d values of rows of earlier schema versions do not fit the current version's types (columns %s) and are NULL in its current state (%s)",
					j.key, mt.CastNulled, strings.Join(mt.CastColumns, ", "), mt.Dir))
			}
		}
	}
	return nil
}

// versionOf is a version directory's number ("v3": 3).
func versionOf(name string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(name, "v"))
	return n
}

// versionOfDir is the version of a table's directory dir (its base: 1).
func versionOfDir(dir, base string) int {
	if dir == base {
		return 1
	}
	return versionOf(filepath.Base(dir))
}

// changeIn reports whether output rel is a change file of the table in dir
// (routed: below dir, not in a version directory or the snapshot; with a
// schema: every Parquet output).
func (s *fileSink) changeIn(dir, rel string) bool {
	r := s.r
	if !strings.HasSuffix(rel, ".parquet") {
		return false
	}
	if r.cfg.Schema != nil {
		return true
	}
	sub, ok := strings.CutPrefix(filepath.ToSlash(rel), filepath.ToSlash(dir)+"/")
	if !ok {
		return false
	}
	first, _, _ := strings.Cut(sub, "/")
	return !(strings.Contains(sub, "/") && outdir.IsVersionDir(first)) && first != outdir.CurrentDir
}

func (fs *fileSink) materializeTable(ctx context.Context, key TableKey, dir string, dirs []string, s *arrowconv.Schema, entries []outdir.Entry, truncs [][]Truncate) (*MaterializedTable, error) {
	r := fs.r
	cfg := r.cfg
	cur := filepath.Join(cfg.OutDir, outdir.SnapshotDir(dir))
	var st snapshotState
	var previous []string
	// Snapshots of single versions (as earlier versions of cdcetl kept
	// them) go: the table's one snapshot is built again from all.
	rebuild := false
	for _, d := range dirs[1:] {
		for _, old := range []string{outdir.SnapshotDir(d), filepath.Join(d, outdir.CurrentDir)} {
			if _, err := os.Stat(filepath.Join(cfg.OutDir, old)); err == nil {
				rebuild = true
				if err := os.RemoveAll(filepath.Join(cfg.OutDir, old)); err != nil {
					return nil, err
				}
			}
			if err := r.out.RemovePrefix(ctx, filepath.ToSlash(old)); err != nil {
				return nil, err
			}
		}
	}
	changeIn := func(o string) bool {
		for _, d := range dirs {
			if fs.changeIn(d, o) {
				return true
			}
		}
		return false
	}
	legacy := filepath.Join(dir, outdir.CurrentDir) // where snapshots were, below the table's directory
	// The snapshot in a bucket, brought into staging.
	if err := r.out.FetchSnapshot(ctx, filepath.ToSlash(outdir.SnapshotDir(dir))); err != nil {
		return nil, err
	}
	if _, err := os.Stat(cur); errors.Is(err, os.ErrNotExist) {
		if err := r.out.FetchSnapshot(ctx, filepath.ToSlash(legacy)); err != nil {
			return nil, err
		}
	}
	if err := moveLegacySnapshot(filepath.Join(cfg.OutDir, legacy), cur); err != nil {
		return nil, err
	}
	if !cfg.Force && !rebuild {
		if b, err := os.ReadFile(filepath.Join(cur, outdir.StateFile)); err == nil {
			if err := json.Unmarshal(b, &st); err != nil {
				return nil, fmt.Errorf("%s: %w", filepath.Join(cur, outdir.StateFile), err)
			}
			previous, _ = filepath.Glob(filepath.Join(cur, "*.parquet"))
		}
	}
	// A snapshot holds what its folded changes gave. When one of them is
	// gone (its input was converted again, or now has no rows of this
	// table), the state is built again from the changes there are.
	live := map[string]bool{}
	for i, e := range entries {
		if e.Status != outdir.StatusOK {
			continue
		}
		for _, o := range e.Outputs {
			if changeIn(o) {
				live[filepath.ToSlash(o)+"#"+e.Hash] = true
			}
		}
		for _, t := range truncs[i] {
			if t.Table == key.String() {
				live[fmt.Sprintf("truncate %s#%s:%d", e.Path, e.Hash, t.Line)] = true
			}
		}
	}
	for _, f := range st.Folded {
		if !live[f] {
			st, previous = snapshotState{}, nil
			break
		}
	}
	folded := map[string]bool{}
	for _, f := range st.Folded {
		folded[f] = true
	}
	var changes []string
	var trunc *materialize.Truncate
	for i, e := range entries {
		if e.Status != outdir.StatusOK {
			continue
		}
		own := -1 // the index of the input's change file of this table
		for _, o := range e.Outputs {
			id := filepath.ToSlash(o) + "#" + e.Hash
			if changeIn(o) && !folded[id] {
				changes = append(changes, filepath.Join(cfg.OutDir, o))
				st.Folded = append(st.Folded, id)
				own = len(changes) - 1
			}
		}
		// The input's last truncate of this table empties it there (an
		// input may truncate a table it has no rows of).
		for _, t := range truncs[i] {
			tid := fmt.Sprintf("truncate %s#%s:%d", e.Path, e.Hash, t.Line)
			if t.Table != key.String() || folded[tid] {
				continue
			}
			st.Folded = append(st.Folded, tid)
			if own >= 0 {
				trunc = &materialize.Truncate{File: own, Line: int64(t.Line)}
			} else {
				trunc = &materialize.Truncate{File: len(changes), Line: 0}
			}
		}
	}
	next := cur + ".new-" + r.runID
	if trunc != nil && trunc.File == len(changes) {
		// Emptied after its last change: an empty snapshot.
		if err := os.MkdirAll(next, 0o755); err != nil {
			return nil, err
		}
		if err := fs.publishSnapshot(ctx, dir, next, &st); err != nil {
			return nil, err
		}
		return &MaterializedTable{Table: key.String(), Dir: outdir.SnapshotDir(dir), Order: "input path, then line"}, nil
	}
	if len(changes) == 0 {
		return nil, nil
	}
	// In a bucket, change files went up with their inputs: fetch the
	// ones to fold.
	for _, c := range changes {
		if err := r.out.Fetch(ctx, c); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(next, 0o755); err != nil {
		return nil, err
	}
	opts := cfg.Parquet
	opts.CreatedBy = cfg.createdBy()
	opts.Metadata = map[string]string{"cdcetl.version": cfg.Version, "cdcetl.namespace": key.Namespace, "cdcetl.table": key.Name, "cdcetl.snapshot": "current state"}
	res, err := materialize.Run(ctx, materialize.Job{Schema: s, Previous: previous, Changes: changes,
		Out: filepath.Join(next, "part-00000.parquet"), TempDir: next, MemLimit: cfg.MaterializeMem, Parquet: opts,
		Dedup: cfg.Dedup, Truncate: trunc, LineColumn: metaColumn(s, "file.line"), PositionColumn: metaColumn(s, "source-position"), UnchangedColumn: metaColumn(s, "unchanged-columns")})
	if err != nil {
		os.RemoveAll(next)
		return nil, err
	}
	if err := fs.publishSnapshot(ctx, dir, next, &st); err != nil {
		return nil, err
	}
	order := "input path, then line"
	if metaColumn(s, "source-position") != "" {
		order = "source position, then input path and line"
	}
	return &MaterializedTable{Table: key.String(), Dir: outdir.SnapshotDir(dir), Order: order, Result: res}, nil
}

// publishSnapshot writes the state file into the new snapshot next and
// puts it in place of the table's current one.
func (s *fileSink) publishSnapshot(ctx context.Context, dir, next string, st *snapshotState) error {
	r := s.r
	slices.Sort(st.Folded)
	b, _ := json.MarshalIndent(st, "", " ")
	if err := outdir.WriteSynced(filepath.Join(next, outdir.StateFile), b); err != nil {
		os.RemoveAll(next)
		return err
	}
	outdir.SyncDir(next)
	if err := swapCurrent(filepath.Join(r.cfg.OutDir, outdir.SnapshotDir(dir)), next, r.runID); err != nil {
		return err
	}
	if err := r.out.PutSnapshot(ctx, filepath.ToSlash(outdir.SnapshotDir(dir))); err != nil {
		return err
	}
	// A snapshot of the earlier layout goes once the new one is up.
	return r.out.RemovePrefix(ctx, filepath.ToSlash(filepath.Join(dir, outdir.CurrentDir)))
}

// moveLegacySnapshot moves a snapshot kept where earlier versions kept
// them (<table>/_current) to cur, unless cur has one.
func moveLegacySnapshot(legacy, cur string) error {
	if _, err := os.Stat(legacy); err != nil {
		return nil
	}
	if _, err := os.Stat(cur); err == nil {
		return os.RemoveAll(legacy)
	}
	if err := os.MkdirAll(filepath.Dir(cur), 0o755); err != nil {
		return err
	}
	return os.Rename(legacy, cur)
}

// metaColumn is the column holding a metadata key's values, if any.
func metaColumn(s *arrowconv.Schema, key string) string {
	for _, c := range s.Columns {
		if c.MetadataKey == key {
			return c.Name
		}
	}
	return ""
}

// swapCurrent puts the snapshot in next in place of the table's current
// one: the old is renamed away, the new renamed in, the old removed. A
// crash between the renames leaves no _current but the old one aside,
// which recoverCurrent puts back.
func swapCurrent(cur, next, run string) error {
	old := cur + ".old-" + run
	hadOld := true
	if err := os.Rename(cur, old); errors.Is(err, os.ErrNotExist) {
		hadOld = false
	} else if err != nil {
		return err
	}
	if err := os.Rename(next, cur); err != nil {
		return err
	}
	outdir.SyncDir(filepath.Dir(cur))
	if hadOld {
		return os.RemoveAll(old)
	}
	return nil
}

// recoverCurrent undoes what a killed materialization left: a snapshot
// renamed aside without its successor goes back; half-written successors
// and old snapshots are removed.
func recoverCurrent(out string) error {
	var dirs []string
	for _, pat := range [][]string{
		{outdir.CurrentDir, "*", "*.*-*"}, {outdir.CurrentDir, "*", "*", "v*.*-*"}, // <table>.old-<run>, <table>.new-<run>
		{"*", "*", outdir.CurrentDir + ".*"}, {"*", "*", "v*", outdir.CurrentDir + ".*"}, // the earlier layout's
	} {
		m, err := filepath.Glob(filepath.Join(append([]string{out}, pat...)...))
		if err != nil {
			return err
		}
		dirs = append(dirs, m...)
	}
	for _, d := range dirs {
		cur, kind, ok := cutRunSuffix(d)
		if !ok {
			continue
		}
		if kind == "old" {
			if _, err := os.Stat(cur); errors.Is(err, os.ErrNotExist) {
				if err := os.Rename(d, cur); err != nil {
					return err
				}
				continue
			}
		}
		if err := os.RemoveAll(d); err != nil {
			return err
		}
	}
	return nil
}

// cutRunSuffix splits "<cur>.old-<run>" or "<cur>.new-<run>".
func cutRunSuffix(d string) (cur, kind string, ok bool) {
	for _, k := range []string{"old", "new"} {
		if i := strings.LastIndex(d, "."+k+"-"); i > 0 && !strings.ContainsRune(d[i:], filepath.Separator) {
			return d[:i], k, true
		}
	}
	return "", "", false
}
