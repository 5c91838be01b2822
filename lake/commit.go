package lake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// Snapshot summary keys cdcetl writes.
const (
	// SummaryInput is the input a commit holds, as JSON (Input).
	SummaryInput = "cdcetl.input"
	// SummaryRun identifies the run that committed it.
	SummaryRun = "cdcetl.run"
	// SummaryRows is the number of rows committed, by kind.
	SummaryRows = "cdcetl.rows"
)

// Input is an input as commits record it. Its identity is its content
// (XXH3-128 of the stored bytes, and the size): the same bytes under
// another name, or moved by --on-success, are the same input.
type Input struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
	Hash string `json:"xxh3_128"`
}

// ID is the input's identity.
func (in Input) ID() string { return in.Hash + ":" + strconv.FormatInt(in.Size, 10) }

// refresh reads the inputs recorded by snapshots not read yet.
func (t *Table) refresh() {
	for _, s := range t.tbl.Metadata().Snapshots() {
		if t.seen[s.SnapshotID] {
			continue
		}
		t.seen[s.SnapshotID] = true
		if s.Summary == nil {
			continue
		}
		var in Input
		if raw, ok := s.Summary.Properties[SummaryInput]; ok && json.Unmarshal([]byte(raw), &in) == nil {
			t.committed[in.ID()] = s.Summary.Properties[SummaryRun]
		}
	}
}

// Committed reports whether the table holds input in (after reloading it).
func (t *Table) Committed(ctx context.Context, in Input) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.tbl.Refresh(ctx); err != nil {
		return false, err
	}
	t.refresh()
	_, ok := t.committed[in.ID()]
	return ok, nil
}

// maxAttempts bounds the retries of a commit that met a concurrent one.
const maxAttempts = 20

// Commit appends the data files (absolute paths, in the table's data
// directory) as one snapshot recording in, unless the table already holds
// in: then the files are removed, and Commit reports false. rows goes into
// the summary for people.
func (t *Table) Commit(ctx context.Context, files []string, in Input, run string, rows string) (bool, error) {
	return t.commit(ctx, files, in, run, rows, func(tx *table.Transaction, props iceberg.Properties) error {
		fs, err := t.tbl.FS(ctx)
		if err != nil {
			return err
		}
		meta := t.tbl.Metadata()
		spec := meta.PartitionSpec()
		dfs := make([]iceberg.DataFile, 0, len(files))
		for _, f := range files {
			df, err := table.FileToDataFile(ctx, fs, FileURL(f), t.tbl.Schema(), spec, 0, meta.Properties())
			if err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
			dfs = append(dfs, df)
		}
		return tx.AddDataFiles(ctx, dfs, props)
	})
}

// commit runs stage in a transaction on the head it reads, and commits it,
// unless the table holds in (then files are removed); a concurrent commit
// makes it read the table again and decide again.
func (t *Table) commit(ctx context.Context, files []string, in Input, run, rows string, stage func(*table.Transaction, iceberg.Properties) error) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	raw, _ := json.Marshal(in)
	props := iceberg.Properties{SummaryInput: string(raw), SummaryRun: run}
	if rows != "" {
		props[SummaryRows] = rows
	}
	var last error
	for attempt := 0; attempt < maxAttempts; attempt++ {
		if attempt > 0 {
			if err := t.tbl.Refresh(ctx); err != nil {
				return false, err
			}
		}
		t.refresh()
		if _, ok := t.committed[in.ID()]; ok {
			return false, removeAll(files)
		}
		tx := t.tbl.NewTransaction()
		// The head this commit was decided on: a concurrent commit (which
		// may hold the same input) fails it, rather than iceberg-go
		// replaying it.
		err := tx.AssertRefSnapshotID(table.MainBranch)
		if err == nil {
			err = stage(tx, props)
		}
		var done *table.Table
		if err == nil {
			done, err = tx.Commit(ctx)
		}
		if err == nil {
			t.tbl = done
			t.refresh()
			return true, nil
		}
		if !errors.Is(err, table.ErrCommitFailed) {
			return false, fmt.Errorf("iceberg table %s: committing %s: %w", t.Name(), in.Path, err)
		}
		last = err
	}
	return false, fmt.Errorf("iceberg table %s: committing %s: %d attempts met concurrent commits: %w", t.Name(), in.Path, maxAttempts, last)
}

// removeAll removes files (a commit found its input committed already).
func removeAll(files []string) error {
	var errs []error
	for _, f := range files {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Referenced lists, as absolute paths, every file (data and delete files)
// the current snapshot of a table kept in the warehouse refers to: what a
// clean-up after a crash must never remove.
func (l *Lake) Referenced(ctx context.Context) (map[string]bool, error) {
	refs := map[string]bool{}
	nss, err := l.cat.ListNamespaces(ctx, nil)
	if err != nil {
		return nil, err
	}
	for _, ns := range nss {
		for ident, err := range l.cat.ListTables(ctx, ns) {
			if err != nil {
				return nil, err
			}
			tbl, err := l.cat.LoadTable(ctx, ident)
			if err != nil {
				return nil, err
			}
			snap := tbl.CurrentSnapshot()
			if snap == nil {
				continue
			}
			fs, err := tbl.FS(ctx)
			if err != nil {
				return nil, err
			}
			mfs, err := snap.Manifests(fs)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", strings.Join(ident, "."), err)
			}
			for _, m := range mfs {
				es, err := m.FetchEntries(fs, true)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", strings.Join(ident, "."), err)
				}
				for _, e := range es {
					if p, err := PathOf(e.DataFile().FilePath()); err == nil {
						refs[p] = true
					}
				}
			}
		}
	}
	return refs, nil
}

// PathOf is the local path of a file: URL (or of a plain path).
func PathOf(loc string) (string, error) {
	if !strings.HasPrefix(loc, "file:") {
		return loc, nil
	}
	u, err := url.Parse(loc)
	if err != nil {
		return "", err
	}
	return filepath.FromSlash(u.Path), nil
}
