package lake

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/writer"
)

// Changelog commit groups: the inputs of a group, in their order, become
// one snapshot whose data files pack their small files together (one per
// partition and schema, up to the table's target file size), so a table
// loaded from thousands of small inputs has a few files, not thousands.
//
// An input converted again (grown, or rewritten) replaces the rows its
// earlier version committed. A packed file records which inputs its rows
// came from, in order (FooterStems: runs of rows per input stem), so the
// earlier version's rows are found and deleted by position, in a packed
// file or in one compaction made later (which carries the runs over). A
// file that holds one input alone is named after its stem instead.

// FooterStems is the Parquet footer key of a packed data file's inputs:
// a JSON array of {"stem", "rows"}, the runs of its rows in order.
const FooterStems = "cdcetl.stems"

// segment is a run of consecutive rows of a data file from one input
// (Stem "": not known).
type segment struct {
	Stem string `json:"stem"`
	Rows int64  `json:"rows"`
}

// ChangelogInput is an input's share of a changelog commit.
type ChangelogInput struct {
	In    Input
	Rows  string   // its rows by kind, JSON (for people)
	Files []string // its data files (local paths): one per partition
	// Schema and Opts are the files' schema and writer options (a packed
	// file takes them).
	Schema *arrowconv.Schema
	Opts   writer.ParquetOptions
}

// member is a data file of a commit group, in a pack.
type member struct {
	path  string
	input int
	del   []int64 // positions that do not go into the pack (sorted)
	size  int64
}

// packOf is a data file of the commit: the members' rows, or one member
// as it is (passed: its file is committed under its own name).
type packOf struct {
	path    string
	schema  *arrowconv.Schema
	opts    writer.ParquetOptions
	members []member
	passed  bool
	df      iceberg.DataFile
	inputs  []int
}

// CommitChangelog commits the inputs the table does not hold yet, in
// their order, as one snapshot that lists them all, their files packed;
// the files packed are removed, and those of inputs the table held. It
// reports what became of each input.
func (t *Table) CommitChangelog(ctx context.Context, ins []ChangelogInput, run string) ([]GroupResult, error) {
	var todo []int
	var replace map[string]bool
	var packs []*packOf
	var written []string
	ok, err := t.commitWith(ctx, func() (iceberg.Properties, bool, error) {
		var props iceberg.Properties
		todo, props = t.unheld(len(ins), func(i int) (Input, string) { return ins[i].In, ins[i].Rows }, run)
		replace = nil
		for _, i := range todo {
			in := ins[i].In
			if id, ok := t.stems[in.Stem]; ok && in.Stem != "" && id != in.ID() {
				if replace == nil {
					replace = map[string]bool{}
				}
				replace[in.Stem] = true
			}
		}
		return props, len(todo) > 0, nil
	}, func(tx *table.Transaction, props iceberg.Properties) error {
		removeAll(written) // a conflict's retry writes them again
		var err error
		packs, written, err = t.stageChangelog(ctx, tx, props, ins, todo, replace, run)
		return err
	})
	if err != nil {
		removeAll(written)
		return nil, fmt.Errorf("iceberg table %s: committing %s: %w", t.Name(), groupName(ins[0].In.Path, ins[len(ins)-1].In.Path, len(ins)), err)
	}
	res := make([]GroupResult, len(ins))
	keep := map[string]bool{}
	if ok {
		for _, i := range todo {
			res[i].Committed = true
		}
		for _, p := range packs {
			if p.passed {
				keep[p.path] = true
			}
			for _, i := range p.inputs {
				if !slices.Contains(res[i].Files, p.path) {
					res[i].Files = append(res[i].Files, p.path)
				}
			}
		}
	}
	for _, c := range ins {
		for _, f := range c.Files {
			if !keep[f] {
				removeAll([]string{f}) // packed, or held
			}
		}
	}
	return res, nil
}

// groupName names a group's inputs in errors.
func groupName(first, last string, n int) string {
	if n == 1 {
		return first
	}
	return fmt.Sprintf("%d inputs (%s ... %s)", n, first, last)
}

// targetSize is the table's target data file size.
func (t *Table) targetSize() int64 {
	return t.tbl.Properties().GetInt64(table.WriteTargetFileSizeBytesKey, table.WriteTargetFileSizeBytesDefault)
}

// stageChangelog stages the group's snapshot in tx: its packed files,
// and the deletes of the rows the earlier versions of replaced stems
// committed. It returns the files it wrote.
func (t *Table) stageChangelog(ctx context.Context, tx *table.Transaction, props iceberg.Properties, ins []ChangelogInput, todo []int, replace map[string]bool, run string) ([]*packOf, []string, error) {
	var packs []*packOf
	open := map[string]*packOf{} // by partition directory
	target := t.targetSize()
	for _, i := range todo {
		c := ins[i]
		for _, f := range c.Files {
			st, err := os.Stat(f)
			if err != nil {
				return nil, nil, err
			}
			dir := filepath.Dir(f)
			p := open[dir]
			if p != nil && (!sameSchema(p.schema, c.Schema) || packSize(p)+st.Size() > target) {
				p = nil
			}
			if p == nil {
				p = &packOf{schema: c.Schema, opts: c.Opts}
				open[dir] = p
				packs = append(packs, p)
			}
			p.members = append(p.members, member{path: f, input: i, size: st.Size()})
			if !slices.Contains(p.inputs, i) {
				p.inputs = append(p.inputs, i)
			}
		}
	}
	var written []string
	var dfs []iceberg.DataFile
	for n, p := range packs {
		if len(p.members) == 1 {
			// One file alone is committed as it is (named after its input).
			p.passed, p.path = true, p.members[0].path
		} else {
			m0 := p.members[0]
			stem := ins[m0.input].In.Stem
			if stem == "" {
				stem = "commit"
			}
			p.path = filepath.Join(filepath.Dir(m0.path), stem+"-"+run+".packed.parquet")
			if n > 0 && slices.ContainsFunc(packs[:n], func(q *packOf) bool { return q.path == p.path }) {
				p.path = filepath.Join(filepath.Dir(m0.path), fmt.Sprintf("%s-%s.packed%d.parquet", stem, run, n))
			}
			written = append(written, p.path)
			stems := make([]string, len(p.members))
			for k, m := range p.members {
				stems[k] = ins[m.input].In.Stem
			}
			if err := writePacked(ctx, p.path, p.schema, p.opts, p.schema.ArrowSchema(), p.members, stems); err != nil {
				return nil, written, fmt.Errorf("packing %s: %w", p.path, err)
			}
			if v, ok := t.partOf.Load(m0.path); ok {
				t.partOf.Store(p.path, v)
			}
		}
		df, err := t.dataFile(ctx, p.path)
		if err != nil {
			return nil, written, err
		}
		p.df = df
		dfs = append(dfs, df)
	}
	rd := tx.NewRowDelta(props).AddRows(dfs...)
	if len(replace) > 0 && t.tbl.CurrentSnapshot() != nil {
		olds, err := t.rowsOfStems(ctx, replace)
		if err != nil {
			return nil, written, fmt.Errorf("finding the rows earlier versions of its inputs committed: %w", err)
		}
		if len(olds) > 0 && t.tbl.Metadata().Version() < 3 && !slices.ContainsFunc(olds, func(o *oldFile) bool { return !o.whole }) {
			// Whole files go as they are (an overwrite), and leave the
			// table without delete files.
			gone := make([]iceberg.DataFile, len(olds))
			for k, o := range olds {
				gone[k] = o.df
			}
			return packs, written, tx.ReplaceDataFilesWithDataFiles(ctx, gone, dfs, props)
		}
		stem := ins[todo[0]].In.Stem
		if stem == "" {
			stem = "commit"
		}
		var dels []string
		if t.tbl.Metadata().Version() >= 3 {
			dels, err = t.writeDVs(ctx, rd, olds, stem, run)
		} else {
			dels, err = t.writePosDeletes(ctx, rd, olds, stem, run)
		}
		written = append(written, dels...)
		if err != nil {
			return nil, written, err
		}
	}
	return packs, written, rd.Commit(ctx)
}

// packSize is the size of a pack's members' files.
func packSize(p *packOf) int64 {
	var n int64
	for _, m := range p.members {
		n += m.size
	}
	return n
}

// sameSchema reports whether two inputs' files have one schema.
func sameSchema(a, b *arrowconv.Schema) bool {
	return a == b || a != nil && b != nil && a.ArrowSchema().Equal(b.ArrowSchema())
}

// writePacked writes the rows of members (each conformed to recSchema,
// less its del positions) into one data file at path, recording in its
// footer the runs of rows per input stem (stems: each member's).
func writePacked(ctx context.Context, path string, s *arrowconv.Schema, opts writer.ParquetOptions, recSchema *arrow.Schema, members []member, stems []string) error {
	// One pack is written at a time: full-size pages, nothing held.
	opts.PageBytes, opts.HoldRows = 0, 0
	base := opts.Metadata
	opts.Metadata = map[string]string{}
	for k, v := range base {
		if k != "cdcetl.source" && k != FooterStems {
			opts.Metadata[k] = v
		}
	}
	w, err := writer.NewParquet(path, s, opts)
	if err != nil {
		return err
	}
	mem := memory.DefaultAllocator
	var segs []segment
	inputs := map[string]bool{}
	for k, m := range members {
		var rows int64
		err := readLive(ctx, m.path, m.del, recSchema, mem, func(rec arrow.RecordBatch) error {
			rows += rec.NumRows()
			return w.Write(ctx, rec)
		})
		if err != nil {
			w.Abort()
			return fmt.Errorf("%s: %w", m.path, err)
		}
		segs = addSegment(segs, stems[k], rows)
		inputs[stems[k]] = true
	}
	raw, _ := json.Marshal(segs)
	w.SetMetadata(FooterStems, string(raw))
	w.SetMetadata("cdcetl.inputs", strconv.Itoa(len(inputs)))
	return w.Close()
}

// addSegment appends rows of stem to segs (joining a run of the same
// stem; no empty runs).
func addSegment(segs []segment, stem string, rows int64) []segment {
	if rows == 0 {
		return segs
	}
	if n := len(segs); n > 0 && segs[n-1].Stem == stem {
		segs[n-1].Rows += rows
		return segs
	}
	return append(segs, segment{Stem: stem, Rows: rows})
}

// segmentsOf reads the runs of rows per input of a data file of the
// table at loc (rows: its row count; nParts: its partition spec's
// fields): its footer's, or the stem its name carries, or one run of
// unknown origin.
func segmentsOf(fs iceio.IO, tableLoc, loc string, rows int64, nParts int) ([]segment, error) {
	pf, err := openParquet(fs, loc)
	if err != nil {
		return nil, err
	}
	defer pf.Close()
	if v := pf.MetaData().KeyValueMetadata().FindValue(FooterStems); v != nil {
		var segs []segment
		if err := json.Unmarshal([]byte(*v), &segs); err != nil {
			return nil, fmt.Errorf("%s: footer %s: %w", loc, FooterStems, err)
		}
		var n int64
		for _, s := range segs {
			n += s.Rows
		}
		if n != rows {
			return nil, fmt.Errorf("%s: footer %s counts %d rows, the file has %d", loc, FooterStems, n, rows)
		}
		return segs, nil
	}
	return []segment{{Stem: stemOfLoc(tableLoc, loc, nParts), Rows: rows}}, nil
}

// rowsOfStems finds the rows of the table's current snapshot that inputs
// of the given stems wrote, and are not deleted yet.
func (t *Table) rowsOfStems(ctx context.Context, stems map[string]bool) ([]*oldFile, error) {
	tasks, err := t.tbl.Scan().PlanFiles(ctx) // no filter: no substrait
	if err != nil {
		return nil, err
	}
	fs, err := t.tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	var out []*oldFile
	for _, task := range tasks {
		segs, err := segmentsOf(fs, t.tbl.Location(), task.File.FilePath(), task.File.Count(), t.partFields(task.File))
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(segs, func(s segment) bool { return stems[s.Stem] }) {
			continue
		}
		of := &oldFile{df: task.File}
		deleted, err := t.deletedOf(ctx, fs, task, of)
		if err != nil {
			return nil, err
		}
		var at int64
		for _, s := range segs {
			if stems[s.Stem] {
				for p := at; p < at+s.Rows; p++ {
					if deleted == nil || !deleted(p) {
						of.del = append(of.del, p)
					}
				}
			}
			at += s.Rows
		}
		if len(of.del) > 0 {
			of.whole = deleted == nil && int64(len(of.del)) == task.File.Count()
			out = append(out, of)
		}
	}
	return out, nil
}

// deletedOf reads which rows of a task's data file are deleted already:
// its deletion vector (kept in of, to be merged into the new one) or its
// file-scoped position deletes. nil: none.
func (t *Table) deletedOf(ctx context.Context, fs iceio.IO, task table.FileScanTask, of *oldFile) (func(int64) bool, error) {
	if len(task.DeletionVectorFiles) > 0 {
		of.dv = task.DeletionVectorFiles[0]
		var err error
		if of.prev, err = dv.ReadDV(fs, of.dv); err != nil {
			return nil, fmt.Errorf("%s: %w", of.dv.FilePath(), err)
		}
		return func(p int64) bool { return of.prev.Contains(uint64(p)) }, nil
	}
	gone, err := t.fileScopedDeletes(ctx, fs, task)
	if err != nil || len(gone) == 0 {
		return nil, err
	}
	return func(p int64) bool { _, ok := slices.BinarySearch(gone, p); return ok }, nil
}

// partFields is the number of fields of a data file's partition spec.
func (t *Table) partFields(df iceberg.DataFile) int {
	return specFields(t.tbl.Metadata(), df)
}

func specFields(meta table.Metadata, df iceberg.DataFile) int {
	if spec := meta.PartitionSpecByID(int(df.SpecID())); spec != nil {
		return spec.NumFields()
	}
	return 0
}
