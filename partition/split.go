package partition

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/cdcetl/cdcetl/writer"
)

// Column is a partition field bound to the rows: the record column it
// transforms, its transform, and the field's ID and name.
type Column struct {
	Col       int
	Transform iceberg.Transform
	ID        int
	Name      string
	Result    iceberg.Type // the transform's result type
}

// Spec is the partition spec of fields over schema sc (field IDs from
// 1000, as Iceberg numbers them).
func Spec(fields []Field, sc *iceberg.Schema) (iceberg.PartitionSpec, error) {
	var pfs []iceberg.PartitionField
	for i, f := range fields {
		src, ok := sc.FindFieldByName(f.Column)
		if !ok {
			return iceberg.PartitionSpec{}, fmt.Errorf("partition field %s: the table has no column %s", f, f.Column)
		}
		tr := f.IcebergTransform()
		if !tr.CanTransform(src.Type) {
			return iceberg.PartitionSpec{}, fmt.Errorf("partition field %s: column %s is %s, which %s cannot partition", f, f.Column, src.Type, f.Transform)
		}
		pfs = append(pfs, iceberg.PartitionField{SourceIDs: []int{src.ID}, FieldID: 1000 + i, Name: f.Name(), Transform: tr})
	}
	return iceberg.NewPartitionSpec(pfs...), nil
}

// Bind binds spec's fields over schema sc to the rows' columns; colOf
// gives the record column of a column name (-1: none).
func Bind(spec iceberg.PartitionSpec, sc *iceberg.Schema, colOf func(name string) int) ([]Column, error) {
	var cols []Column
	for _, pf := range spec.Fields() {
		src, ok := sc.FindFieldByID(pf.SourceID())
		if !ok {
			return nil, fmt.Errorf("partition source %d is no column", pf.SourceID())
		}
		c := colOf(src.Name)
		if c < 0 {
			return nil, fmt.Errorf("partition column %s is not among the rows' columns", src.Name)
		}
		cols = append(cols, Column{Col: c, Transform: pf.Transform, ID: pf.FieldID, Name: pf.Name, Result: pf.Transform.ResultType(src.Type)})
	}
	return cols, nil
}

// Options are a Writer's settings.
type Options struct {
	// Hive escapes directory names as Hive (and Flink's filesystem
	// connector) do; otherwise as URL query values (Iceberg's Java API).
	Hive bool
	// DefaultName is the directory value of a NULL partition value
	// (Flink's partition.default-name; "null" when empty).
	DefaultName string
	// RollBytes, when positive, starts a partition's next file once its
	// file under way holds that many bytes (sink.rolling-policy.file-size).
	RollBytes int64
	// Open makes a partition's seq-th file (0 first), given its directory
	// path ("id_bucket=3"); it returns the writer and the file's path.
	Open func(dir string, seq int) (File, string, error)
	// Done, if set, is told each file that was completed, with its
	// partition values by field ID.
	Done func(path string, values map[int]any)
}

// File is a partition's output: a Parquet file (*writer.Parquet), or one
// that wraps it (an upsert delta). Rolling needs a Size() int64 method.
type File interface {
	writer.Writer
	Buffered() int
	FlushRowGroup() error
}

// Writer routes rows to a file per partition.
type Writer struct {
	cols  []Column
	opts  Options
	parts map[string]*part
	order []*part
	files []string // completed files
	key   []byte
	vals  []iceberg.Optional[iceberg.Literal] // a row's values, reused
}

type part struct {
	w      File // nil after a roll, until the next row
	path   string
	dir    string
	seq    int
	values map[int]any
	idx    []int32
}

// New makes a Writer over cols.
func New(cols []Column, opts Options) *Writer {
	if opts.DefaultName == "" {
		opts.DefaultName = "null"
	}
	return &Writer{cols: cols, opts: opts, parts: map[string]*part{}}
}

// LiteralAt is element i of arr as an Iceberg literal (invalid for NULL).
func LiteralAt(arr arrow.Array, i int) iceberg.Optional[iceberg.Literal] {
	if arr.IsNull(i) {
		return iceberg.Optional[iceberg.Literal]{}
	}
	var l iceberg.Literal
	switch a := arr.(type) {
	case *array.Int8:
		l = iceberg.NewLiteral(int32(a.Value(i)))
	case *array.Int16:
		l = iceberg.NewLiteral(int32(a.Value(i)))
	case *array.Int32:
		l = iceberg.NewLiteral(a.Value(i))
	case *array.Int64:
		l = iceberg.NewLiteral(a.Value(i))
	case *array.String:
		l = iceberg.NewLiteral(a.Value(i))
	case *array.Binary:
		l = iceberg.NewLiteral(a.Value(i))
	case *array.Boolean:
		l = iceberg.NewLiteral(a.Value(i))
	case *array.Date32:
		l = iceberg.NewLiteral(iceberg.Date(a.Value(i)))
	case *array.Timestamp:
		v := int64(a.Value(i))
		if a.DataType().(*arrow.TimestampType).Unit == arrow.Nanosecond {
			v = floorDiv(v, 1000) // partitions work in microseconds
		}
		l = iceberg.NewLiteral(iceberg.Timestamp(v))
	case *array.Decimal128:
		dt := a.DataType().(*arrow.Decimal128Type)
		l = iceberg.NewLiteral(iceberg.Decimal{Val: a.Value(i), Scale: int(dt.Scale)})
	default:
		l = iceberg.NewLiteral(arr.ValueStr(i))
	}
	return iceberg.Optional[iceberg.Literal]{Val: l, Valid: true}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// Write routes rec's rows to their partitions' files.
func (p *Writer) Write(ctx context.Context, rec arrow.RecordBatch) error {
	n := int(rec.NumRows())
	var first *part
	same := true
	var cur []*part
	if p.vals == nil {
		p.vals = make([]iceberg.Optional[iceberg.Literal], len(p.cols))
	}
	for i := range n {
		p.key = p.key[:0]
		for j, f := range p.cols {
			v := f.Transform.Apply(LiteralAt(rec.Column(f.Col), i))
			p.vals[j] = v
			if v.Valid {
				p.key = append(p.key, v.Val.String()...)
			} else {
				p.key = append(p.key, 0xff)
			}
			p.key = append(p.key, 0)
		}
		pt := p.parts[string(p.key)]
		if pt == nil {
			pt = p.newPart(p.vals)
			p.parts[string(p.key)] = pt
		}
		if i == 0 {
			first = pt
		} else if pt != first {
			same = false
		}
		if len(pt.idx) == 0 {
			cur = append(cur, pt)
		}
		pt.idx = append(pt.idx, int32(i))
	}
	if same && first != nil {
		first.idx = first.idx[:0]
		return p.write(ctx, first, rec)
	}
	for _, pt := range cur {
		err := p.writeTaken(ctx, pt, rec)
		pt.idx = pt.idx[:0]
		if err != nil {
			return err
		}
	}
	return nil
}

func (p *Writer) writeTaken(ctx context.Context, pt *part, rec arrow.RecordBatch) error {
	bld := array.NewInt32Builder(memory.DefaultAllocator)
	bld.AppendValues(pt.idx, nil)
	idx := bld.NewArray()
	bld.Release()
	defer idx.Release()
	cols := make([]arrow.Array, rec.NumCols())
	for c := range cols {
		a, err := compute.TakeArray(ctx, rec.Column(c), idx)
		if err != nil {
			return err
		}
		defer a.Release()
		cols[c] = a
	}
	sub := array.NewRecordBatch(rec.Schema(), cols, int64(idx.Len()))
	defer sub.Release()
	return p.write(ctx, pt, sub)
}

// write appends rows to the partition's file under way (opening one if a
// roll closed the last), and rolls it once it is big enough.
func (p *Writer) write(ctx context.Context, pt *part, rec arrow.RecordBatch) error {
	if pt.w == nil {
		var err error
		if pt.w, pt.path, err = p.opts.Open(pt.dir, pt.seq); err != nil {
			return err
		}
		pt.seq++
	}
	if err := pt.w.Write(ctx, rec); err != nil {
		return err
	}
	if sz, ok := pt.w.(interface{ Size() int64 }); ok && p.opts.RollBytes > 0 && sz.Size() >= p.opts.RollBytes {
		return p.complete(pt)
	}
	return nil
}

// complete closes a partition's file under way.
func (p *Writer) complete(pt *part) error {
	w := pt.w
	pt.w = nil
	if err := w.Close(); err != nil {
		return err
	}
	p.files = append(p.files, pt.path)
	if p.opts.Done != nil {
		p.opts.Done(pt.path, pt.values)
	}
	return nil
}

// newPart starts a partition; its first file opens with its first rows.
func (p *Writer) newPart(vals []iceberg.Optional[iceberg.Literal]) *part {
	pt := &part{values: map[int]any{}}
	var segs []string
	for j, f := range p.cols {
		human := p.opts.DefaultName
		if vals[j].Valid {
			pt.values[f.ID] = vals[j].Val.Any()
			human = f.Transform.ToHumanStrType(f.Result, vals[j].Val.Any())
		} else {
			pt.values[f.ID] = nil
		}
		if p.opts.Hive {
			segs = append(segs, EscapeHive(f.Name)+"="+EscapeHive(human))
		} else {
			segs = append(segs, url.QueryEscape(f.Name)+"="+url.QueryEscape(human))
		}
	}
	pt.dir = filepath.Join(segs...)
	p.order = append(p.order, pt)
	return pt
}

// Close completes every partition's file.
func (p *Writer) Close() error {
	for i, pt := range p.order {
		if pt.w == nil {
			continue
		}
		if err := p.complete(pt); err != nil {
			for _, rest := range p.order[i+1:] {
				if rest.w != nil {
					rest.w.Abort()
				}
			}
			return err
		}
	}
	return nil
}

// Abort removes every file: those under way and those completed (a roll
// completes files before the input is done; nothing refers to them yet).
func (p *Writer) Abort() error {
	for _, pt := range p.order {
		if pt.w != nil {
			pt.w.Abort()
			pt.w = nil
		}
	}
	for _, f := range p.files {
		os.Remove(f)
	}
	p.files = nil
	return nil
}

// Buffered and FlushRowGroup bound memory as for one Parquet file.
func (p *Writer) Buffered() int {
	n := 0
	for _, pt := range p.order {
		if pt.w != nil {
			n += pt.w.Buffered()
		}
	}
	return n
}

func (p *Writer) FlushRowGroup() error {
	var most *part
	for _, pt := range p.order {
		if pt.w != nil && (most == nil || pt.w.Buffered() > most.w.Buffered()) {
			most = pt
		}
	}
	if most == nil {
		return nil
	}
	return most.w.FlushRowGroup()
}

// Files are the files completed so far (all of them after Close).
func (p *Writer) Files() []string { return p.files }

// EscapeHive escapes a partition directory's key or value as Hive's
// FileUtils.escapePathName does: the characters that paths, URIs or the
// key=value syntax would misread become %XX.
func EscapeHive(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f || strings.IndexByte("\"#%'*/:=?\\{[]^", c) >= 0 {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
