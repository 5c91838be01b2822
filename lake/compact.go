package lake

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/compaction"
	"github.com/apache/iceberg-go/table/dv"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/writer"
)

// Compaction. iceberg-go's RewriteDataFiles would do, but its files would
// lose what cdcetl's record: which input each run of rows came from
// (FooterStems), by which a grown input finds the rows of its earlier
// version in a changelog table; and its encoder runs at a quarter of the
// speed of cdcetl's. This rewrite plans as iceberg-go does (compaction's
// bin-pack planner), then copies each group's rows, deletes applied, into
// one file per schema, carrying the runs over, and commits through
// iceberg-go's RewriteFiles builder. Equality deletes it does not apply:
// tables with them go through RewriteDataFiles (maintain.go).

// planGroups are the groups of the table's files a compaction rewrites:
// the planner's (small files, bin-packed to target), and files with
// deletes on their own. thorough (cdcetl maintain) rewrites every file
// with a delete; a load's own compaction only those with many deletes
// (heavy), leaving a large file's few deleted rows to its vector.
func planGroups(tasks []table.FileScanTask, target int64, thorough bool) ([]table.CompactionTaskGroup, error) {
	cfg := compaction.DefaultConfig()
	cfg.TargetFileSizeBytes, cfg.MinFileSizeBytes, cfg.MaxFileSizeBytes = target, target*3/4, target*9/5
	cfg.MinInputFiles = 2 // two small files are worth packing
	if thorough {
		cfg.DeleteFileThreshold = 1
	}
	plan, err := cfg.PlanCompaction(tasks)
	if err != nil {
		return nil, err
	}
	var groups []table.CompactionTaskGroup
	grouped := map[string]bool{}
	for _, g := range plan.Groups {
		groups = append(groups, table.CompactionTaskGroup{PartitionKey: g.PartitionKey, Tasks: g.Tasks, TotalSizeBytes: g.TotalSizeBytes})
		for _, t := range g.Tasks {
			grouped[t.File.FilePath()] = true
		}
	}
	for _, t := range tasks {
		if grouped[t.File.FilePath()] {
			continue
		}
		if thorough && deleteCount(t) > 0 || heavy(t) {
			groups = append(groups, table.CompactionTaskGroup{PartitionKey: t.File.FilePath(), Tasks: []table.FileScanTask{t}, TotalSizeBytes: t.File.FileSizeBytes()})
		}
	}
	return groups, nil
}

// deleteCount is the number of delete files that apply to a task's file.
func deleteCount(t table.FileScanTask) int {
	return len(t.DeleteFiles) + len(t.DeletionVectorFiles) + len(t.EqualityDeleteFiles)
}

// heavy reports whether a data file has deletes enough to rewrite it
// whatever its size: Iceberg's defaults, 5 delete files or 30% of its
// rows deleted (by its deletion vector or file-scoped position deletes).
func heavy(t table.FileScanTask) bool {
	if deleteCount(t) >= 5 {
		return true
	}
	var deleted int64
	for _, d := range append(slices.Clone(t.DeletionVectorFiles), t.DeleteFiles...) {
		if ref := d.ReferencedDataFile(); ref != nil && *ref == t.File.FilePath() {
			deleted += d.Count()
		}
	}
	return t.File.Count() > 0 && float64(deleted) >= 0.3*float64(t.File.Count())
}

// compactOwn rewrites a table's small files and files with deletes. A
// concurrent commit makes it plan again (a few times, then it gives up:
// the table is as it was).
func compactOwn(ctx context.Context, tbl *table.Table, target int64, thorough bool) (*table.Table, int, error) {
	var last error
	for attempt := 0; attempt < 3; attempt++ {
		if attempt > 0 {
			if err := tbl.Refresh(ctx); err != nil {
				return nil, 0, err
			}
		}
		done, n, err := compactOwnOnce(ctx, tbl, target, thorough)
		if err == nil {
			return done, n, nil
		}
		if !conflict(err) {
			return nil, 0, err
		}
		last = err
	}
	return nil, 0, fmt.Errorf("concurrent commits kept changing the table (try again later): %w", last)
}

func compactOwnOnce(ctx context.Context, tbl *table.Table, target int64, thorough bool) (*table.Table, int, error) {
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return nil, 0, err
	}
	// Equality deletes (another writer's) are not applied here: their
	// files stay as they are.
	tasks = slices.DeleteFunc(tasks, func(t table.FileScanTask) bool { return len(t.EqualityDeleteFiles) > 0 })
	groups, err := planGroups(tasks, target, thorough)
	if err != nil || len(groups) == 0 {
		return tbl, 0, err
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, 0, err
	}
	wfs, ok := fs.(iceio.WriteFileIO)
	if !ok {
		return nil, 0, errors.New("the warehouse's file system cannot write")
	}
	var olds, news []iceberg.DataFile
	var written []string
	fail := func(err error) (*table.Table, int, error) {
		for _, loc := range written {
			removeLoc(fs, loc)
		}
		return nil, 0, err
	}
	id := make([]byte, 8)
	rand.Read(id)
	tag := hex.EncodeToString(id)
	var rewritten []table.FileScanTask
	for g, grp := range groups {
		ts := slices.Clone(grp.Tasks)
		slices.SortStableFunc(ts, func(a, b table.FileScanTask) int {
			if a.DataSequenceNumber != nil && b.DataSequenceNumber != nil && *a.DataSequenceNumber != *b.DataSequenceNumber {
				return cmp.Compare(*a.DataSequenceNumber, *b.DataSequenceNumber)
			}
			return strings.Compare(a.File.FilePath(), b.File.FilePath())
		})
		// Files of one schema go into one file.
		bySchema := map[string][]table.FileScanTask{}
		var order []string
		for _, t := range ts {
			key, err := schemaKey(fs, t.File.FilePath())
			if err != nil {
				return fail(err)
			}
			if _, ok := bySchema[key]; !ok {
				order = append(order, key)
			}
			bySchema[key] = append(bySchema[key], t)
		}
		for k, key := range order {
			part := bySchema[key]
			if len(part) == 1 && len(part[0].DeleteFiles)+len(part[0].DeletionVectorFiles) == 0 {
				continue // one file alone, with nothing to apply
			}
			loc := path.Join(path.Dir(part[0].File.FilePath()), fmt.Sprintf("compact-%s-%d-%d.packed.parquet", tag, g, k))
			written = append(written, loc)
			df, err := rewriteFiles(ctx, tbl, fs, wfs, part, loc)
			if err != nil {
				return fail(fmt.Errorf("writing %s: %w", loc, err))
			}
			if df != nil {
				news = append(news, df)
			} else {
				removeLoc(fs, loc) // every row was deleted
			}
			for _, t := range part {
				olds = append(olds, t.File)
			}
			rewritten = append(rewritten, part...)
		}
	}
	if len(olds) == 0 {
		return tbl, 0, nil
	}
	paths := map[string]struct{}{}
	for _, df := range olds {
		paths[df.FilePath()] = struct{}{}
	}
	deadPos, err := compaction.CollectDeadPositionDeletes(ctx, fs, tbl.CurrentSnapshot(), paths)
	if err != nil {
		return fail(err)
	}
	tx := tbl.NewTransaction()
	// The head it was planned on: a concurrent commit (a load's deletes
	// of rows these files hold) fails it, to be planned again.
	if err := tx.AssertRefSnapshotID(table.MainBranch); err != nil {
		return fail(err)
	}
	rw := tx.NewRewrite(iceberg.Properties{"cdcetl.maintain": "compaction"})
	for _, df := range olds {
		rw.DeleteFile(df)
	}
	for _, df := range append(deadPos, table.CollectSafeDeletionVectors(rewritten)...) {
		rw.DeleteFile(df)
	}
	for _, df := range news {
		rw.AddDataFile(df)
	}
	if err := rw.Commit(ctx); err != nil {
		return fail(err)
	}
	done, err := tx.Commit(ctx)
	if err != nil {
		return fail(err)
	}
	return done, len(olds), nil
}

// FooterColumns is the Parquet footer key of the Flink column list
// (arrowconv's) a cdcetl data file was written with: compaction writes
// with cdcetl's own encoder when it is there (arrow-go's, which
// iceberg-go's rewrite uses, runs at about a quarter of its speed).
const FooterColumns = "cdcetl.columns"

// schemaKey is what a data file's schema is known by: its column list,
// else its Arrow schema.
func schemaKey(fs iceio.IO, loc string) (string, error) {
	kv, _, err := footerOf(fs, loc)
	if err != nil {
		return "", err
	}
	if cols := kv[FooterColumns]; cols != "" {
		return cols, nil
	}
	sch, err := fileSchema(fs, loc)
	if err != nil {
		return "", err
	}
	return sch.String(), nil
}

// fileSchema is the Arrow schema of a data file.
func fileSchema(fs iceio.IO, loc string) (*arrow.Schema, error) {
	pf, err := openParquet(fs, loc)
	if err != nil {
		return nil, err
	}
	defer pf.Close()
	return pqarrow.FromParquet(pf.MetaData().Schema, &pqarrow.ArrowReadProperties{}, nil)
}

// rowSink is the new file of a compaction group.
type rowSink interface {
	// recSchema is the schema batches are conformed to (nil: as read).
	recSchema() *arrow.Schema
	write(rec arrow.RecordBatch) error
	setMeta(k, v string)
	close() error
	abort()
}

// keepMeta reports whether a footer key of a rewritten file goes into
// the new one (what was per file is not).
func keepMeta(k string) bool {
	return k != "cdcetl.source" && k != FooterStems && k != "cdcetl.inputs" && k != "ARROW:schema"
}

// ownSink writes with cdcetl's encoder (the files' column list known),
// straight into a local warehouse, or into a temporary file uploaded at
// the end.
type ownSink struct {
	w     *writer.Parquet
	sch   *arrow.Schema
	local string // the file written
	wfs   iceio.WriteFileIO
	loc   string // its location, when it is uploaded
}

func newOwnSink(tbl *table.Table, wfs iceio.WriteFileIO, cols string, codec compress.Compression, kv map[string]string, loc string) (*ownSink, error) {
	s, err := arrowconv.ParseColumns(cols)
	if err != nil {
		return nil, fmt.Errorf("footer %s: %w", FooterColumns, err)
	}
	ids := fieldIDs(tbl.Schema())
	opts := writer.ParquetOptions{Compression: strings.ToLower(codec.String()), Iceberg: true, CreatedBy: "cdcetl maintain",
		FieldIDs: func(path []string) int32 { return ids[strings.Join(path, "\x00")] }, Metadata: map[string]string{}}
	if _, err := writer.Codec(opts.Compression); err != nil {
		opts.Compression = "snappy" // a codec cdcetl does not write
	}
	for _, f := range tbl.Schema().Fields() {
		if f.Required {
			opts.Required = append(opts.Required, f.Name)
		}
	}
	for k, v := range kv {
		if keepMeta(k) {
			opts.Metadata[k] = v
		}
	}
	o := &ownSink{sch: s.ArrowSchema()}
	if strings.HasPrefix(loc, "file:") {
		if o.local, err = PathOf(loc); err != nil {
			return nil, err
		}
	} else {
		f, err := os.CreateTemp("", "cdcetl-compact-*.parquet")
		if err != nil {
			return nil, err
		}
		f.Close()
		o.local, o.wfs, o.loc = f.Name(), wfs, loc
	}
	if o.w, err = writer.NewParquet(o.local, s, opts); err != nil {
		return nil, err
	}
	return o, nil
}

func (o *ownSink) recSchema() *arrow.Schema { return o.sch }
func (o *ownSink) write(rec arrow.RecordBatch) error {
	return o.w.Write(context.Background(), rec)
}
func (o *ownSink) setMeta(k, v string) { o.w.SetMetadata(k, v) }
func (o *ownSink) abort() {
	o.w.Abort()
	if o.loc != "" {
		os.Remove(o.local)
	}
}
func (o *ownSink) close() error {
	if err := o.w.Close(); err != nil {
		return err
	}
	if o.loc == "" {
		return nil
	}
	defer os.Remove(o.local)
	src, err := os.Open(o.local)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := o.wfs.Create(o.loc)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// arrowSink writes with arrow-go's Parquet writer, the files' Arrow
// schema as it is (files without a column list: another writer's).
type arrowSink struct {
	w *pqarrow.FileWriter
}

func newArrowSink(fs iceio.IO, wfs iceio.WriteFileIO, src string, codec compress.Compression, kv map[string]string, loc string) (*arrowSink, error) {
	sch, err := fileSchema(fs, src)
	if err != nil {
		return nil, err
	}
	out, err := wfs.Create(loc)
	if err != nil {
		return nil, err
	}
	props := parquet.NewWriterProperties(parquet.WithCompression(codec), parquet.WithDictionaryDefault(true),
		parquet.WithStats(true), parquet.WithMaxRowGroupLength(128<<10), parquet.WithCreatedBy("cdcetl maintain"))
	w, err := pqarrow.NewFileWriter(sch, out, props, pqarrow.NewArrowWriterProperties(pqarrow.WithNoMapLogicalType()))
	if err != nil {
		out.Close()
		return nil, err
	}
	a := &arrowSink{w: w}
	for k, v := range kv {
		if keepMeta(k) {
			a.setMeta(k, v)
		}
	}
	return a, nil
}

func (a *arrowSink) recSchema() *arrow.Schema          { return nil }
func (a *arrowSink) write(rec arrow.RecordBatch) error { return a.w.WriteBuffered(rec) }
func (a *arrowSink) setMeta(k, v string)               { a.w.AppendKeyValueMetadata(k, v) }
func (a *arrowSink) close() error                      { return a.w.Close() }
func (a *arrowSink) abort()                            { a.w.Close() }

// rewriteFiles copies the live rows of the tasks' files (of one schema,
// in one partition) into one new data file at loc, with the runs of rows
// per input they carry, and describes it (nil: no row was live).
func rewriteFiles(ctx context.Context, tbl *table.Table, fs iceio.IO, wfs iceio.WriteFileIO, tasks []table.FileScanTask, loc string) (iceberg.DataFile, error) {
	meta := tbl.Metadata()
	kv, codec, err := footerOf(fs, tasks[0].File.FilePath())
	if err != nil {
		return nil, err
	}
	var w rowSink
	if cols := kv[FooterColumns]; cols != "" {
		w, err = newOwnSink(tbl, wfs, cols, codec, kv, loc)
	} else {
		w, err = newArrowSink(fs, wfs, tasks[0].File.FilePath(), codec, kv, loc)
	}
	if err != nil {
		return nil, err
	}
	var segs []segment
	var rows int64
	for _, t := range tasks {
		src := t.File.FilePath()
		deleted, err := deletedAll(ctx, fs, t)
		if err != nil {
			w.abort()
			return nil, err
		}
		srcSegs, err := segmentsOf(fs, meta.Location(), src, t.File.Count(), specFields(meta, t.File))
		if err != nil {
			w.abort()
			return nil, err
		}
		// Each source row's run, less the deleted rows.
		var at int64
		var del []int64
		for _, s := range srcSegs {
			live := s.Rows
			if deleted != nil {
				for p := at; p < at+s.Rows; p++ {
					if deleted(p) {
						live--
						del = append(del, p)
					}
				}
			}
			segs = addSegment(segs, s.Stem, live)
			at += s.Rows
		}
		err = readLiveIO(ctx, fs, src, del, w.recSchema(), func(rec arrow.RecordBatch) error {
			rows += rec.NumRows()
			return w.write(rec)
		})
		if err != nil {
			w.abort()
			return nil, fmt.Errorf("%s: %w", src, err)
		}
	}
	raw, _ := json.Marshal(segs)
	w.setMeta(FooterStems, string(raw))
	inputs := map[string]bool{}
	for _, s := range segs {
		inputs[s.Stem] = true
	}
	w.setMeta("cdcetl.inputs", strconv.Itoa(len(inputs)))
	if err := w.close(); err != nil {
		return nil, err
	}
	if rows == 0 {
		return nil, nil
	}
	spec := meta.PartitionSpecByID(int(tasks[0].File.SpecID()))
	if spec == nil {
		return nil, fmt.Errorf("no partition spec %d", tasks[0].File.SpecID())
	}
	df, err := table.FileToDataFile(ctx, fs, loc, tbl.Schema(), *iceberg.UnpartitionedSpec, 0, tbl.Properties())
	if err != nil {
		return nil, err
	}
	if spec.NumFields() == 0 {
		return df, nil
	}
	return inPartition(df, *spec, tasks[0].File.Partition())
}

// footerOf reads a data file's footer metadata and the codec of its
// first column chunk (the rewrite keeps it).
func footerOf(fs iceio.IO, loc string) (map[string]string, compress.Compression, error) {
	pf, err := openParquet(fs, loc)
	if err != nil {
		return nil, 0, err
	}
	defer pf.Close()
	kv := map[string]string{}
	md := pf.MetaData().KeyValueMetadata()
	for i, k := range md.Keys() {
		kv[k] = md.Values()[i]
	}
	codec := compress.Codecs.Snappy
	if pf.NumRowGroups() > 0 && pf.MetaData().RowGroup(0).NumColumns() > 0 {
		if cc, err := pf.MetaData().RowGroup(0).ColumnChunk(0); err == nil {
			codec = cc.Compression()
		}
	}
	return kv, codec, nil
}

// deletedAll reads which rows of a task's data file are deleted: its
// deletion vector, or every position-delete file that names it. nil:
// none.
func deletedAll(ctx context.Context, fs iceio.IO, task table.FileScanTask) (func(int64) bool, error) {
	if len(task.DeletionVectorFiles) > 0 {
		bm, err := dv.ReadDV(fs, task.DeletionVectorFiles[0])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", task.DeletionVectorFiles[0].FilePath(), err)
		}
		return func(p int64) bool { return bm.Contains(uint64(p)) }, nil
	}
	var gone []int64
	target := task.File.FilePath()
	for _, del := range task.DeleteFiles {
		if del.FileFormat() != iceberg.ParquetFile {
			return nil, fmt.Errorf("%s: position deletes in %s cannot be read", del.FilePath(), del.FileFormat())
		}
		err := readPositions(ctx, fs, del.FilePath(), func(paths *array.String, pos *array.Int64) {
			for i := range paths.Len() {
				if paths.Value(i) == target {
					gone = append(gone, pos.Value(i))
				}
			}
		})
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", del.FilePath(), err)
		}
	}
	if len(gone) == 0 {
		return nil, nil
	}
	slices.Sort(gone)
	return func(p int64) bool { _, ok := slices.BinarySearch(gone, p); return ok }, nil
}

// readLiveIO reads the data file at loc through fs, conformed to sch
// (nil: as it is), and passes on its rows at positions not in del
// (sorted).
func readLiveIO(ctx context.Context, fs iceio.IO, loc string, del []int64, sch *arrow.Schema, fn func(arrow.RecordBatch) error) error {
	pf, err := openParquet(fs, loc)
	if err != nil {
		return err
	}
	defer pf.Close()
	return liveRows(ctx, pf, del, sch, memory.DefaultAllocator, fn)
}
