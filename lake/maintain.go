package lake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/compaction"

	"github.com/cdcetl/cdcetl/internal/lazysubstrait"
)

// Maintenance (cdcetl maintain): compaction, snapshot expiry and the
// removal of files no snapshot refers to, from iceberg-go's parts
// (compaction's bin-pack planner, Table.RewriteDataFiles,
// Transaction.ExpireSnapshots, Table.DeleteOrphanFiles). What cdcetl adds:
// the inputs expired snapshots recorded are carried into a table property
// (exactly-once outlives the snapshots), orphans are only ever data,
// delete and manifest files (never a table directory's _schema.sql or
// version-hint.text), and tables are compacted by cdcetl's own rewrite
// (compact.go), which keeps the record of which input each row came from
// and writes with cdcetl's encoder; iceberg-go's RewriteDataFiles only
// where equality deletes apply.

// PropInputs is the table property that holds the inputs recorded by
// snapshots that were expired (JSON array of Input).
const PropInputs = "cdcetl.inputs"

// DefaultOlderThan is how old a snapshot or an orphan file must be for
// maintain to remove it: Iceberg's history.expire.max-snapshot-age-ms
// default, 5 days.
const DefaultOlderThan = 5 * 24 * time.Hour

// MaintainOptions are what Maintain does.
type MaintainOptions struct {
	OlderThan time.Duration
	// TargetFileSize is the size compaction packs data files to (0: the
	// table's write.target-file-size-bytes, else Iceberg's 512 MiB).
	TargetFileSize int64
	// Auto is a load's own maintenance: a file's deletes are applied only
	// when they are many (5 delete files, or 30% of its rows), not
	// whenever it has one, and OlderThan is the table's
	// history.expire.max-snapshot-age-ms (default 5 days).
	Auto bool
}

// MaintainResult is what Maintain did to a table.
type MaintainResult struct {
	Table             string `json:"table"`
	DataFilesBefore   int    `json:"data_files_before"`
	DataFilesAfter    int    `json:"data_files_after"`
	DeleteFilesBefore int    `json:"delete_files_before"`
	DeleteFilesAfter  int    `json:"delete_files_after"`
	Rewritten         int    `json:"rewritten_files"`
	SnapshotsBefore   int    `json:"snapshots_before"`
	SnapshotsAfter    int    `json:"snapshots_after"`
	OrphansRemoved    int    `json:"orphans_removed"`
	// Skipped says why a load's own maintenance stopped short (concurrent
	// commits: the next load tries again).
	Skipped string `json:"skipped,omitempty"`
}

// Tables lists the tables of the lake's catalog.
func (l *Lake) Tables(ctx context.Context) ([]table.Identifier, error) {
	var out []table.Identifier
	nss, err := l.cat.ListNamespaces(ctx, nil)
	if err != nil {
		return nil, err
	}
	for _, ns := range nss {
		for ident, err := range l.cat.ListTables(ctx, ns) {
			if err != nil {
				return nil, err
			}
			out = append(out, ident)
		}
	}
	slices.SortFunc(out, func(a, b table.Identifier) int { return strings.Compare(strings.Join(a, "."), strings.Join(b, ".")) })
	return out, nil
}

// Maintain compacts the table ident (data files rewritten with their
// deletes applied, small ones bin-packed; the delete files left with
// nothing to apply to removed), expires its snapshots older
// than opts.OlderThan (the current one always stays) and removes the
// files under it that no snapshot left refers to and that are older
// than opts.OlderThan.
func (l *Lake) Maintain(ctx context.Context, ident table.Identifier, opts MaintainOptions) (MaintainResult, error) {
	res := MaintainResult{Table: strings.Join(ident, ".")}
	tbl, err := l.cat.LoadTable(ctx, ident)
	if err != nil {
		return res, err
	}
	if opts.Auto {
		// A load's maintenance keeps what the table's history property
		// says (Iceberg's), else 5 days.
		opts.OlderThan = time.Duration(tbl.Properties().GetInt64(table.MaxSnapshotAgeMsKey, DefaultOlderThan.Milliseconds())) * time.Millisecond
	}
	res.SnapshotsBefore = len(tbl.Metadata().Snapshots())
	if res.DataFilesBefore, res.DeleteFilesBefore, err = countFiles(ctx, tbl); err != nil {
		return res, err
	}
	if tbl.CurrentSnapshot() != nil {
		target := opts.TargetFileSize
		if target <= 0 {
			target = tbl.Properties().GetInt64(table.WriteTargetFileSizeBytesKey, table.WriteTargetFileSizeBytesDefault)
		}
		var done *table.Table
		eq, err := hasEqualityDeletes(ctx, tbl)
		if err != nil {
			return res, err
		}
		if eq {
			// Equality deletes (an earlier cdcetl's upsert loads): iceberg-go's
			// rewrite applies them, with substrait's functions.
			if err := lazysubstrait.Ensure(); err != nil {
				return res, err
			}
			done, res.Rewritten, err = compact(ctx, tbl, target, !opts.Auto)
		} else {
			done, res.Rewritten, err = compactOwn(ctx, tbl, target, !opts.Auto)
		}
		if err != nil {
			if opts.Auto && conflict(err) {
				res.Skipped = "other commits kept changing the table"
				return res, nil
			}
			return res, fmt.Errorf("%s: compacting: %w", res.Table, err)
		}
		tbl = done
		// Readers that open the table by its directory see it.
		l.writeHint(ctx, tbl)
	}
	var done *table.Table
	for attempt := 0; ; attempt++ {
		if done, err = expire(ctx, tbl, opts.OlderThan); err == nil || !conflict(err) || attempt == 2 {
			break
		}
		// A load committed meanwhile: expire from its head.
		if err := tbl.Refresh(ctx); err != nil {
			return res, err
		}
	}
	if err != nil {
		if opts.Auto && conflict(err) {
			res.Skipped = "other commits kept changing the table"
			return res, nil
		}
		return res, fmt.Errorf("%s: expiring snapshots: %w", res.Table, err)
	}
	tbl = done
	l.writeHint(ctx, tbl)
	if res.OrphansRemoved, err = removeOrphans(ctx, tbl, opts.OlderThan); err != nil {
		return res, fmt.Errorf("%s: removing files no snapshot refers to: %w", res.Table, err)
	}
	res.SnapshotsAfter = len(tbl.Metadata().Snapshots())
	res.DataFilesAfter, res.DeleteFilesAfter, err = countFiles(ctx, tbl)
	return res, err
}

// countFiles counts the data and delete files of the current snapshot.
func countFiles(ctx context.Context, tbl *table.Table) (data, deletes int, err error) {
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return 0, 0, nil
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return 0, 0, err
	}
	mfs, err := snap.Manifests(fs)
	if err != nil {
		return 0, 0, err
	}
	for _, m := range mfs {
		es, err := m.FetchEntries(fs, true)
		if err != nil {
			return 0, 0, err
		}
		for _, e := range es {
			if e.DataFile().ContentType() == iceberg.EntryContentData {
				data++
			} else {
				deletes++
			}
		}
	}
	return data, deletes, nil
}

// hasEqualityDeletes reports whether equality deletes apply to a data
// file of the table.
func hasEqualityDeletes(ctx context.Context, tbl *table.Table) (bool, error) {
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(tasks, func(t table.FileScanTask) bool { return len(t.EqualityDeleteFiles) > 0 }), nil
}

// compact rewrites a table's data files that have deletes, or are small,
// bin-packed to the target size, in one atomic rewrite, through
// iceberg-go (which applies equality deletes).
func compact(ctx context.Context, tbl *table.Table, target int64, thorough bool) (*table.Table, int, error) {
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return nil, 0, err
	}
	groups, err := planGroups(tasks, target, thorough)
	if err != nil {
		return nil, 0, err
	}
	if len(groups) == 0 {
		return tbl, 0, nil
	}
	rewritten := map[string]struct{}{}
	n := 0
	for _, g := range groups {
		for _, t := range g.Tasks {
			rewritten[t.File.FilePath()] = struct{}{}
			n++
		}
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, 0, err
	}
	meta := tbl.Metadata()
	dead, err := compaction.CollectDeadEqualityDeletesWithSpecs(ctx, fs, meta, tbl.CurrentSnapshot(), rewritten)
	if err != nil {
		return nil, 0, err
	}
	deadPos, err := compaction.CollectDeadPositionDeletes(ctx, fs, tbl.CurrentSnapshot(), rewritten)
	if err != nil {
		return nil, 0, err
	}
	r, err := tbl.RewriteDataFiles(ctx, groups, table.RewriteDataFilesOptions{
		ExtraDeleteFilesToRemove: append(dead, deadPos...),
		SnapshotProps:            iceberg.Properties{"cdcetl.maintain": "compaction"},
		GroupOptions:             []table.CompactionGroupOption{table.WithCompactionTargetFileSize(target)},
	})
	if err != nil {
		return nil, 0, err
	}
	if r.Table != nil {
		tbl = r.Table
	}
	return tbl, n, nil
}

// expire expires the snapshots older than olderThan but the current one,
// first carrying the inputs they record into the table's PropInputs.
func expire(ctx context.Context, tbl *table.Table, olderThan time.Duration) (*table.Table, error) {
	snaps := tbl.Metadata().Snapshots()
	cur := tbl.CurrentSnapshot()
	if len(snaps) <= 1 || cur == nil {
		return tbl, nil
	}
	// Every input a snapshot other than the current one records (those
	// that stay too: recording one twice is harmless, and the property
	// stays right whatever the expiry keeps).
	seen := map[string]bool{}
	var carried []Input
	add := func(in Input) {
		if !seen[in.ID()] {
			seen[in.ID()] = true
			in.Rows = nil
			carried = append(carried, in)
		}
	}
	for _, in := range propInputs(tbl.Properties()[PropInputs]) {
		add(in)
	}
	for _, s := range snaps {
		if s.SnapshotID == cur.SnapshotID || s.Summary == nil {
			continue
		}
		for _, in := range summaryInputs(s.Summary.Properties) {
			add(in)
		}
	}
	tx := tbl.NewTransaction()
	if len(carried) > 0 {
		raw, err := json.Marshal(carried)
		if err != nil {
			return nil, err
		}
		if err := tx.SetProperties(iceberg.Properties{PropInputs: string(raw)}); err != nil {
			return nil, err
		}
	}
	// The files only expired snapshots held are removed as orphans next
	// (removeOrphans), not by iceberg-go's clean-up after the commit: that
	// fails on a file an earlier maintain, killed mid-way, removed already.
	if err := tx.ExpireSnapshots(table.WithOlderThan(olderThan), table.WithRetainLast(1), table.WithPostCommit(false)); err != nil {
		return nil, err
	}
	return tx.Commit(ctx)
}

// summaryInputs are the inputs a snapshot summary records.
func summaryInputs(p iceberg.Properties) []Input {
	var ins []Input
	var in Input
	if raw, ok := p[SummaryInput]; ok && json.Unmarshal([]byte(raw), &in) == nil {
		ins = append(ins, in)
	}
	var group []Input
	if raw, ok := p[SummaryInputs]; ok && json.Unmarshal([]byte(raw), &group) == nil {
		ins = append(ins, group...)
	}
	return ins
}

// propInputs are the inputs of the PropInputs property.
func propInputs(raw string) []Input {
	var ins []Input
	if raw != "" {
		json.Unmarshal([]byte(raw), &ins)
	}
	return ins
}

// removeOrphans removes the data, delete and manifest files under the
// table that no snapshot refers to and that are older than olderThan.
//
// Other loaders of the table (shards) write and remove files under it
// meanwhile: a file that vanishes while the table is listed is skipped
// (iceberg-go's listing fails on it), and a manifest that another
// loader's expiry removed sends the plan round again from the new head.
func removeOrphans(ctx context.Context, tbl *table.Table, olderThan time.Duration) (int, error) {
	listed := table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), func(ctx context.Context) (iceio.IO, error) {
		fs, err := tbl.FS(ctx)
		if l, ok := fs.(iceio.ListableIO); ok && err == nil {
			return vanishingIO{l}, nil
		}
		return fs, err
	}, nil)
	var plan table.OrphanCleanupResult
	var err error
	for attempt := 0; ; attempt++ {
		plan, err = listed.DeleteOrphanFiles(ctx, table.WithFilesOlderThan(olderThan), table.WithDryRun(true))
		if err == nil || !errors.Is(err, fs.ErrNotExist) || attempt == 2 {
			break
		}
		if err := tbl.Refresh(ctx); err != nil {
			return 0, err
		}
		listed = table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), listed.FS, nil)
	}
	if err != nil {
		return 0, err
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return 0, err
	}
	base := strings.TrimSuffix(tbl.Location(), "/") + "/"
	local := ""
	if p, err := PathOf(base); err == nil && p != base {
		local = strings.TrimSuffix(p, "/") + "/" // iceberg-go lists local files by path
	}
	n := 0
	for _, loc := range plan.OrphanFileLocations {
		rel, ok := strings.CutPrefix(loc, base)
		if !ok && local != "" {
			if rel, ok = strings.CutPrefix(loc, local); ok {
				loc = FileURL(loc)
			}
		}
		if !ok {
			continue
		}
		switch {
		case (strings.HasPrefix(rel, "data/") || strings.HasPrefix(rel, DeletesDir+"/")) && (strings.HasSuffix(rel, ".parquet") || strings.HasSuffix(rel, ".puffin")):
		case strings.HasPrefix(rel, "metadata/") && strings.HasSuffix(rel, ".avro"):
		default:
			continue // not a file of the table's snapshots
		}
		if err := removeLoc(fs, loc); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// vanishingIO lists a directory whose files come and go: an entry
// removed between its directory's read and its stat is left out, as if
// the listing had come a moment later.
type vanishingIO struct{ iceio.ListableIO }

func (v vanishingIO) WalkDir(root string, fn fs.WalkDirFunc) error {
	return v.ListableIO.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path != root {
				return nil
			}
			return fn(path, d, err)
		}
		if d.IsDir() {
			return fn(path, d, nil)
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fn(path, d, err)
		}
		return fn(path, statEntry{d, info}, nil)
	})
}

// statEntry is a directory entry with its stat already taken.
type statEntry struct {
	fs.DirEntry
	info fs.FileInfo
}

func (e statEntry) Info() (fs.FileInfo, error) { return e.info, nil }

// removeLoc removes a file of a table, local or in a bucket.
func removeLoc(fs iceio.IO, loc string) error {
	if strings.HasPrefix(loc, "file:") {
		p, err := PathOf(loc)
		if err != nil {
			return err
		}
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}
	return fs.Remove(loc)
}

// Thresholds of the compaction a load runs on the tables it loaded
// (table properties, with these defaults): more data files than
// PropMaxDataFiles, more delete files than PropMaxDeleteFiles, a data
// file with many deletes (heavy), or two small data files (below 75% of
// the target size) that hold at most PropEagerBytes together: packing
// those costs little, and keeps a small table in a file or two, which
// readers open fastest.
const (
	PropMaxDataFiles   = "cdcetl.maintain.max-data-files"
	PropMaxDeleteFiles = "cdcetl.maintain.max-delete-files"
	PropEagerBytes     = "cdcetl.maintain.eager-bytes"

	DefaultMaxDataFiles   = 32
	DefaultMaxDeleteFiles = 32
	DefaultEagerBytes     = 8 << 20
)

// NeedsMaintenance reports whether the table's current snapshot passes
// its compaction thresholds.
func (l *Lake) NeedsMaintenance(ctx context.Context, ident table.Identifier) (bool, error) {
	tbl, err := l.cat.LoadTable(ctx, ident)
	if err != nil || tbl.CurrentSnapshot() == nil {
		return false, err
	}
	tasks, err := tbl.Scan().PlanFiles(ctx) // no filter: no substrait
	if err != nil {
		return false, err
	}
	p := tbl.Properties()
	target := p.GetInt64(table.WriteTargetFileSizeBytesKey, table.WriteTargetFileSizeBytesDefault)
	dels := map[string]bool{}
	type smalls struct {
		n     int
		bytes int64
	}
	small := map[string]*smalls{} // by partition: files are packed within theirs
	for _, t := range tasks {
		for _, d := range append(append(slices.Clone(t.DeleteFiles), t.DeletionVectorFiles...), t.EqualityDeleteFiles...) {
			k := d.FilePath()
			if off := d.ContentOffset(); off != nil {
				k += "@" + strconv.FormatInt(*off, 10)
			}
			dels[k] = true
		}
		if heavy(t) {
			return true, nil
		}
		if t.File.FileSizeBytes() < target*3/4 {
			k := fmt.Sprint(t.File.SpecID(), t.File.Partition())
			if small[k] == nil {
				small[k] = &smalls{}
			}
			small[k].n++
			small[k].bytes += t.File.FileSizeBytes()
		}
	}
	if len(tasks) > p.GetInt(PropMaxDataFiles, DefaultMaxDataFiles) || len(dels) > p.GetInt(PropMaxDeleteFiles, DefaultMaxDeleteFiles) {
		return true, nil
	}
	eager := p.GetInt64(PropEagerBytes, DefaultEagerBytes)
	for _, sm := range small {
		if sm.n >= 2 && sm.bytes <= eager {
			return true, nil
		}
	}
	return false, nil
}

// Loaded lists the tables this lake opened for writing, in name order.
func (l *Lake) Loaded() []table.Identifier {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []table.Identifier
	for _, t := range l.tables {
		out = append(out, t.ident)
	}
	slices.SortFunc(out, func(a, b table.Identifier) int { return strings.Compare(strings.Join(a, "."), strings.Join(b, ".")) })
	return out
}
