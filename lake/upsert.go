package lake

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/writer"
)

// Upsert tables hold the current state: one live row per primary key.
//
// An input's commit to such a table is one RowDelta of three files, as
// Flink's Iceberg sink in upsert mode writes them: the data file holds
// every row of the input in changelog order (it is the changelog-mode
// file); a position-delete file removes, in that same file, every row that
// is not its key's last image (-U and -D rows, and images a later row of
// the input replaces); an equality-delete file holds each key the input
// touches, once, and removes the key's rows of earlier commits. (Equality
// deletes never apply to data of their own commit, position deletes do:
// so a key's final image survives, whatever the input did to it before.)
// Memory is the map of the input's keys (to their last position) and the
// positions deleted, not the rows. Last images that lack columns are
// completed when the delta closes (merge.go).

// Table modes.
const (
	ModeChangelog = "changelog"
	ModeUpsert    = "upsert"
)

// PropMode is the table property that records a table's mode.
const PropMode = "cdcetl.table-mode"

// Reserved Iceberg field IDs of a position-delete file's columns.
const (
	posFilePathID = 2147483546
	posPosID      = 2147483545
)

// Delta is an input's data file for an upsert table, with the delete files
// it makes. Write and Close are the writer's.
type Delta struct {
	t         *Table
	data      writer.Writer
	dataPath  string
	keyCols   []int // record columns of the key
	keyNames  []string
	keyIDs    []int
	unchanged int // record column of _unchanged, or -1
	opts      writer.ParquetOptions

	last       map[string]int64 // key → position of its live image in this file, -1: deleted
	pos        int64
	posDeletes []int64
	keyBuf     []byte

	// lineCol is the record column of each row's line (-1: none); lines
	// are the lines of the rows written, by position, and truncLine the
	// line of the input's last truncate of the table (0: none).
	lineCol   int
	lines     []int32
	truncLine int64

	// unchPend: the keys whose last image so far lacks columns
	// (_unchanged), to the image's position; see merge.go.
	unchPend   map[string]int64
	recSchema  *arrow.Schema
	schema     *arrowconv.Schema
	dataOpts   writer.ParquetOptions
	mergedPath string
	mergedRows int64
	merged     int64
	unresolved int64

	eq      *writer.Parquet
	eqPath  string
	eqRows  int64
	keySch  *arrowconv.Schema
	keyArr  *arrow.Schema
	eqIdx   []int32
	posPath string
}

// NewDelta wraps w, which writes the data file at dataPath with schema s
// (record column 0 is _rowkind), for an upsert commit. opts are the data
// file's writer options (the delete files take its codec).
func (t *Table) NewDelta(w writer.Writer, dataPath string, s *arrowconv.Schema, opts writer.ParquetOptions) (*Delta, error) {
	if len(s.PrimaryKey) == 0 {
		return nil, fmt.Errorf("iceberg table %s: --table-mode upsert needs a primary key, and the table has none (declare PRIMARY KEY (...) NOT ENFORCED, pin the table with a --ddl-dir DDL that has one, or use --table-mode changelog)", t.Name())
	}
	ids := t.FieldIDs()
	d := &Delta{t: t, data: w, dataPath: dataPath, unchanged: -1, lineCol: -1, last: map[string]int64{}, keySch: &arrowconv.Schema{},
		unchPend: map[string]int64{}, schema: s, dataOpts: opts}
	for _, k := range s.PrimaryKey {
		i := slices.IndexFunc(s.Columns, func(c arrowconv.Field) bool { return c.Name == k })
		if i < 0 {
			return nil, fmt.Errorf("iceberg table %s: primary key column %s is not a column", t.Name(), k)
		}
		switch s.Columns[i].Type.Kind {
		case arrowconv.Float, arrowconv.Double, arrowconv.Array, arrowconv.Map, arrowconv.Multiset, arrowconv.Row:
			return nil, fmt.Errorf("iceberg table %s: primary key column %s is %s: Iceberg equality deletes cannot match it", t.Name(), k, s.Columns[i].Type)
		}
		d.keyCols = append(d.keyCols, i+1)
		d.keyNames = append(d.keyNames, k)
		d.keySch.Columns = append(d.keySch.Columns, s.Columns[i])
		id := ids([]string{k})
		if id == 0 {
			return nil, fmt.Errorf("iceberg table %s: no field ID for key column %s", t.Name(), k)
		}
		d.keyIDs = append(d.keyIDs, int(id))
	}
	for i, c := range s.Columns {
		if c.Name == "_unchanged" && c.Type.Kind == arrowconv.Array {
			d.unchanged = i + 1
		}
		if c.MetadataKey == "file.line" && c.Type.Kind == arrowconv.BigInt {
			d.lineCol = i + 1
		}
	}
	d.keyArr = d.keySch.ArrowSchema()
	fs := make([]arrow.Field, 0, len(d.keySch.Columns))
	for _, f := range d.keyArr.Fields()[1:] {
		fs = append(fs, f)
	}
	d.keyArr = arrow.NewSchema(fs, nil)
	d.opts = writer.ParquetOptions{Compression: opts.Compression, CreatedBy: opts.CreatedBy, Iceberg: true, NoRowKind: true, Concurrency: 1, PageBytes: 64 << 10, Required: s.PrimaryKey}
	return d, nil
}

// Buffered and FlushRowGroup bound the data file's memory like any
// Parquet output's.
func (d *Delta) Buffered() int {
	if f, ok := d.data.(interface{ Buffered() int }); ok {
		return f.Buffered()
	}
	return 0
}

func (d *Delta) FlushRowGroup() error {
	if f, ok := d.data.(interface{ FlushRowGroup() error }); ok {
		return f.FlushRowGroup()
	}
	return nil
}

// Write tracks the keys of rec's rows, then writes rec to the data file.
func (d *Delta) Write(ctx context.Context, rec arrow.RecordBatch) error {
	kinds := rec.Column(0).(*array.Dictionary).Indices().(*array.Int8).Int8Values()
	if d.recSchema == nil {
		d.recSchema = rec.Schema()
	}
	cols := make([]arrow.Array, len(d.keyCols))
	for j, c := range d.keyCols {
		cols[j] = rec.Column(c)
	}
	var unch *array.List
	if d.unchanged >= 0 {
		unch, _ = rec.Column(d.unchanged).(*array.List)
	}
	d.eqIdx = d.eqIdx[:0]
	for i := range int(rec.NumRows()) {
		var null int
		if d.keyBuf, null = arrowconv.AppendKey(d.keyBuf[:0], cols, i); null >= 0 {
			return fmt.Errorf("iceberg table %s: a row has a NULL primary key (%s): an upsert table cannot hold it", d.t.Name(), d.keyNames[null])
		}
		p := d.pos + int64(i)
		prev, seen := d.last[string(d.keyBuf)]
		switch {
		case !seen:
			d.eqIdx = append(d.eqIdx, int32(i))
		case prev >= 0:
			d.posDeletes = append(d.posDeletes, prev)
		}
		switch arrowconv.RowKind(kinds[i]) {
		case arrowconv.Insert, arrowconv.UpdateAfter:
			lacks := false
			if unch != nil && unch.IsValid(i) {
				from, to := unch.ValueOffsets(i)
				lacks = to > from
			}
			if lacks {
				d.unchPend[string(d.keyBuf)] = p
			} else if len(d.unchPend) > 0 {
				delete(d.unchPend, string(d.keyBuf))
			}
			d.last[string(d.keyBuf)] = p
		default:
			if len(d.unchPend) > 0 {
				delete(d.unchPend, string(d.keyBuf))
			}
			d.last[string(d.keyBuf)] = -1
			d.posDeletes = append(d.posDeletes, p)
		}
	}
	if len(d.eqIdx) > 0 {
		if err := d.writeKeys(ctx, cols); err != nil {
			return err
		}
	}
	if d.lineCol >= 0 {
		if ls, ok := rec.Column(d.lineCol).(*array.Int64); ok {
			for i := range ls.Len() {
				d.lines = append(d.lines, int32(min(ls.Value(i), math.MaxInt32)))
			}
		}
	}
	d.pos += rec.NumRows()
	return d.data.Write(ctx, rec)
}

// DeletesDir is the directory of a table's delete files, beside data/:
// a reader that globs data/**/*.parquet (a changelog read as plain Parquet)
// never picks one up.
const DeletesDir = "deletes"

// deletePath is where the delete file of kind for the delta's data file
// goes: deletes/ mirrors data/ (partition directories included).
func (d *Delta) deletePath(kind string) string {
	p := strings.TrimSuffix(d.dataPath, ".parquet") + "." + kind + ".parquet"
	if rel, err := filepath.Rel(filepath.Join(d.t.dir, "data"), p); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.Join(d.t.dir, DeletesDir, rel)
	}
	return p
}

// writeKeys appends the key values of the rows first seen in this batch
// to the equality-delete file.
func (d *Delta) writeKeys(ctx context.Context, cols []arrow.Array) error {
	if d.eq == nil {
		d.eqPath = d.deletePath("eq-deletes")
		opts := d.opts
		ids := map[string]int32{}
		for j, n := range d.keyNames {
			ids[n] = int32(d.keyIDs[j])
		}
		opts.FieldIDs = func(path []string) int32 { return ids[strings.Join(path, "\x00")] }
		var err error
		if d.eq, err = writer.NewParquet(d.eqPath, d.keySch, opts); err != nil {
			return err
		}
	}
	bld := array.NewInt32Builder(memory.DefaultAllocator)
	bld.AppendValues(d.eqIdx, nil)
	idx := bld.NewArray()
	bld.Release()
	defer idx.Release()
	taken := make([]arrow.Array, len(cols))
	for j, c := range cols {
		a, err := compute.TakeArray(ctx, c, idx)
		if err != nil {
			return err
		}
		defer a.Release()
		taken[j] = a
	}
	rec := array.NewRecordBatch(d.keyArr, taken, int64(idx.Len()))
	defer rec.Release()
	d.eqRows += int64(idx.Len())
	return d.eq.Write(ctx, rec)
}

// Truncate records that the input empties the table at line: its rows
// before it are deleted, and the commit removes what the table held.
func (d *Delta) Truncate(line int64) error {
	if d.lineCol < 0 && d.pos > 0 {
		return fmt.Errorf("iceberg table %s: a truncate at line %d cannot be placed among the input's rows without their lines: declare a column METADATA FROM 'file.line' (inferred tables have _line unless --no-lineage)", d.t.Name(), line)
	}
	d.truncLine = max(d.truncLine, line)
	return nil
}

// Close closes the data file and writes the delete files.
func (d *Delta) Close() error {
	if d.truncLine > 0 {
		// Every row before the truncate goes, whatever its kind.
		end := sort.Search(len(d.lines), func(i int) bool { return int64(d.lines[i]) > d.truncLine })
		if d.lineCol < 0 {
			end = 0
		}
		for p := range int64(end) {
			d.posDeletes = append(d.posDeletes, p)
		}
	}
	if err := d.data.Close(); err != nil {
		d.abortDeletes()
		return err
	}
	if d.eq != nil {
		if err := d.eq.Close(); err != nil {
			d.abortDeletes()
			return err
		}
	}
	if d.truncLine > 0 {
		// Images before the truncate are deleted: nothing to complete.
		for k, p := range d.unchPend {
			if d.lineCol < 0 || int(p) >= len(d.lines) || int64(d.lines[p]) <= d.truncLine {
				delete(d.unchPend, k)
			}
		}
	}
	if err := d.mergeUnchanged(context.Background()); err != nil {
		d.abortDeletes()
		return err
	}
	if len(d.posDeletes) == 0 {
		return nil
	}
	slices.Sort(d.posDeletes)
	d.posDeletes = slices.Compact(d.posDeletes)
	d.posPath = d.deletePath("pos-deletes")
	sch := &arrowconv.Schema{Columns: []arrowconv.Field{{Name: "file_path", Type: arrowconv.Type{Kind: arrowconv.String}}, {Name: "pos", Type: arrowconv.Type{Kind: arrowconv.BigInt}}}}
	opts := d.opts
	opts.Required = []string{"file_path", "pos"}
	opts.FieldIDs = func(path []string) int32 {
		switch strings.Join(path, "\x00") {
		case "file_path":
			return posFilePathID
		case "pos":
			return posPosID
		}
		return 0
	}
	w, err := writer.NewParquet(d.posPath, sch, opts)
	if err != nil {
		return err
	}
	url := d.t.lake.URL(d.dataPath)
	arrSch := arrow.NewSchema([]arrow.Field{{Name: "file_path", Type: arrow.BinaryTypes.String, Nullable: true}, {Name: "pos", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	for from := 0; from < len(d.posDeletes); from += 1 << 16 {
		to := min(len(d.posDeletes), from+1<<16)
		sb := array.NewStringBuilder(memory.DefaultAllocator)
		for range to - from {
			sb.Append(url)
		}
		pb := array.NewInt64Builder(memory.DefaultAllocator)
		pb.AppendValues(d.posDeletes[from:to], nil)
		fp, ps := sb.NewArray(), pb.NewArray()
		sb.Release()
		pb.Release()
		rec := array.NewRecordBatch(arrSch, []arrow.Array{fp, ps}, int64(to-from))
		err := w.Write(context.Background(), rec)
		rec.Release()
		fp.Release()
		ps.Release()
		if err != nil {
			w.Abort()
			return err
		}
	}
	return w.Close()
}

// Abort removes what the delta wrote.
func (d *Delta) Abort() error {
	err := d.data.Abort()
	d.abortDeletes()
	return err
}

func (d *Delta) abortDeletes() {
	if d.eq != nil {
		d.eq.Abort()
	}
	if d.mergedPath != "" {
		os.Remove(d.mergedPath)
	}
	if d.posPath != "" {
		os.Remove(d.posPath)
	}
}

// Merged counts the columns of last images filled from earlier rows (the
// input's or the table's), and those no row had (NULL, listed).
func (d *Delta) Merged() (filled, unresolved int64) { return d.merged, d.unresolved }

// Files are the delta's files: the data file (and the completed images'),
// then the delete files made.
func (d *Delta) Files() []string {
	out := []string{d.dataPath}
	if d.mergedPath != "" {
		out = append(out, d.mergedPath)
	}
	if d.posPath != "" {
		out = append(out, d.posPath)
	}
	if d.eq != nil {
		out = append(out, d.eqPath)
	}
	return out
}

// CommitDelta commits an input's delta as one RowDelta recording in,
// unless the table holds in already (then the delta's files are removed
// and CommitDelta reports false).
func (t *Table) CommitDelta(ctx context.Context, d *Delta, in Input, run, rows string) (bool, error) {
	return t.CommitDeltas(ctx, []*Delta{d}, in, run, rows)
}

// CommitDeltas commits the deltas of an input (one per partition) as one
// RowDelta.
func (t *Table) CommitDeltas(ctx context.Context, ds []*Delta, in Input, run, rows string) (bool, error) {
	var files []string
	trunc := false
	for _, d := range ds {
		files = append(files, d.Files()...)
		trunc = trunc || d.truncLine > 0
	}
	return t.commit(ctx, files, in, run, rows, func(tx *table.Transaction, props iceberg.Properties) error {
		if trunc {
			if err := t.removeAll(ctx, tx, props); err != nil {
				return err
			}
		}
		spec := t.tbl.Metadata().PartitionSpec()
		rd := tx.NewRowDelta(props)
		for _, d := range ds {
			df, err := t.dataFile(ctx, d.dataPath)
			if err != nil {
				return err
			}
			rd.AddRows(df)
			var part map[int]any
			if v, ok := t.partOf.Load(d.dataPath); ok && spec.NumFields() > 0 {
				part = v.(map[int]any)
			}
			if d.mergedPath != "" {
				if part != nil {
					t.partOf.Store(d.mergedPath, part)
				}
				mf, err := t.dataFile(ctx, d.mergedPath)
				if err != nil {
					return err
				}
				rd.AddRows(mf)
			}
			if d.posPath != "" {
				f, err := t.deleteFile(ctx, spec, iceberg.EntryContentPosDeletes, d.posPath, int64(len(d.posDeletes)), nil, part)
				if err != nil {
					return err
				}
				rd.AddDeletes(f)
			}
			if d.eq != nil {
				f, err := t.deleteFile(ctx, spec, iceberg.EntryContentEqDeletes, d.eqPath, d.eqRows, d.keyIDs, part)
				if err != nil {
					return err
				}
				rd.AddDeletes(f)
			}
		}
		return rd.Commit(ctx)
	})
}

// removeAll stages, in tx, the removal of every file the table holds (a
// truncate): one snapshot without data. Delete files go too: they apply to
// nothing any more.
func (t *Table) removeAll(ctx context.Context, tx *table.Transaction, props iceberg.Properties) error {
	snap := t.tbl.CurrentSnapshot()
	if snap == nil {
		return nil
	}
	fs, err := t.tbl.FS(ctx)
	if err != nil {
		return err
	}
	mfs, err := snap.Manifests(fs)
	if err != nil {
		return err
	}
	var data, dels []iceberg.DataFile
	for _, m := range mfs {
		es, err := m.FetchEntries(fs, true)
		if err != nil {
			return err
		}
		for _, e := range es {
			if e.DataFile().ContentType() == iceberg.EntryContentData {
				data = append(data, e.DataFile())
			} else {
				dels = append(dels, e.DataFile())
			}
		}
	}
	if len(data)+len(dels) == 0 {
		return nil
	}
	return tx.ReplaceFiles(ctx, data, nil, dels, props)
}

// CommitTruncate empties the table for an input that truncates it and has
// no rows of it, recording the input.
func (t *Table) CommitTruncate(ctx context.Context, in Input, run string) (bool, error) {
	return t.commit(ctx, nil, in, run, "", func(tx *table.Transaction, props iceberg.Properties) error {
		if t.tbl.CurrentSnapshot() == nil {
			return nil
		}
		return t.removeAll(ctx, tx, props)
	})
}

// deleteFile describes a delete file for a manifest (uploaded first when
// the warehouse is in a bucket).
func (t *Table) deleteFile(ctx context.Context, spec iceberg.PartitionSpec, content iceberg.ManifestEntryContent, path string, rows int64, eqIDs []int, part map[int]any) (iceberg.DataFile, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	fs, err := t.tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	loc, err := t.lake.publish(ctx, fs, path)
	if err != nil {
		return nil, err
	}
	b, err := iceberg.NewDataFileBuilder(spec, content, loc, iceberg.ParquetFile, part, nil, nil, rows, st.Size())
	if err != nil {
		return nil, err
	}
	if eqIDs != nil {
		b.EqualityFieldIDs(eqIDs)
	}
	return b.Build(), nil
}
