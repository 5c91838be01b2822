package writer

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding/delta"
	"github.com/parquet-go/parquet-go/encoding/rle"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// The column-chunk encoder. Values arrive already typed (straight from the
// Arrow arrays), are PLAIN- or dictionary-encoded into a page buffer with
// their levels, and a full page is compressed into the chunk buffer at
// once: no per-value boxing, one copy of each value before compression.
// parquet-go provides the Thrift structures, the Thrift compact encoder
// and the RLE/bit-packing hybrid; the page and chunk layout is ours.

// Page and dictionary sizes (variables so tests can force many pages and
// the dictionary fallback).
var (
	// pageBytes is the target uncompressed bytes per page. A page's values
	// stay in memory until it is compressed, so every column holds up to a
	// page of fresh heap: at 1 MiB, a 20-column table's conversion touched
	// 14 MiB more memory (which a VM's host backs at 1.5-2 ms a MiB) for
	// files 0.4% smaller. 256 KiB is parquet-go's default too.
	pageBytes      = 256 << 10
	dictLimitBytes = 1 << 20 // dictionary larger than this: fall back to PLAIN
	dictSample     = 4096    // values seen before the distinct share decides
)

const (
	indexTruncate = 16   // page index min/max length, as parquet-go writes
	maxStatBytes  = 4096 // longest chunk min/max kept in the footer
)

// leaf is one leaf column of the file schema and its chunk under way.
type leaf struct {
	path   []string
	phys   format.Type
	signed bool // FIXED_LEN_BYTE_ARRAY ordered as signed (decimals)
	maxRep int
	maxDef int
	// pageBytes is the target uncompressed size of its pages.
	pageBytes int

	// dict: dictionary-encode this leaf (values buffered as indices until
	// dictSample decides, then written a page at a time; PLAIN fallback
	// when the dictionary grows past dictLimitBytes). fixedDict
	// is a dictionary known up front (_rowkind): values are indices.
	dict       bool
	plainChunk bool // PLAIN to the end of the chunk: the dictionary outgrew its limit, or the last chunks gave it up
	// plainRun counts the chunks in a row that gave their dictionary up.
	// The next chunk starts PLAIN while it is set (but every
	// redictEvery-th tries the dictionary again): a column of distinct
	// values (positions, ids as text) would otherwise put dictSample
	// values through the dictionary in every chunk, a third of each row
	// group when many tables' writers share the memory and cut small ones.
	plainRun  int
	fixedDict []string
	// delta: INT32/INT64 values go out DELTA_BINARY_PACKED; the page's
	// values are kept as integers (ints or ints32), not PLAIN bytes.
	delta    bool
	ints     []int64
	ints32   []int32
	dictIdx  *dictTable
	dictVals dictValues // the dictionary's values, by index
	// last is the index of the previous value put, checked before dictIdx:
	// columns often repeat a value (metadata, low-cardinality columns).
	last int32
	// succ[i] is the index of the value put after value i last time,
	// checked next in repeated leaves: map keys and list elements cycle
	// through the same sequence row after row (Debezium's source block as
	// a map: fifteen keys in one order). -1: none yet.
	succ []int32
	// seen[i] == page marks dictionary value i as already in the page's
	// bounds, so each distinct value is compared once per page.
	seen []uint32
	page uint32
	idx  []int32
	used uint64 // fixedDict entries used in the page (bit per index)

	// The page under way (for dictionary leaves, the indices not yet
	// written: up to a page, or the chunk's first dictSample values).
	rep, def []uint8
	vals     []byte
	nbits    int // booleans: bits used in vals
	nValues  int // level entries
	nNulls   int
	nRows    int
	pb       bounds

	// dictGen counts the dictionaries the leaf has dropped: indexes taken
	// from it are good while it is unchanged.
	dictGen uint32

	// The chunk under way: its dictionary page (head) goes before its data
	// pages (chunk) but is known only when the dictionary stops growing.
	head         pageBuf
	chunk        pageBuf
	hasDictPage  bool
	cb           bounds
	chunkValues  int64
	chunkNulls   int64
	uncompressed int64
	chunkRows    int64
	pageLocs     []format.PageLocation // offsets relative to the chunk
	colIndex     format.ColumnIndex
	encodings    []format.Encoding
	encStats     []format.PageEncodingStats // pages by type and encoding, for the footer
	noColIndex   bool

	// enc holds the buffers a page is encoded in, lent by the writer to
	// the goroutine encoding this leaf's column (see Parquet.eachColumn).
	enc *encBufs
}

// encBufs are the scratch buffers of page encoding: levels, delta-encoded
// values, compressed bytes. A page's are done with once it is in its
// chunk, so the leaves of a writer share one set per encoding goroutine:
// a set per leaf kept a compressed page's room for every column (60 of
// them in a wide table), all of it fresh memory.
type encBufs struct {
	scratch  []byte
	levels   []byte
	deltaBuf []byte
}

func (b *encBufs) retained() int { return cap(b.scratch) + cap(b.levels) + cap(b.deltaBuf) }

// bounds tracks the min and max of the non-null values of a page or chunk
// in the column's sort order.
type bounds struct {
	has    bool
	i0, i1 int64
	f0, f1 float64
	b0, b1 []byte
	p0, p1 uint64 // b0's and b1's first eight bytes, big-endian, zero-padded
}

func (l *leaf) reset() {
	l.rep, l.def, l.vals, l.idx = l.rep[:0], l.def[:0], l.vals[:0], l.idx[:0]
	l.ints, l.ints32 = l.ints[:0], l.ints32[:0]
	l.nbits, l.nValues, l.nNulls, l.nRows = 0, 0, 0, 0
	l.pb.has = false
}

// retained is the room a leaf's buffers hold, used or not (the page
// buffers, of a size fixed per writer, left out).
func (l *leaf) retained() int {
	n := l.head.retained() + l.chunk.retained() + 4*cap(l.idx) + cap(l.def) + cap(l.rep) +
		l.dictVals.retained() + 4*(cap(l.seen)+cap(l.succ))
	if l.dictIdx != nil {
		n += 8 * cap(l.dictIdx.slots)
	}
	return n
}

// shrink lets go of a leaf's buffers between row groups (see
// Parquet.Shrink): they grow again as they fill.
func (l *leaf) shrink() {
	l.dictGen++
	l.head, l.chunk, l.idx, l.def, l.rep = pageBuf{}, pageBuf{}, nil, nil, nil
	l.dictVals, l.seen, l.succ = dictValues{}, nil, nil
	if l.dictIdx != nil {
		l.dictIdx.slots = nil
	}
}

// level records one value position: rep and def levels, row and null
// counts. A null (def < maxDef) has no value; otherwise the caller puts one.
func (l *leaf) level(rep, def int) {
	if l.maxRep > 0 {
		l.rep = append(room(l.rep, 1), uint8(rep))
	}
	if l.maxDef > 0 {
		l.def = append(room(l.def, 1), uint8(def))
	}
	if rep == 0 {
		l.nRows++
	}
	if def < l.maxDef {
		l.nNulls++
	}
	l.nValues++
}

// emptyRows records n rows of an optional top-level list that are empty
// (repetition 0, definition 1): level(0, 1) n times.
func (l *leaf) emptyRows(n int) {
	if l.maxRep > 0 {
		l.rep = appendLevels(l.rep, n, 0)
	}
	if l.maxDef > 0 {
		l.def = appendLevels(l.def, n, 1)
	}
	l.nRows += n
	if 1 < l.maxDef {
		l.nNulls += n
	}
	l.nValues += n
}

// levels records the n entries of one row of a repeated column, each at
// definition level def (the entries' values are put after): repetition
// 0 then 1s.
func (l *leaf) levels(n, def int) {
	// Filled through local slices: an append a byte at a time stores the
	// leaf's slice header every time (a write barrier while the collector
	// marks).
	if l.maxRep > 0 {
		r := room(l.rep, n)
		k := len(r)
		r = r[:k+n]
		r[k] = 0
		fillLevels(r[k+1:], 1)
		l.rep = r
	}
	if l.maxDef > 0 {
		d := room(l.def, n)
		k := len(d)
		d = d[:k+n]
		fillLevels(d[k:], uint8(def))
		l.def = d
	}
	l.nRows++
	if def < l.maxDef {
		l.nNulls += n
	}
	l.nValues += n
}

// appendLevels returns levels with n more of v, filled through a local
// slice (one store of the caller's slice header). Per batch only: levels,
// once per row of a map or list, keeps its own copy of these lines, which
// the call cost 0.4-0.6% of an envelope's work.
func appendLevels(levels []uint8, n int, v uint8) []uint8 {
	levels = room(levels, n)
	k := len(levels)
	levels = levels[:k+n]
	fillLevels(levels[k:], v)
	return levels
}

// fillLevels sets every level of b to v.
func fillLevels(b []uint8, v uint8) {
	w := uint64(v) * 0x0101010101010101
	if n := len(b); n >= 8 {
		for i := 0; i+8 <= n; i += 8 {
			binary.LittleEndian.PutUint64(b[i:], w)
		}
		binary.LittleEndian.PutUint64(b[n-8:], w) // the tail, overlapping
		return
	}
	for i := range b {
		b[i] = v
	}
}

// nullBack makes the entry back places from the end of the levels (set
// by levels) a NULL: its definition level one lower.
func (l *leaf) nullBack(back int) {
	l.def[len(l.def)-back]--
	l.nNulls++
}

// defined records a present value of a flat optional column (the common
// case, kept small so it inlines).
func (l *leaf) defined() {
	l.def = append(room(l.def, 1), 1)
	l.nRows++
	l.nValues++
}

// null records a null of a flat optional column.
func (l *leaf) null() {
	l.def = append(room(l.def, 1), 0)
	l.nRows++
	l.nNulls++
	l.nValues++
}

func (l *leaf) putInt32(v int32) {
	if l.delta {
		l.ints32 = append(l.ints32, v)
	} else {
		l.vals = binary.LittleEndian.AppendUint32(l.vals, uint32(v))
	}
	l.pb.int(int64(v))
}

func (l *leaf) putInt64(v int64) {
	if l.delta {
		l.ints = append(l.ints, v)
	} else {
		l.vals = binary.LittleEndian.AppendUint64(l.vals, uint64(v))
	}
	l.pb.int(v)
}

func (b *bounds) int(v int64) {
	if !b.has {
		b.has, b.i0, b.i1 = true, v, v
		return
	}
	if v < b.i0 {
		b.i0 = v
	}
	if v > b.i1 {
		b.i1 = v
	}
}

func (l *leaf) putFloat(v float32) {
	l.vals = binary.LittleEndian.AppendUint32(l.vals, math.Float32bits(v))
	l.pb.float(float64(v))
}

func (l *leaf) putDouble(v float64) {
	l.vals = binary.LittleEndian.AppendUint64(l.vals, math.Float64bits(v))
	l.pb.float(v)
}

// float takes a value into the bounds; NaN never does (readers would
// prune wrongly with it).
func (b *bounds) float(v float64) {
	if v != v {
		return
	}
	if !b.has {
		b.has, b.f0, b.f1 = true, v, v
		return
	}
	if v < b.f0 || (v == 0 && b.f0 == 0 && math.Signbit(v)) {
		b.f0 = v
	}
	if v > b.f1 || (v == 0 && b.f1 == 0 && !math.Signbit(v)) {
		b.f1 = v
	}
}

func (l *leaf) putBool(v bool) {
	if l.nbits%8 == 0 {
		l.vals = append(l.vals, 0)
	}
	if v {
		l.vals[len(l.vals)-1] |= 1 << (l.nbits % 8)
	}
	l.nbits++
	n := int64(0)
	if v {
		n = 1
	}
	l.pb.int(n)
}

// putBytes puts a BYTE_ARRAY value: into the dictionary when the leaf is
// dictionary-encoded, else PLAIN (length prefix and bytes).
func (l *leaf) putBytes(v []byte) {
	if l.dict && !l.plainChunk {
		prev := l.last
		if int(prev) < l.dictVals.len() && l.dictVals.is(prev, v) {
			l.idx = append(room(l.idx, 1), prev)
			return
		}
		if l.maxRep > 0 && int(prev) < len(l.succ) {
			if s := l.succ[prev]; s >= 0 && l.dictVals.is(s, v) {
				l.idx = append(room(l.idx, 1), s)
				l.last = s
				return
			}
		}
		i := l.dictIdx.find(v, &l.dictVals)
		if i < 0 {
			i = l.dictVals.add(v)
			l.dictIdx.add(i, &l.dictVals)
			if l.maxRep > 0 {
				l.succ = append(l.succ, -1)
			}
		}
		if l.maxRep > 0 && int(prev) < len(l.succ) {
			l.succ[prev] = i
		}
		l.idx = append(room(l.idx, 1), i) // bounds are taken when the chunk is cut into pages
		l.last = i
		return
	}
	// Doubling: append grows a large slice by a quarter, so a page of
	// strings allocated (and copied) about five times its size.
	vals := binary.LittleEndian.AppendUint32(room(l.vals, 4+len(v)), uint32(len(v)))
	l.vals = append(vals, v...) // one store of the slice: one write barrier while the collector marks
	l.pb.bytes(v, false)
}

// putFixed puts a FIXED_LEN_BYTE_ARRAY value (of the column's length).
func (l *leaf) putFixed(v []byte) {
	l.vals = append(l.vals, v...)
	l.pb.bytes(v, l.signed)
}

// putIndex puts a value of a fixed dictionary by its index.
func (l *leaf) putIndex(i int32) {
	l.idx = append(room(l.idx, 1), i)
	l.used |= 1 << i
}

// bytesOf views a string as bytes without copying; the bounds only read
// it (they keep copies of their own).
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

func (b *bounds) bytes(v []byte, signed bool) {
	if !b.has {
		b.has = true
		b.b0, b.b1 = append(b.b0[:0], v...), append(b.b1[:0], v...)
		b.p0 = prefix8(v)
		b.p1 = b.p0
		return
	}
	// Most values differ from both bounds in their first eight bytes:
	// decide on them before a full comparison (unsigned order only). A
	// prefix strictly between the bounds' puts the value strictly between
	// them, whatever the lengths.
	if !signed {
		if p := prefix8(v); p > b.p0 && p < b.p1 {
			return
		}
	}
	if compareBytes(v, b.b0, signed) < 0 {
		b.b0 = append(b.b0[:0], v...)
		b.p0 = prefix8(v)
	}
	if compareBytes(v, b.b1, signed) > 0 {
		b.b1 = append(b.b1[:0], v...)
		b.p1 = prefix8(v)
	}
}

// prefix8 is v's first eight bytes as a big-endian word (zeros past its
// end): words order as the bytes do.
func prefix8(v []byte) uint64 {
	if len(v) >= 8 {
		return binary.BigEndian.Uint64(v)
	}
	var w [8]byte
	copy(w[:], v)
	return binary.BigEndian.Uint64(w[:])
}

// compareBytes orders byte arrays unsigned byte-wise, or, for fixed-length
// two's-complement decimals, as signed numbers.
func compareBytes(a, b []byte, signed bool) int {
	if signed && len(a) > 0 && len(b) > 0 && a[0] != b[0] {
		if int8(a[0]) < int8(b[0]) {
			return -1
		}
		return 1
	}
	return bytes.Compare(a, b)
}

// merge takes page bounds o into chunk bounds b.
func (b *bounds) merge(o *bounds, phys format.Type, signed bool) {
	if !o.has {
		return
	}
	switch phys {
	case format.Float, format.Double:
		b.float(o.f0)
		b.float(o.f1)
	case format.ByteArray, format.FixedLenByteArray:
		b.bytes(o.b0, signed)
		b.bytes(o.b1, signed)
	default:
		b.int(o.i0)
		b.int(o.i1)
	}
}

// encode renders the bounds as Parquet statistics values (PLAIN, byte
// arrays without their length).
func (b *bounds) encode(phys format.Type) (lo, hi []byte) {
	switch phys {
	case format.Boolean:
		return []byte{byte(b.i0)}, []byte{byte(b.i1)}
	case format.Int32:
		return binary.LittleEndian.AppendUint32(nil, uint32(b.i0)), binary.LittleEndian.AppendUint32(nil, uint32(b.i1))
	case format.Int64:
		return binary.LittleEndian.AppendUint64(nil, uint64(b.i0)), binary.LittleEndian.AppendUint64(nil, uint64(b.i1))
	case format.Float:
		f0, f1 := float32(b.f0), float32(b.f1)
		if f0 == 0 {
			f0 = float32(math.Copysign(0, -1)) // the spec: a zero min is written as -0
		}
		if f1 == 0 {
			f1 = 0
		}
		return binary.LittleEndian.AppendUint32(nil, math.Float32bits(f0)), binary.LittleEndian.AppendUint32(nil, math.Float32bits(f1))
	case format.Double:
		f0, f1 := b.f0, b.f1
		if f0 == 0 {
			f0 = math.Copysign(0, -1)
		}
		if f1 == 0 {
			f1 = 0
		}
		return binary.LittleEndian.AppendUint64(nil, math.Float64bits(f0)), binary.LittleEndian.AppendUint64(nil, math.Float64bits(f1))
	}
	// Never nil: an empty string is a real bound, and a nil one would be
	// left out of the footer (parquet-java then ignores both).
	return append([]byte{}, b.b0...), append([]byte{}, b.b1...)
}

// truncateBounds shortens byte-array page-index bounds to n bytes: the
// min to a prefix (still a lower bound), the max to a prefix with its last
// byte incremented (still an upper bound; kept whole when that is
// impossible).
func truncateBounds(lo, hi []byte, n int, signed bool) ([]byte, []byte) {
	if signed {
		return lo, hi // fixed-length decimals are short and must keep their length
	}
	if len(lo) > n {
		lo = lo[:n]
	}
	if len(hi) > n {
		t := bytes.Clone(hi[:n])
		for i := n - 1; i >= 0; i-- {
			if t[i] != 0xFF {
				t[i]++
				return lo, t[:i+1]
			}
		}
	}
	return lo, hi
}

// pageFull says whether the page under way should be written now.
func (l *leaf) pageFull() bool {
	return (!l.dict || l.plainChunk) && len(l.vals)+8*len(l.ints)+4*len(l.ints32)+len(l.def)+len(l.rep) >= l.pageBytes
}

// flushPage encodes the page under way into the chunk.
func (l *leaf) flushPage(codec compress.Codec) error {
	if l.nValues == 0 {
		return nil
	}
	if l.fixedDict == nil {
		if l.delta {
			values := l.deltaPage()
			return l.writeDataPage(codec, format.DeltaBinaryPacked, values, l.rep, l.def, l.nValues, l.nNulls, l.nRows, &l.pb)
		}
		return l.writeDataPage(codec, format.Plain, l.vals, l.rep, l.def, l.nValues, l.nNulls, l.nRows, &l.pb)
	}
	for i, v := range l.fixedDict {
		if l.used&(1<<i) != 0 {
			l.pb.bytes(bytesOf(v), false)
		}
	}
	l.used = 0
	values, err := l.indexPage(l.vals[:0], l.idx, len(l.fixedDict))
	if err != nil {
		return err
	}
	return l.writeDataPage(codec, format.RLEDictionary, values, l.rep, l.def, l.nValues, l.nNulls, l.nRows, &l.pb)
}

// deltaPage encodes the page's INT32 or INT64 values DELTA_BINARY_PACKED.
// Deltas of CDC columns (ids, timestamps, dates, amounts) are small, so the
// page is about half the PLAIN size before compression and snappy has a
// quarter of the work: smaller files for less CPU. The result lives in a
// scratch buffer until the next page.
func (l *leaf) deltaPage() []byte {
	var enc delta.BinaryPackedEncoding
	if l.phys == format.Int32 {
		l.enc.deltaBuf, _ = enc.EncodeInt32(l.enc.deltaBuf[:0], l.ints32) // never fails
	} else {
		l.enc.deltaBuf, _ = enc.EncodeInt64(l.enc.deltaBuf[:0], l.ints) // never fails
	}
	return l.enc.deltaBuf
}

// indexPage appends the RLE_DICTIONARY page body for indices into a
// dictionary of n values to dst: the bit width, then the RLE/bit-packed
// indices.
func (l *leaf) indexPage(dst []byte, idx []int32, n int) ([]byte, error) {
	width := bits.Len32(uint32(max(n-1, 0)))
	e := rle.Encoding{BitWidth: width}
	var err error
	if l.enc.scratch, err = e.EncodeInt32(l.enc.scratch[:0], idx); err != nil {
		return nil, fmt.Errorf("parquet dictionary indices: %w", err)
	}
	return append(append(dst, byte(width)), l.enc.scratch...), nil
}

// writeDataPage appends one DATA_PAGE_V2 (levels uncompressed, values
// compressed) to the chunk and records it in the page indexes.
func (l *leaf) writeDataPage(codec compress.Codec, enc format.Encoding, values []byte, rep, def []uint8, nValues, nNulls, nRows int, pb *bounds) error {
	l.enc.levels = l.enc.levels[:0]
	repLen, err := l.appendLevels(rep, l.maxRep, "repetition")
	if err != nil {
		return err
	}
	defLen, err := l.appendLevels(def, l.maxDef, "definition")
	if err != nil {
		return err
	}
	compressed, err := codec.Encode(l.enc.scratch[:0], values)
	if err != nil {
		return fmt.Errorf("parquet %s: %w", codec, err)
	}
	l.enc.scratch = compressed
	h := format.PageHeader{
		Type:                 format.DataPageV2,
		UncompressedPageSize: int32(len(l.enc.levels) + len(values)),
		CompressedPageSize:   int32(len(l.enc.levels) + len(compressed)),
	}
	h.DataPageHeaderV2.Set(format.DataPageHeaderV2{
		NumValues:                  int32(nValues),
		NumNulls:                   int32(nNulls),
		NumRows:                    int32(nRows),
		Encoding:                   enc,
		DefinitionLevelsByteLength: int32(defLen),
		RepetitionLevelsByteLength: int32(repLen),
		IsCompressed:               thrift.New(codec.CompressionCodec() != format.Uncompressed),
	})
	off := l.chunk.len()
	headerLen, err := l.appendPage(&l.chunk, &h, l.enc.levels, compressed)
	if err != nil {
		return err
	}
	l.pageLocs = append(l.pageLocs, format.PageLocation{
		Offset:             int64(off),
		CompressedPageSize: int32(headerLen) + h.CompressedPageSize,
		FirstRowIndex:      l.chunkRows,
	})
	l.addEncoding(enc)
	l.countPage(format.DataPageV2, enc)

	ci := &l.colIndex
	if nNulls < nValues && !pb.has {
		l.noColIndex = true // values, all NaN: no bounds to give, so no column index
	}
	ci.NullPages = append(ci.NullPages, nNulls == nValues)
	ci.NullCounts = append(ci.NullCounts, int64(nNulls))
	if pb.has {
		lo, hi := pb.encode(l.phys)
		if l.phys == format.ByteArray {
			lo, hi = truncateBounds(lo, hi, indexTruncate, false)
		}
		ci.MinValues = append(ci.MinValues, lo)
		ci.MaxValues = append(ci.MaxValues, hi)
	} else {
		ci.MinValues = append(ci.MinValues, []byte{})
		ci.MaxValues = append(ci.MaxValues, []byte{})
	}
	l.cb.merge(pb, l.phys, l.signed)
	l.chunkValues += int64(nValues)
	l.chunkNulls += int64(nNulls)
	l.chunkRows += int64(nRows)
	return nil
}

// appendLevels RLE-encodes levels (up to maxLevel; none when it is 0) onto
// l.enc.levels and returns their encoded length.
func (l *leaf) appendLevels(levels []uint8, maxLevel int, what string) (int, error) {
	if maxLevel == 0 {
		return 0, nil
	}
	e := rle.Encoding{BitWidth: bits.Len(uint(maxLevel))}
	var err error
	if l.enc.scratch, err = e.EncodeLevels(l.enc.scratch[:0], levels); err != nil {
		return 0, fmt.Errorf("parquet %s levels: %w", what, err)
	}
	l.enc.levels = append(l.enc.levels, l.enc.scratch...)
	return len(l.enc.scratch), nil
}

// appendPage appends a page header and the page's (compressed) body to
// dst (the chunk's data pages or its head) and returns the header's length.
func (l *leaf) appendPage(dst *pageBuf, h *format.PageHeader, body ...[]byte) (int, error) {
	header, err := thrift.Marshal(new(thrift.CompactProtocol), h)
	if err != nil {
		return 0, fmt.Errorf("parquet page header: %w", err)
	}
	dst.append(header)
	for _, b := range body {
		dst.append(b)
	}
	l.uncompressed += int64(len(header)) + int64(h.UncompressedPageSize)
	return len(header), nil
}

// countPage counts a page for the chunk's encoding_stats (parquet-java
// reads them to know whether every data page is dictionary-encoded).
func (l *leaf) countPage(t format.PageType, e format.Encoding) {
	for i := range l.encStats {
		if s := &l.encStats[i]; s.PageType == t && s.Encoding == e {
			s.Count++
			return
		}
	}
	l.encStats = append(l.encStats, format.PageEncodingStats{PageType: t, Encoding: e, Count: 1})
}

func (l *leaf) addEncoding(e format.Encoding) {
	for _, x := range l.encodings {
		if x == e {
			return
		}
	}
	l.encodings = append(l.encodings, e)
}

// finishChunk writes what is left of the chunk's pages. Dictionary leaves
// write their last index pages and the dictionary page here (or, when the
// dictionary grew too large before any index page, PLAIN pages).
func (l *leaf) finishChunk(codec compress.Codec) error {
	if l.fixedDict != nil {
		if l.nValues > 0 {
			if err := l.writeDictPage(codec, plainOf(l.fixedDict), len(l.fixedDict)); err != nil {
				return err
			}
		}
		err := l.flushPage(codec)
		l.reset()
		return err
	}
	if !l.dict {
		err := l.flushPage(codec)
		l.reset()
		return err
	}
	if l.plainChunk {
		err := l.flushPage(codec)
		l.reset()
		l.nextChunk(true)
		return err
	}
	// Index pages already written need the dictionary whatever its size.
	streamed := l.streamed()
	useDict := streamed || l.dictVals.size() <= dictLimitBytes
	if useDict && (l.nValues > 0 || streamed) {
		if err := l.writeDictPage(codec, l.dictVals.plain, l.dictVals.len()); err != nil {
			return err
		}
	}
	err := l.writePages(codec, useDict, true)
	l.dropDict()
	l.nextChunk(!useDict)
	return err
}

// redictEvery: a column that keeps giving its dictionary up tries it again
// in one chunk of this many.
const redictEvery = 8

// nextChunk decides how the next chunk of a dictionary leaf starts, after
// one that gave its dictionary up (gaveUp) or kept it.
func (l *leaf) nextChunk(gaveUp bool) {
	if gaveUp {
		l.plainRun++
	} else {
		l.plainRun = 0
	}
	l.plainChunk = l.plainRun > 0 && l.plainRun%redictEvery != 0
}

// checkDict turns a dictionary leaf whose dictionary outgrew its limit
// into PLAIN for the rest of the chunk: what is buffered is written as
// PLAIN pages now, so memory stays bounded by the limit.
func (l *leaf) checkDict(codec compress.Codec) error {
	if !l.dict || l.plainChunk {
		return nil
	}
	// A dictionary pays when values repeat: one that has grown past its
	// limit, or holds a distinct value for most values after a fair sample
	// (ids, free text), costs a hash lookup per value for nothing; PLAIN
	// then, as parquet-mr falls back when the dictionary does not shrink
	// the column.
	n := l.sampled()
	if l.dictVals.size() <= dictLimitBytes && !(n >= dictSample && l.dictVals.len() > n*3/4) {
		return nil
	}
	l.plainChunk = true
	defer l.dropDict()
	if !l.streamed() {
		return l.writePages(codec, false, true)
	}
	// Index pages are written already: the values buffered join them,
	// the dictionary's page is written as it stands, and the rest of the
	// chunk is PLAIN (parquet-java's fallback gives the same layout).
	if err := l.writePages(codec, true, true); err != nil {
		return err
	}
	return l.writeDictPage(codec, l.dictVals.plain, l.dictVals.len())
}

// dropDict empties the dictionary of a dictionary leaf (at the end of its
// chunk, or when the chunk turns PLAIN).
func (l *leaf) dropDict() {
	l.dictIdx.reset()
	l.dictVals.reset()
	l.last, l.succ = 0, l.succ[:0]
	l.dictGen++
}

// indexPagesFull says whether a dictionary leaf holds at least one whole
// page of indices to write now (streamPages). Only once the chunk has
// seen dictSample values: until checkDict has judged the dictionary, its
// values may yet go out PLAIN.
func (l *leaf) indexPagesFull() bool {
	return streamIndexPages && l.dict && !l.plainChunk && l.fixedDict == nil && 4*len(l.idx) >= l.pageBytes &&
		l.sampled() >= dictSample
}

// sampled is how many values the chunk has put through the dictionary so
// far: its level entries less the NULLs (and empty lists). The distinct
// share is of these; counted over entries, a column of distinct values
// NULL half the time stayed at one half, under the bar, and kept a
// dictionary up to its size limit for nothing.
func (l *leaf) sampled() int {
	return int(l.chunkValues-l.chunkNulls) + l.nValues - l.nNulls
}

// streamIndexPages turns streamPages on (a fuzz target compares what it
// writes with the chunk held whole to its end).
var streamIndexPages = true

// streamPages writes the whole index pages a dictionary leaf holds and
// keeps the rest buffered. The indices of a whole chunk, held to its end,
// were most of a writer's memory when a column is a map or list (fifteen
// keys and values a row for Debezium's source block): written as pages
// fill, they are held a page at a time. The pages end where they would
// have had the chunk been cut at its end, and each gives the bit width of
// the dictionary as it stands (the format has a width per page).
func (l *leaf) streamPages(codec compress.Codec) error {
	return l.writePages(codec, true, false)
}

// streamed says whether a dictionary leaf whose chunk is not PLAIN has
// written index pages of the chunk already (only streamPages writes them
// before the chunk ends): then the dictionary is kept to the end of the
// chunk, or to its fallback, and its page written then.
func (l *leaf) streamed() bool { return l.chunkValues > 0 }

// writePages writes the buffered values of a dictionary leaf as pages of
// dictionary indices (useDict) or PLAIN values: all of them (all), or
// every whole page, keeping the values of the last page that is not full
// buffered (the leaf must be at the end of a row). With all, the buffers
// are left empty.
func (l *leaf) writePages(codec compress.Codec, useDict, all bool) error {
	if l.nValues == 0 {
		l.reset()
		return nil
	}
	// Cut the buffered chunk into pages at row starts.
	rep, def, idx := l.rep, l.def, l.idx
	vi := 0 // index into idx of the page's first value
	if n := l.dictVals.len(); len(l.seen) < n {
		l.seen = make([]uint32, n+n/4)
		l.page = 0
	}
	start := 0 // level index of the page's first entry
	for start < l.nValues {
		if l.page++; l.page == 0 { // wrapped: forget every mark
			clear(l.seen)
			l.page = 1
		}
		var pb bounds
		page := l.vals[:0] // unused while the leaf is dictionary-encoded
		end, nNulls, nRows, vend := start, 0, 0, vi
		size := 0
		if useDict {
			end, nNulls, nRows = l.indexPageEnd(start)
			vend = vi + end - start - nNulls
			size = 4 * (vend - vi)
			seen, mark := l.seen, l.page
			for _, di := range idx[vi:vend] {
				if seen[di] != mark {
					seen[di] = mark
					pb.bytes(l.dictVals.get(di), false)
				}
			}
		}
		for !useDict && end < l.nValues { // PLAIN pages from a dictionary given up
			if end > start && (l.maxRep == 0 || rep[end] == 0) && size >= l.pageBytes {
				break
			}
			if l.maxRep == 0 || rep[end] == 0 {
				nRows++
			}
			if l.maxDef > 0 && int(def[end]) < l.maxDef {
				nNulls++
			} else {
				di := idx[vend]
				if l.seen[di] != l.page {
					l.seen[di] = l.page
					pb.bytes(l.dictVals.get(di), false)
				}
				if useDict {
					size += 4 // the value itself is not needed: its bounds are taken
				} else {
					v := l.dictVals.get(di)
					size += 4 + len(v)
					page = binary.LittleEndian.AppendUint32(room(page, 4+len(v)), uint32(len(v)))
					page = append(page, v...)
				}
				vend++
			}
			end++
		}
		if !all && end == l.nValues && size < l.pageBytes {
			break // not a whole page: kept for the next call
		}
		enc := format.Plain
		if useDict {
			var err error
			if page, err = l.indexPage(page, idx[vi:vend], l.dictVals.len()); err != nil {
				return err
			}
			enc = format.RLEDictionary
		}
		var r, d []uint8
		if l.maxRep > 0 {
			r = rep[start:end]
		}
		if l.maxDef > 0 {
			d = def[start:end]
		}
		if err := l.writeDataPage(codec, enc, page, r, d, end-start, nNulls, nRows, &pb); err != nil {
			return err
		}
		start, vi = end, vend
		l.vals = page[:0]
		l.nNulls -= nNulls
		l.nRows -= nRows
	}
	if all || start == l.nValues {
		l.reset()
		return nil
	}
	// Move what is left to the front.
	l.idx = l.idx[:copy(l.idx, l.idx[vi:])]
	if l.maxRep > 0 {
		l.rep = l.rep[:copy(l.rep, l.rep[start:])]
	}
	if l.maxDef > 0 {
		l.def = l.def[:copy(l.def, l.def[start:])]
	}
	l.nValues -= start
	return nil
}

// indexPageEnd cuts an index page of the buffered levels from start, as
// the general loop of writePages does, with whole-slice operations instead
// of a step per entry: the page ends at the first row start after start
// where its values (4 bytes each as the page cutting counts them) reach
// pageBytes, or at the end. It returns the end and the page's NULLs and
// rows.
func (l *leaf) indexPageEnd(start int) (end, nNulls, nRows int) {
	n := l.nValues
	need := 0 // non-NULL entries that fill a page
	if l.pageBytes > 0 {
		need = (l.pageBytes + 3) / 4
	}
	// p: the first index where the entries from start hold need values.
	p := min(start+need, n)
	full := []byte{uint8(l.maxDef)} // the level of a value
	if l.maxDef > 0 {
		k := bytes.Count(l.def[start:p], full)
		for ; k < need && p < n; p++ {
			if int(l.def[p]) == l.maxDef {
				k++
			}
		}
	}
	end = max(p, start+1)
	if l.maxRep > 0 && end < n {
		if i := bytes.IndexByte(l.rep[end:n], 0); i >= 0 {
			end += i
		} else {
			end = n
		}
	}
	end = min(end, n)
	nRows = end - start
	if l.maxRep > 0 {
		nRows = bytes.Count(l.rep[start:end], []byte{0})
	}
	if l.maxDef > 0 {
		nNulls = end - start - bytes.Count(l.def[start:end], full)
	}
	return end, nNulls, nRows
}

// plainOf lays vals out as a PLAIN page of BYTE_ARRAY values.
func plainOf(vals []string) []byte {
	var plain []byte
	for _, v := range vals {
		plain = binary.LittleEndian.AppendUint32(plain, uint32(len(v)))
		plain = append(plain, v...)
	}
	return plain
}

// writeDictPage writes the dictionary page of n values (PLAIN), which
// must come first in the chunk.
func (l *leaf) writeDictPage(codec compress.Codec, plain []byte, n int) error {
	compressed, err := codec.Encode(l.enc.scratch[:0], plain)
	if err != nil {
		return fmt.Errorf("parquet %s: %w", codec, err)
	}
	h := format.PageHeader{
		Type:                 format.DictionaryPage,
		UncompressedPageSize: int32(len(plain)),
		CompressedPageSize:   int32(len(compressed)),
	}
	l.enc.scratch = compressed
	h.DictionaryPageHeader.Set(format.DictionaryPageHeader{NumValues: int32(n), Encoding: format.Plain})
	if _, err := l.appendPage(&l.head, &h, compressed); err != nil {
		return err
	}
	l.hasDictPage = true
	// Listed first, as the page comes first (its data pages may have been
	// written before it).
	if !slices.Contains(l.encodings, format.Plain) {
		l.encodings = slices.Insert(l.encodings, 0, format.Plain)
	}
	l.encStats = slices.Insert(l.encStats, 0, format.PageEncodingStats{PageType: format.DictionaryPage, Encoding: format.Plain, Count: 1})
	return nil
}

// columnChunk describes the finished chunk, written at file offset off, and
// resets the chunk state.
func (l *leaf) columnChunk(codec compress.Codec, off int64) (format.ColumnChunk, *format.ColumnIndex, format.OffsetIndex) {
	md := format.ColumnMetaData{
		Type:                  l.phys,
		Encoding:              append(thrift.Slice[format.Encoding]{format.RLE}, l.encodings...),
		PathInSchema:          l.path,
		Codec:                 codec.CompressionCodec(),
		NumValues:             l.chunkValues,
		TotalUncompressedSize: l.uncompressed,
		TotalCompressedSize:   int64(l.head.len() + l.chunk.len()),
		DataPageOffset:        off + int64(l.head.len()),
		EncodingStats:         slices.Clone(l.encStats),
	}
	if l.hasDictPage {
		md.DictionaryPageOffset = off
	}
	md.Statistics.NullCount = l.chunkNulls
	if l.cb.has {
		// Bounds longer than maxStatBytes are left out, as arrow-cpp does:
		// a footer must not carry whole documents.
		if lo, hi := l.cb.encode(l.phys); len(lo) <= maxStatBytes && len(hi) <= maxStatBytes {
			md.Statistics.MinValue, md.Statistics.MaxValue = lo, hi
		}
	}
	oi := format.OffsetIndex{PageLocations: l.pageLocs}
	for i := range oi.PageLocations {
		oi.PageLocations[i].Offset += off + int64(l.head.len()) // data pages follow the head
	}
	var ci *format.ColumnIndex
	if !l.noColIndex {
		ci = &format.ColumnIndex{}
		*ci = l.colIndex
		ci.BoundaryOrder = format.Unordered
	}
	cc := format.ColumnChunk{FileOffset: off, MetaData: md}
	l.noColIndex = false

	l.head.reset()
	l.chunk.reset()
	l.hasDictPage = false
	l.cb.has = false
	l.chunkValues, l.chunkNulls, l.uncompressed, l.chunkRows = 0, 0, 0, 0
	l.pageLocs = nil
	l.colIndex = format.ColumnIndex{}
	l.encodings = l.encodings[:0]
	l.encStats = l.encStats[:0]
	return cc, ci, oi
}
