package lake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/internal/lazysubstrait"
	"github.com/cdcetl/cdcetl/writer"
)

// Upsert commit groups (see upsert.go): the inputs of a group, in their
// order, become one RowDelta. A key's live row is the last image of the
// last input that touched it; every other row of the key goes by
// position: in the group's own files (what Delta.Write and a later input
// replace), and in the table's files (found by reading their key columns).

// UpsertInput is an input's share of an upsert commit: its deltas (one
// per partition it has rows in) and what the snapshot records of it.
type UpsertInput struct {
	In     Input
	Rows   string // its rows by kind, JSON (for people)
	Deltas []*Delta
}

// GroupResult is what became of an input of a group commit.
type GroupResult struct {
	// Committed: the table took it now (false: it held it already).
	Committed bool
	// Files are the table's data files that hold its rows (local paths;
	// shared with the other inputs of its group).
	Files []string
}

// CommitUpserts commits the inputs the table does not hold yet, in their
// order, as one snapshot that lists them all. The live rows of their data
// files are packed into one data file per partition (and schema), so the
// table gains one file per commit, not per input, and the deltas' own
// files are removed. It reports what became of each input.
func (t *Table) CommitUpserts(ctx context.Context, ins []UpsertInput, run string) ([]GroupResult, error) {
	var todo []int
	var packs []*pack
	var written []string // this attempt's packed and delete files
	ok, err := t.commitWith(ctx, func() (iceberg.Properties, bool, error) {
		var props iceberg.Properties
		todo, props = t.unheld(len(ins), func(i int) (Input, string) { return ins[i].In, ins[i].Rows }, run)
		return props, len(todo) > 0, nil
	}, func(tx *table.Transaction, props iceberg.Properties) error {
		removeAll(written) // a conflict's retry writes them again
		var err error
		packs, written, err = t.stageUpserts(ctx, tx, props, ins, todo, run)
		return err
	})
	if err != nil {
		removeAll(written)
		return nil, fmt.Errorf("iceberg table %s: committing %s: %w", t.Name(), groupName(ins[0].In.Path, ins[len(ins)-1].In.Path, len(ins)), err)
	}
	res := make([]GroupResult, len(ins))
	if ok {
		for _, i := range todo {
			res[i].Committed = true
		}
		for _, p := range packs {
			for _, i := range p.inputs {
				if !slices.Contains(res[i].Files, p.path) {
					res[i].Files = append(res[i].Files, p.path)
				}
			}
		}
	}
	// The deltas' files are in the packed ones now (or were held).
	for _, u := range ins {
		for _, d := range u.Deltas {
			removeAll(d.Files())
		}
	}
	return res, nil
}

// unheld lists the group's inputs (n of them: in(i) is input i and its
// rows by kind) the table does not hold yet, and the snapshot summary
// that records them.
func (t *Table) unheld(n int, in func(int) (Input, string), run string) ([]int, iceberg.Properties) {
	var todo []int
	var recs []Input
	for i := range n {
		x, rows := in(i)
		if _, held := t.committed[x.ID()]; held {
			continue
		}
		todo = append(todo, i)
		if rows != "" {
			x.Rows = json.RawMessage(rows)
		}
		recs = append(recs, x)
	}
	raw, _ := json.Marshal(recs)
	return todo, iceberg.Properties{SummaryInputs: string(raw), SummaryRun: run}
}

// rowAt is where a key's live row is: a file of the group, or nowhere.
type rowAt struct {
	file *newFile // nil: the key ends deleted
	pos  int64
}

// newFile is a data file of the group, with the positions it loses.
type newFile struct {
	path  string // local
	d     *Delta
	input int // index in the inputs
	part  map[int]any
	del   []int64
}

// pack is a data file of the commit: the live rows of consecutive files
// of the group in one partition, of one schema.
type pack struct {
	path   string
	files  []*newFile
	inputs []int
	df     iceberg.DataFile
}

// oldFile is a data file of the table with rows of the group's keys.
type oldFile struct {
	df   iceberg.DataFile
	del  []int64
	dv   iceberg.DataFile // its deletion vector (v3), replaced by one holding del too
	prev *dv.RoaringPositionBitmap
	// whole: del is every row of the file, none deleted before.
	whole bool
}

// stageUpserts stages the group's RowDelta in tx and returns the delete
// files it wrote.
func (t *Table) stageUpserts(ctx context.Context, tx *table.Transaction, props iceberg.Properties, ins []UpsertInput, todo []int, run string) ([]*pack, []string, error) {
	meta := t.tbl.Metadata()
	spec := meta.PartitionSpec()
	trunc := false
	var deltas []*Delta
	var inputOf []int
	for n, i := range todo {
		for _, d := range ins[i].Deltas {
			if d.truncLine > 0 {
				if n > 0 {
					return nil, nil, fmt.Errorf("%s truncates the table and is not the first input of its commit group", ins[i].In.Path)
				}
				trunc = true
			}
			deltas = append(deltas, d)
			inputOf = append(inputOf, i)
		}
	}
	if trunc {
		if err := t.removeAll(ctx, tx, props); err != nil {
			return nil, nil, err
		}
	}
	var news []*newFile
	// Where each key's live row is, across the group's files. A group of
	// one input needs no map of its own (its deltas, one per partition,
	// have keys of their own, and no other file of the group has rows of
	// them): one input of millions of keys then holds them once.
	var live map[string]rowAt
	if slices.ContainsFunc(inputOf, func(i int) bool { return i != inputOf[0] }) {
		live = map[string]rowAt{}
	}
	for n, d := range deltas {
		data := &newFile{path: d.dataPath, d: d, input: inputOf[n], del: slices.Clone(d.posDeletes)}
		if v, ok := t.partOf.Load(d.dataPath); ok && spec.NumFields() > 0 {
			data.part = v.(map[int]any)
		}
		var merged *newFile
		if d.mergedPath != "" {
			merged = &newFile{path: d.mergedPath, d: d, input: inputOf[n], part: data.part}
			if data.part != nil {
				t.partOf.Store(d.mergedPath, data.part)
			}
		}
		for k, p := range d.last {
			if live == nil {
				break
			}
			if prev, ok := live[k]; ok && prev.file != nil {
				prev.file.del = append(prev.file.del, prev.pos)
			}
			switch mp, ok := d.mergedAt[k]; {
			case ok:
				live[k] = rowAt{file: merged, pos: mp}
			case p >= 0:
				live[k] = rowAt{file: data, pos: p}
			default:
				live[k] = rowAt{}
			}
		}
		news = append(news, data)
		if merged != nil {
			news = append(news, merged)
		}
	}
	packs, written, err := t.pack(ctx, news, ins, run)
	if err != nil {
		return nil, written, err
	}
	var olds []*oldFile
	if !trunc && t.tbl.CurrentSnapshot() != nil && len(deltas) > 0 {
		touched := func(k string) bool { _, ok := live[k]; return ok }
		if live == nil {
			touched = func(k string) bool {
				for _, d := range deltas {
					if _, ok := d.last[k]; ok {
						return true
					}
				}
				return false
			}
		}
		if olds, err = t.locate(ctx, touched, deltas); err != nil {
			return nil, written, fmt.Errorf("finding the rows of the keys it changes: %w", err)
		}
	}
	rd := tx.NewRowDelta(props)
	for _, p := range packs {
		rd.AddRows(p.df)
	}
	stem := ins[todo[0]].In.Stem
	if stem == "" {
		stem = "commit"
	}
	var dels []string
	if meta.Version() >= 3 {
		dels, err = t.writeDVs(ctx, rd, olds, stem, run)
	} else {
		dels, err = t.writePosDeletes(ctx, rd, olds, stem, run)
	}
	written = append(written, dels...)
	if err != nil {
		return nil, written, err
	}
	if len(packs) == 0 && len(dels) == 0 && !trunc {
		// Nothing changes the table's rows (every change was undone in
		// the group): a snapshot of nothing records the inputs.
		return packs, written, tx.NewRowDelta(props).Commit(ctx)
	}
	return packs, written, rd.Commit(ctx)
}

// pack writes the live rows of the group's files (those of positions not
// deleted) into packed data files: consecutive files of one partition and
// record schema share one, in the group's order (a key's live row is
// unique, so the order only keeps the changelog's for people).
func (t *Table) pack(ctx context.Context, news []*newFile, ins []UpsertInput, run string) ([]*pack, []string, error) {
	var packs []*pack
	open := map[string]*pack{} // by partition directory
	size := map[*pack]int64{}
	target := t.targetSize()
	var written []string
	for _, f := range news {
		if f.d.recSchema == nil {
			continue // no rows
		}
		st, err := os.Stat(f.path)
		if err != nil {
			return nil, nil, err
		}
		dir := filepath.Dir(f.path)
		p := open[dir]
		if p != nil && (!p.files[0].d.recSchema.Equal(f.d.recSchema) || size[p]+st.Size() > target) {
			p = nil
		}
		if p == nil {
			stem := ins[f.input].In.Stem
			if stem == "" {
				stem = "commit"
			}
			p = &pack{path: filepath.Join(dir, stem+"-"+run+".packed.parquet")}
			if slices.ContainsFunc(packs, func(q *pack) bool { return q.path == p.path }) {
				p.path = filepath.Join(dir, fmt.Sprintf("%s-%s.packed%d.parquet", stem, run, len(packs)))
			}
			open[dir] = p
			packs = append(packs, p)
		}
		p.files = append(p.files, f)
		size[p] += st.Size()
		if !slices.Contains(p.inputs, f.input) {
			p.inputs = append(p.inputs, f.input)
		}
	}
	out := packs[:0]
	for _, p := range packs {
		written = append(written, p.path)
		rows, err := t.writePack(ctx, p)
		if err != nil {
			return nil, written, fmt.Errorf("packing %s: %w", p.path, err)
		}
		if rows == 0 {
			os.Remove(p.path)
			continue
		}
		if part := p.files[0].part; part != nil {
			t.partOf.Store(p.path, part)
		}
		if p.df, err = t.dataFile(ctx, p.path); err != nil {
			return nil, written, err
		}
		out = append(out, p)
	}
	return out, written, nil
}

// writePack copies the live rows of p's files into p's file.
func (t *Table) writePack(ctx context.Context, p *pack) (int64, error) {
	d0 := p.files[0].d
	opts := d0.dataOpts
	opts.Metadata = map[string]string{}
	for k, v := range d0.dataOpts.Metadata {
		if k != "cdcetl.source" {
			opts.Metadata[k] = v
		}
	}
	opts.Metadata["cdcetl.inputs"] = strconv.Itoa(len(p.inputs))
	w, err := writer.NewParquet(p.path, d0.schema, opts)
	if err != nil {
		return 0, err
	}
	mem := memory.DefaultAllocator
	var rows int64
	for _, f := range p.files {
		del := slices.Clone(f.del)
		slices.Sort(del)
		del = slices.Compact(del)
		err := readLive(ctx, f.path, del, f.d.recSchema, mem, func(rec arrow.RecordBatch) error {
			rows += rec.NumRows()
			return w.Write(ctx, rec)
		})
		if err != nil {
			w.Abort()
			return 0, fmt.Errorf("%s: %w", f.path, err)
		}
	}
	if rows == 0 {
		w.Abort()
		return 0, nil
	}
	return rows, w.Close()
}

// readLive reads the data file at path, conformed to sch, and passes on
// its rows at positions not in del (sorted).
func readLive(ctx context.Context, path string, del []int64, sch *arrow.Schema, mem memory.Allocator, fn func(arrow.RecordBatch) error) error {
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		return err
	}
	defer pf.Close()
	return liveRows(ctx, pf, del, sch, mem, fn)
}

// liveRows passes on the rows of pf at positions not in del (sorted),
// conformed to sch (nil: as they are).
func liveRows(ctx context.Context, pf *file.Reader, del []int64, sch *arrow.Schema, mem memory.Allocator, fn func(arrow.RecordBatch) error) error {
	var base int64
	return eachBatch(ctx, pf, nil, 8192, func(rec arrow.RecordBatch) error {
		b := rec
		var err error
		if sch != nil {
			if b, err = conformTo(ctx, rec, sch, mem); err != nil {
				return err
			}
		} else {
			b.Retain()
		}
		n := b.NumRows()
		defer func() { base += n }()
		lo, _ := slices.BinarySearch(del, base)
		hi, _ := slices.BinarySearch(del, base+n)
		keep := b
		switch {
		case lo == hi:
		case hi-lo == int(n):
			b.Release()
			return nil
		default:
			ib := array.NewInt64Builder(mem)
			j := lo
			for i := base; i < base+n; i++ {
				if j < hi && del[j] == i {
					j++
					continue
				}
				ib.Append(i - base)
			}
			idx := ib.NewArray()
			ib.Release()
			keep, err = takeRows(ctx, b, idx, mem)
			idx.Release()
			b.Release()
			if err != nil {
				return err
			}
		}
		defer keep.Release()
		return fn(keep)
	})
}

// eachBatch reads the columns cols (nil: all) of a Parquet file in record
// batches of up to batch rows, passing each to fn (which must not keep it).
func eachBatch(ctx context.Context, pf *file.Reader, cols []int, batch int64, fn func(arrow.RecordBatch) error) error {
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: batch}, memory.DefaultAllocator)
	if err != nil {
		return err
	}
	rr, err := fr.GetRecordReader(ctx, cols, nil)
	if err != nil {
		return err
	}
	defer rr.Release()
	for rr.Next() {
		if err := fn(rr.RecordBatch()); err != nil {
			return err
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// takeRows is the rows of b at idx.
func takeRows(ctx context.Context, b arrow.RecordBatch, idx arrow.Array, mem memory.Allocator) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, b.NumCols())
	for c := range cols {
		a, err := compute.TakeArray(compute.WithAllocator(ctx, mem), b.Column(c), idx)
		if err != nil {
			for _, x := range cols[:c] {
				x.Release()
			}
			return nil, err
		}
		cols[c] = a
	}
	out := array.NewRecordBatch(b.Schema(), cols, int64(idx.Len()))
	for _, a := range cols {
		a.Release()
	}
	return out, nil
}

// locate finds the rows of the table's current snapshot whose keys the
// group touches (touched), and are not deleted yet. Only data
// files whose key bounds overlap those of the group's files are read,
// and of them only the key columns.
func (t *Table) locate(ctx context.Context, touched func(string) bool, deltas []*Delta) ([]*oldFile, error) {
	d := deltas[0]
	if d.recSchema == nil {
		return nil, nil
	}
	if err := lazysubstrait.Ensure(); err != nil {
		return nil, err
	}
	// Only files whose key bounds overlap a delta's keys can hold them
	// (single-column keys of integers or strings; others read every file).
	var ors []iceberg.BooleanExpression
	for _, d := range deltas {
		lo, hi, ok := d.keyRange()
		if !ok {
			ors = nil
			break
		}
		ref := iceberg.Reference(d.keyNames[0])
		ors = append(ors, iceberg.NewAnd(iceberg.LiteralPredicate(iceberg.OpGTEQ, ref, lo), iceberg.LiteralPredicate(iceberg.OpLTEQ, ref, hi)))
	}
	var filter iceberg.BooleanExpression = iceberg.AlwaysTrue{}
	switch {
	case len(ors) == 1:
		filter = ors[0]
	case len(ors) > 1:
		filter = iceberg.NewOr(ors[0], ors[1], ors[2:]...)
	}
	tasks, err := t.tbl.Scan(table.WithRowFilter(filter)).PlanFiles(ctx)
	if err != nil {
		return nil, err
	}
	fs, err := t.tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	types := make([]arrow.DataType, len(d.keyCols))
	for j, c := range d.keyCols {
		types[j] = d.recSchema.Field(c).Type
	}
	var out []*oldFile
	var buf []byte
	for _, task := range tasks {
		of := &oldFile{df: task.File}
		var deleted func(int64) bool
		if len(task.DeletionVectorFiles) > 0 {
			of.dv = task.DeletionVectorFiles[0]
			if of.prev, err = dv.ReadDV(fs, of.dv); err != nil {
				return nil, fmt.Errorf("%s: %w", of.dv.FilePath(), err)
			}
			deleted = func(p int64) bool { return of.prev.Contains(uint64(p)) }
		} else if gone, err := t.fileScopedDeletes(ctx, fs, task); err != nil {
			return nil, err
		} else if len(gone) > 0 {
			deleted = func(p int64) bool { _, ok := slices.BinarySearch(gone, p); return ok }
		}
		err := readKeys(ctx, fs, task.File.FilePath(), d.keyNames, types, func(cols []arrow.Array, base int64) {
			for i := range cols[0].Len() {
				var null int
				if buf, null = arrowconv.AppendKey(buf[:0], cols, i); null >= 0 {
					continue
				}
				if !touched(string(buf)) {
					continue
				}
				if p := base + int64(i); deleted == nil || !deleted(p) {
					of.del = append(of.del, p)
				}
			}
		})
		if err != nil {
			return nil, fmt.Errorf("reading the keys of %s: %w", task.File.FilePath(), err)
		}
		if len(of.del) > 0 {
			out = append(out, of)
		}
	}
	return out, nil
}

// openParquet opens the Parquet file at loc through fs (closing the
// reader closes the file); errors name the file.
func openParquet(fs iceio.IO, loc string) (*file.Reader, error) {
	f, err := fs.Open(loc)
	if err != nil {
		return nil, err
	}
	pf, err := file.NewParquetReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", loc, err)
	}
	return pf, nil
}

// readKeys reads the key columns of a data file, cast to types, and
// passes them to each batch's fn with the position of its first row.
func readKeys(ctx context.Context, fs iceio.IO, loc string, names []string, types []arrow.DataType, fn func(cols []arrow.Array, base int64)) error {
	pf, err := openParquet(fs, loc)
	if err != nil {
		return err
	}
	defer pf.Close()
	idx := make([]int, len(names))
	for j, n := range names {
		if idx[j] = pf.MetaData().Schema.ColumnIndexByName(n); idx[j] < 0 {
			return fmt.Errorf("it has no column %s", n)
		}
	}
	// Leaf column indices to the schema's top-level fields (keys are
	// top-level primitives: each is its own leaf).
	sm, err := pqarrow.NewSchemaManifest(pf.MetaData().Schema, pf.MetaData().KeyValueMetadata(), nil)
	if err != nil {
		return err
	}
	fields := make([]int, len(idx))
	for j, ci := range idx {
		fields[j] = -1
		for fi, fld := range sm.Fields {
			if fld.ColIndex == ci {
				fields[j] = fi
			}
		}
		if fields[j] < 0 {
			return fmt.Errorf("column %s is not a top-level column", names[j])
		}
	}
	var base int64
	cols := make([]arrow.Array, len(names))
	return eachBatch(ctx, pf, fields, 64<<10, func(rec arrow.RecordBatch) error {
		for j := range names {
			c, err := castTo(ctx, rec.Column(j), types[j], memory.DefaultAllocator)
			if err != nil {
				return err
			}
			cols[j] = c
		}
		fn(cols, base)
		for _, c := range cols {
			c.Release()
		}
		base += rec.NumRows()
		return nil
	})
}

// fileScopedDeletes reads the positions a v2 table's file-scoped position
// deletes (those cdcetl writes) remove from a task's data file, sorted.
// Partition-scoped ones (an earlier cdcetl's, or another writer's) are
// not read: deleting one of their rows again is harmless.
func (t *Table) fileScopedDeletes(ctx context.Context, fs iceio.IO, task table.FileScanTask) ([]int64, error) {
	var out []int64
	target := task.File.FilePath()
	for _, del := range task.DeleteFiles {
		if ref := del.ReferencedDataFile(); ref == nil || *ref != target || del.FileFormat() != iceberg.ParquetFile {
			continue
		}
		err := readPositions(ctx, fs, del.FilePath(), func(paths *array.String, pos *array.Int64) {
			for i := range pos.Len() {
				if paths.Value(i) == target {
					out = append(out, pos.Value(i))
				}
			}
		})
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", del.FilePath(), err)
		}
	}
	slices.Sort(out)
	return out, nil
}

// readPositions reads a position-delete file's (file_path, pos) rows.
func readPositions(ctx context.Context, fs iceio.IO, loc string, fn func(*array.String, *array.Int64)) error {
	pf, err := openParquet(fs, loc)
	if err != nil {
		return err
	}
	defer pf.Close()
	return eachBatch(ctx, pf, nil, 64<<10, func(rec arrow.RecordBatch) error {
		paths, ok1 := rec.Column(0).(*array.String)
		pos, ok2 := rec.Column(1).(*array.Int64)
		if !ok1 || !ok2 {
			return fmt.Errorf("not a position-delete file (columns %s)", rec.Schema())
		}
		fn(paths, pos)
		return nil
	})
}

// deletesName is the local path of a delete file the group writes: below
// deletes/, in the partition directories of the data file it applies to
// (dataLoc), named after the group's first input (so the clean-up after a
// killed run finds it, as it finds the data files).
func (t *Table) deletesName(dataLoc, stem, run, kind string) string {
	dir := ""
	if rel, ok := strings.CutPrefix(dataLoc, strings.TrimSuffix(t.tbl.Location(), "/")+"/data/"); ok {
		if d := path.Dir(rel); d != "." {
			dir = d
		}
	}
	return filepath.Join(t.dir, DeletesDir, filepath.FromSlash(dir), stem+"-"+run+"."+kind)
}

// localWrites makes iceberg-go's writes of delete files land in the
// local warehouse directory (staged like data files: uploaded by publish
// for a warehouse in a bucket).
type localWrites struct {
	iceio.WriteFileIO
	local string
}

func (w localWrites) WriteFile(name string, p []byte) error {
	if err := os.MkdirAll(filepath.Dir(w.local), 0o755); err != nil {
		return err
	}
	f, err := os.Create(w.local)
	if err != nil {
		return err
	}
	if _, err := f.Write(p); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeDVs writes one Puffin file of deletion vectors, one per data file
// that loses rows (a data file's earlier vector merged into its new one,
// and removed), and adds them to rd.
func (t *Table) writeDVs(ctx context.Context, rd *table.RowDelta, olds []*oldFile, stem, run string) ([]string, error) {
	fs, err := t.tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	wfs, ok := fs.(iceio.WriteFileIO)
	if !ok {
		return nil, errors.New("the warehouse's file system cannot write")
	}
	meta := t.tbl.Metadata()
	local := t.deletesName("", stem, run, "dv.puffin")
	w := dv.NewDVWriter(localWrites{WriteFileIO: wfs, local: local}, func(id int32) *iceberg.PartitionSpec { return meta.PartitionSpecByID(int(id)) })
	any := false
	var removed []iceberg.DataFile
	for _, o := range olds {
		if o.prev != nil {
			w.Load(o.df.FilePath(), o.prev, o.df.SpecID(), o.df.Partition())
			removed = append(removed, o.dv)
		}
		if err := w.Add(o.df.FilePath(), o.del, o.df.SpecID(), o.df.Partition()); err != nil {
			return nil, err
		}
		any = true
	}
	if !any {
		return nil, nil
	}
	loc := t.lake.URL(local)
	dfs, err := w.Flush(ctx, loc)
	if err != nil {
		return []string{local}, err
	}
	if _, err := t.lake.publish(ctx, fs, local); err != nil {
		return []string{local}, err
	}
	rd.AddDeletes(dfs...)
	if len(removed) > 0 {
		rd.RemoveDeletes(removed...)
	}
	return []string{local}, nil
}

// writePosDeletes writes, for each data file that loses rows, a
// position-delete file that applies to it alone (file-scoped: its
// referenced data file is set, and its file_path bounds are that file),
// and adds them to rd.
func (t *Table) writePosDeletes(ctx context.Context, rd *table.RowDelta, olds []*oldFile, stem, run string) ([]string, error) {
	type target struct {
		df  iceberg.DataFile
		del []int64
	}
	var ts []target
	for _, o := range olds {
		ts = append(ts, target{o.df, o.del})
	}
	var written []string
	for n, tg := range ts {
		del := slices.Clone(tg.del)
		slices.Sort(del)
		del = slices.Compact(del)
		local := t.deletesName(tg.df.FilePath(), stem, run, strconv.Itoa(n)+".pos-deletes.parquet")
		written = append(written, local)
		if err := t.writePosFile(local, tg.df.FilePath(), del); err != nil {
			return written, err
		}
		df, err := t.deleteFile(ctx, tg.df, local, int64(len(del)))
		if err != nil {
			return written, err
		}
		rd.AddDeletes(df)
	}
	return written, nil
}

// writePosFile writes the position-delete file at local: pos (sorted) of
// the data file at loc.
func (t *Table) writePosFile(local, loc string, pos []int64) error {
	sch := &arrowconv.Schema{Columns: []arrowconv.Field{{Name: "file_path", Type: arrowconv.Type{Kind: arrowconv.String}}, {Name: "pos", Type: arrowconv.Type{Kind: arrowconv.BigInt}}}}
	opts := writer.ParquetOptions{Compression: "snappy", Iceberg: true, NoRowKind: true, Concurrency: 1, PageBytes: 64 << 10, Required: []string{"file_path", "pos"}}
	opts.FieldIDs = func(path []string) int32 {
		switch strings.Join(path, "\x00") {
		case "file_path":
			return posFilePathID
		case "pos":
			return posPosID
		}
		return 0
	}
	if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
		return err
	}
	w, err := writer.NewParquet(local, sch, opts)
	if err != nil {
		return err
	}
	arrSch := arrow.NewSchema([]arrow.Field{{Name: "file_path", Type: arrow.BinaryTypes.String, Nullable: true}, {Name: "pos", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	for from := 0; from < len(pos); from += 1 << 16 {
		to := min(len(pos), from+1<<16)
		sb := array.NewStringBuilder(memory.DefaultAllocator)
		for range to - from {
			sb.Append(loc)
		}
		pb := array.NewInt64Builder(memory.DefaultAllocator)
		pb.AppendValues(pos[from:to], nil)
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

// deleteFile describes the position-delete file at local for the data
// file target (uploaded first when the warehouse is in a bucket).
func (t *Table) deleteFile(ctx context.Context, target iceberg.DataFile, local string, rows int64) (iceberg.DataFile, error) {
	st, err := os.Stat(local)
	if err != nil {
		return nil, err
	}
	fs, err := t.tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	loc, err := t.lake.publish(ctx, fs, local)
	if err != nil {
		return nil, err
	}
	spec := t.tbl.Metadata().PartitionSpecByID(int(target.SpecID()))
	if spec == nil {
		return nil, fmt.Errorf("no partition spec %d for %s", target.SpecID(), target.FilePath())
	}
	b, err := iceberg.NewDataFileBuilder(*spec, iceberg.EntryContentPosDeletes, loc, iceberg.ParquetFile, target.Partition(), nil, nil, rows, st.Size())
	if err != nil {
		return nil, err
	}
	bound := map[int][]byte{posFilePathID: []byte(target.FilePath())}
	b.LowerBoundValues(bound).UpperBoundValues(bound).ReferencedDataFile(target.FilePath())
	return b.Build(), nil
}
