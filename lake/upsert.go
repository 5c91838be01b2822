package lake

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/writer"
)

// Upsert tables hold the current state: one live row per primary key.
//
// Each input writes one data file holding its rows in changelog order (the
// changelog-mode file). Its Delta remembers, per key the input touches, the
// position of the key's last image (or that the key ends deleted), and the
// positions of its rows that are not last images (-U and -D rows, images a
// later row replaces). The inputs of a commit group become one RowDelta
// (group.go): their data files, and deletes by position, never by
// equality: the rows a later input of the group replaces, and the rows of
// the touched keys the table held before, found by reading the key
// columns of its data files. Deletion vectors on format v3, file-scoped
// position-delete files on v2: every data file carries at most one (v3)
// or a few (v2) delete files, so a scan stays as fast as the table is
// large, however many inputs made it. (Equality deletes would apply to
// every older data file, and their cost grow with the square of the
// inputs; tables an earlier cdcetl wrote with them keep working, and
// 'cdcetl maintain' rewrites them away.) Memory is the map of a group's
// keys, not its rows. Last images that lack columns are completed when
// the delta closes (merge.go).

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
	// mergedAt: the keys whose completed last image is in the merged
	// file, to its position there.
	mergedAt   map[string]int64
	merged     int64
	unresolved int64

	closed bool

	// The range of a single-column key of integers or strings (the
	// commit reads only the table's files that overlap it).
	intLo, intHi int64
	strLo, strHi string
	ranged       int // 0: no row yet, 1: ranged, -1: not rangeable
}

// NewDelta wraps w, which writes the data file at dataPath with schema s
// (record column 0 is _rowkind), for an upsert commit. opts are the data
// file's writer options (the delete files take its codec).
func (t *Table) NewDelta(w writer.Writer, dataPath string, s *arrowconv.Schema, opts writer.ParquetOptions) (*Delta, error) {
	if len(s.PrimaryKey) == 0 {
		return nil, fmt.Errorf("iceberg table %s: an upsert load needs a primary key, and the table has none (declare PRIMARY KEY (...) NOT ENFORCED, pin the table with a DDL that has one, or load a changelog table)", t.Name())
	}
	d := &Delta{t: t, data: w, dataPath: dataPath, unchanged: -1, lineCol: -1, last: map[string]int64{},
		unchPend: map[string]int64{}, schema: s, dataOpts: opts}
	for _, k := range s.PrimaryKey {
		i := slices.IndexFunc(s.Columns, func(c arrowconv.Field) bool { return c.Name == k })
		if i < 0 {
			return nil, fmt.Errorf("iceberg table %s: primary key column %s is not a column", t.Name(), k)
		}
		switch s.Columns[i].Type.Kind {
		case arrowconv.Float, arrowconv.Double, arrowconv.Array, arrowconv.Map, arrowconv.Multiset, arrowconv.Row:
			return nil, fmt.Errorf("iceberg table %s: primary key column %s is %s: Iceberg identifier fields cannot be of it", t.Name(), k, s.Columns[i].Type)
		}
		d.keyCols = append(d.keyCols, i+1)
		d.keyNames = append(d.keyNames, k)
	}
	for i, c := range s.Columns {
		if c.Name == "_unchanged" && c.Type.Kind == arrowconv.Array {
			d.unchanged = i + 1
		}
		if c.MetadataKey == "file.line" && c.Type.Kind == arrowconv.BigInt {
			d.lineCol = i + 1
		}
	}
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
	d.track(cols)
	for i := range int(rec.NumRows()) {
		var null int
		if d.keyBuf, null = arrowconv.AppendKey(d.keyBuf[:0], cols, i); null >= 0 {
			return fmt.Errorf("iceberg table %s: a row has a NULL primary key (%s): an upsert table cannot hold it", d.t.Name(), d.keyNames[null])
		}
		p := d.pos + int64(i)
		if prev, seen := d.last[string(d.keyBuf)]; seen && prev >= 0 {
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

// track widens the key range by a batch's keys.
func (d *Delta) track(cols []arrow.Array) {
	if d.ranged < 0 || cols[0].Len() == 0 {
		return
	}
	if len(cols) != 1 {
		d.ranged = -1
		return
	}
	switch a := cols[0].(type) {
	case *array.Int64:
		for i, v := range a.Int64Values() {
			if a.IsValid(i) {
				d.rangeInt(v)
			}
		}
	case *array.Int32:
		for i, v := range a.Int32Values() {
			if a.IsValid(i) {
				d.rangeInt(int64(v))
			}
		}
	case *array.String:
		for i := range a.Len() {
			if a.IsValid(i) {
				v := a.Value(i)
				if d.ranged == 0 {
					d.strLo, d.strHi, d.ranged = strings.Clone(v), strings.Clone(v), 1
				} else if v < d.strLo {
					d.strLo = strings.Clone(v)
				} else if v > d.strHi {
					d.strHi = strings.Clone(v)
				}
			}
		}
	default:
		d.ranged = -1
	}
}

func (d *Delta) rangeInt(v int64) {
	if d.ranged == 0 {
		d.intLo, d.intHi, d.ranged = v, v, 1
		return
	}
	d.intLo, d.intHi = min(d.intLo, v), max(d.intHi, v)
}

// keyRange is the delta's key range as literals of the key column's type.
func (d *Delta) keyRange() (lo, hi iceberg.Literal, ok bool) {
	if d.ranged != 1 || d.recSchema == nil {
		return nil, nil, false
	}
	switch d.recSchema.Field(d.keyCols[0]).Type.ID() {
	case arrow.INT64:
		return iceberg.NewLiteral(d.intLo), iceberg.NewLiteral(d.intHi), true
	case arrow.INT32:
		return iceberg.NewLiteral(int32(d.intLo)), iceberg.NewLiteral(int32(d.intHi)), true
	case arrow.STRING:
		return iceberg.NewLiteral(d.strLo), iceberg.NewLiteral(d.strHi), true
	}
	return nil, nil, false
}

// DeletesDir is the directory of a table's delete files, beside data/:
// a reader that globs data/**/*.parquet (a changelog read as plain Parquet)
// never picks one up.
const DeletesDir = "deletes"

// Truncate records that the input empties the table at line: its rows
// before it are deleted, and the commit removes what the table held.
func (d *Delta) Truncate(line int64) error {
	if d.lineCol < 0 && d.pos > 0 {
		return fmt.Errorf("iceberg table %s: a truncate at line %d cannot be placed among the input's rows without their lines: declare a column METADATA FROM 'file.line' (inferred tables have _line unless lineage is left out)", d.t.Name(), line)
	}
	d.truncLine = max(d.truncLine, line)
	return nil
}

// Truncates reports whether the input empties the table.
func (d *Delta) Truncates() bool { return d.truncLine > 0 }

// NeedsTable reports whether closing the delta reads the table's current
// rows (last images lacking columns): the commits of the inputs before it
// must be made first.
func (d *Delta) NeedsTable() bool { return len(d.unchPend) > 0 && d.truncLine == 0 }

// Keys is the number of keys the delta touches (the memory of its
// commit group).
func (d *Delta) Keys() int { return len(d.last) }

// Close closes the data file and completes the last images that lack
// columns; the deletes are written by the commit (group.go).
func (d *Delta) Close() error {
	if d.closed {
		return nil
	}
	d.closed = true
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
		d.abortMerged()
		return err
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
		d.abortMerged()
		return err
	}
	slices.Sort(d.posDeletes)
	d.posDeletes = slices.Compact(d.posDeletes)
	return nil
}

// Abort removes what the delta wrote.
func (d *Delta) Abort() error {
	err := d.data.Abort()
	d.abortMerged()
	return err
}

func (d *Delta) abortMerged() {
	if d.mergedPath != "" {
		os.Remove(d.mergedPath)
	}
}

// Merged counts the columns of last images filled from earlier rows (the
// input's or the table's), and those no row had (NULL, listed).
func (d *Delta) Merged() (filled, unresolved int64) { return d.merged, d.unresolved }

// Files are the delta's files: the data file, and the completed images'.
func (d *Delta) Files() []string {
	out := []string{d.dataPath}
	if d.mergedPath != "" {
		out = append(out, d.mergedPath)
	}
	return out
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
