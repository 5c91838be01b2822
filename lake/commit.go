package lake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// Snapshot summary keys cdcetl writes.
const (
	// SummaryInput is the input a commit holds, as JSON (Input).
	SummaryInput = "cdcetl.input"
	// SummaryInputs are the inputs a group commit holds, a JSON array.
	SummaryInputs = "cdcetl.inputs"
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
	// Stem is what the input's data files are named after
	// (<stem>-<run>.parquet): one input (a path and its generation) has one
	// stem through all its versions, so a later version's commit finds
	// and replaces an earlier one's files.
	Stem string `json:"stem,omitempty"`
	// Rows are its rows in this table, by kind (for people).
	Rows json.RawMessage `json:"rows,omitempty"`
}

// ID is the input's identity.
func (in Input) ID() string { return in.Hash + ":" + strconv.FormatInt(in.Size, 10) }

// refresh reads the inputs recorded by snapshots not read yet.
func (t *Table) refresh() {
	record := func(in Input, run string) {
		t.committed[in.ID()] = run
		if in.Stem != "" {
			if t.stems == nil {
				t.stems = map[string]string{}
			}
			t.stems[in.Stem] = in.ID()
		}
	}
	// Inputs of snapshots maintain expired (read before the snapshots':
	// a later version of an input's stem wins).
	if raw := t.tbl.Properties()[PropInputs]; raw != t.propSeen {
		t.propSeen = raw
		for _, in := range propInputs(raw) {
			if _, ok := t.committed[in.ID()]; !ok {
				record(in, "")
			}
		}
	}
	for _, s := range t.tbl.Metadata().Snapshots() {
		if t.seen[s.SnapshotID] {
			continue
		}
		t.seen[s.SnapshotID] = true
		if s.Summary == nil {
			continue
		}
		for _, in := range summaryInputs(s.Summary.Properties) {
			record(in, s.Summary.Properties[SummaryRun])
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

// conflictPause waits before the attempt-th retry of a commit that met a
// concurrent one: a random few milliseconds, more as attempts go on, so
// that writers that met (shards adding columns to one table) do not meet
// again in step. Without it a dozen writers retried in lockstep and one
// ran out of attempts.
func conflictPause(ctx context.Context, attempt int) error {
	d := time.Duration(rand.Int64N(int64(min(attempt, 8))*int64(2*time.Millisecond))) + time.Millisecond/4
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// runSuffix ends a data file's name: "-<run>[.<kind>].parquet", the run
// as newRunID makes it (time, then eight hex digits).
var runSuffix = regexp.MustCompile(`-[0-9]{8}T[0-9]{6}-[0-9a-f]{8}(\.[a-z-]+)?\.parquet$`)

// stemOfLoc is the input stem a data file at loc, below the table at
// tableLoc, is named after, below its nParts partition directories (""
// for a file cdcetl did not name after one input: packed files, and
// those of other writers).
func stemOfLoc(tableLoc, loc string, nParts int) string {
	rel, ok := strings.CutPrefix(loc, strings.TrimSuffix(tableLoc, "/")+"/data/")
	if !ok {
		return ""
	}
	m := runSuffix.FindStringSubmatchIndex(rel)
	if m == nil || m[2] >= 0 {
		return "" // a packed file (or not a data file)
	}
	prefix := rel[:m[0]]
	for range nParts {
		i := strings.IndexByte(prefix, '/')
		if i < 0 {
			return ""
		}
		prefix = prefix[i+1:]
	}
	return prefix
}

// commit runs stage in a transaction on the head it reads, and commits it,
// unless the table holds in (then files are removed).
func (t *Table) commit(ctx context.Context, files []string, in Input, run, rows string, stage func(*table.Transaction, iceberg.Properties) error) (bool, error) {
	if rows != "" {
		in.Rows = json.RawMessage(rows)
	}
	raw, _ := json.Marshal(in)
	ok, err := t.commitWith(ctx, func() (iceberg.Properties, bool, error) {
		if _, held := t.committed[in.ID()]; held {
			return nil, false, nil
		}
		return iceberg.Properties{SummaryInput: string(raw), SummaryRun: run}, true, nil
	}, stage)
	if err != nil {
		return false, fmt.Errorf("iceberg table %s: committing %s: %w", t.Name(), in.Path, err)
	}
	if !ok {
		return false, removeAll(files)
	}
	return true, nil
}

// commitWith decides (decide: the snapshot's summary, or false for
// nothing to commit) on the table's head, stages the commit and commits
// it; a concurrent commit makes it read the table again and decide again.
func (t *Table) commitWith(ctx context.Context, decide func() (iceberg.Properties, bool, error), stage func(*table.Transaction, iceberg.Properties) error) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var last error
	for attempt := 0; attempt < maxAttempts; attempt++ {
		if attempt > 0 {
			if err := conflictPause(ctx, attempt); err != nil {
				return false, err
			}
			if err := t.tbl.Refresh(ctx); err != nil {
				return false, err
			}
		}
		t.refresh()
		props, any, err := decide()
		if err != nil || !any {
			return false, err
		}
		tx := t.tbl.NewTransaction()
		// The head this commit was decided on: a concurrent commit (which
		// may hold the same input) fails it, rather than iceberg-go
		// replaying it.
		err = tx.AssertRefSnapshotID(table.MainBranch)
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
			t.writeHint(ctx)
			return true, nil
		}
		if !conflict(err) {
			return false, err
		}
		last = err
	}
	return false, fmt.Errorf("%d attempts met concurrent commits: %w", maxAttempts, last)
}

// conflict reports whether a commit failed because another one got there
// first. The SQL catalog checks a transaction's requirements against the
// head it reads and returns their failure untyped ("requirement failed:
// branch "main" was created concurrently", when two writers make a
// table's first snapshot at once); a stale head is a conflict like any.
func conflict(err error) bool {
	return errors.Is(err, table.ErrCommitFailed) || strings.Contains(strings.ToLower(err.Error()), "requirement failed")
}

// tableFileToDataFile describes a data file of t from its footer.
func tableFileToDataFile(ctx context.Context, fs iceio.IO, path string, t *Table, spec iceberg.PartitionSpec) (iceberg.DataFile, error) {
	loc, err := t.lake.publish(ctx, fs, path)
	if err != nil {
		return nil, err
	}
	df, err := table.FileToDataFile(ctx, fs, loc, t.tbl.Schema(), spec, 0, t.tbl.Metadata().Properties())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return df, nil
}

// publish makes the local data file at path part of the warehouse and
// returns its location: for a warehouse in a bucket, it is uploaded
// (through iceberg-go's IO, as the table's metadata is) once, before the
// commit that lists it. An upload a kill cuts short, or one whose commit
// never happens, leaves an object no snapshot refers to, which no reader
// of the table sees.
func (l *Lake) publish(ctx context.Context, fs iceio.IO, path string) (string, error) {
	loc := l.URL(path)
	if l.remote == "" {
		return loc, nil
	}
	if _, done := l.uploaded.Load(path); done {
		return loc, nil
	}
	wfs, ok := fs.(iceio.WriteFileIO)
	if !ok {
		return "", fmt.Errorf("uploading %s: the warehouse's file system cannot write", loc)
	}
	src, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer src.Close()
	w, err := wfs.Create(loc)
	if err != nil {
		return "", fmt.Errorf("uploading %s: %w", loc, err)
	}
	if _, err := io.Copy(w, src); err != nil {
		w.Close()
		return "", fmt.Errorf("uploading %s: %w", loc, err)
	}
	if err := w.Close(); err != nil {
		return "", fmt.Errorf("uploading %s: %w", loc, err)
	}
	l.uploaded.Store(path, true)
	return loc, nil
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
// a snapshot of a table kept in the warehouse refers to, the current one
// and those its history keeps: what a clean-up after a crash must never
// remove (a compaction's older files stay readable by time travel until
// maintain expires their snapshots).
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
			fs, err := tbl.FS(ctx)
			if err != nil {
				return nil, err
			}
			read := map[string]bool{} // manifests are shared between snapshots
			for _, snap := range tbl.Metadata().Snapshots() {
				mfs, err := snap.Manifests(fs)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", strings.Join(ident, "."), err)
				}
				for _, m := range mfs {
					if read[m.FilePath()] {
						continue
					}
					read[m.FilePath()] = true
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
