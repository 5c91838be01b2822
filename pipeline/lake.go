package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/internal/outdir"
	"github.com/cdcetl/cdcetl/internal/setting"
	"github.com/cdcetl/cdcetl/lake"
	"github.com/cdcetl/cdcetl/objstore"
	"github.com/cdcetl/cdcetl/partition"
	"github.com/cdcetl/cdcetl/writer"
)

// Iceberg output (--to iceberg): the outputs of an input are data files in
// its tables' data directories (WAREHOUSE/<namespace>/<table>/data/), made
// and renamed into place like any output, then committed in commit groups
// (lakegroup.go), before the input is journaled. A data file's name
// carries the run's ID, so a rerun never writes over a file a table holds;
// a commit that finds its input in the table's history removes its files
// instead (the journal is a cache here: the tables are the truth).

// faultAfterCommits, for the kill tests, is how many commits a process
// makes before it kills itself (0: never): the moment between a commit and
// the journal that no timing hits reliably.
var faultAfterCommits, _ = strconv.Atoi(os.Getenv("CDCETL_FAULT_AFTER_COMMITS"))

var commitsMade atomic.Int64

// afterCommit carries out the fault, if one is set.
func afterCommit() {
	if faultAfterCommits > 0 && commitsMade.Add(1) >= int64(faultAfterCommits) {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
}

// newRunID names a run's data files (time, then randomness: sortable and
// unique across processes).
func newRunID() string {
	var b [4]byte
	rand.Read(b[:])
	return time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}

// openLake opens the run's catalog, for Iceberg output.
func (s *lakeSink) openLake(ctx context.Context) error {
	r := s.r
	cfg := r.cfg
	// Config.Validate has checked the warehouse, the table and the mode.
	if cfg.TableMode == "" {
		cfg.TableMode = lake.ModeChangelog
	}
	var l *lake.Lake
	var err error
	if remote := r.out.Remote(); remote != "" {
		// The warehouse is in a bucket; OutDir stages its data files.
		base, props, perr := objstore.Warehouse(remote)
		if perr != nil {
			return perr
		}
		l, err = lake.OpenRemote(ctx, cfg.OutDir, base, props, cfg.Catalog, cfg.TableMode)
	} else {
		l, err = lake.OpenMode(ctx, cfg.OutDir, cfg.Catalog, cfg.TableMode)
	}
	if err != nil {
		return err
	}
	if err := l.PartitionBy(cfg.PartitionBy); err != nil {
		l.Close()
		return err
	}
	if err := l.TableProperties(cfg.TableProperties); err != nil {
		l.Close()
		return err
	}
	s.lake, r.runID = l, newRunID()
	return nil
}

// lakeIdent is the Iceberg identifier of a table's version in dir: the
// names of its directories (the source table's namespace and name, as
// route escapes them: names Iceberg refuses, like "..", and names that
// differ only in case never meet), with "_v<n>" for a later schema
// version.
func lakeIdent(k TableKey, dir string) (ns, name string) {
	version := ""
	if b := filepath.Base(dir); outdir.IsVersionDir(b) {
		version, dir = "_"+b, filepath.Dir(dir)
	}
	ns, name = identPart(k.Namespace), identPart(k.Name)
	if legacy := outdir.LegacyDir(k.Namespace, k.Name); dir == legacy && legacy != outdir.TableDir(k.Namespace, k.Name) {
		// A table an earlier version loaded keeps the identifier it has.
		ns, name = outdir.LegacySegment(k.Namespace), outdir.LegacySegment(k.Name)
	}
	return ns, name + version
}

// identPart is a name as an Iceberg identifier has it: as the source wrote
// it (Iceberg takes any string), unless iceberg-go refuses it ("", ".",
// "..", a '/' or a control character), or it has a '%': then as its
// directory's segment, escaped (which a name kept as it is never equals).
func identPart(s string) string {
	if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "/%") || strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return outdir.Segment(s)
	}
	return s
}

// newLakeWriter makes an input's data file for table tr (nil: the
// conversion's one table).
func (s *lakeSink) newLakeWriter(ctx context.Context, fr *fileRun, tr *tableRun, schema *arrowconv.Schema) (writer.Writer, string, error) {
	r := s.r
	cfg := r.cfg
	var key TableKey
	var dir string
	if tr != nil {
		key, dir = tr.key, tr.dir
	} else {
		key = *lakeTableKey(cfg)
		dir = cfg.tableDir(key, 1)
	}
	abs, err := filepath.Abs(filepath.Join(cfg.OutDir, dir))
	if err != nil {
		return nil, "", err
	}
	if b := filepath.Base(dir); cfg.TableMode == lake.ModeUpsert && outdir.IsVersionDir(b) {
		// A second table would split the keys' current state in two.
		return nil, "", fmt.Errorf("%s: its schema changed incompatibly (schema version %s, %s): an upsert table keeps one current row per key and cannot go on in a second table. Pin the column's type so that every value fits (%[5]s %[4]s.COL=TYPE, or a %[6]s DDL, as inspect shows the change) and load into a new warehouse, or load a changelog table (%[7]s changelog)",
			key, strings.TrimPrefix(b, "v"), filepath.Join(dir, outdir.SchemaFile), key, setting.ColumnType, setting.DDLDir, setting.TableMode)
	}
	ns, name := lakeIdent(key, dir)
	t, err := s.lake.Table(ctx, ns, name, abs, schema)
	if err != nil {
		return nil, "", err
	}
	var prior []*lake.Table
	if b := filepath.Base(dir); outdir.IsVersionDir(b) {
		n, _ := strconv.Atoi(b[1:])
		for v := 1; v < n; v++ {
			d := cfg.tableDir(key, v)
			pns, pname := lakeIdent(key, d)
			p, err := s.lake.Existing(ctx, pns, pname, filepath.Join(cfg.OutDir, d))
			if err != nil {
				return nil, "", err
			}
			if p != nil {
				prior = append(prior, p)
			}
		}
	}
	rel := filepath.Join(dir, "data", fr.stem+"-"+r.runID+".parquet")
	opts := cfg.Parquet
	opts.Metadata = map[string]string{"cdcetl.source": fr.file.Path, "cdcetl.version": cfg.Version,
		"cdcetl.namespace": key.Namespace, "cdcetl.table": key.Name, lake.FooterColumns: schema.ColumnList()}
	if fr.format != nil {
		opts.Metadata["cdcetl.format"] = fr.format.Name
	} else if cfg.Format != nil {
		opts.Metadata["cdcetl.format"] = cfg.Format.Name
	}
	if tr != nil && opts.PageBytes == 0 {
		opts.PageBytes = routedPageBytes
	}
	opts.CreatedBy = cfg.createdBy()
	opts.Iceberg, opts.FieldIDs = true, t.FieldIDs()
	opts.PlainColumns = positionColumns(schema)
	var w writer.Writer
	path := filepath.Join(abs, "data", fr.stem+"-"+r.runID+".parquet")
	if len(cfg.PartitionBy) > 0 {
		colOf := func(name string) int {
			if name == arrowconv.RowKindColumn {
				return 0
			}
			for i, c := range schema.Columns {
				if c.Name == name {
					return i + 1
				}
			}
			return -1
		}
		open := func(partPath string) (*writer.Parquet, string, error) {
			p := filepath.Join(abs, "data", partPath, fr.stem+"-"+r.runID+".parquet")
			w, err := writer.NewParquet(p, schema, opts)
			return w, p, err
		}
		var pw partitionedOut
		var err error
		if cfg.TableMode == lake.ModeUpsert {
			opts.Required = schema.PrimaryKey
			pw, err = t.NewPartitionedDelta(colOf, open, schema, opts)
		} else {
			pw, err = t.NewPartitioned(colOf, func(dir string) (partition.File, string, error) { return open(dir) })
		}
		if err != nil {
			return nil, "", err
		}
		id := 0
		if tr != nil {
			id = tr.id
		}
		if fr.lakeOuts == nil {
			fr.lakeOuts = map[int]*lakeOut{}
		}
		rel = filepath.Join(dir, "data")
		fr.lakeOuts[id] = &lakeOut{table: t, key: key, part: pw, prior: prior, rel: rel, abs: abs, schema: schema, opts: opts}
		return pw, rel, nil
	}
	var delta *lake.Delta
	if cfg.TableMode == lake.ModeUpsert {
		opts.Required = schema.PrimaryKey // identifier fields: the delta refuses NULL keys
	}
	pw, err := writer.NewParquet(filepath.Join(cfg.OutDir, rel), schema, opts)
	if err != nil {
		return nil, "", err
	}
	w = pw
	if cfg.TableMode == lake.ModeUpsert {
		if delta, err = t.NewDelta(pw, path, schema, opts); err != nil {
			pw.Abort()
			return nil, "", err
		}
		w = delta
	}
	id := 0
	if tr != nil {
		id = tr.id
	}
	if fr.lakeOuts == nil {
		fr.lakeOuts = map[int]*lakeOut{}
	}
	fr.lakeOuts[id] = &lakeOut{table: t, key: key, delta: delta, prior: prior, rel: rel, path: path, schema: schema, opts: opts}
	return w, rel, nil
}

// isDelta reports whether a partitioned output is an upsert delta.
func isDelta(p partitionedOut) bool {
	_, ok := p.(*lake.PartitionedDelta)
	return ok
}

// truncateDeltas tells an input's upsert deltas where it truncates their
// tables, before they are closed.
func (s *lakeSink) truncateDeltas(fr *fileRun, st Stats) error {
	for _, o := range fr.lakeOuts {
		var d interface{ Truncate(int64) error } = o.delta
		if pd, ok := o.part.(*lake.PartitionedDelta); ok {
			d = pd
		} else if o.delta == nil {
			continue
		}
		for _, t := range st.Truncates {
			if t.Table == o.key.String() {
				if err := d.Truncate(int64(t.Line)); err != nil {
					return fmt.Errorf("%s:%d: %w", t.File, t.Line, err)
				}
			}
		}
	}
	return nil
}

// commitTruncates empties the upsert tables an input truncates without
// having rows of them.
func (s *lakeSink) commitTruncates(ctx context.Context, fr *fileRun, st *Stats, in lake.Input) error {
	r := s.r
	if r.cfg.TableMode != lake.ModeUpsert {
		return nil
	}
	seen := map[string]bool{}
	for _, o := range fr.lakeOuts {
		seen[o.key.String()] = true
	}
	for _, t := range st.Truncates {
		if seen[t.Table] {
			continue
		}
		seen[t.Table] = true
		var key *TableKey
		var dir string
		if k := lakeTableKey(r.cfg); r.cfg.Schema != nil && k != nil && k.String() == t.Table {
			key, dir = k, r.cfg.tableDir(*k, 1)
		} else if r.router != nil {
			r.router.mu.Lock()
			for k, tr := range r.router.current {
				if k.String() == t.Table {
					kk := k
					key, dir = &kk, tr.dir
				}
			}
			r.router.mu.Unlock()
		}
		if key == nil {
			continue // a table this conversion never made: nothing to empty
		}
		ns, name := lakeIdent(*key, dir)
		tbl, err := s.lake.Existing(ctx, ns, name, filepath.Join(r.cfg.OutDir, dir))
		if err != nil || tbl == nil {
			return err
		}
		done, err := tbl.CommitTruncate(ctx, in, r.runID)
		if err != nil {
			return err
		}
		if done {
			st.Committed++
		}
	}
	return nil
}

// files are the out's files: its data file and any delete files.
func (o *lakeOut) files() []string {
	if o.delta != nil {
		return o.delta.Files()
	}
	if o.part != nil {
		return o.part.Files()
	}
	return []string{o.path}
}

// dropOutput forgets a data file that was not committed because its
// table holds the input already: the journal lists what tables hold.
func (s *lakeSink) dropOutput(fr *fileRun, id int, o *lakeOut) {
	fr.outputs = slices.DeleteFunc(fr.outputs, func(s string) bool { return s == o.rel })
	if ts := fr.tableStats[id]; ts != nil {
		ts.Outputs = slices.DeleteFunc(ts.Outputs, func(s string) bool { return s == o.rel })
	}
}

func removeFiles(paths []string) {
	for _, p := range paths {
		_ = outdir.RemoveSynced(p)
	}
}

// recoverLake removes the data and delete files a killed run wrote for
// inputs it did not journal, unless a table refers to them (the run was
// killed between the commit and the journal: the table holds them, and
// the rerun finds its inputs there).
func recoverLake(ctx context.Context, dir, pending string, j *outdir.Journal, l *lake.Lake) error {
	stems, err := outdir.ReadPending(dir, pending)
	if err != nil || len(stems) == 0 {
		return err
	}
	var dataDirs []string
	for _, pat := range [][]string{{"*", "*", "data"}, {"*", "*", "v*", "data"}, {"*", "*", lake.DeletesDir}, {"*", "*", "v*", lake.DeletesDir}} {
		m, err := filepath.Glob(filepath.Join(append([]string{dir}, pat...)...))
		if err != nil {
			return err
		}
		dataDirs = append(dataDirs, m...)
	}
	var refs map[string]bool
	for _, p := range stems {
		if _, ok := j.Owner(p.Stem); ok {
			continue
		}
		// {data,deletes}/[<partition>/...]<stem>-<run>[.<kind>].{parquet,puffin}
		mark := string(filepath.Separator) + p.Stem + "-"
		for _, d := range dataDirs {
			werr := filepath.WalkDir(d, func(path string, e os.DirEntry, err error) error {
				if err != nil || e.IsDir() || !strings.HasSuffix(path, ".parquet") && !strings.HasSuffix(path, ".puffin") {
					return nil
				}
				rel, _ := filepath.Rel(d, path)
				if !strings.Contains(string(filepath.Separator)+rel, mark) {
					return nil
				}
				if refs == nil {
					if refs, err = l.Referenced(ctx); err != nil {
						return fmt.Errorf("cleaning up after an interrupted run: %w", err)
					}
				}
				abs, _ := filepath.Abs(path)
				if !refs[abs] {
					if err := os.Remove(abs); err != nil && !errors.Is(err, os.ErrNotExist) {
						return fmt.Errorf("removing a data file of an interrupted run: %w", err)
					}
				}
				return nil
			})
			if werr != nil {
				return werr
			}
		}
	}
	return nil
}

// maintainLakes compacts the tables this run loaded whose files
// pass their thresholds (lake.NeedsMaintenance), so a table loaded every
// night needs no scheduler. Snapshots and orphans older than the
// default age go too.
func (s *lakeSink) maintainLakes(ctx context.Context) error {
	r := s.r
	for _, id := range s.lake.Loaded() {
		need, err := s.lake.NeedsMaintenance(ctx, id)
		if err != nil {
			return err
		}
		if !need {
			continue
		}
		res, err := s.lake.Maintain(ctx, id, lake.MaintainOptions{OlderThan: lake.DefaultOlderThan, Auto: true})
		if err != nil {
			return fmt.Errorf("maintaining after the load (the load is committed; %s skips this): %w", setting.NoMaintain, err)
		}
		r.mu.Lock()
		r.total.Maintained = append(r.total.Maintained, res)
		r.mu.Unlock()
	}
	return nil
}

// lakeSink loads Iceberg tables (lake.go, lakegroup.go, keys.go): each
// input's rows become data files committed, in input order, by commit
// groups.
type lakeSink struct {
	r *run
	// lake is the catalog.
	lake *lake.Lake
	// turns[i] is closed once input i (in conversion order) is finished:
	// commits follow the changelog's order.
	turns []chan struct{}
	// group holds the inputs waiting for their commit group.
	group *lakeGroup
}

type lakeGroup struct {
	mu    sync.Mutex // held while a group commits: flushes go one at a time
	qmu   sync.Mutex
	items []*groupItem
	keys  int
}

// groupItem is an input waiting for its group's commit.
type groupItem struct {
	fr   *fileRun
	in   lake.Input
	ids  []int
	rows map[int]string
	done chan struct{}
	// set by the commit: per table id, whether the table took the input
	// now (false: it held it already); err fails the input.
	committed map[int]bool
	files     map[int][]string
	err       error
}

func (s *lakeSink) recover(ctx context.Context, pending string, j *outdir.Journal) error {
	return recoverLake(ctx, s.r.cfg.OutDir, pending, j, s.lake)
}

func (s *lakeSink) writer(ctx context.Context, fr *fileRun, tr *tableRun) (writer.Writer, string, error) {
	if tr == nil {
		return s.newLakeWriter(ctx, fr, nil, s.r.cfg.Schema)
	}
	return s.newLakeWriter(ctx, fr, tr, tr.schema)
}

func (*lakeSink) replaces() bool { return true }

func (s *lakeSink) done(ctx context.Context) error {
	if s.r.cfg.NoMaintain || s.r.total.Committed == 0 {
		return nil
	}
	return s.maintainLakes(ctx)
}

func (s *lakeSink) close() error { return s.lake.Close() }
