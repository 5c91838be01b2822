package writer

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/big"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/gzip"
	"github.com/parquet-go/parquet-go/compress/uncompressed"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"golang.org/x/sync/errgroup"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// ParquetOptions are the Parquet writer settings.
type ParquetOptions struct {
	// Compression is snappy (default), zstd, gzip or none.
	Compression string
	// RowGroupRows is the number of rows per row group (default 131072).
	RowGroupRows int
	// Concurrency is how many columns are encoded and compressed at once
	// (default GOMAXPROCS): the one writer of a file then keeps up with
	// several decoding workers.
	Concurrency int
	// Metadata is written as key/value metadata in the footer.
	Metadata map[string]string
	// CreatedBy is the footer's created_by, in the form the Parquet spec
	// gives ("cdcetl version 0.2.0 (build 1a2b3c)"); default "cdcetl".
	CreatedBy string
	// PlainStrings writes top-level string columns PLAIN. By default they
	// are RLE_DICTIONARY-encoded (PLAIN from the point a chunk's dictionary
	// passes 1 MiB), as most Parquet writers do: about a quarter smaller
	// on CDC data for about 5% more CPU.
	PlainStrings bool
	// PlainIntegers writes INT32/INT64 columns (integers, dates, times,
	// timestamps, small decimals) PLAIN. By default they are
	// DELTA_BINARY_PACKED, a Parquet 2.0 encoding like the DATA_PAGE_V2
	// pages the writer uses: on CDC data about half the bytes before
	// compression, and faster to write, because snappy has less to do.
	PlainIntegers bool
	// PageBytes is the target uncompressed size of a data page (default
	// 256 KiB). Every column buffers about one page: writers open by the
	// dozen (one per source table) take smaller ones.
	PageBytes int
	// Iceberg writes the file as an Iceberg data file: physical types as
	// the Iceberg spec maps them (TINYINT and SMALLINT as plain INT32, TIME
	// and TIMESTAMP in microseconds whatever the precision: milliseconds
	// are scaled up, nanoseconds floored), with FieldIDs.
	Iceberg bool
	// HoldRows: batches of fewer rows are held and written together, column
	// by column, once HoldRows rows (or a MiB) are held; 0 holds none. For
	// many writers open at once, each given small batches in turn (a routed
	// input's tables): a column's dictionary, out of cache by the time its
	// writer's turn comes again, then serves thousands of values per visit
	// instead of a hundred. The file is the same either way.
	HoldRows int
	// PlainColumns names string columns written PLAIN whatever
	// PlainStrings says: values known to be distinct (a log position per
	// row), for which a dictionary is work thrown away.
	PlainColumns []string
	// Required names top-level columns written REQUIRED (no definition
	// levels): the caller guarantees they hold no NULL (an Iceberg
	// table's identifier fields).
	Required []string
	// NoRowKind leaves the _rowkind column out: the file holds the
	// schema's columns only (Iceberg delete files), and so do the batches.
	NoRowKind bool
	// FieldIDs gives the field_id of the column at a path of Parquet names
	// (top-level name first; lists as name/list/element, maps as
	// name/key_value/key|value), or 0 for none.
	FieldIDs func(path []string) int32
}

// columnKinds reports whether t is written by a column-at-a-time writer
// (not nested): only those may be REQUIRED.
func columnKinds(t arrowconv.Type) bool {
	switch t.Kind {
	case arrowconv.Array, arrowconv.Map, arrowconv.Multiset, arrowconv.Row:
		return false
	}
	return true
}

// storage is how Arrow values become Parquet ones: as declared, or as an
// Iceberg data file needs them.
type storage struct{ iceberg bool }

// unitOf is the Parquet unit a TIME or TIMESTAMP of precision p is stored in.
func (st storage) unitOf(p int) parquet.TimeUnit {
	if st.iceberg {
		return parquet.Microsecond
	}
	return timeUnit(p)
}

// Codec returns the parquet-go codec for a --compression value.
func Codec(name string) (compress.Codec, error) {
	switch strings.ToLower(name) {
	case "", "snappy":
		return fastSnappy{}, nil
	case "zstd":
		return &zstd.Codec{}, nil
	case "gzip":
		// Level 0 is gzip's "no compression": the level must be set.
		return &gzip.Codec{Level: gzip.DefaultCompression}, nil
	case "none", "uncompressed":
		return &uncompressed.Codec{}, nil
	}
	return nil, fmt.Errorf("compression %q is not a Parquet codec (snappy, zstd, gzip, none)", name)
}

// Parquet writes one Parquet file: _rowkind (dictionary-encoded strings),
// then the declared columns with their logical types. Values go column by
// column from the Arrow arrays straight into page buffers (see leaf); the
// schema is described with parquet-go's nodes.
type Parquet struct {
	file   *atomicFile
	codec  compress.Codec
	leaves []*leaf
	// cols is, per top-level column (_rowkind first), a column-at-a-time
	// writer for flat columns; emit the row-at-a-time level-computing
	// emitter for nested ones.
	cols []colFunc
	emit []emitFunc
	// colLeaves are the leaves of each top-level column: columns share
	// nothing, so they are encoded concurrently (up to len(encs)).
	colLeaves [][]*leaf
	// data are the leaves but the row kind's; pageCap is the capacity of
	// their page buffers, taken by acquire and given back by release.
	data     []*leaf
	pageCap  int
	released bool
	// encs are the page encoding buffers, one set per goroutine that
	// may encode at once (eachColumn lends them to the leaves).
	encs   []encBufs
	rgRows int
	rows   int // rows in the row group under way

	// pending are small batches held (retained) until they add up to
	// holdRows rows or holdBytes bytes (see ParquetOptions.HoldRows).
	holdRows     int
	pending      []arrow.RecordBatch
	pendingRows  int
	pendingBytes int
	pieces       []piece

	off       int64 // bytes written so far
	schema    []format.SchemaElement
	orders    []format.ColumnOrder
	kv        []format.KeyValue
	rowGroups []format.RowGroup
	colIdx    [][]*format.ColumnIndex // per row group, per leaf (nil: none)
	offIdx    [][]format.OffsetIndex
	numRows   int64
	createdBy string
}

// emitFunc appends the values of element i of arr (and its children) to
// the leaves, at repetition level rep with def ancestors defined.
type emitFunc func(arr arrow.Array, i, rep, def int)

// colFunc appends the values of rows [from, to) of a flat top-level column.
type colFunc func(arr arrow.Array, from, to int)

// NewParquet creates path's temporary file and a writer for schema s.
func NewParquet(path string, s *arrowconv.Schema, opts ParquetOptions) (*Parquet, error) {
	codec, err := Codec(opts.Compression)
	if err != nil {
		return nil, err
	}
	if opts.RowGroupRows <= 0 {
		opts.RowGroupRows = 128 << 10
	}
	p := &Parquet{rgRows: opts.RowGroupRows, codec: codec, createdBy: opts.CreatedBy, holdRows: opts.HoldRows}
	concurrency := opts.Concurrency
	if concurrency <= 0 {
		concurrency = runtime.GOMAXPROCS(0)
	}
	p.encs = make([]encBufs, max(concurrency, 1))
	if p.createdBy == "" {
		p.createdBy = "cdcetl"
	}
	st := storage{iceberg: opts.Iceberg}
	root := &orderedGroup{}
	if !opts.NoRowKind {
		root.add(arrowconv.RowKindColumn, parquet.String())
	}
	for _, c := range s.Columns {
		if slices.Contains(opts.Required, c.Name) && columnKinds(c.Type) {
			root.add(c.Name, st.nodeFor(c.Type))
			continue
		}
		root.add(c.Name, parquet.Optional(st.nodeFor(c.Type)))
	}
	p.schemaOf(root, opts.FieldIDs)
	for k, v := range opts.Metadata {
		p.kv = append(p.kv, format.KeyValue{Key: k, Value: v})
	}
	slices.SortFunc(p.kv, func(a, b format.KeyValue) int { return strings.Compare(a.Key, b.Key) })

	// Leaves in schema order; writers per top-level column.
	next := 0
	newLeaf := func() *leaf {
		l := p.leaves[next]
		next++
		return l
	}
	if !opts.NoRowKind {
		kindLeaf := newLeaf()
		for k := range 4 {
			kindLeaf.fixedDict = append(kindLeaf.fixedDict, arrowconv.RowKind(k).String())
		}
		p.colLeaves = append(p.colLeaves, p.leaves[:1])
		p.emit = append(p.emit, nil)
		p.cols = append(p.cols, func(arr arrow.Array, from, to int) {
			ks := arr.(*array.Dictionary).Indices().(*array.Int8).Int8Values()
			for _, k := range ks[from:to] {
				kindLeaf.putIndex(int32(k))
			}
			kindLeaf.nValues += to - from
			kindLeaf.nRows += to - from
		})
	}
	for _, c := range s.Columns {
		first := next
		if cf := st.columnFor(c.Type, newLeaf); cf != nil {
			p.emit = append(p.emit, nil)
			p.cols = append(p.cols, cf)
			if !opts.PlainStrings && !slices.Contains(opts.PlainColumns, c.Name) {
				// Top-level strings, the elements of top-level lists and the
				// keys of top-level maps (they repeat in every row); map
				// values (positions, times: mostly distinct) and deeper
				// strings stay PLAIN.
				var strs []bool
				switch c.Type.Kind {
				case arrowconv.Array:
					strs = []bool{c.Type.Elem.IsString()}
				case arrowconv.Map:
					strs = []bool{c.Type.Elem.IsString(), false}
				case arrowconv.Multiset:
					strs = []bool{c.Type.Elem.IsString(), false}
				default:
					strs = []bool{c.Type.IsString()}
				}
				for i, str := range strs {
					if l := p.leaves[first+i]; str {
						l.dict, l.dictIdx = true, newDictTable()
					}
				}
			}
		} else {
			p.emit = append(p.emit, st.emitterFor(c.Type, true, 0, newLeaf))
			p.cols = append(p.cols, nil)
		}
		p.colLeaves = append(p.colLeaves, p.leaves[first:next])
	}
	// A page's fixed-width values are buffered in storage sized once (a page
	// ends past pageBytes, by at most a batch): memory is only touched as
	// it fills, and never copied to grow.
	pb := opts.PageBytes
	if pb <= 0 {
		pb = pageBytes
		// A wide table's pages share pageBudget: 60 columns of 256 KiB
		// pages would keep 15-19 MiB of heap live, and touched.
		if n := len(p.leaves); n*pb > pageBudget {
			pb = max(minPageBytes, pageBudget/n)
		}
	}
	for _, l := range p.leaves {
		l.pageBytes = pb
	}
	p.pageCap = pb + pb/4
	data := p.leaves
	if !opts.NoRowKind {
		data = data[1:]
	}
	for _, l := range data {
		l.delta = !opts.PlainIntegers && (l.phys == format.Int32 || l.phys == format.Int64)
	}
	p.data = data
	p.acquire()

	f, err := createAtomic(path, 1<<16)
	if err != nil {
		return nil, err
	}
	p.file = f
	if err := p.write([]byte("PAR1")); err != nil {
		f.abort()
		return nil, err
	}
	return p, nil
}

// schemaOf flattens the node tree into Parquet schema elements and leaves
// (depth first, the order of the columns in the file).
func (p *Parquet) schemaOf(root parquet.Node, ids func([]string) int32) {
	var walk func(n parquet.Node, name string, path []string, rep, def int, isRoot bool)
	walk = func(n parquet.Node, name string, path []string, rep, def int, isRoot bool) {
		el := format.SchemaElement{Name: name}
		if !isRoot {
			switch {
			case n.Repeated():
				el.RepetitionType.Set(format.Repeated)
				rep++
				def++
			case n.Optional():
				el.RepetitionType.Set(format.Optional)
				def++
			default:
				el.RepetitionType.Set(format.Required)
			}
			path = append(slices.Clip(path), name)
			if ids != nil {
				if id := ids(path); id != 0 {
					el.FieldID = id
				}
			}
		}
		t := n.Type()
		if lt := t.LogicalType(); lt != nil {
			el.LogicalType = *lt
			if d, ok := lt.Value.(*format.DecimalType); ok {
				el.Scale.Set(d.Scale)
				el.Precision.Set(d.Precision)
			}
		}
		if ct := t.ConvertedType(); ct != nil {
			el.ConvertedType.Set(*ct)
		}
		if n.Leaf() {
			phys := *t.PhysicalType()
			el.Type.Set(phys)
			if phys == format.FixedLenByteArray {
				// Only FIXED_LEN_BYTE_ARRAY has a type length (parquet-go's
				// Length is the bit width for the other types).
				el.TypeLength.Set(int32(t.Length()))
			}
			l := &leaf{path: path, phys: phys, maxRep: rep, maxDef: def, enc: &p.encs[0]}
			_, isDecimal := el.LogicalType.Value.(*format.DecimalType)
			l.signed = isDecimal && phys == format.FixedLenByteArray
			p.leaves = append(p.leaves, l)
			p.orders = append(p.orders, *t.ColumnOrder())
			p.schema = append(p.schema, el)
			return
		}
		fields := n.Fields()
		el.NumChildren.Set(int32(len(fields)))
		p.schema = append(p.schema, el)
		for _, f := range fields {
			walk(f, f.Name(), path, rep, def, false)
		}
	}
	walk(root, "cdcetl", nil, 0, 0, true)
}

func (p *Parquet) write(b []byte) error {
	n, err := p.file.buf.Write(b)
	p.off += int64(n)
	if err != nil {
		return fmt.Errorf("writing %s: %w", p.file.path, err)
	}
	return nil
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
func (st storage) nodeFor(t arrowconv.Type) parquet.Node {
	switch t.Kind {
	case arrowconv.Boolean:
		return parquet.Leaf(parquet.BooleanType)
	case arrowconv.TinyInt:
		if st.iceberg {
			return parquet.Int(32)
		}
		return parquet.Int(8)
	case arrowconv.SmallInt:
		if st.iceberg {
			return parquet.Int(32)
		}
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
		return parquet.TimeAdjusted(st.unitOf(t.Precision), false)
	case arrowconv.Timestamp:
		return parquet.TimestampAdjusted(st.unitOf(t.Precision), false)
	case arrowconv.TimestampLTZ:
		return parquet.TimestampAdjusted(st.unitOf(t.Precision), true)
	case arrowconv.Array:
		return parquet.List(parquet.Optional(st.nodeFor(*t.Elem)))
	case arrowconv.Map:
		return parquet.Map(st.nodeFor(*t.Elem), parquet.Optional(st.nodeFor(*t.Value)))
	case arrowconv.Multiset:
		return parquet.Map(st.nodeFor(*t.Elem), parquet.Optional(parquet.Int(32)))
	case arrowconv.Row:
		g := &orderedGroup{}
		for _, f := range t.Fields {
			g.add(f.Name, parquet.Optional(st.nodeFor(f.Type)))
		}
		return g
	}
	panic(fmt.Sprintf("writer: no Parquet type for %s", t))
}

// columnFor returns a column-at-a-time writer for a flat (non-nested) type,
// or nil. It resolves the array type once per batch instead of per value.
func (st storage) columnFor(t arrowconv.Type, newLeaf func() *leaf) colFunc {
	switch t.Kind {
	case arrowconv.Array, arrowconv.Map, arrowconv.Multiset:
		if !flatLists {
			return nil
		}
		return st.flatListFor(t, newLeaf)
	case arrowconv.Row:
		return nil
	}
	l := newLeaf()
	if bulkColumns {
		if f := st.bulkFor(t, l); f != nil {
			return f
		}
	}
	put := st.putterFor(t)
	return func(arr arrow.Array, from, to int) {
		for i := from; i < to; i++ {
			if arr.IsNull(i) {
				l.null()
				continue
			}
			l.defined()
			put(l, arr, i)
		}
	}
}

// bulkColumns turns bulkFor on (a test compares it with the putters).
var bulkColumns = true

// flatLists turns flatListFor on (a test compares it with the emitter).
var flatLists = true

// flatListFor is columnFor for a top-level LIST of a primitive, or a MAP
// (MULTISET) of primitives: the levels emitterFor would give, written
// column at a time (these are the metadata lists and maps, and
// _unchanged, in every row). Deeper nesting returns nil (the emitter).
func (st storage) flatListFor(t arrowconv.Type, newLeaf func() *leaf) colFunc {
	nested := func(k arrowconv.Kind) bool {
		return k == arrowconv.Array || k == arrowconv.Map || k == arrowconv.Multiset || k == arrowconv.Row
	}
	if nested(t.Elem.Kind) || (t.Kind == arrowconv.Map && nested(t.Value.Kind)) {
		return nil
	}
	// Levels of an optional top-level list: def 0 NULL, 1 empty, 2 a NULL
	// element (value), 3 a value; rep 0 a row's first entry, 1 the next.
	if t.Kind == arrowconv.Array {
		el := newLeaf()
		put := st.putterFor(*t.Elem)
		return func(arr arrow.Array, from, to int) {
			a := arr.(*array.List)
			if emptyListsAtOnce && to > from && a.NullN() == 0 {
				// Rows whose lists are all empty (cdcetl's _unchanged on
				// inserts, most of its rows): their levels at once.
				s, _ := a.ValueOffsets(from)
				if _, e := a.ValueOffsets(to - 1); s == e {
					el.emptyRows(to - from)
					return
				}
			}
			vals := a.ListValues()
			for i := from; i < to; i++ {
				if a.IsNull(i) {
					el.level(0, 0)
					continue
				}
				s, e := a.ValueOffsets(i)
				if s == e {
					el.level(0, 1)
					continue
				}
				for j := s; j < e; j++ {
					r := 1
					if j == s {
						r = 0
					}
					if vals.IsNull(int(j)) {
						el.level(r, 2)
						continue
					}
					el.level(r, 3)
					put(el, vals, int(j))
				}
			}
		}
	}
	kl, vl := newLeaf(), newLeaf()
	kput := st.putterFor(*t.Elem)
	vt := arrowconv.Type{Kind: arrowconv.Int}
	if t.Kind == arrowconv.Map {
		vt = *t.Value
	}
	vput := st.putterFor(vt)
	if flatStringMaps && t.Elem.IsString() {
		return stringMapFor(kl, vl, vt.IsString(), vput)
	}
	return func(arr arrow.Array, from, to int) {
		a := arr.(*array.Map)
		keys, items := a.Keys(), a.Items()
		for i := from; i < to; i++ {
			if a.IsNull(i) {
				kl.level(0, 0)
				vl.level(0, 0)
				continue
			}
			s, e := a.ValueOffsets(i)
			if s == e {
				kl.level(0, 1)
				vl.level(0, 1)
				continue
			}
			for j := s; j < e; j++ {
				r := 1
				if j == s {
					r = 0
				}
				kl.level(r, 2) // keys are required
				kput(kl, keys, int(j))
				if items.IsNull(int(j)) {
					vl.level(r, 2)
					continue
				}
				vl.level(r, 3)
				vput(vl, items, int(j))
			}
		}
	}
}

// emptyListsAtOnce turns the top-level lists' all-empty batches on (a
// test compares it with the row-at-a-time levels).
var emptyListsAtOnce = true

// flatStringMaps turns stringMapFor on (a test compares it with the
// general map writer).
var flatStringMaps = true

// stringMapFor is flatListFor's MAP of STRING keys (the metadata maps:
// Canal's sqlType and mysqlType, Debezium's source): a row's levels are
// set at once and keys (and STRING values) are read from the arrays'
// buffers, not through a putter per entry. textValues says the values
// are STRING; otherwise vput puts them.
//
// A row whose keys are the previous row's (same count, lengths and bytes:
// a producer writes its metadata maps the same way every time) takes that
// row's key dictionary indexes at once, while the key leaf's dictionary is
// the one they were taken from.
func stringMapFor(kl, vl *leaf, textValues bool, vput func(*leaf, arrow.Array, int)) colFunc {
	var prev struct {
		keys []byte  // the row's key bytes, end to end
		ends []int32 // where each key ends in keys
		idx  []int32 // the keys' dictionary indexes
		gen  uint32  // kl.dictGen they belong to (none held: idx is empty)
	}
	return func(arr arrow.Array, from, to int) {
		a := arr.(*array.Map)
		offs := a.Offsets()[a.Data().Offset():]
		keys := a.Keys().(*array.String)
		ko, kb := arrowconv.StringBytes(keys)
		items := a.Items()
		var vo []int32
		var vb []byte
		if textValues {
			vs := items.(*array.String)
			vo, vb = arrowconv.StringBytes(vs)
		}
		iv := validityOf(items)
		for i := from; i < to; i++ {
			s, e := int(offs[i]), int(offs[i+1])
			if a.IsNull(i) {
				kl.level(0, 0)
				vl.level(0, 0)
				continue
			}
			if s == e {
				kl.level(0, 1) // empty
				vl.level(0, 1)
				continue
			}
			n := e - s
			kl.levels(n, 2)
			vl.levels(n, 3)
			rowKeys := kb[ko[s]-ko[0] : ko[e]-ko[0]]
			if kl.dict && !kl.plainChunk && prev.gen == kl.dictGen && len(prev.idx) == n &&
				string(rowKeys) == string(prev.keys) && sameEnds(ko[s:e+1], prev.ends) {
				kl.idx = append(room(kl.idx, n), prev.idx...)
				kl.last = prev.idx[n-1]
			} else {
				for j := s; j < e; j++ {
					kl.putBytes(kb[ko[j]-ko[0] : ko[j+1]-ko[0]])
				}
				// Remember the row when its keys went through the dictionary
				// (a dictionary dropped since changes kl.dictGen).
				if kl.dict && !kl.plainChunk {
					prev.keys = append(prev.keys[:0], rowKeys...)
					prev.ends = prev.ends[:0]
					for j := s; j < e; j++ {
						prev.ends = append(prev.ends, ko[j+1]-ko[s])
					}
					prev.idx = append(prev.idx[:0], kl.idx[len(kl.idx)-n:]...)
					prev.gen = kl.dictGen
				}
			}
			for j := s; j < e; j++ {
				if iv.bits != nil && !iv.valid(j) {
					vl.nullBack(e - j)
					continue
				}
				if textValues {
					vl.putBytes(vb[vo[j]-vo[0] : vo[j+1]-vo[0]])
				} else {
					vput(vl, items, j)
				}
			}
		}
	}
}

// sameEnds says whether the key offsets offs (a row's, n+1 of them) end
// the keys where ends (relative to the row's first key) does.
func sameEnds(offs, ends []int32) bool {
	base := offs[0]
	for i, e := range ends {
		if offs[i+1]-base != e {
			return false
		}
	}
	return true
}

// emitterFor builds the level-computing emitter for a value of type t.
// optional says whether the node adds a definition level; repDepth is the
// number of repeated ancestors (the repetition level of a new element).
func (st storage) emitterFor(t arrowconv.Type, optional bool, repDepth int, newLeaf func() *leaf) emitFunc {
	opt := 0
	if optional {
		opt = 1
	}
	nullsTo := func(leaves []*leaf, rep, def int) {
		for _, l := range leaves {
			l.level(rep, def)
		}
	}
	switch t.Kind {
	case arrowconv.Array, arrowconv.Map, arrowconv.Multiset:
		// LIST: optional group > repeated group > element; MAP likewise
		// with a required key and an optional value.
		var children []emitFunc
		var leaves []*leaf
		track := func() *leaf { l := newLeaf(); leaves = append(leaves, l); return l }
		if t.Kind == arrowconv.Array {
			children = append(children, st.emitterFor(*t.Elem, true, repDepth+1, track))
		} else {
			children = append(children, st.emitterFor(*t.Elem, false, repDepth+1, track))
			vt := arrowconv.Type{Kind: arrowconv.Int}
			if t.Kind == arrowconv.Map {
				vt = *t.Value
			}
			children = append(children, st.emitterFor(vt, true, repDepth+1, track))
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
		var leaves []*leaf
		track := func() *leaf { l := newLeaf(); leaves = append(leaves, l); return l }
		for _, f := range t.Fields {
			children = append(children, st.emitterFor(f.Type, true, repDepth, track))
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
	put := st.putterFor(t)
	return func(arr arrow.Array, i, rep, def int) {
		if optional && arr.IsNull(i) {
			l.level(rep, def)
			return
		}
		l.level(rep, def+opt)
		put(l, arr, i)
	}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && (a < 0) {
		q--
	}
	return q
}

// putterFor returns how element i of a leaf array becomes a Parquet value.
func (st storage) putterFor(t arrowconv.Type) func(*leaf, arrow.Array, int) {
	switch t.Kind {
	case arrowconv.Boolean:
		return func(l *leaf, a arrow.Array, i int) { l.putBool(a.(*array.Boolean).Value(i)) }
	case arrowconv.TinyInt:
		return func(l *leaf, a arrow.Array, i int) { l.putInt32(int32(a.(*array.Int8).Value(i))) }
	case arrowconv.SmallInt:
		return func(l *leaf, a arrow.Array, i int) { l.putInt32(int32(a.(*array.Int16).Value(i))) }
	case arrowconv.Int:
		return func(l *leaf, a arrow.Array, i int) { l.putInt32(a.(*array.Int32).Value(i)) }
	case arrowconv.BigInt:
		return func(l *leaf, a arrow.Array, i int) { l.putInt64(a.(*array.Int64).Value(i)) }
	case arrowconv.Float:
		return func(l *leaf, a arrow.Array, i int) { l.putFloat(a.(*array.Float32).Value(i)) }
	case arrowconv.Double:
		return func(l *leaf, a arrow.Array, i int) { l.putDouble(a.(*array.Float64).Value(i)) }
	case arrowconv.Decimal:
		switch {
		case t.Precision <= 9:
			return func(l *leaf, a arrow.Array, i int) {
				l.putInt32(int32(a.(*array.Decimal128).Value(i).LowBits()))
			}
		case t.Precision <= 18:
			return func(l *leaf, a arrow.Array, i int) {
				l.putInt64(int64(a.(*array.Decimal128).Value(i).LowBits()))
			}
		}
		n := decimalBytes(t.Precision)
		return func(l *leaf, a arrow.Array, i int) {
			var b [16]byte
			l.putFixed(bigEndian(&b, a.(*array.Decimal128).Value(i), n))
		}
	case arrowconv.Char, arrowconv.VarChar, arrowconv.String:
		return func(l *leaf, a arrow.Array, i int) {
			offs, data := arrowconv.StringBytes(a.(*array.String))
			l.putBytes(data[offs[i]:offs[i+1]])
		}
	case arrowconv.Binary, arrowconv.VarBinary, arrowconv.Bytes:
		return func(l *leaf, a arrow.Array, i int) { l.putBytes(a.(*array.Binary).Value(i)) }
	case arrowconv.Date:
		return func(l *leaf, a arrow.Array, i int) { l.putInt32(int32(a.(*array.Date32).Value(i))) }
	case arrowconv.Time:
		// The Arrow unit is the Parquet one: MILLIS (INT32) up to precision
		// 3, MICROS or NANOS (INT64) above.
		switch {
		case st.iceberg && t.Precision <= 3:
			return func(l *leaf, a arrow.Array, i int) { l.putInt64(int64(a.(*array.Time32).Value(i)) * 1000) }
		case st.iceberg && t.Precision > 6:
			return func(l *leaf, a arrow.Array, i int) { l.putInt64(floorDiv(int64(a.(*array.Time64).Value(i)), 1000)) }
		case t.Precision <= 3:
			return func(l *leaf, a arrow.Array, i int) { l.putInt32(int32(a.(*array.Time32).Value(i))) }
		}
		return func(l *leaf, a arrow.Array, i int) { l.putInt64(int64(a.(*array.Time64).Value(i))) }
	case arrowconv.Timestamp, arrowconv.TimestampLTZ:
		// Arrow holds microseconds up to precision 6 and nanoseconds above
		// (arrowconv.TimestampUnit); Parquet gets the declared precision's
		// unit: MILLIS up to 3, MICROS up to 6, NANOS above.
		div := int64(1)
		switch {
		case st.iceberg && t.Precision > 6:
			div = 1e3 // nanoseconds to Iceberg's microseconds
		case st.iceberg:
		case t.Precision <= 3:
			div = 1e3
		}
		return func(l *leaf, a arrow.Array, i int) {
			l.putInt64(floorDiv(int64(a.(*array.Timestamp).Value(i)), div))
		}
	}
	panic(fmt.Sprintf("writer: no Parquet leaf for %s", t))
}

// bigEndian renders a decimal as n (≤ 16) big-endian two's-complement
// bytes in b: the low n of its 16.
func bigEndian(b *[16]byte, v decimal128.Num, n int) []byte {
	binary.BigEndian.PutUint64(b[:8], uint64(v.HighBits()))
	binary.BigEndian.PutUint64(b[8:], v.LowBits())
	return b[16-n:]
}

// Write implements [Writer].
func (p *Parquet) Write(ctx context.Context, rec arrow.RecordBatch) error {
	if n := int(rec.NumRows()); n < p.holdRows {
		rec.Retain()
		p.pending = append(p.pending, rec)
		p.pendingRows += n
		p.pendingBytes += recordBytes(rec)
		if p.pendingRows < p.holdRows && p.pendingBytes < holdBytes {
			return nil
		}
		return p.flushPending(ctx)
	}
	if err := p.flushPending(ctx); err != nil {
		return err
	}
	return p.writeRecords(ctx, []arrow.RecordBatch{rec})
}

// holdBytes bounds the bytes of batches a writer holds (a variable for
// the tests).
var holdBytes = 1 << 20

// flushPending writes the batches held back, in order, and lets them go.
func (p *Parquet) flushPending(ctx context.Context) error {
	if len(p.pending) == 0 {
		return nil
	}
	defer p.dropPending()
	return p.writeRecords(ctx, p.pending)
}

// dropPending lets the held batches go (written, or the file abandoned).
func (p *Parquet) dropPending() {
	for i, r := range p.pending {
		r.Release()
		p.pending[i] = nil
	}
	p.pending, p.pendingRows, p.pendingBytes = p.pending[:0], 0, 0
}

// recordBytes is about how much memory a batch's buffers hold (arrow-go's
// util.TotalRecordSize counts the same, but its package brings protobuf
// reflection into the binary).
func recordBytes(rec arrow.RecordBatch) int {
	n := 0
	for _, c := range rec.Columns() {
		n += arrayBytes(c.Data())
	}
	return n
}

func arrayBytes(d arrow.ArrayData) int {
	n := 0
	for _, b := range d.Buffers() {
		if b != nil {
			n += b.Len()
		}
	}
	for _, c := range d.Children() {
		n += arrayBytes(c)
	}
	return n
}

// piece is rows [from, to) of a batch's columns.
type piece struct {
	cols     []arrow.Array
	from, to int
}

// writeRecords writes batches in order: each row group's share of them
// column by column (every batch's part of a column, then the next column).
func (p *Parquet) writeRecords(ctx context.Context, recs []arrow.RecordBatch) error {
	if p.released {
		p.acquire() // given back by Shrink
	}
	defer func() { clear(p.pieces) }() // no batch kept alive by the scratch
	// The next row: row start of recs[ri].
	ri, start := 0, 0
	for ri < len(recs) {
		room := p.rgRows - p.rows
		pieces, rows := p.pieces[:0], 0
		for ri < len(recs) && rows < room {
			n := int(recs[ri].NumRows())
			end := min(n, start+room-rows)
			if end > start {
				pieces = append(pieces, piece{recs[ri].Columns(), start, end})
				rows += end - start
			}
			if end == n {
				ri, start = ri+1, 0
			} else {
				start = end
			}
		}
		p.pieces = pieces
		if rows == 0 {
			continue // batches without rows
		}
		if err := p.eachColumn(rows, func(k int) error {
			for _, pc := range pieces {
				if cf := p.cols[k]; cf != nil {
					cf(pc.cols[k], pc.from, pc.to)
				} else {
					e := p.emit[k]
					for i := pc.from; i < pc.to; i++ {
						e(pc.cols[k], i, 0, 0)
					}
				}
				// Whole rows were added to every leaf: a page may end
				// here, where it would had the batch come alone (the file
				// is the same, held batches or not).
				for _, l := range p.colLeaves[k] {
					if err := l.checkDict(p.codec); err != nil {
						return err
					}
					if l.pageFull() {
						if err := l.flushPage(p.codec); err != nil {
							return err
						}
						l.reset()
					} else if l.indexPagesFull() {
						if err := l.streamPages(p.codec); err != nil {
							return err
						}
					}
				}
			}
			return nil
		}); err != nil {
			return err
		}
		p.rows += rows
		if p.rows >= p.rgRows || p.Buffered() >= rowGroupBytes {
			if err := p.flushRowGroup(); err != nil {
				return err
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// flushRowGroup writes the column chunks of the row group under way.
// minConcurrentRows is the fewest rows worth encoding columns concurrently
// (a variable for the tests).
var minConcurrentRows = 1024

// eachColumn runs f for every top-level column: concurrently when more
// than one column may run at once and the rows are worth a goroutine each.
func (p *Parquet) eachColumn(rows int, f func(k int) error) error {
	if len(p.encs) <= 1 || rows < minConcurrentRows {
		for k := range p.cols {
			p.lend(k, &p.encs[0])
			if err := f(k); err != nil {
				return err
			}
		}
		return nil
	}
	// Each goroutine encodes with its own set of buffers.
	free := make(chan *encBufs, len(p.encs))
	for i := range p.encs {
		free <- &p.encs[i]
	}
	var g errgroup.Group
	g.SetLimit(len(p.encs))
	for k := range p.cols {
		g.Go(func() error {
			b := <-free
			defer func() { free <- b }()
			p.lend(k, b)
			return f(k)
		})
	}
	return g.Wait()
}

// lend gives column k's leaves the encoding buffers b.
func (p *Parquet) lend(k int, b *encBufs) {
	for _, l := range p.colLeaves[k] {
		l.enc = b
	}
}

func (p *Parquet) flushRowGroup() error {
	rg := format.RowGroup{NumRows: int64(p.rows), FileOffset: p.off, Ordinal: int16(len(p.rowGroups))}
	cis := make([]*format.ColumnIndex, len(p.leaves))
	ois := make([]format.OffsetIndex, len(p.leaves))
	// The last pages of every chunk are encoded concurrently; the chunks
	// are written in order.
	if err := p.eachColumn(p.rows, func(k int) error {
		for _, l := range p.colLeaves[k] {
			if err := l.finishChunk(p.codec); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	for i, l := range p.leaves {
		off := p.off
		if err := l.head.each(p.write); err != nil {
			return err
		}
		if err := l.chunk.each(p.write); err != nil {
			return err
		}
		cc, ci, oi := l.columnChunk(p.codec, off)
		rg.Columns = append(rg.Columns, cc)
		rg.TotalByteSize += cc.MetaData.TotalUncompressedSize
		rg.TotalCompressedSize += cc.MetaData.TotalCompressedSize
		cis[i], ois[i] = ci, oi
	}
	p.rowGroups = append(p.rowGroups, rg)
	p.colIdx = append(p.colIdx, cis)
	p.offIdx = append(p.offIdx, ois)
	p.numRows += int64(p.rows)
	p.rows = 0
	return nil
}

// Buffered is about how many bytes the row group under way holds in
// memory: its compressed pages, and what dictionary columns keep until the
// chunk ends.
func (p *Parquet) Buffered() int {
	n := p.pendingBytes
	for _, l := range p.leaves {
		n += l.head.len() + l.chunk.len() + len(l.vals) + len(l.rep) + len(l.def) + 4*len(l.idx) + 8*len(l.ints) + 4*len(l.ints32) + l.dictVals.size()
	}
	return n
}

// Size is about how big the file is so far: what is written, plus the
// row group under way (before compression of its last pages).
func (p *Parquet) Size() int64 { return p.off + int64(p.Buffered()) }

// pageBudget bounds the pages a writer's columns fill at once (by default
// settings); minPageBytes is the smallest page it gives a column. At
// 16 MiB, 60 columns of 256 KiB pages: a one-worker conversion of wide
// rows touched 14-20 MiB more fresh heap (7-10 huge pages) and peaked at
// 224 MiB instead of 205 at two workers (1 GiB).
const (
	pageBudget   = 4 << 20
	minPageBytes = 64 << 10
)

// rowGroupBytes ends a row group early once it holds that much in memory:
// a wide table's 128 Ki rows would hold tens of MiB of pages, live heap
// that keeps the garbage collector running near the soft memory limit.
var rowGroupBytes = 24 << 20

// FlushRowGroup ends the row group under way now (rows written so far
// become one row group), so that one of many writers open at once holds
// no more than its share of memory.
func (p *Parquet) FlushRowGroup() error {
	if err := p.flushPending(context.Background()); err != nil {
		return err
	}
	if p.rows == 0 {
		return nil
	}
	return p.flushRowGroup()
}

// Retained is about how much room the writer's buffers hold, in use or
// not: each keeps the room of the largest row group it took.
func (p *Parquet) Retained() int {
	n := 0
	for _, l := range p.leaves {
		n += l.retained() + cap(l.ints32)*4 + cap(l.ints)*8 + cap(l.vals)
	}
	for i := range p.encs {
		n += p.encs[i].retained()
	}
	return n
}

// Shrink ends the row group under way and lets go of the room the
// writer's buffers hold, for a writer that may take no rows for a while:
// a table whose run of messages ended.
func (p *Parquet) Shrink() error {
	if err := p.FlushRowGroup(); err != nil {
		return err
	}
	for _, l := range p.leaves {
		l.shrink()
	}
	clear(p.encs)
	p.release()
	return nil
}

// Close writes the last row group, the page indexes and the footer, and
// moves the file into place.
// SetMetadata sets a footer key/value pair known only once the rows are
// written (before Close).
func (p *Parquet) SetMetadata(key, value string) {
	i := slices.IndexFunc(p.kv, func(kv format.KeyValue) bool { return kv.Key == key })
	if i >= 0 {
		p.kv[i].Value = value
		return
	}
	p.kv = append(p.kv, format.KeyValue{Key: key, Value: value})
	slices.SortFunc(p.kv, func(a, b format.KeyValue) int { return strings.Compare(a.Key, b.Key) })
}

func (p *Parquet) Close() error {
	defer p.release()
	if err := p.finish(); err != nil {
		p.file.abort()
		return err
	}
	return p.file.commit()
}

func (p *Parquet) finish() error {
	if err := p.flushPending(context.Background()); err != nil {
		return err
	}
	if p.rows > 0 {
		if err := p.flushRowGroup(); err != nil {
			return err
		}
	}
	// Page indexes: every column index, then every offset index, as
	// parquet-mr and parquet-go lay them out.
	var err error
	for r := range p.rowGroups {
		for c := range p.rowGroups[r].Columns {
			if ci := p.colIdx[r][c]; ci != nil {
				cc := &p.rowGroups[r].Columns[c]
				if cc.ColumnIndexOffset, cc.ColumnIndexLength, err = p.writeThrift(ci, "column index"); err != nil {
					return err
				}
			}
		}
	}
	for r := range p.rowGroups {
		for c := range p.rowGroups[r].Columns {
			cc := &p.rowGroups[r].Columns[c]
			if cc.OffsetIndexOffset, cc.OffsetIndexLength, err = p.writeThrift(&p.offIdx[r][c], "offset index"); err != nil {
				return err
			}
		}
	}
	md := format.FileMetaData{
		Version:          2,
		Schema:           p.schema,
		NumRows:          p.numRows,
		RowGroups:        p.rowGroups,
		KeyValueMetadata: p.kv,
		CreatedBy:        p.createdBy,
		ColumnOrders:     p.orders,
	}
	_, n, err := p.writeThrift(&md, "footer")
	if err != nil {
		return err
	}
	return p.write(append(binary.LittleEndian.AppendUint32(nil, uint32(n)), "PAR1"...))
}

// writeThrift writes v Thrift-compact-encoded and returns where and how
// long.
func (p *Parquet) writeThrift(v any, what string) (off int64, n int32, err error) {
	b, err := thrift.Marshal(new(thrift.CompactProtocol), v)
	if err != nil {
		return 0, 0, fmt.Errorf("parquet %s: %w", what, err)
	}
	off = p.off
	return off, int32(len(b)), p.write(b)
}

// Abort removes the temporary file.
func (p *Parquet) Abort() error {
	p.dropPending()
	err := p.file.abort()
	p.release()
	return err
}

// acquire takes the page buffers of the fixed-width columns (see release).
func (p *Parquet) acquire() {
	for _, l := range p.data {
		switch {
		case l.delta && l.phys == format.Int32:
			l.ints32 = pageBuffers32.get(p.pageCap / 4)
		case l.delta:
			l.ints = pageBuffers64.get(p.pageCap / 8)
		case l.phys != format.ByteArray && l.phys != format.Boolean:
			l.vals = pageBuffers8.get(p.pageCap)
		}
	}
	p.released = false
}

// release hands the page buffers back for the next writer: a run of many
// small inputs makes a writer per input, and zeroing a megabyte per column
// for each was a large part of its time.
func (p *Parquet) release() {
	for _, l := range p.leaves {
		if l.ints32 != nil {
			pageBuffers32.put(l.ints32)
		}
		if l.ints != nil {
			pageBuffers64.put(l.ints)
		}
		if l.vals != nil {
			pageBuffers8.put(l.vals)
		}
		l.ints32, l.ints, l.vals = nil, nil, nil
	}
	p.released = true
}

// bufferPool keeps page buffers by capacity.
type bufferPool[T any] struct {
	mu    sync.Mutex
	free  map[int][][]T
	bytes int // kept
}

var (
	pageBuffers8  bufferPool[byte]
	pageBuffers32 bufferPool[int32]
	pageBuffers64 bufferPool[int64]
)

// maxFreeBytes bounds what each pool keeps (the soft memory limit is
// 192 MiB).
const maxFreeBytes = 24 << 20

func (b *bufferPool[T]) get(n int) []T {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.free == nil {
		b.free = map[int][][]T{}
	}
	if fs, ok := b.free[n]; ok && len(fs) > 0 {
		s := fs[len(fs)-1]
		b.free[n] = fs[:len(fs)-1]
		b.bytes -= cap(s) * sizeOf[T]()
		return s[:0]
	} else if !ok {
		b.free[n] = nil // a size asked for: buffers of it are kept
	}
	return make([]T, 0, n)
}

func sizeOf[T any]() int {
	var v T
	return int(unsafe.Sizeof(v))
}

func (b *bufferPool[T]) put(s []T) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := cap(s)
	fs, asked := b.free[n]
	size := n * sizeOf[T]()
	if !asked || b.bytes+size > maxFreeBytes {
		return // grown past its size, or enough kept
	}
	b.free[n] = append(fs, s[:0])
	b.bytes += size
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
