package lake

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/internal/lazysubstrait"
	"github.com/cdcetl/cdcetl/partition"
	"github.com/cdcetl/cdcetl/writer"
)

// Unchanged columns in upsert tables. A key's last image in an input may
// lack columns its producer did not send (_unchanged: Maxwell MINIMAL
// images, GoldenGate compressed updates, Debezium's TOAST placeholder).
// Its table row must keep the previous values, never NULL. When the delta
// closes, the input's own earlier rows of such keys are read back from
// its data file (the newest row that has a column gives it, whatever its
// kind: a before image holds the table's value), then the table's current
// rows of the keys still lacking columns; the completed images go into a
// second data file of the commit, and the incomplete ones are
// position-deleted. A column nobody had stays NULL and listed.

// mergeUnchanged completes the images of d.unchPend.
func (d *Delta) mergeUnchanged(ctx context.Context) error {
	if len(d.unchPend) == 0 || d.recSchema == nil {
		return nil
	}
	m := &merger{d: d, mem: memory.DefaultAllocator, rows: map[string][]ref{}}
	defer m.release()
	if err := m.readInput(ctx); err != nil {
		return fmt.Errorf("iceberg table %s: reading back %s: %w", d.t.Name(), d.dataPath, err)
	}
	// Per pending key (in the order of their images): the image, and the
	// columns it lacks.
	type image struct {
		key   string
		base  ref
		names []string
		fills map[int]ref
	}
	var imgs []*image
	var lookup []*image
	for k, pos := range d.unchPend {
		rs := m.rows[k]
		i := slices.IndexFunc(rs, func(r ref) bool { return r.pos == pos })
		if i < 0 {
			return fmt.Errorf("iceberg table %s: the image at %d of a key is not in its data file", d.t.Name(), pos)
		}
		img := &image{key: k, base: rs[i], fills: map[int]ref{}}
		for _, name := range m.unchangedAt(rs[i]) {
			c := m.colOf(name)
			found := false
			for j := i - 1; j >= 0 && c > 0 && !found; j-- {
				if !slices.Contains(m.unchangedAt(rs[j]), name) {
					img.fills[c] = rs[j]
					found = true
				}
			}
			if !found {
				img.names = append(img.names, name)
			}
		}
		imgs = append(imgs, img)
		// After a truncate of this input the table's rows are gone.
		if len(img.names) > 0 && d.truncLine == 0 {
			lookup = append(lookup, img)
		}
	}
	slices.SortFunc(imgs, func(a, b *image) int { return int(a.base.pos - b.base.pos) })
	if len(lookup) > 0 {
		keys := make([]string, len(lookup))
		for i, img := range lookup {
			keys[i] = img.key
		}
		current, err := m.readTable(ctx, keys)
		if err != nil {
			return fmt.Errorf("iceberg table %s: reading the current rows of %d keys: %w", d.t.Name(), len(keys), err)
		}
		for _, img := range lookup {
			row, ok := current[img.key]
			if !ok {
				continue
			}
			had := m.unchangedAt(row)
			left := img.names[:0:0]
			for _, name := range img.names {
				if c := m.colOf(name); c > 0 && !slices.Contains(had, name) {
					img.fills[c] = row
					continue
				}
				left = append(left, name)
			}
			img.names = left
		}
	}
	// The completed images: one batch, column by column.
	nc := len(d.recSchema.Fields())
	cols := make([]arrow.Array, nc)
	defer func() {
		for _, a := range cols {
			if a != nil {
				a.Release()
			}
		}
	}()
	starts := make([]int64, len(m.pool))
	var total int64
	for i, b := range m.pool {
		starts[i] = total
		total += b.NumRows()
	}
	for c := 0; c < nc; c++ {
		if c == d.unchanged {
			cols[c] = m.unchangedColumn(len(imgs), func(i int) []string { return imgs[i].names })
			continue
		}
		parts := make([]arrow.Array, len(m.pool))
		for i, b := range m.pool {
			parts[i] = b.Column(c)
		}
		whole, err := array.Concatenate(parts, m.mem)
		if err != nil {
			return err
		}
		ib := array.NewInt64Builder(m.mem)
		for _, img := range imgs {
			r := img.base
			if f, ok := img.fills[c]; ok {
				r = f
			}
			ib.Append(starts[r.batch] + int64(r.row))
		}
		idx := ib.NewArray()
		ib.Release()
		cols[c], err = compute.TakeArray(ctx, whole, idx)
		idx.Release()
		whole.Release()
		if err != nil {
			return err
		}
	}
	rec := array.NewRecordBatch(d.recSchema, cols, int64(len(imgs)))
	defer rec.Release()
	d.mergedPath = strings.TrimSuffix(d.dataPath, ".parquet") + ".merged.parquet"
	w, err := writer.NewParquet(d.mergedPath, d.schema, d.dataOpts)
	if err != nil {
		return err
	}
	if err := w.Write(ctx, rec); err != nil {
		w.Abort()
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	d.mergedAt = make(map[string]int64, len(imgs))
	for i, img := range imgs {
		d.mergedAt[img.key] = int64(i)
		d.posDeletes = append(d.posDeletes, img.base.pos)
		d.merged += int64(len(img.fills))
		d.unresolved += int64(len(img.names))
	}
	d.mergedRows = int64(len(imgs))
	return nil
}

// ref is a row of the merger's pool: batch, row, and (for rows of the
// data file) its position there.
type ref struct {
	batch, row int
	pos        int64
}

type merger struct {
	d    *Delta
	mem  memory.Allocator
	pool []arrow.RecordBatch // conformed to the record schema
	rows map[string][]ref    // the input's rows of the pending keys, by position
	buf  []byte
}

func (m *merger) release() {
	for _, b := range m.pool {
		b.Release()
	}
}

func (m *merger) colOf(name string) int {
	for i, f := range m.d.recSchema.Fields() {
		if i > 0 && f.Name == name {
			return i
		}
	}
	return -1
}

func (m *merger) unchangedAt(r ref) []string {
	if m.d.unchanged < 0 {
		return nil
	}
	l, ok := m.pool[r.batch].Column(m.d.unchanged).(*array.List)
	if !ok || l.IsNull(r.row) {
		return nil
	}
	vals, _ := l.ListValues().(*array.String)
	from, to := l.ValueOffsets(r.row)
	var out []string
	for j := from; j < to && vals != nil; j++ {
		out = append(out, vals.Value(int(j)))
	}
	return out
}

// keyAt is row i's key, encoded as Delta.Write encodes it.
func (m *merger) keyAt(b arrow.RecordBatch, i int) (string, bool) {
	cols := make([]arrow.Array, len(m.d.keyCols))
	for j, c := range m.d.keyCols {
		cols[j] = b.Column(c)
	}
	var null int
	m.buf, null = arrowconv.AppendKey(m.buf[:0], cols, i)
	return string(m.buf), null < 0
}

// readInput reads the data file back, keeping the rows of pending keys.
func (m *merger) readInput(ctx context.Context) error {
	pf, err := file.OpenParquetFile(m.d.dataPath, false)
	if err != nil {
		return err
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 8192}, m.mem)
	if err != nil {
		return err
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return err
	}
	defer rr.Release()
	var pos int64
	for rr.Next() {
		b, err := conformTo(ctx, rr.RecordBatch(), m.d.recSchema, m.mem)
		if err != nil {
			return err
		}
		kept := false
		for i := range int(b.NumRows()) {
			if k, ok := m.keyAt(b, i); ok {
				if _, pending := m.d.unchPend[k]; pending {
					m.rows[k] = append(m.rows[k], ref{batch: len(m.pool), row: i, pos: pos + int64(i)})
					kept = true
				}
			}
		}
		pos += b.NumRows()
		if kept {
			m.pool = append(m.pool, b)
		} else {
			b.Release()
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// readTable reads the table's current rows of keys (by chunks of keys, a
// filter on the key columns each), one per key.
func (m *merger) readTable(ctx context.Context, keys []string) (map[string]ref, error) {
	// A table of its own: the shared one is refreshed and replaced by
	// other inputs' commits while this scan reads.
	t := m.d.t
	tbl, err := t.lake.cat.LoadTable(ctx, t.ident)
	if err != nil {
		return nil, err
	}
	if tbl.CurrentSnapshot() == nil {
		return nil, nil
	}
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
	}
	// The key values as literals, from the input's own rows (keys are
	// distinct: those of d.unchPend).
	lits := make([][]iceberg.Literal, 0, len(keys))
	for _, k := range keys {
		r := m.rows[k][0]
		b := m.pool[r.batch]
		var l []iceberg.Literal
		for _, c := range m.d.keyCols {
			l = append(l, partition.LiteralAt(b.Column(c), r.row).Val)
		}
		lits = append(lits, l)
	}
	// iceberg-go filters the records through substrait expressions: their
	// function catalogue is loaded now, not by every conversion that only
	// appends.
	if err := lazysubstrait.Ensure(); err != nil {
		return nil, err
	}
	out := map[string]ref{}
	const chunk = 1000
	for from := 0; from < len(lits); from += chunk {
		part := lits[from:min(len(lits), from+chunk)]
		var filter iceberg.BooleanExpression
		if len(m.d.keyNames) == 1 {
			vals := make([]iceberg.Literal, len(part))
			for i, l := range part {
				vals[i] = l[0]
			}
			filter = iceberg.SetPredicate(iceberg.OpIn, iceberg.Reference(m.d.keyNames[0]), vals)
		} else {
			var ors []iceberg.BooleanExpression
			for _, l := range part {
				var and iceberg.BooleanExpression = iceberg.AlwaysTrue{}
				for j, n := range m.d.keyNames {
					and = iceberg.NewAnd(and, iceberg.LiteralPredicate(iceberg.OpEQ, iceberg.Reference(n), l[j]))
				}
				ors = append(ors, and)
			}
			filter = ors[0]
			if len(ors) > 1 {
				filter = iceberg.NewOr(ors[0], ors[1], ors[2:]...)
			}
		}
		_, it, err := tbl.Scan(table.WithRowFilter(filter)).ToArrowRecords(ctx)
		if err != nil {
			return nil, err
		}
		for rec, err := range it {
			if err != nil {
				return nil, err
			}
			b, err := conformTo(ctx, rec, m.d.recSchema, m.mem)
			rec.Release()
			if err != nil {
				return nil, err
			}
			n := len(m.pool)
			m.pool = append(m.pool, b)
			for i := range int(b.NumRows()) {
				if k, ok := m.keyAt(b, i); ok && want[k] {
					out[k] = ref{batch: n, row: i, pos: -1}
				}
			}
		}
	}
	return out, nil
}

// unchangedColumn builds the _unchanged column of the completed images.
func (m *merger) unchangedColumn(n int, names func(i int) []string) arrow.Array {
	dt := m.d.recSchema.Field(m.d.unchanged).Type
	b := array.NewBuilder(m.mem, dt).(*array.ListBuilder)
	defer b.Release()
	vb := b.ValueBuilder().(*array.StringBuilder)
	for i := range n {
		b.Append(true)
		for _, s := range names(i) {
			vb.Append(s)
		}
	}
	return b.NewArray()
}

// conformTo maps rec's columns by name onto sch (the delta's record
// schema: _rowkind dictionary-encoded first): a column rec lacks is NULL,
// another type is cast.
func conformTo(ctx context.Context, rec arrow.RecordBatch, sch *arrow.Schema, mem memory.Allocator) (arrow.RecordBatch, error) {
	n := int(rec.NumRows())
	byName := map[string]int{}
	for i, f := range rec.Schema().Fields() {
		byName[f.Name] = i
	}
	cols := make([]arrow.Array, len(sch.Fields()))
	fail := func(err error) (arrow.RecordBatch, error) {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
		return nil, err
	}
	for i, f := range sch.Fields() {
		j, ok := byName[f.Name]
		switch {
		case i == 0:
			// _rowkind: the kinds' names back into the dictionary.
			ib := array.NewInt8Builder(mem)
			var src arrow.Array
			if ok {
				src = rec.Column(j)
			}
			for r := range n {
				k := arrowconv.Insert
				if src != nil && src.IsValid(r) {
					if kk, good := arrowconv.ParseRowKind(src.ValueStr(r)); good {
						k = kk
					}
				}
				ib.Append(int8(k))
			}
			idx := ib.NewArray()
			ib.Release()
			sb := array.NewStringBuilder(mem)
			for k := arrowconv.Insert; k <= arrowconv.Delete; k++ {
				sb.Append(k.String())
			}
			dict := sb.NewArray()
			sb.Release()
			cols[i] = array.NewDictionaryArray(f.Type, idx, dict)
			idx.Release()
			dict.Release()
		case !ok:
			cols[i] = array.MakeArrayOfNull(mem, f.Type, n)
		default:
			a := rec.Column(j)
			if arrow.TypeEqual(a.DataType(), f.Type) {
				a.Retain()
				cols[i] = a
				continue
			}
			c, err := castTo(ctx, a, f.Type, mem)
			if err != nil {
				return fail(fmt.Errorf("column %s: %s to %s: %w", f.Name, a.DataType(), f.Type, err))
			}
			cols[i] = c
		}
	}
	out := array.NewRecordBatch(sch, cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	return out, nil
}

// castTo casts a to type to; lists of strings are rebuilt (their element
// field's name differs between writers).
func castTo(ctx context.Context, a arrow.Array, to arrow.DataType, mem memory.Allocator) (arrow.Array, error) {
	if lt, ok := to.(*arrow.ListType); ok {
		if l, ok := a.(*array.List); ok && arrow.TypeEqual(lt.Elem(), l.ListValues().DataType()) {
			data := array.NewData(to, l.Len(), l.Data().Buffers(), l.Data().Children(), l.NullN(), l.Data().Offset())
			defer data.Release()
			return array.MakeFromData(data), nil
		}
	}
	return compute.CastArray(ctx, a, compute.SafeCastOptions(to))
}
