package arrowconv

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Column is a growable column that a decoder appends values to. Unlike
// arrow-go's builders it can be truncated, which is what lets a message that
// fails half way leave no trace ([Builder.Rollback]).
//
// Columns are not safe for concurrent use.
type Column interface {
	// Len is the number of values appended since the last flush.
	Len() int
	// AppendNull appends a NULL.
	AppendNull()
	// IsNull reports whether value i is NULL.
	IsNull(i int) bool
	// Truncate drops every value from index n on.
	Truncate(n int)
	// AppendCopy appends a copy of value i.
	AppendCopy(i int)

	// appendRange appends copies of values [lo, hi) at once: the entries
	// of a list or map copied whole (a repeated metadata map, the -U row).
	appendRange(lo, hi int)

	build(mem memory.Allocator, dt arrow.DataType) arrow.ArrayData
	reset()
	size() int
}

type valids struct {
	valid []bool
	nulls int
}

func (v *valids) Len() int          { return len(v.valid) }
func (v *valids) IsNull(i int) bool { return !v.valid[i] }
func (v *valids) push(ok bool) {
	v.valid = append(v.valid, ok)
	n := 0 // without a branch: half the values of a column may be NULL, at random
	if !ok {
		n = 1
	}
	v.nulls += n
}

// pushValid appends n valid flags.
func (v *valids) pushValid(n int) {
	for range n {
		v.valid = append(v.valid, true)
	}
}
func (v *valids) truncate(n int) {
	for _, ok := range v.valid[n:] {
		if !ok {
			v.nulls--
		}
	}
	v.valid = v.valid[:n]
}
func (v *valids) resetValid() { v.valid, v.nulls = v.valid[:0], 0 }

// pushRange appends the flags of values [lo, hi).
func (v *valids) pushRange(lo, hi int) {
	if v.nulls > 0 {
		for _, ok := range v.valid[lo:hi] {
			if !ok {
				v.nulls++
			}
		}
	}
	v.valid = append(v.valid, v.valid[lo:hi]...)
}

// bitmap returns the Arrow validity buffer, or nil when there are no nulls.
func (v *valids) bitmap(mem memory.Allocator) *memory.Buffer {
	if v.nulls == 0 {
		return nil
	}
	buf := memory.NewResizableBuffer(mem)
	buf.Resize((len(v.valid) + 7) / 8)
	bs := buf.Bytes()
	// Eight flags (bytes of 0 or 1) at a time: the multiplication moves
	// byte k's low bit to bit 56+k without carries, so the top byte is
	// the bitmap byte (bit k for row k, as Arrow orders them).
	flags := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v.valid))), len(v.valid))
	i := 0
	for ; i+8 <= len(flags); i += 8 {
		bs[i>>3] = byte(binary.LittleEndian.Uint64(flags[i:]) * 0x0102040810204080 >> 56)
	}
	if i < len(flags) {
		bs[i>>3] = 0
		for ; i < len(flags); i++ {
			bs[i>>3] |= flags[i] << (uint(i) & 7)
		}
	}
	return buf
}

// Fixed is a column of fixed-width values: integers, floats, dates, times,
// timestamps and decimals.
type FixedCol[T int8 | int16 | int32 | int64 | float32 | float64 | decimal128.Num] struct {
	valids
	Vals []T
}

// Append appends v.
func (c *FixedCol[T]) Append(v T) { c.Vals = append(c.Vals, v); c.push(true) }

func (c *FixedCol[T]) AppendNull() {
	var zero T
	c.Vals = append(c.Vals, zero)
	c.push(false)
}
func (c *FixedCol[T]) Truncate(n int) { c.Vals = c.Vals[:n]; c.truncate(n) }
func (c *FixedCol[T]) AppendCopy(i int) {
	c.Vals = append(c.Vals, c.Vals[i])
	c.push(c.valid[i])
}
func (c *FixedCol[T]) appendRange(lo, hi int) {
	c.Vals = append(c.Vals, c.Vals[lo:hi]...)
	c.pushRange(lo, hi)
}
func (c *FixedCol[T]) reset()    { c.Vals = c.Vals[:0]; c.resetValid() }
func (c *FixedCol[T]) size() int { var z T; return len(c.Vals) * int(unsafe.Sizeof(z)) }
func (c *FixedCol[T]) build(mem memory.Allocator, dt arrow.DataType) arrow.ArrayData {
	data := memory.NewResizableBuffer(mem)
	if n := len(c.Vals); n > 0 {
		var z T
		sz := n * int(unsafe.Sizeof(z))
		data.Resize(sz)
		copy(data.Bytes(), unsafe.Slice((*byte)(unsafe.Pointer(&c.Vals[0])), sz))
	}
	return newData(dt, len(c.Vals), c.nulls, []*memory.Buffer{c.bitmap(mem), data}, nil)
}

// Bool is a BOOLEAN column.
type BoolCol struct {
	valids
	Vals []bool
}

func (c *BoolCol) Append(v bool) { c.Vals = append(c.Vals, v); c.push(true) }
func (c *BoolCol) AppendNull()   { c.Vals = append(c.Vals, false); c.push(false) }
func (c *BoolCol) Truncate(n int) {
	c.Vals = c.Vals[:n]
	c.truncate(n)
}
func (c *BoolCol) AppendCopy(i int) { c.Vals = append(c.Vals, c.Vals[i]); c.push(c.valid[i]) }
func (c *BoolCol) appendRange(lo, hi int) {
	c.Vals = append(c.Vals, c.Vals[lo:hi]...)
	c.pushRange(lo, hi)
}
func (c *BoolCol) reset()    { c.Vals = c.Vals[:0]; c.resetValid() }
func (c *BoolCol) size() int { return len(c.Vals) }
func (c *BoolCol) build(mem memory.Allocator, dt arrow.DataType) arrow.ArrayData {
	data := memory.NewResizableBuffer(mem)
	data.Resize((len(c.Vals) + 7) / 8)
	bs := data.Bytes()
	clear(bs)
	for i, v := range c.Vals {
		if v {
			bs[i>>3] |= 1 << (uint(i) & 7)
		}
	}
	return newData(dt, len(c.Vals), c.nulls, []*memory.Buffer{c.bitmap(mem), data}, nil)
}

// Bytes is a STRING or BINARY column.
type BytesCol struct {
	valids
	offs []int32 // start of each value in data
	data []byte
}

// Append appends a copy of v.
func (c *BytesCol) Append(v []byte) {
	c.offs = append(c.offs, int32(len(c.data)))
	c.data = append(c.data, v...)
	c.push(true)
}

// AppendValues appends len(starts) values, none NULL, laid end to end in
// data: value k is data[starts[k]:starts[k+1]], the last one running to
// data's end. One copy of data for them all (a map's keys, the same every
// row).
func (c *BytesCol) AppendValues(data []byte, starts []int32) {
	base := int32(len(c.data))
	for _, s := range starts {
		c.offs = append(c.offs, base+s)
	}
	c.data = append(c.data, data...)
	c.pushValid(len(starts))
}

// AppendWith appends the value f appends to the column's value bytes
// (f must only append to dst and return the result): a value made in
// place, with no copy of it made first.
func (c *BytesCol) AppendWith(f func(dst []byte) []byte) {
	c.offs = append(c.offs, int32(len(c.data)))
	c.data = f(c.data)
	c.push(true)
}

// AppendString appends a copy of s.
func (c *BytesCol) AppendString(s string) {
	c.offs = append(c.offs, int32(len(c.data)))
	c.data = append(c.data, s...)
	c.push(true)
}

// Value returns value i; it aliases the column's storage.
func (c *BytesCol) Value(i int) []byte {
	end := len(c.data)
	if i+1 < len(c.offs) {
		end = int(c.offs[i+1])
	}
	return c.data[c.offs[i]:end]
}

func (c *BytesCol) AppendNull() {
	c.offs = append(c.offs, int32(len(c.data)))
	c.push(false)
}
func (c *BytesCol) Truncate(n int) {
	if n < len(c.offs) {
		c.data = c.data[:c.offs[n]]
	}
	c.offs = c.offs[:n]
	c.truncate(n)
}
func (c *BytesCol) AppendCopy(i int) {
	if !c.valid[i] {
		c.AppendNull()
		return
	}
	start := len(c.data)
	v := c.Value(i)
	c.data = append(c.data, v...)
	c.offs = append(c.offs, int32(start))
	c.push(true)
}
func (c *BytesCol) appendRange(lo, hi int) {
	if lo >= hi {
		return
	}
	from, to := c.offs[lo], int32(len(c.data))
	if hi < len(c.offs) {
		to = c.offs[hi]
	}
	shift := int32(len(c.data)) - from
	for _, o := range c.offs[lo:hi] {
		c.offs = append(c.offs, o+shift)
	}
	c.data = append(c.data, c.data[from:to]...)
	c.pushRange(lo, hi)
}
func (c *BytesCol) reset()    { c.offs, c.data = c.offs[:0], c.data[:0]; c.resetValid() }
func (c *BytesCol) size() int { return len(c.data) + 4*len(c.offs) }
func (c *BytesCol) build(mem memory.Allocator, dt arrow.DataType) arrow.ArrayData {
	offs := offsetsBuffer(mem, c.offs, len(c.data))
	data := memory.NewResizableBuffer(mem)
	data.Resize(len(c.data))
	copy(data.Bytes(), c.data)
	return newData(dt, len(c.offs), c.nulls, []*memory.Buffer{c.bitmap(mem), offs, data}, nil)
}

func offsetsBuffer(mem memory.Allocator, offs []int32, end int) *memory.Buffer {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(4 * (len(offs) + 1))
	out := unsafe.Slice((*int32)(unsafe.Pointer(&buf.Bytes()[0])), len(offs)+1)
	copy(out, offs)
	out[len(offs)] = int32(end)
	return buf
}

// List is an ARRAY column. Append an element with [ListCol.Start], then append
// its items to Child.
type ListCol struct {
	valids
	offs  []int32
	Child Column
}

// Start begins a non-null array; its items are what is appended to Child
// until the next Start, AppendNull or flush.
func (c *ListCol) Start() { c.offs = append(c.offs, int32(c.Child.Len())); c.push(true) }
func (c *ListCol) AppendNull() {
	c.offs = append(c.offs, int32(c.Child.Len()))
	c.push(false)
}
func (c *ListCol) end(i int) int {
	if i+1 < len(c.offs) {
		return int(c.offs[i+1])
	}
	return c.Child.Len()
}
func (c *ListCol) Truncate(n int) {
	if n < len(c.offs) {
		c.Child.Truncate(int(c.offs[n]))
	}
	c.offs = c.offs[:n]
	c.truncate(n)
}
func (c *ListCol) AppendCopy(i int) {
	start, end := int(c.offs[i]), c.end(i)
	c.offs = append(c.offs, int32(c.Child.Len()))
	c.push(c.valid[i])
	c.Child.appendRange(start, end)
}
func (c *ListCol) appendRange(lo, hi int) {
	for i := lo; i < hi; i++ {
		c.AppendCopy(i)
	}
}

// Range returns the child index range of element i.
func (c *ListCol) Range(i int) (int, int) { return int(c.offs[i]), c.end(i) }

func (c *ListCol) reset()    { c.offs = c.offs[:0]; c.resetValid(); c.Child.reset() }
func (c *ListCol) size() int { return 4*len(c.offs) + c.Child.size() }
func (c *ListCol) build(mem memory.Allocator, dt arrow.DataType) arrow.ArrayData {
	offs := offsetsBuffer(mem, c.offs, c.Child.Len())
	child := c.Child.build(mem, dt.(*arrow.ListType).Elem())
	defer child.Release()
	return newData(dt, len(c.offs), c.nulls, []*memory.Buffer{c.bitmap(mem), offs}, []arrow.ArrayData{child})
}

// Map is a MAP or MULTISET column: Start an entry, then append to Keys and
// Values in step.
type MapCol struct {
	valids
	offs   []int32
	Keys   Column
	Values Column
}

func (c *MapCol) Start() { c.offs = append(c.offs, int32(c.Keys.Len())); c.push(true) }
func (c *MapCol) AppendNull() {
	c.offs = append(c.offs, int32(c.Keys.Len()))
	c.push(false)
}
func (c *MapCol) end(i int) int {
	if i+1 < len(c.offs) {
		return int(c.offs[i+1])
	}
	return c.Keys.Len()
}

// Range returns the entry index range of element i.
func (c *MapCol) Range(i int) (int, int) { return int(c.offs[i]), c.end(i) }
func (c *MapCol) Truncate(n int) {
	if n < len(c.offs) {
		c.Keys.Truncate(int(c.offs[n]))
		c.Values.Truncate(int(c.offs[n]))
	}
	c.offs = c.offs[:n]
	c.truncate(n)
}
func (c *MapCol) AppendCopy(i int) {
	start, end := int(c.offs[i]), c.end(i)
	c.offs = append(c.offs, int32(c.Keys.Len()))
	c.push(c.valid[i])
	c.Keys.appendRange(start, end)
	c.Values.appendRange(start, end)
}
func (c *MapCol) appendRange(lo, hi int) {
	for i := lo; i < hi; i++ {
		c.AppendCopy(i)
	}
}
func (c *MapCol) reset() {
	c.offs = c.offs[:0]
	c.resetValid()
	c.Keys.reset()
	c.Values.reset()
}
func (c *MapCol) size() int { return 4*len(c.offs) + c.Keys.size() + c.Values.size() }
func (c *MapCol) build(mem memory.Allocator, dt arrow.DataType) arrow.ArrayData {
	mt := dt.(*arrow.MapType)
	st := mt.Elem().(*arrow.StructType)
	keys := c.Keys.build(mem, st.Field(0).Type)
	defer keys.Release()
	vals := c.Values.build(mem, st.Field(1).Type)
	defer vals.Release()
	entries := newData(st, c.Keys.Len(), 0, []*memory.Buffer{nil}, []arrow.ArrayData{keys, vals})
	defer entries.Release()
	offs := offsetsBuffer(mem, c.offs, c.Keys.Len())
	return newData(dt, len(c.offs), c.nulls, []*memory.Buffer{c.bitmap(mem), offs}, []arrow.ArrayData{entries})
}

// Struct is a ROW column. AppendValid marks a non-null row whose fields the
// caller appends to Fields; AppendNull appends NULL to every field too.
type StructCol struct {
	valids
	Fields []Column
}

func (c *StructCol) AppendValid() { c.push(true) }
func (c *StructCol) AppendNull() {
	c.push(false)
	for _, f := range c.Fields {
		f.AppendNull()
	}
}
func (c *StructCol) Truncate(n int) {
	c.truncate(n)
	for _, f := range c.Fields {
		f.Truncate(n)
	}
}
func (c *StructCol) AppendCopy(i int) {
	c.push(c.valid[i])
	for _, f := range c.Fields {
		f.AppendCopy(i)
	}
}
func (c *StructCol) appendRange(lo, hi int) {
	c.pushRange(lo, hi)
	for _, f := range c.Fields {
		f.appendRange(lo, hi)
	}
}
func (c *StructCol) reset() {
	c.resetValid()
	for _, f := range c.Fields {
		f.reset()
	}
}
func (c *StructCol) size() int {
	n := len(c.valid)
	for _, f := range c.Fields {
		n += f.size()
	}
	return n
}
func (c *StructCol) build(mem memory.Allocator, dt arrow.DataType) arrow.ArrayData {
	st := dt.(*arrow.StructType)
	children := make([]arrow.ArrayData, len(c.Fields))
	for i, f := range c.Fields {
		children[i] = f.build(mem, st.Field(i).Type)
	}
	d := newData(dt, len(c.valid), c.nulls, []*memory.Buffer{c.bitmap(mem)}, children)
	for _, ch := range children {
		ch.Release()
	}
	return d
}

// newData wraps buffers into ArrayData and drops this function's references
// to them (NewData retains what it keeps).
func newData(dt arrow.DataType, n, nulls int, bufs []*memory.Buffer, children []arrow.ArrayData) arrow.ArrayData {
	d := array.NewData(dt, n, bufs, children, nulls, 0)
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	return d
}

// NewColumn returns an empty column for values of type t.
func NewColumn(t Type) Column {
	switch t.Kind {
	case Boolean:
		return &BoolCol{}
	case TinyInt:
		return &FixedCol[int8]{}
	case SmallInt:
		return &FixedCol[int16]{}
	case Time:
		if t.Precision <= 3 {
			return &FixedCol[int32]{}
		}
		return &FixedCol[int64]{}
	case Int, Date:
		return &FixedCol[int32]{}
	case BigInt, Timestamp, TimestampLTZ:
		return &FixedCol[int64]{}
	case Float:
		return &FixedCol[float32]{}
	case Double:
		return &FixedCol[float64]{}
	case Decimal:
		return &FixedCol[decimal128.Num]{}
	case Char, VarChar, String, Binary, VarBinary, Bytes:
		return &BytesCol{}
	case Array:
		return &ListCol{Child: NewColumn(*t.Elem)}
	case Map:
		return &MapCol{Keys: NewColumn(*t.Elem), Values: NewColumn(*t.Value)}
	case Multiset:
		return &MapCol{Keys: NewColumn(*t.Elem), Values: &FixedCol[int32]{}}
	case Row:
		s := &StructCol{Fields: make([]Column, len(t.Fields))}
		for i, f := range t.Fields {
			s.Fields[i] = NewColumn(f.Type)
		}
		return s
	}
	panic(fmt.Sprintf("arrowconv: no column for kind %d", t.Kind))
}

// Builder accumulates rows for one output: the row kind plus one [Column]
// per declared column. A row is complete when every column has one more
// value; callers keep all columns the same length between messages.
//
// A Builder is not safe for concurrent use.
type Builder struct {
	mem    memory.Allocator
	schema *arrow.Schema
	kinds  FixedCol[int8]
	cols   []Column
	dict   arrow.Array
	// epoch counts the flushes and rollbacks: a row index taken in one
	// epoch names the same row for as long as the epoch lasts.
	epoch uint64
}

// Epoch changes whenever rows are taken away (Flush, Rollback).
func (b *Builder) Epoch() uint64 { return b.epoch }

// NewBuilder returns a builder for s whose batches are allocated from mem.
func NewBuilder(mem memory.Allocator, s *Schema) *Builder {
	b := &Builder{mem: mem, schema: s.ArrowSchema()}
	for _, c := range s.Columns {
		b.cols = append(b.cols, NewColumn(c.Type))
	}
	return b
}

// Schema is the Arrow schema of the batches Flush returns.
func (b *Builder) Schema() *arrow.Schema { return b.schema }

// Column returns the column for declared column i (not counting _rowkind).
func (b *Builder) Column(i int) Column { return b.cols[i] }

// AppendKind appends the row kind of the next row.
func (b *Builder) AppendKind(k RowKind) { b.kinds.Append(int8(k)) }

// Len is the number of rows (row kinds) appended since the last flush.
func (b *Builder) Len() int { return b.kinds.Len() }

// Mark returns a point to roll back to; it is the current row count.
func (b *Builder) Mark() int { return b.kinds.Len() }

// Rollback drops every row and partial row appended after mark.
func (b *Builder) Rollback(mark int) {
	b.epoch++
	b.kinds.Truncate(mark)
	for _, c := range b.cols {
		if c.Len() > mark {
			c.Truncate(mark)
		}
	}
}

// Size is a rough count of the bytes held, for deciding when to flush.
func (b *Builder) Size() int {
	n := b.kinds.Len()
	for _, c := range b.cols {
		n += c.size()
	}
	return n
}

// Flush returns the rows appended so far as a record batch and empties the
// builder. It returns nil when there are no rows. The caller owns the batch
// and must Release it.
func (b *Builder) Flush() arrow.RecordBatch {
	n := b.kinds.Len()
	if n == 0 {
		return nil
	}
	b.epoch++
	for i, c := range b.cols {
		if c.Len() != n {
			panic(fmt.Sprintf("arrowconv: column %s has %d values for %d rows", b.schema.Field(i+1).Name, c.Len(), n))
		}
	}
	if b.dict == nil {
		sb := array.NewStringBuilder(b.mem)
		for _, s := range rowKindNames {
			sb.Append(s)
		}
		b.dict = sb.NewArray()
		sb.Release()
	}
	arrs := make([]arrow.Array, 0, len(b.cols)+1)
	idx := b.kinds.build(b.mem, arrow.PrimitiveTypes.Int8)
	idxArr := array.MakeFromData(idx)
	idx.Release()
	arrs = append(arrs, array.NewDictionaryArray(RowKindType, idxArr, b.dict))
	idxArr.Release()
	for i, c := range b.cols {
		d := c.build(b.mem, b.schema.Field(i+1).Type)
		arrs = append(arrs, array.MakeFromData(d))
		d.Release()
	}
	rec := array.NewRecordBatch(b.schema, arrs, int64(n))
	for _, a := range arrs {
		a.Release()
	}
	b.kinds.reset()
	for _, c := range b.cols {
		c.reset()
	}
	return rec
}

// Release frees what the builder holds outside Go's heap.
func (b *Builder) Release() {
	if b.dict != nil {
		b.dict.Release()
		b.dict = nil
	}
}

// StringBytes returns a's value offsets (one per row and one more) and the
// bytes they index: row i is bytes[offs[i]:offs[i+1]], in a slice of a
// larger array too. (Arrow's ValueBytes starts at the slice's first value,
// while its ValueOffsets still count from the start of the whole buffer.)
func StringBytes(a *array.String) (offs []int32, bytes []byte) {
	offs = a.ValueOffsets()
	if b := a.Data().Buffers()[2]; b != nil {
		bytes = b.Bytes()
	}
	return offs, bytes
}
