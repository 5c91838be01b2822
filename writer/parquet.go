package writer

import (
	"context"
	"fmt"
	"math/big"
	"reflect"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/gzip"
	"github.com/parquet-go/parquet-go/compress/uncompressed"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// ParquetOptions are the Parquet writer settings.
type ParquetOptions struct {
	// Compression is snappy (default), zstd, gzip or none.
	Compression string
	// RowGroupRows is the number of rows per row group (default 131072).
	RowGroupRows int
	// Metadata is written as key/value metadata in the footer.
	Metadata map[string]string
	// Dictionary writes top-level string columns RLE_DICTIONARY-encoded:
	// smaller files when values repeat, some more CPU.
	Dictionary bool
}

// Codec returns the parquet-go codec for a --compression value.
func Codec(name string) (compress.Codec, error) {
	switch strings.ToLower(name) {
	case "", "snappy":
		return fastSnappy{}, nil
	case "zstd":
		return &zstd.Codec{}, nil
	case "gzip":
		return &gzip.Codec{}, nil
	case "none", "uncompressed":
		return &uncompressed.Codec{}, nil
	}
	return nil, fmt.Errorf("writer: unknown compression %q (snappy, zstd, gzip, none)", name)
}

// Parquet writes one Parquet file: _rowkind (dictionary-encoded strings),
// then the declared columns with their logical types. Rows are written
// column by column straight from the Arrow arrays.
type Parquet struct {
	file   *atomicFile
	w      *parquet.GenericWriter[any]
	leaves []*leafBuf
	emit   []emitFunc // one per top-level column, _rowkind first
	// cols is, per top-level column, a column-at-a-time writer for flat
	// columns (nil for nested ones, which go row by row through emit).
	cols   []colFunc
	rgRows int
	rows   int
}

// leafBuf collects the values of one leaf column for one batch.
type leafBuf struct {
	idx  int
	vals []parquet.Value
	tmp  [][]byte // scratch for FIXED_LEN_BYTE_ARRAY decimals
}

// emitFunc appends the values of element i of arr (and its children) to
// the leaf buffers, at repetition level rep with def ancestors defined.
type emitFunc func(arr arrow.Array, i, rep, def int)

// NewParquet creates path's temporary file and a writer for schema s.
func NewParquet(path string, s *arrowconv.Schema, opts ParquetOptions) (*Parquet, error) {
	codec, err := Codec(opts.Compression)
	if err != nil {
		return nil, err
	}
	if opts.RowGroupRows <= 0 {
		opts.RowGroupRows = 128 << 10
	}
	p := &Parquet{rgRows: opts.RowGroupRows}
	root := &orderedGroup{}
	kindNode := parquet.Encoded(parquet.String(), &parquet.RLEDictionary)
	root.add(arrowconv.RowKindColumn, kindNode)
	for _, c := range s.Columns {
		n := nodeFor(c.Type)
		if opts.Dictionary && c.Type.IsString() {
			n = parquet.Encoded(n, &parquet.RLEDictionary)
		}
		root.add(c.Name, parquet.Optional(n))
	}
	schema := parquet.NewSchema("cdcetl", root)
	wopts := []parquet.WriterOption{schema, parquet.Compression(codec), parquet.CreatedBy("cdcetl", "", ""),
		// Min/max go to the column index and the column-chunk statistics,
		// which readers prune with; repeating them in every page header
		// would compute each page's bounds twice.
		parquet.DataPageStatistics(false)}
	for k, v := range opts.Metadata {
		wopts = append(wopts, parquet.KeyValueMetadata(k, v))
	}
	// Validate first: NewGenericWriter panics on a bad configuration.
	if _, err := parquet.NewWriterConfig(wopts...); err != nil {
		return nil, fmt.Errorf("writer: parquet config: %w", err)
	}
	f, err := createAtomic(path)
	if err != nil {
		return nil, err
	}
	p.file = f
	if err := recoverErr(func() error {
		p.w = parquet.NewGenericWriter[any](f.buf, wopts...)
		return nil
	}); err != nil {
		f.abort()
		return nil, err
	}
	// Leaves in schema order; emitters per top-level column.
	next := 0
	newLeaf := func() *leafBuf {
		l := &leafBuf{idx: next}
		next++
		p.leaves = append(p.leaves, l)
		return l
	}
	kindLeaf := newLeaf()
	var kindText [4][]byte
	for k := range kindText {
		kindText[k] = []byte(arrowconv.RowKind(k).String())
	}
	var kindVals [4]parquet.Value
	for k := range kindVals {
		kindVals[k] = parquet.ByteArrayValue(kindText[k]).Level(0, 0, kindLeaf.idx)
	}
	p.emit = append(p.emit, nil)
	p.cols = append(p.cols, func(arr arrow.Array, from, to int) {
		ks := arr.(*array.Dictionary).Indices().(*array.Int8).Int8Values()
		for _, k := range ks[from:to] {
			kindLeaf.vals = append(kindLeaf.vals, kindVals[k])
		}
	})
	for _, c := range s.Columns {
		if cf := columnFor(c.Type, newLeaf); cf != nil {
			p.emit = append(p.emit, nil)
			p.cols = append(p.cols, cf)
			continue
		}
		p.emit = append(p.emit, emitterFor(c.Type, true, 0, newLeaf))
		p.cols = append(p.cols, nil)
	}
	return p, nil
}

func decimalBytes(precision int) int {
	// Smallest n with 2^(8n-1) > 10^precision.
	lim := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(precision)), nil)
	for n := 1; ; n++ {
		if new(big.Int).Lsh(big.NewInt(1), uint(8*n-1)).Cmp(lim) >= 0 {
			return n
		}
	}
}

func timeUnit(p int) parquet.TimeUnit {
	switch {
	case p <= 3:
		return parquet.Millisecond
	case p <= 6:
		return parquet.Microsecond
	}
	return parquet.Nanosecond
}

// nodeFor maps a SQL type to a Parquet node (without its optionality).
func nodeFor(t arrowconv.Type) parquet.Node {
	switch t.Kind {
	case arrowconv.Boolean:
		return parquet.Leaf(parquet.BooleanType)
	case arrowconv.TinyInt:
		return parquet.Int(8)
	case arrowconv.SmallInt:
		return parquet.Int(16)
	case arrowconv.Int:
		return parquet.Int(32)
	case arrowconv.BigInt:
		return parquet.Int(64)
	case arrowconv.Float:
		return parquet.Leaf(parquet.FloatType)
	case arrowconv.Double:
		return parquet.Leaf(parquet.DoubleType)
	case arrowconv.Decimal:
		switch {
		case t.Precision <= 9:
			return parquet.Decimal(t.Scale, t.Precision, parquet.Int32Type)
		case t.Precision <= 18:
			return parquet.Decimal(t.Scale, t.Precision, parquet.Int64Type)
		}
		return parquet.Decimal(t.Scale, t.Precision, parquet.FixedLenByteArrayType(decimalBytes(t.Precision)))
	case arrowconv.Char, arrowconv.VarChar, arrowconv.String:
		return parquet.String()
	case arrowconv.Binary, arrowconv.VarBinary, arrowconv.Bytes:
		return parquet.Leaf(parquet.ByteArrayType)
	case arrowconv.Date:
		return parquet.Date()
	case arrowconv.Time:
		return parquet.TimeAdjusted(parquet.Millisecond, false)
	case arrowconv.Timestamp:
		return parquet.TimestampAdjusted(timeUnit(t.Precision), false)
	case arrowconv.TimestampLTZ:
		return parquet.TimestampAdjusted(timeUnit(t.Precision), true)
	case arrowconv.Array:
		return parquet.List(parquet.Optional(nodeFor(*t.Elem)))
	case arrowconv.Map:
		return parquet.Map(nodeFor(*t.Elem), parquet.Optional(nodeFor(*t.Value)))
	case arrowconv.Multiset:
		return parquet.Map(nodeFor(*t.Elem), parquet.Optional(parquet.Int(32)))
	case arrowconv.Row:
		g := &orderedGroup{}
		for _, f := range t.Fields {
			g.add(f.Name, parquet.Optional(nodeFor(f.Type)))
		}
		return g
	}
	panic(fmt.Sprintf("writer: no Parquet type for %s", t))
}

// colFunc appends the values of rows [from, to) of a flat top-level column.
type colFunc func(arr arrow.Array, from, to int)

// columnFor returns a column-at-a-time writer for a flat (non-nested) type,
// or nil. It resolves the array type once per batch instead of per value.
func columnFor(t arrowconv.Type, newLeaf func() *leafBuf) colFunc {
	switch t.Kind {
	case arrowconv.Array, arrowconv.Map, arrowconv.Multiset, arrowconv.Row:
		return nil
	}
	l := newLeaf()
	null := parquet.NullValue().Level(0, 0, l.idx)
	val := leafValue(t, l)
	switch t.Kind {
	case arrowconv.Int:
		return func(arr arrow.Array, from, to int) {
			a := arr.(*array.Int32)
			vs := a.Int32Values()
			for i := from; i < to; i++ {
				if a.IsNull(i) {
					l.vals = append(l.vals, null)
				} else {
					l.vals = append(l.vals, parquet.Int32Value(vs[i]).Level(0, 1, l.idx))
				}
			}
		}
	case arrowconv.BigInt:
		return func(arr arrow.Array, from, to int) {
			a := arr.(*array.Int64)
			vs := a.Int64Values()
			for i := from; i < to; i++ {
				if a.IsNull(i) {
					l.vals = append(l.vals, null)
				} else {
					l.vals = append(l.vals, parquet.Int64Value(vs[i]).Level(0, 1, l.idx))
				}
			}
		}
	case arrowconv.Char, arrowconv.VarChar, arrowconv.String:
		return func(arr arrow.Array, from, to int) {
			a := arr.(*array.String)
			offs, data := a.ValueOffsets(), a.ValueBytes()
			for i := from; i < to; i++ {
				if a.IsNull(i) {
					l.vals = append(l.vals, null)
				} else {
					l.vals = append(l.vals, parquet.ByteArrayValue(data[offs[i]:offs[i+1]]).Level(0, 1, l.idx))
				}
			}
		}
	}
	return func(arr arrow.Array, from, to int) {
		for i := from; i < to; i++ {
			if arr.IsNull(i) {
				l.vals = append(l.vals, null)
			} else {
				l.vals = append(l.vals, val(arr, i).Level(0, 1, l.idx))
			}
		}
	}
}

// emitterFor builds the level-computing emitter for a value of type t.
// optional says whether the node adds a definition level; repDepth is the
// number of repeated ancestors (the repetition level of a new element).
func emitterFor(t arrowconv.Type, optional bool, repDepth int, newLeaf func() *leafBuf) emitFunc {
	opt := 0
	if optional {
		opt = 1
	}
	nullsTo := func(leaves []*leafBuf, rep, def int) {
		for _, l := range leaves {
			l.vals = append(l.vals, parquet.NullValue().Level(rep, def, l.idx))
		}
	}
	switch t.Kind {
	case arrowconv.Array, arrowconv.Map, arrowconv.Multiset:
		// LIST: optional group > repeated group > element; MAP likewise
		// with a required key and an optional value.
		var children []emitFunc
		var leaves []*leafBuf
		track := func() *leafBuf { l := newLeaf(); leaves = append(leaves, l); return l }
		if t.Kind == arrowconv.Array {
			children = append(children, emitterFor(*t.Elem, true, repDepth+1, track))
		} else {
			children = append(children, emitterFor(*t.Elem, false, repDepth+1, track))
			vt := arrowconv.Type{Kind: arrowconv.Int}
			if t.Kind == arrowconv.Map {
				vt = *t.Value
			}
			children = append(children, emitterFor(vt, true, repDepth+1, track))
		}
		return func(arr arrow.Array, i, rep, def int) {
			if optional && arr.IsNull(i) {
				nullsTo(leaves, rep, def)
				return
			}
			var from, to int64
			var kids []arrow.Array
			switch a := arr.(type) {
			case *array.List:
				from, to = a.ValueOffsets(i)
				kids = []arrow.Array{a.ListValues()}
			case *array.Map:
				from, to = a.ValueOffsets(i)
				kids = []arrow.Array{a.Keys(), a.Items()}
			}
			if from == to {
				nullsTo(leaves, rep, def+opt) // empty: defined, no entry
				return
			}
			for j := from; j < to; j++ {
				r := rep
				if j > from {
					r = repDepth + 1
				}
				for k, c := range children {
					c(kids[k], int(j), r, def+opt+1)
				}
			}
		}
	case arrowconv.Row:
		var children []emitFunc
		var leaves []*leafBuf
		track := func() *leafBuf { l := newLeaf(); leaves = append(leaves, l); return l }
		for _, f := range t.Fields {
			children = append(children, emitterFor(f.Type, true, repDepth, track))
		}
		return func(arr arrow.Array, i, rep, def int) {
			if optional && arr.IsNull(i) {
				nullsTo(leaves, rep, def)
				return
			}
			s := arr.(*array.Struct)
			for k, c := range children {
				c(s.Field(k), i, rep, def+opt)
			}
		}
	}
	l := newLeaf()
	val := leafValue(t, l)
	return func(arr arrow.Array, i, rep, def int) {
		if optional && arr.IsNull(i) {
			l.vals = append(l.vals, parquet.NullValue().Level(rep, def, l.idx))
			return
		}
		l.vals = append(l.vals, val(arr, i).Level(rep, def+opt, l.idx))
	}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && (a < 0) {
		q--
	}
	return q
}

// leafValue converts element i of a leaf array into a Parquet value.
func leafValue(t arrowconv.Type, l *leafBuf) func(arrow.Array, int) parquet.Value {
	switch t.Kind {
	case arrowconv.Boolean:
		return func(a arrow.Array, i int) parquet.Value { return parquet.BooleanValue(a.(*array.Boolean).Value(i)) }
	case arrowconv.TinyInt:
		return func(a arrow.Array, i int) parquet.Value { return parquet.Int32Value(int32(a.(*array.Int8).Value(i))) }
	case arrowconv.SmallInt:
		return func(a arrow.Array, i int) parquet.Value { return parquet.Int32Value(int32(a.(*array.Int16).Value(i))) }
	case arrowconv.Int:
		return func(a arrow.Array, i int) parquet.Value { return parquet.Int32Value(a.(*array.Int32).Value(i)) }
	case arrowconv.BigInt:
		return func(a arrow.Array, i int) parquet.Value { return parquet.Int64Value(a.(*array.Int64).Value(i)) }
	case arrowconv.Float:
		return func(a arrow.Array, i int) parquet.Value { return parquet.FloatValue(a.(*array.Float32).Value(i)) }
	case arrowconv.Double:
		return func(a arrow.Array, i int) parquet.Value { return parquet.DoubleValue(a.(*array.Float64).Value(i)) }
	case arrowconv.Decimal:
		switch {
		case t.Precision <= 9:
			return func(a arrow.Array, i int) parquet.Value {
				return parquet.Int32Value(int32(a.(*array.Decimal128).Value(i).LowBits()))
			}
		case t.Precision <= 18:
			return func(a arrow.Array, i int) parquet.Value {
				return parquet.Int64Value(int64(a.(*array.Decimal128).Value(i).LowBits()))
			}
		}
		n := decimalBytes(t.Precision)
		return func(a arrow.Array, i int) parquet.Value {
			return parquet.FixedLenByteArrayValue(l.bigEndian(a.(*array.Decimal128).Value(i), n))
		}
	case arrowconv.Char, arrowconv.VarChar, arrowconv.String:
		return func(a arrow.Array, i int) parquet.Value {
			s := a.(*array.String)
			offs := s.ValueOffsets()
			return parquet.ByteArrayValue(s.ValueBytes()[offs[i]:offs[i+1]])
		}
	case arrowconv.Binary, arrowconv.VarBinary, arrowconv.Bytes:
		return func(a arrow.Array, i int) parquet.Value { return parquet.ByteArrayValue(a.(*array.Binary).Value(i)) }
	case arrowconv.Date:
		return func(a arrow.Array, i int) parquet.Value { return parquet.Int32Value(int32(a.(*array.Date32).Value(i))) }
	case arrowconv.Time:
		return func(a arrow.Array, i int) parquet.Value { return parquet.Int32Value(int32(a.(*array.Time32).Value(i))) }
	case arrowconv.Timestamp, arrowconv.TimestampLTZ:
		div := int64(1)
		switch {
		case t.Precision <= 3:
			div = 1e6
		case t.Precision <= 6:
			div = 1e3
		}
		return func(a arrow.Array, i int) parquet.Value {
			return parquet.Int64Value(floorDiv(int64(a.(*array.Timestamp).Value(i)), div))
		}
	}
	panic(fmt.Sprintf("writer: no Parquet leaf for %s", t))
}

// bigEndian renders a decimal as n big-endian two's-complement bytes in
// the leaf's scratch storage (valid until the batch is written).
func (l *leafBuf) bigEndian(v decimal128.Num, n int) []byte {
	b := make([]byte, n)
	hi, lo := uint64(v.HighBits()), v.LowBits()
	for k := 0; k < n; k++ {
		var byt byte
		if k < 8 {
			byt = byte(lo >> (8 * k))
		} else if k < 16 {
			byt = byte(hi >> (8 * (k - 8)))
		} else if v.Sign() < 0 {
			byt = 0xff
		}
		b[n-1-k] = byt
	}
	l.tmp = append(l.tmp, b)
	return b
}

// Write implements [Writer].
func (p *Parquet) Write(ctx context.Context, rec arrow.RecordBatch) error {
	n := int(rec.NumRows())
	cols := rec.Columns()
	for start := 0; start < n; {
		end := min(n, start+p.rgRows-p.rows)
		for k, cf := range p.cols {
			if cf != nil {
				cf(cols[k], start, end)
				continue
			}
			e := p.emit[k]
			for i := start; i < end; i++ {
				e(cols[k], i, 0, 0)
			}
		}
		if err := p.writeLeaves(); err != nil {
			return err
		}
		p.rows += end - start
		start = end
		if p.rows >= p.rgRows {
			if err := recoverErr(p.w.Flush); err != nil {
				return fmt.Errorf("writer: parquet: %w", err)
			}
			p.rows = 0
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

func (p *Parquet) writeLeaves() error {
	cws := p.w.ColumnWriters()
	for _, l := range p.leaves {
		err := recoverErr(func() error {
			_, err := cws[l.idx].WriteRowValues(l.vals)
			return err
		})
		if err != nil {
			return fmt.Errorf("writer: parquet: %w", err)
		}
		clear(l.vals)
		l.vals = l.vals[:0]
		l.tmp = l.tmp[:0]
	}
	return nil
}

// Close writes the footer and moves the file into place.
func (p *Parquet) Close() error {
	if err := recoverErr(p.w.Close); err != nil {
		p.file.abort()
		return fmt.Errorf("writer: parquet: %w", err)
	}
	return p.file.commit()
}

// Abort removes the temporary file.
func (p *Parquet) Abort() error { return p.file.abort() }

// recoverErr turns a panic inside parquet-go into an error: a library
// panic must not take the whole run down.
func recoverErr(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("writer: parquet-go panicked: %v", r)
		}
	}()
	return f()
}

// orderedGroup is a Parquet group that keeps its fields in declaration
// order (parquet.Group is a map and sorts them by name).
type orderedGroup struct {
	fields []parquet.Field
}

type groupField struct {
	parquet.Node
	name string
}

func (f *groupField) Name() string                           { return f.name }
func (f *groupField) Value(base reflect.Value) reflect.Value { return reflect.Value{} }

func (g *orderedGroup) add(name string, n parquet.Node) {
	g.fields = append(g.fields, &groupField{Node: n, name: name})
}

func (g *orderedGroup) ID() int                 { return 0 }
func (g *orderedGroup) String() string          { return fmt.Sprintf("group(%d fields)", len(g.fields)) }
func (g *orderedGroup) Type() parquet.Type      { return parquet.Group{}.Type() }
func (g *orderedGroup) Optional() bool          { return false }
func (g *orderedGroup) Repeated() bool          { return false }
func (g *orderedGroup) Required() bool          { return true }
func (g *orderedGroup) Leaf() bool              { return false }
func (g *orderedGroup) Fields() []parquet.Field { return g.fields }
func (g *orderedGroup) Encoding() encoding.Encoding {
	return nil
}
func (g *orderedGroup) Compression() compress.Codec { return nil }
func (g *orderedGroup) GoType() reflect.Type {
	m := parquet.Group{}
	for _, f := range g.fields {
		m[f.Name()] = f
	}
	return m.GoType()
}
