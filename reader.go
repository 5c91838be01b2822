package cdcetl

import (
	"fmt"
	"io"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/reader"
)

// Reader decodes messages, one per line, into Arrow record batches. It is
// an [array.RecordReader]: the first column is _rowkind (+I, -U, +U, -D),
// then one column per declared column, metadata columns included.
//
// A message that cannot be decoded stops the reader: Next returns false
// and Err is a *decode.Error naming the line (rows of the batch in
// progress are not returned). With the format's ignore-parse-errors option
// such messages are skipped and counted in Counts instead, as Flink skips
// them.
type Reader struct {
	refs      atomic.Int64
	lines     *reader.Lines
	dec       decode.Decoder
	b         *arrowconv.Builder
	res       decoding
	name      string
	batchRows int
	schema    *arrow.Schema
	cur       arrow.RecordBatch
	err       error
	counts    Counts
}

var _ array.RecordReader = (*Reader)(nil)

// Counts says what became of the messages read so far.
type Counts struct {
	Messages int64 // lines read, blank ones included
	Rows     int64 // rows returned in batches
	// Dropped messages could not be decoded, Nulled values could not be
	// converted and became NULL (ignore-parse-errors).
	Dropped, Nulled int64
	// Skipped messages hold no rows by Flink's rules (Canal CREATE) or, under
	// producer semantics, are control messages (transaction markers, DDL,
	// truncates); Blank ones are empty lines.
	Skipped, Blank int64
	// Filtered messages belong to other tables than an inspected DDL's.
	Filtered int64
}

// ReaderOption sets a Reader up.
type ReaderOption func(*readerSettings)

type readerSettings struct {
	name      string
	batchRows int
	maxLine   int
	mem       memory.Allocator
}

// WithName names the input in errors and in the file.* metadata columns
// (default "input").
func WithName(name string) ReaderOption { return func(s *readerSettings) { s.name = name } }

// WithBatchRows sets the number of rows per record batch (default 16384).
func WithBatchRows(n int) ReaderOption { return func(s *readerSettings) { s.batchRows = n } }

// WithMaxLine sets the longest message accepted (default 256 MiB).
func WithMaxLine(n int) ReaderOption { return func(s *readerSettings) { s.maxLine = n } }

// WithAllocator sets the allocator of the batches' memory.
func WithAllocator(mem memory.Allocator) ReaderOption {
	return func(s *readerSettings) { s.mem = mem }
}

// NewReader returns a Reader of the messages of r, decoded as d says. d
// needs a format and a schema (Schema or DDL); gzip and zstd input is
// recognised by its first bytes. The caller closes r, after the Reader's
// last Next.
func NewReader(r io.Reader, d Decoding, opts ...ReaderOption) (*Reader, error) {
	s := readerSettings{name: "input", batchRows: 16384, maxLine: reader.DefaultMaxLine, mem: memory.DefaultAllocator}
	for _, o := range opts {
		o(&s)
	}
	if s.batchRows < 1 || s.maxLine < 1 {
		return nil, fmt.Errorf("cdcetl: batch rows %d and max line %d: want at least 1", s.batchRows, s.maxLine)
	}
	res, err := d.resolve()
	if err != nil {
		return nil, err
	}
	if res.schema == nil {
		return nil, fmt.Errorf("cdcetl: a Reader needs a Schema or a DDL (Convert infers schemas)")
	}
	lines, err := reader.NewLines(r, s.name, s.maxLine)
	if err != nil {
		return nil, fmt.Errorf("cdcetl: %s: %w", s.name, err)
	}
	b := arrowconv.NewBuilder(s.mem, res.schema)
	dec, err := decode.New(res.format, res.schema, res.opts, b)
	if err != nil {
		b.Release()
		return nil, fmt.Errorf("cdcetl: %w", err)
	}
	dec.SetFile(decode.FileInfo{Path: s.name, Name: s.name})
	rd := &Reader{lines: lines, dec: dec, b: b, res: res, name: s.name, batchRows: s.batchRows, schema: b.Schema()}
	rd.refs.Store(1)
	return rd, nil
}

// Schema is the schema of every batch.
func (r *Reader) Schema() *arrow.Schema { return r.schema }

// Next decodes messages until a batch is full or the input ends, and
// reports whether there is a batch. The previous batch is released: call
// Retain on it to keep it.
func (r *Reader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.err != nil || r.lines == nil {
		return false
	}
	for r.b.Len() < r.batchRows && r.lines.Next() {
		msg := r.lines.Bytes()
		pos := r.lines.Pos()
		r.counts.Messages++
		if r.res.only != nil && len(msg) > 0 {
			if ns, tbl, ok := decode.Route(r.res.format, r.res.opts.SchemaInclude, msg); ok && (ns != r.res.only[0] || tbl != r.res.only[1]) {
				r.counts.Filtered++
				continue
			}
		}
		r.dec.SetLine(int64(pos.Line))
		out, err := r.dec.Decode(msg)
		if err != nil {
			de := decode.Locate(err, pos.File, pos.Line, pos.Offset)
			if de.Hint == "" {
				de.Hint = decode.Hint(r.res.format, r.res.opts, msg, err)
			}
			r.err = de
			r.stop()
			return false
		}
		r.counts.Nulled += int64(len(out.Nulled))
		switch out.Outcome {
		case decode.Dropped:
			r.counts.Dropped++
		case decode.Blank:
			r.counts.Blank++
		case decode.SkippedDDL, decode.Control:
			r.counts.Skipped++
		}
	}
	if err := r.lines.Err(); err != nil {
		r.err = fmt.Errorf("cdcetl: %s: %w", r.name, err)
		r.stop()
		return false
	}
	if r.cur = r.b.Flush(); r.cur == nil {
		r.stop()
		return false
	}
	r.counts.Rows += r.cur.NumRows()
	return true
}

// stop releases the builder once the reader is done.
func (r *Reader) stop() {
	if r.lines != nil {
		r.lines.Close()
		r.lines = nil
		r.b.Release()
	}
}

// RecordBatch is the batch the last Next made; it is valid until the
// next call of Next or Release.
func (r *Reader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record is RecordBatch.
//
// Deprecated: Use [Reader.RecordBatch].
func (r *Reader) Record() arrow.RecordBatch { return r.cur }

// Err is the error that stopped the reader, nil at the input's end.
func (r *Reader) Err() error { return r.err }

// Counts says what became of the messages read so far.
func (r *Reader) Counts() Counts { return r.counts }

// Retain adds a reference.
func (r *Reader) Retain() { r.refs.Add(1) }

// Release drops a reference; the last one frees the reader's memory.
func (r *Reader) Release() {
	if r.refs.Add(-1) != 0 {
		return
	}
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	r.stop()
}
