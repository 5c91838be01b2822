// Package materialize folds a table's changelog (cdcetl's Parquet change
// files, oldest first) into its current state: the last image of every
// primary key, deleted keys removed, written as Parquet sorted by key.
//
// Memory is bounded: changes are read in runs of at most MemLimit bytes of
// Arrow data; each run is sorted by key (stably, so a key's later change
// stays later), collapsed to its last change per key and spilled to disk
// as an Arrow IPC file. The previous snapshot (sorted by key, older than
// every change) and the runs (oldest first) are then merged: for each key
// the newest entry wins, and it is written unless it deletes the key.
package materialize

import (
	"bytes"
	"container/heap"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/writer"
)

// mergeBatch is the rows of a spilled run's batches and of the output's:
// the merge holds one batch of every run at once (and the output's rows
// refer to as many), so a run's batches stay small.
const mergeBatch = 4096

// Job is one table's materialization.
type Job struct {
	// Schema is the table's schema (its latest); its primary key is the
	// key. Change files with fewer columns, or narrower types, are
	// conformed to it.
	Schema *arrowconv.Schema
	// Previous is the previous snapshot's files (sorted by key), if any.
	Previous []string
	// Changes are the change files to fold in, oldest first.
	Changes []string
	// Out is the new snapshot's file (written atomically).
	Out string
	// TempDir receives the spilled runs (removed at the end).
	TempDir string
	// Truncate, when set, empties the table at a change: the previous
	// snapshot and the change files before Changes[Truncate.File] are
	// ignored, and so are that file's rows before line Truncate.Line
	// (read from the column LineColumn).
	Truncate   *Truncate
	LineColumn string
	// PositionColumn, when set, is the column of each change's position
	// in the producer's log (source-position): a key's change with the
	// highest position wins (NULL is lowest), ties going to the later
	// change by input and line. Otherwise the later change wins.
	PositionColumn string
	// UnchangedColumn, when set, is the column listing the columns a
	// change's producer did not send (unchanged-columns): a key's last
	// image takes those columns from the key's latest earlier change that
	// has them (any row kind: a before image holds the table's value). A
	// column no earlier change has stays NULL and stays listed.
	UnchangedColumn string
	// Dedup drops exact duplicate events: a key's change with the same
	// source position and row kind as an earlier one (at-least-once
	// delivery, a replayed log). The first copy is the one kept (its
	// lineage columns stay). Needs PositionColumn.
	Dedup bool
	// MemLimit bounds the Arrow data of a run (default 64 MiB; sorting and spilling it takes about three times that).
	MemLimit int64
	// Parquet are the output's writer settings.
	Parquet writer.ParquetOptions
}

// Truncate is where a table was emptied: the change file (an index into
// Job.Changes) and the line of the truncate in its input.
type Truncate struct {
	File int
	Line int64
}

// Result counts what a materialization did.
type Result struct {
	Changes int64 `json:"changes"` // change rows read
	Rows    int64 `json:"rows"`    // rows in the snapshot
	Runs    int   `json:"spilled_runs"`
	// Merged counts the unchanged columns of last images filled from an
	// earlier change of their key; Unresolved, those no change had (NULL
	// in the snapshot, listed in its unchanged column).
	Merged     int64 `json:"merged_unchanged,omitempty"`
	Unresolved int64 `json:"unresolved_unchanged,omitempty"`
	// Duplicates counts the changes --dedup dropped.
	Duplicates int64 `json:"duplicates,omitempty"`
	// CastNulled counts the values of earlier schema versions' rows that
	// the current version's type cannot hold (text that is no number, say):
	// NULL in the snapshot; CastColumns names their columns.
	CastNulled  int64    `json:"values_nulled_by_cast,omitempty"`
	CastColumns []string `json:"columns_nulled_by_cast,omitempty"`
}

// Run folds job's changes into a new snapshot.
func Run(ctx context.Context, job Job) (Result, error) {
	var res Result
	if len(job.Schema.PrimaryKey) == 0 {
		return res, errors.New("materialize needs a primary key, and the table has none (declare PRIMARY KEY (...) NOT ENFORCED, or pin the table with a DDL that has one)")
	}
	if job.MemLimit <= 0 {
		job.MemLimit = 64 << 20
	}
	m, err := newMaterializer(job)
	if err != nil {
		return res, err
	}
	if job.Dedup && m.posCol < 0 {
		return res, errors.New("dropping duplicates knows a duplicate by its source position, and the table has none: declare a column METADATA FROM 'source-position' (inferred tables have _source_pos unless lineage is left out)")
	}
	defer m.cleanup()
	changes := job.Changes
	if tr := job.Truncate; tr != nil {
		m.job.Previous = nil // emptied
		changes = changes[tr.File:]
		m.lineCol = slices.IndexFunc(job.Schema.Columns, func(c arrowconv.Field) bool { return c.Name == job.LineColumn })
		if m.lineCol < 0 {
			return res, fmt.Errorf("a truncate at line %d of an input cannot be placed among its rows without their lines: declare a column METADATA FROM 'file.line' (inferred tables have _line unless lineage is left out)", tr.Line)
		}
		m.lineCol++ // _rowkind first
		m.fromLine = tr.Line
	}
	for i, f := range changes {
		m.filterLines = job.Truncate != nil && i == 0
		if err := m.readChanges(ctx, f, &res); err != nil {
			return res, fmt.Errorf("materialize %s: %w", f, err)
		}
	}
	if err := m.spill(ctx); err != nil {
		return res, err
	}
	res.Runs = len(m.runs)
	n, err := m.merge(ctx)
	res.Rows, res.Merged, res.Unresolved, res.Duplicates = n, m.merged, m.unresolved, m.dups
	res.CastNulled, res.CastColumns = m.castNulled, m.castColumns
	return res, err
}

type materializer struct {
	job Job
	// castNulled and castColumns: values of earlier schema versions the
	// target's types could not hold (Result.CastNulled).
	castNulled  int64
	castColumns []string
	target      *arrow.Schema // _rowkind (string), then the schema's columns
	keyCols     []int         // in target
	mem         memory.Allocator

	// lineCol, fromLine, filterLines: the rows of the truncating input
	// before its truncate are skipped.
	lineCol     int
	fromLine    int64
	filterLines bool
	posCol      int            // in target, or -1
	unchCol     int            // in target, or -1
	colOf       map[string]int // target column by name (and lower-cased name)

	recs       []arrow.RecordBatch // the run under way
	size       int64
	merged     int64 // unchanged columns filled (Result.Merged)
	unresolved int64
	dups       int64
	runs       []string // spilled runs, oldest first
	scratch    []byte
}

func newMaterializer(job Job) (*materializer, error) {
	m := &materializer{job: job, mem: memory.DefaultAllocator, posCol: -1, unchCol: -1}
	fs := []arrow.Field{{Name: arrowconv.RowKindColumn, Type: arrow.BinaryTypes.String, Nullable: true}}
	for _, c := range job.Schema.Columns {
		f := c.ArrowField()
		f.Metadata = arrow.Metadata{}
		fs = append(fs, f)
	}
	m.target = arrow.NewSchema(fs, nil)
	m.colOf = map[string]int{}
	for i, f := range fs[1:] {
		m.colOf[f.Name] = i + 1
		if _, ok := m.colOf[strings.ToLower(f.Name)]; !ok {
			m.colOf[strings.ToLower(f.Name)] = i + 1
		}
	}
	if job.UnchangedColumn != "" {
		if i := slices.IndexFunc(job.Schema.Columns, func(c arrowconv.Field) bool { return c.Name == job.UnchangedColumn }); i >= 0 {
			m.unchCol = i + 1
		}
	}
	if job.PositionColumn != "" {
		if i := slices.IndexFunc(job.Schema.Columns, func(c arrowconv.Field) bool { return c.Name == job.PositionColumn }); i >= 0 && job.Schema.Columns[i].Type.IsString() {
			m.posCol = i + 1
		}
	}
	for _, k := range job.Schema.PrimaryKey {
		i := slices.IndexFunc(job.Schema.Columns, func(c arrowconv.Field) bool { return c.Name == k })
		if i < 0 {
			return nil, fmt.Errorf("primary key column %s is no column", k)
		}
		m.keyCols = append(m.keyCols, i+1)
	}
	return m, nil
}

func (m *materializer) cleanup() {
	for _, r := range m.recs {
		r.Release()
	}
	for _, r := range m.runs {
		os.Remove(r)
	}
}

// readParquet calls fn with each batch of a Parquet file, conformed to
// the target schema (a file without _rowkind holds live rows).
func (m *materializer) readParquet(ctx context.Context, path string, fn func(arrow.RecordBatch) error) error {
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		return err
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: mergeBatch}, m.mem)
	if err != nil {
		return err
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return err
	}
	defer rr.Release()
	for rr.Next() {
		rec, err := m.conform(ctx, rr.RecordBatch())
		if err != nil {
			return err
		}
		err = fn(rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// conform maps rec's columns by name onto the target schema: a column it
// lacks is NULL (added later), a narrower type is cast to the target's.
func (m *materializer) conform(ctx context.Context, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	n := rec.NumRows()
	cols := make([]arrow.Array, len(m.target.Fields()))
	byName := map[string]int{}
	for i, f := range rec.Schema().Fields() {
		byName[f.Name] = i
	}
	for i, f := range m.target.Fields() {
		j, ok := byName[f.Name]
		switch {
		case !ok && i == 0:
			b := array.NewStringBuilder(m.mem)
			for range n {
				b.Append(arrowconv.Insert.String())
			}
			cols[i] = b.NewArray()
			b.Release()
		case !ok:
			cols[i] = array.MakeArrayOfNull(m.mem, f.Type, int(n))
		default:
			a := rec.Column(j)
			if arrow.TypeEqual(a.DataType(), f.Type) {
				a.Retain()
				cols[i] = a
				continue
			}
			c, err := compute.CastArray(ctx, a, compute.SafeCastOptions(f.Type))
			if err != nil {
				// A row of an earlier schema version: what the current
				// type cannot hold becomes NULL, counted.
				var nulled int64
				if c, nulled, err = m.castEach(ctx, a, f.Type); err != nil {
					for _, d := range cols[:i] {
						d.Release()
					}
					return nil, fmt.Errorf("column %s: %s to %s: %w", f.Name, a.DataType(), f.Type, err)
				}
				m.noteCast(f.Name, nulled)
			}
			cols[i] = c
		}
	}
	out := array.NewRecordBatch(m.target, cols, n)
	for _, c := range cols {
		c.Release()
	}
	return out, nil
}

// castEach casts a value by value, NULL where a value does not cast, and
// counts those.
func (m *materializer) castEach(ctx context.Context, a arrow.Array, to arrow.DataType) (arrow.Array, int64, error) {
	parts := make([]arrow.Array, 0, a.Len())
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	var nulled int64
	for i := range a.Len() {
		one := array.NewSlice(a, int64(i), int64(i+1))
		c, err := compute.CastArray(ctx, one, compute.SafeCastOptions(to))
		one.Release()
		if err != nil {
			c, nulled = array.MakeArrayOfNull(m.mem, to, 1), nulled+1
		}
		parts = append(parts, c)
	}
	if len(parts) == 0 {
		return array.MakeArrayOfNull(m.mem, to, 0), 0, nil
	}
	out, err := array.Concatenate(parts, m.mem)
	return out, nulled, err
}

// noteCast counts values nulled by a cast into column name.
func (m *materializer) noteCast(name string, n int64) {
	if n == 0 {
		return
	}
	m.castNulled += n
	if !slices.Contains(m.castColumns, name) {
		m.castColumns = append(m.castColumns, name)
	}
}

func (m *materializer) readChanges(ctx context.Context, path string, res *Result) error {
	return m.readParquet(ctx, path, func(rec arrow.RecordBatch) error {
		if m.filterLines {
			lines, ok := rec.Column(m.lineCol).(*array.Int64)
			if !ok {
				return fmt.Errorf("the line column is %s, not BIGINT", rec.Column(m.lineCol).DataType())
			}
			keep := array.NewBooleanBuilder(m.mem)
			for i := range lines.Len() {
				keep.Append(lines.IsValid(i) && lines.Value(i) > m.fromLine)
			}
			mask := keep.NewArray()
			keep.Release()
			f, err := compute.FilterRecordBatch(ctx, rec, mask, compute.DefaultFilterOptions())
			mask.Release()
			if err != nil {
				return err
			}
			defer f.Release()
			rec = f
		}
		rec.Retain()
		m.recs = append(m.recs, rec)
		res.Changes += rec.NumRows()
		for _, c := range rec.Columns() {
			m.size += int64(c.Data().SizeInBytes())
		}
		if m.size >= m.job.MemLimit {
			return m.spill(ctx)
		}
		return nil
	})
}

// entry is a change of the run under way: its key and where it is.
type entry struct {
	pre      uint64 // the key's first 8 bytes, big-endian: most comparisons end here
	key, pos []byte
	rec, row int32
}

// prefix is the first 8 bytes of b as a big-endian number (zero-padded),
// ordered as bytes.Compare orders b.
func prefix(b []byte) uint64 {
	var buf [8]byte
	copy(buf[:], b)
	return binary.BigEndian.Uint64(buf[:])
}

// spill sorts the run under way by key, keeps each key's last change and
// writes them to a run file.
func (m *materializer) spill(ctx context.Context) error {
	if len(m.recs) == 0 {
		return nil
	}
	var rows int64
	for _, rec := range m.recs {
		rows += rec.NumRows()
	}
	ents := make([]entry, 0, rows)
	offs := make([]int, 0, rows+1)
	var arena []byte
	for ri, rec := range m.recs {
		cols := keyArrays(rec, m.keyCols)
		for i := range int(rec.NumRows()) {
			var err error
			start := len(arena)
			if arena, err = appendKey(arena, cols, i); err != nil {
				return m.nullKey(err)
			}
			offs = append(offs, start)
			ents = append(ents, entry{rec: int32(ri), row: int32(i)})
		}
	}
	offs = append(offs, len(arena))
	for i := range ents {
		ents[i].key = arena[offs[i]:offs[i+1]]
		ents[i].pre = prefix(ents[i].key)
		if m.posCol >= 0 {
			ents[i].pos = posAt(m.recs[ents[i].rec], m.posCol, int(ents[i].row))
		}
	}
	// By key, then by place in the run: a key's later change stays later.
	slices.SortFunc(ents, func(a, b entry) int {
		if a.pre != b.pre {
			if a.pre < b.pre {
				return -1
			}
			return 1
		}
		if c := bytes.Compare(a.key, b.key); c != 0 {
			return c
		}
		if c := bytes.Compare(a.pos, b.pos); c != 0 {
			return c
		}
		if a.rec != b.rec {
			return int(a.rec - b.rec)
		}
		return int(a.row - b.row)
	})
	// The last change of each key, its unchanged columns filled from the
	// key's earlier changes in the run.
	var last []ref
	var fills []fill
	lists := map[int][]string{}
	for i := 0; i < len(ents); {
		j := i + 1
		for j < len(ents) && bytes.Equal(ents[j].key, ents[i].key) {
			j++
		}
		w := ents[j-1]
		if m.job.Dedup {
			// Sorted by position: copies of an event share a stretch of
			// equal positions with the other changes of that event (an
			// update's -U and +U). The winner is the first copy of the
			// last change.
			for a := i; a < j; {
				b := a + 1
				for b < j && ents[a].pos != nil && bytes.Equal(ents[b].pos, ents[a].pos) {
					b++
				}
				var kinds [4]bool
				for k := a; k < b; k++ {
					kind, _ := arrowconv.ParseRowKind(m.kindOf(ents[k]))
					if kinds[kind&3] && ents[a].pos != nil {
						m.dups++
					}
					kinds[kind&3] = true
				}
				a = b
			}
			for k := i; k < j-1; k++ {
				if m.sameEvent(ents[k], w) {
					w = ents[k]
					break
				}
			}
		}
		row := len(last)
		last = append(last, ref{int(w.rec), int(w.row)})
		if names := m.unchangedAt(m.recs[w.rec], int(w.row)); len(names) > 0 && m.isLive(m.recs[w.rec], int(w.row)) {
			left := names[:0:0]
			for _, name := range names {
				c, found := m.colOf[name], false
				for k := j - 2; k >= i && c > 0 && !found; k-- {
					e := ents[k]
					if !slices.Contains(m.unchangedAt(m.recs[e.rec], int(e.row)), name) {
						fills = append(fills, fill{row: row, col: c, src: ref{int(e.rec), int(e.row)}})
						found = true
					}
				}
				if !found {
					left = append(left, name)
				}
			}
			if len(left) < len(names) {
				lists[row] = left
				m.merged += int64(len(names) - len(left))
			}
		}
		i = j
	}
	path := filepath.Join(m.job.TempDir, fmt.Sprintf(".materialize-run-%d.arrow", len(m.runs)))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	m.runs = append(m.runs, path)
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(m.target), ipc.WithAllocator(m.mem))
	if err != nil {
		f.Close()
		return err
	}
	// Concatenate the run, then take the survivors in key order.
	recStart := make([]int64, len(m.recs))
	var total int64
	for i, r := range m.recs {
		recStart[i] = total
		total += r.NumRows()
	}
	whole := make([]arrow.Array, len(m.target.Fields()))
	for c := range whole {
		parts := make([]arrow.Array, len(m.recs))
		for i, r := range m.recs {
			parts[i] = r.Column(c)
		}
		if whole[c], err = array.Concatenate(parts, m.mem); err != nil {
			f.Close()
			return err
		}
	}
	for _, r := range m.recs {
		r.Release()
	}
	m.recs, m.size = m.recs[:0], 0
	defer func() {
		for _, a := range whole {
			a.Release()
		}
	}()
	for from := 0; from < len(last); from += mergeBatch {
		to := min(len(last), from+mergeBatch)
		var fs []fill
		for ; len(fills) > 0 && fills[0].row < to; fills = fills[1:] { // in row order
			fl := fills[0]
			fl.row -= from
			fs = append(fs, fl)
		}
		cols, err := m.takeRows(ctx, whole, recStart, last[from:to], fs, lists, from, 0)
		if err != nil {
			f.Close()
			return err
		}
		rec := array.NewRecordBatch(m.target, cols, int64(to-from))
		for _, c := range cols {
			c.Release()
		}
		err = w.Write(rec)
		rec.Release()
		if err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// source is one sorted input of the merge: the previous snapshot or a
// run, read batch by batch.
type source struct {
	age  int // 0: the snapshot; higher: newer
	next func() (arrow.RecordBatch, error)
	rec  arrow.RecordBatch
	row  int
	key  []byte
	pos  []byte // the row's source position (nil without one)
	done bool
}

func (s *source) advance(m *materializer) error {
	s.row++
	for s.rec == nil || s.row >= int(s.rec.NumRows()) {
		if s.rec != nil {
			s.rec.Release()
			s.rec = nil
		}
		rec, err := s.next()
		if err != nil {
			return err
		}
		if rec == nil {
			s.done = true
			return nil
		}
		s.rec, s.row = rec, 0
	}
	var err error
	s.key, err = appendKey(s.key[:0], keyArrays(s.rec, m.keyCols), s.row)
	err = m.nullKey(err)
	if m.posCol >= 0 {
		s.pos = posAt(s.rec, m.posCol, s.row)
	}
	return err
}

// posAt is row i's source position (nil when NULL). It shares rec's
// memory (no copy per row): valid while rec is held.
func posAt(rec arrow.RecordBatch, col, i int) []byte {
	a, ok := rec.Column(col).(*array.String)
	if !ok || a.IsNull(i) {
		return nil
	}
	v := a.Value(i)
	if v == "" {
		return []byte{}
	}
	return unsafe.Slice(unsafe.StringData(v), len(v))
}

type sourceHeap []*source

func (h sourceHeap) Len() int { return len(h) }
func (h sourceHeap) Less(a, b int) bool {
	if c := bytes.Compare(h[a].key, h[b].key); c != 0 {
		return c < 0
	}
	// The newest first among equal keys: by position, then by age.
	if c := bytes.Compare(h[a].pos, h[b].pos); c != 0 {
		return c > 0
	}
	return h[a].age > h[b].age
}
func (h sourceHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *sourceHeap) Push(x any)   { *h = append(*h, x.(*source)) }
func (h *sourceHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// merge writes the snapshot: per key, the newest entry, unless it deletes.
func (m *materializer) merge(ctx context.Context) (int64, error) {
	var sources []*source
	defer func() {
		for _, s := range sources {
			if s.rec != nil {
				s.rec.Release()
			}
		}
	}()
	if len(m.job.Previous) > 0 {
		ch := make(chan arrow.RecordBatch, 2)
		errc := make(chan error, 1)
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() {
			defer close(ch)
			for _, p := range m.job.Previous {
				err := m.readParquet(cctx, p, func(rec arrow.RecordBatch) error {
					rec.Retain()
					select {
					case ch <- rec:
						return nil
					case <-cctx.Done():
						rec.Release()
						return cctx.Err()
					}
				})
				if err != nil {
					errc <- fmt.Errorf("previous snapshot %s: %w", p, err)
					return
				}
			}
		}()
		sources = append(sources, &source{age: 0, row: -1, next: func() (arrow.RecordBatch, error) {
			rec, ok := <-ch
			if !ok {
				select {
				case err := <-errc:
					return nil, err
				default:
					return nil, nil
				}
			}
			return rec, nil
		}})
	}
	for i, p := range m.runs {
		f, err := os.Open(p)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		r, err := ipc.NewFileReader(f, ipc.WithAllocator(m.mem))
		if err != nil {
			return 0, err
		}
		defer r.Close()
		k := 0
		sources = append(sources, &source{age: i + 1, row: -1, next: func() (arrow.RecordBatch, error) {
			if k >= r.NumRecords() {
				return nil, nil
			}
			rec, err := r.RecordBatchAt(k) // ours to release
			k++
			return rec, err
		}})
	}
	h := &sourceHeap{}
	for _, s := range sources {
		if err := s.advance(m); err != nil {
			return 0, err
		}
		if !s.done {
			*h = append(*h, s)
		}
	}
	heap.Init(h)
	out, err := newOutput(m, m.job.Out)
	if err != nil {
		return 0, err
	}
	// A key's newest entry wins; while it lacks columns (unchanged), the
	// key's older entries, which come next, fill them.
	var prev []byte
	var pend []string // the winner's columns still unfilled
	pendRow, filled := -1, false
	var winPos []byte // the winner's position and kind (--dedup)
	var winKind string
	winRow, winHasPos := -1, false
	settle := func() error {
		if pendRow >= 0 {
			if filled {
				out.lists[pendRow] = pend
			}
			m.unresolved += int64(len(pend))
			pend, pendRow, filled = nil, -1, false
		}
		return out.maybeFlush(ctx)
	}
	for h.Len() > 0 {
		s := (*h)[0]
		if prev == nil || !bytes.Equal(prev, s.key) {
			if err := settle(); err != nil {
				out.abort()
				return 0, err
			}
			prev = append(prev[:0], s.key...)
			if m.job.Dedup { // the winner's identity, kept only for --dedup
				winPos, winKind = append(winPos[:0], s.pos...), s.rec.Column(0).(*array.String).Value(s.row)
				winHasPos = s.pos != nil
			}
			winRow = -1
			if m.isLive(s.rec, s.row) {
				row := out.add(s.rec, s.row)
				winRow = row
				if names := m.unchangedAt(s.rec, s.row); len(names) > 0 {
					pend, pendRow = names, row
				}
			}
		} else if m.job.Dedup && winHasPos && s.pos != nil && bytes.Equal(s.pos, winPos) && (s.rec.Column(0).(*array.String).Value(s.row) == winKind || s.age == 0 && winRow >= 0) {
			// (The previous snapshot's rows are live images without
			// their kind.)
			// An older copy of the winner: it is the one kept.
			m.dups++
			if winRow >= 0 {
				out.replace(winRow, s.rec, s.row)
			}
		} else if len(pend) > 0 {
			older := m.unchangedAt(s.rec, s.row)
			left := pend[:0:0]
			for _, name := range pend {
				if c := m.colOf[name]; c > 0 && !slices.Contains(older, name) {
					out.fill(pendRow, c, s.rec, s.row)
					m.merged++
					filled = true
					continue
				}
				left = append(left, name)
			}
			pend = left
		}
		if err := s.advance(m); err != nil {
			out.abort()
			return 0, err
		}
		if s.done {
			heap.Pop(h)
		} else {
			heap.Fix(h, 0)
		}
	}
	if err := settle(); err != nil {
		out.abort()
		return 0, err
	}
	return out.close(ctx)
}

// output gathers the winners, batch by batch, and writes them.
type output struct {
	m     *materializer
	w     *writer.Parquet
	refs  []ref
	fills []fill
	lists map[int][]string // rows whose unchanged list changed
	recs  map[arrow.RecordBatch]int
	list  []arrow.RecordBatch
	rows  int64
}

// ref is a row of one of a list of batches.
type ref struct{ rec, row int }

// fill is an unchanged column (col) of output row row, taken from src.
type fill struct {
	row, col int
	src      ref
}

func newOutput(m *materializer, path string) (*output, error) {
	opts := m.job.Parquet
	opts.NoRowKind = true
	w, err := writer.NewParquet(path, m.job.Schema, opts)
	if err != nil {
		return nil, err
	}
	return &output{m: m, w: w, recs: map[arrow.RecordBatch]int{}, lists: map[int][]string{}}, nil
}

func (o *output) batch(rec arrow.RecordBatch) int {
	i, ok := o.recs[rec]
	if !ok {
		rec.Retain()
		i = len(o.list)
		o.list = append(o.list, rec)
		o.recs[rec] = i
	}
	return i
}

// add appends rec's row and returns its place in the batch under way.
func (o *output) add(rec arrow.RecordBatch, row int) int {
	o.refs = append(o.refs, ref{o.batch(rec), row})
	return len(o.refs) - 1
}

// replace makes row r of the batch under way rec's row.
func (o *output) replace(r int, rec arrow.RecordBatch, row int) {
	o.refs[r] = ref{o.batch(rec), row}
}

func (o *output) fill(row, col int, rec arrow.RecordBatch, r int) {
	o.fills = append(o.fills, fill{row: row, col: col, src: ref{o.batch(rec), r}})
}

func (o *output) maybeFlush(ctx context.Context) error {
	if len(o.refs) >= mergeBatch {
		return o.flush(ctx)
	}
	return nil
}

func (o *output) flush(ctx context.Context) error {
	if len(o.refs) == 0 {
		return nil
	}
	starts := make([]int64, len(o.list))
	var total int64
	for i, r := range o.list {
		starts[i] = total
		total += r.NumRows()
	}
	nc := len(o.m.target.Fields())
	whole := make([]arrow.Array, nc)
	defer func() {
		for _, a := range whole {
			if a != nil {
				a.Release()
			}
		}
	}()
	for c := 1; c < nc; c++ { // without _rowkind
		parts := make([]arrow.Array, len(o.list))
		for i, r := range o.list {
			parts[i] = r.Column(c)
		}
		var err error
		if whole[c], err = array.Concatenate(parts, o.m.mem); err != nil {
			return err
		}
	}
	cols, err := o.m.takeRows(ctx, whole, starts, o.refs, o.fills, o.lists, 0, 1)
	if err != nil {
		return err
	}
	fs := o.m.target.Fields()[1:]
	rec := array.NewRecordBatch(arrow.NewSchema(fs, nil), cols, int64(len(o.refs)))
	for _, c := range cols {
		c.Release()
	}
	err = o.w.Write(ctx, rec)
	rec.Release()
	o.rows += int64(len(o.refs))
	o.refs, o.fills = o.refs[:0], o.fills[:0]
	clear(o.lists)
	for _, r := range o.list {
		r.Release()
	}
	o.list = o.list[:0]
	clear(o.recs)
	return err
}

func (o *output) close(ctx context.Context) (int64, error) {
	if err := o.flush(ctx); err != nil {
		o.abort()
		return 0, err
	}
	return o.rows, o.w.Close()
}

func (o *output) abort() {
	for _, r := range o.list {
		r.Release()
	}
	o.w.Abort()
}

// takeRows gathers columns first.. of whole (the batches of refs'
// indices, concatenated; starts are their offsets): row r is refs[r],
// except for the fills, and the unchanged lists replaced in lists (keyed
// by row + base).
func (m *materializer) takeRows(ctx context.Context, whole []arrow.Array, starts []int64, refs []ref, fills []fill, lists map[int][]string, base, first int) ([]arrow.Array, error) {
	idx := make([]int64, len(refs))
	for i, r := range refs {
		idx[i] = starts[r.rec] + int64(r.row)
	}
	var out []arrow.Array
	release := func() {
		for _, a := range out {
			a.Release()
		}
	}
	toArray := func(v []int64) arrow.Array {
		ib := array.NewInt64Builder(m.mem)
		defer ib.Release()
		ib.AppendValues(v, nil)
		return ib.NewArray()
	}
	baseIdx := toArray(idx) // shared by the columns no fill touches
	defer baseIdx.Release()
	for c := first; c < len(whole); c++ {
		ci, ca := idx, baseIdx
		for _, f := range fills {
			if f.col == c {
				if ca == baseIdx {
					ci = slices.Clone(idx)
					ca = nil
				}
				ci[f.row] = starts[f.src.rec] + int64(f.src.row)
			}
		}
		var a arrow.Array
		var err error
		switch {
		case c == m.unchCol && len(lists) > 0:
			a, err = m.unchangedColumn(whole[c], ci, lists, base)
		case ca == nil:
			ca = toArray(ci)
			a, err = compute.TakeArray(ctx, whole[c], ca)
			ca.Release()
		default:
			a, err = compute.TakeArray(ctx, whole[c], ca)
		}
		if err != nil {
			release()
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// unchangedColumn is the unchanged-columns list of rows idx of src, with
// the lists that filling shortened.
func (m *materializer) unchangedColumn(src arrow.Array, idx []int64, lists map[int][]string, base int) (arrow.Array, error) {
	l, ok := src.(*array.List)
	if !ok {
		return nil, fmt.Errorf("the unchanged-columns column is %s, not ARRAY<STRING>", src.DataType())
	}
	vals, _ := l.ListValues().(*array.String)
	b := array.NewBuilder(m.mem, src.DataType()).(*array.ListBuilder)
	defer b.Release()
	vb := b.ValueBuilder().(*array.StringBuilder)
	for r, i := range idx {
		if names, ok := lists[base+r]; ok {
			b.Append(true)
			for _, n := range names {
				vb.Append(n)
			}
			continue
		}
		if l.IsNull(int(i)) {
			b.AppendNull()
			continue
		}
		b.Append(true)
		from, to := l.ValueOffsets(int(i))
		for j := from; j < to; j++ {
			if vals.IsNull(int(j)) {
				vb.AppendNull()
			} else {
				vb.Append(vals.Value(int(j)))
			}
		}
	}
	return b.NewArray(), nil
}

// unchangedAt is the columns row i's producer did not send.
func (m *materializer) unchangedAt(rec arrow.RecordBatch, i int) []string {
	if m.unchCol < 0 {
		return nil
	}
	l, ok := rec.Column(m.unchCol).(*array.List)
	if !ok || l.IsNull(i) {
		return nil
	}
	from, to := l.ValueOffsets(i)
	if to == from {
		return nil
	}
	vals, _ := l.ListValues().(*array.String)
	if vals == nil {
		return nil
	}
	names := make([]string, 0, to-from)
	for j := from; j < to; j++ {
		names = append(names, vals.Value(int(j)))
	}
	return names
}

// sameEvent reports whether b is a copy of a (--dedup): one key (the
// caller's), one source position, one row kind.
func (m *materializer) sameEvent(a, b entry) bool {
	if a.pos == nil || !bytes.Equal(a.pos, b.pos) {
		return false
	}
	return m.kindOf(a) == m.kindOf(b)
}

func (m *materializer) kindOf(e entry) string {
	return m.recs[e.rec].Column(0).(*array.String).Value(int(e.row))
}

// isLive reports whether row i is an image the key keeps (+I or +U).
func (m *materializer) isLive(rec arrow.RecordBatch, i int) bool {
	kind := rec.Column(0).(*array.String).Value(i)
	return kind == arrowconv.Insert.String() || kind == arrowconv.UpdateAfter.String()
}

func keyArrays(rec arrow.RecordBatch, cols []int) []arrow.Array {
	out := make([]arrow.Array, len(cols))
	for i, c := range cols {
		out[i] = rec.Column(c)
	}
	return out
}

// nullKeyError is a row whose key column (its index among the key
// columns) is NULL.
type nullKeyError struct{ col int }

func (e *nullKeyError) Error() string {
	return fmt.Sprintf("a row has a NULL primary key (key column %d)", e.col+1)
}

// appendKey is arrowconv.AppendKey, a NULL key column being an error.
func appendKey(b []byte, cols []arrow.Array, i int) ([]byte, error) {
	b, null := arrowconv.AppendKey(b, cols, i)
	if null >= 0 {
		return nil, &nullKeyError{null}
	}
	return b, nil
}

// nullKey names the column of a NULL key and what to do about it.
func (m *materializer) nullKey(err error) error {
	var ne *nullKeyError
	if !errors.As(err, &ne) {
		return err
	}
	name := m.target.Field(m.keyCols[ne.col]).Name
	return fmt.Errorf("a row has a NULL primary key column %s: a current state cannot hold it. If the messages name the column otherwise (ID for id), the setting column-case insensitive matches them; if the key is another, name it (a primary-key hint, or the DDL's PRIMARY KEY)", name)
}
