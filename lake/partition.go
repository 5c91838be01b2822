package lake

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/cdcetl/cdcetl/writer"
)

// PartitionField is one field of --partition-by: a transform of a column.
type PartitionField struct {
	Transform string // identity, year, month, day, hour, bucket, truncate
	Width     int    // bucket count or truncate width
	Column    string
}

// String renders the field as --partition-by takes it.
func (p PartitionField) String() string {
	if p.Width > 0 {
		return fmt.Sprintf("%s(%d, %s)", p.Transform, p.Width, p.Column)
	}
	return fmt.Sprintf("%s(%s)", p.Transform, p.Column)
}

// ParsePartitionBy reads a --partition-by value: a comma-separated list of
// COLUMN (identity), identity(COLUMN), year|month|day|hour(COLUMN),
// bucket(N, COLUMN), truncate(N, COLUMN); a column may be `quoted`.
func ParsePartitionBy(s string) ([]PartitionField, error) {
	p := &specParser{s: s}
	var out []PartitionField
	for {
		p.space()
		if p.done() {
			if len(out) == 0 {
				return nil, p.errorf("no partition field (want e.g. \"day(_event_ts), bucket(16, id)\")")
			}
			return out, nil
		}
		f, err := p.field()
		if err != nil {
			return nil, err
		}
		for _, o := range out {
			if o == f {
				return nil, p.errorf("%s is given twice", f)
			}
		}
		out = append(out, f)
		p.space()
		if p.done() {
			continue
		}
		if !p.eat(',') {
			return nil, p.errorf("want , between partition fields")
		}
	}
}

type specParser struct {
	s   string
	pos int
}

func (p *specParser) done() bool { return p.pos >= len(p.s) }

func (p *specParser) space() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t' || p.s[p.pos] == '\n') {
		p.pos++
	}
}

func (p *specParser) eat(c byte) bool {
	p.space()
	if p.pos < len(p.s) && p.s[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

func (p *specParser) errorf(format string, args ...any) error {
	return fmt.Errorf("--partition-by %q at %d: %s (fields: COLUMN, identity|year|month|day|hour(COLUMN), bucket(N, COLUMN), truncate(N, COLUMN))", p.s, p.pos, fmt.Sprintf(format, args...))
}

// name reads an identifier or a `quoted` name.
func (p *specParser) name() (string, error) {
	p.space()
	if p.pos < len(p.s) && p.s[p.pos] == '`' {
		var b strings.Builder
		for i := p.pos + 1; i < len(p.s); i++ {
			if p.s[i] == '`' {
				if i+1 < len(p.s) && p.s[i+1] == '`' {
					b.WriteByte('`')
					i++
					continue
				}
				p.pos = i + 1
				if b.Len() == 0 {
					return "", p.errorf("empty column name")
				}
				return b.String(), nil
			}
			b.WriteByte(p.s[i])
		}
		return "", p.errorf("unterminated `quoted` name")
	}
	start := p.pos
	for p.pos < len(p.s) {
		r := rune(p.s[p.pos])
		if r == '_' || r >= 0x80 || unicode.IsLetter(r) || unicode.IsDigit(r) || r == '$' {
			p.pos++
			continue
		}
		break
	}
	if p.pos == start {
		return "", p.errorf("want a column name")
	}
	return p.s[start:p.pos], nil
}

func (p *specParser) field() (PartitionField, error) {
	n, err := p.name()
	if err != nil {
		return PartitionField{}, err
	}
	if !p.eat('(') {
		return PartitionField{Transform: "identity", Column: n}, nil
	}
	f := PartitionField{Transform: strings.ToLower(n)}
	switch f.Transform {
	case "identity", "year", "month", "day", "hour":
	case "years", "months", "days", "hours":
		f.Transform = strings.TrimSuffix(f.Transform, "s")
	case "bucket", "truncate":
		p.space()
		start := p.pos
		for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
			p.pos++
		}
		w, err := strconv.Atoi(p.s[start:p.pos])
		if err != nil || w <= 0 || w > 1<<20 {
			return f, p.errorf("%s needs a width from 1 to %d first", f.Transform, 1<<20)
		}
		f.Width = w
		if !p.eat(',') {
			return f, p.errorf("want , after the width of %s", f.Transform)
		}
	default:
		return f, p.errorf("unknown transform %q", n)
	}
	if f.Column, err = p.name(); err != nil {
		return f, err
	}
	if !p.eat(')') {
		return f, p.errorf("want ) after %s's column", f.Transform)
	}
	return f, nil
}

// transform is the field's Iceberg transform.
func (p PartitionField) transform() iceberg.Transform {
	switch p.Transform {
	case "year":
		return iceberg.YearTransform{}
	case "month":
		return iceberg.MonthTransform{}
	case "day":
		return iceberg.DayTransform{}
	case "hour":
		return iceberg.HourTransform{}
	case "bucket":
		return iceberg.BucketTransform{NumBuckets: p.Width}
	case "truncate":
		return iceberg.TruncateTransform{Width: p.Width}
	}
	return iceberg.IdentityTransform{}
}

// fieldName is the partition field's name, as Iceberg's Java API names it.
func (p PartitionField) fieldName() string {
	switch p.Transform {
	case "identity":
		return p.Column
	case "truncate":
		return p.Column + "_trunc"
	}
	return p.Column + "_" + p.Transform
}

// partitionSpec builds the spec of fields over schema sc.
func partitionSpec(fields []PartitionField, sc *iceberg.Schema) (iceberg.PartitionSpec, error) {
	var pfs []iceberg.PartitionField
	for i, f := range fields {
		src, ok := sc.FindFieldByName(f.Column)
		if !ok {
			return iceberg.PartitionSpec{}, fmt.Errorf("--partition-by %s: the table has no column %s", f, f.Column)
		}
		tr := f.transform()
		if !tr.CanTransform(src.Type) {
			return iceberg.PartitionSpec{}, fmt.Errorf("--partition-by %s: column %s is %s, which %s cannot partition", f, f.Column, src.Type, f.Transform)
		}
		pfs = append(pfs, iceberg.PartitionField{SourceIDs: []int{src.ID}, FieldID: 1000 + i, Name: f.fieldName(), Transform: tr})
	}
	return iceberg.NewPartitionSpec(pfs...), nil
}

// sameSpec reports whether a table's spec is the one fields ask for.
func sameSpec(spec iceberg.PartitionSpec, sc *iceberg.Schema, fields []PartitionField) bool {
	if spec.NumFields() != len(fields) {
		return false
	}
	i := 0
	for _, pf := range spec.Fields() {
		f := fields[i]
		i++
		src, ok := sc.FindFieldByID(pf.SourceID())
		if !ok || src.Name != f.Column || !pf.Transform.Equals(f.transform()) {
			return false
		}
	}
	return true
}

// Partitioned writes a data file per partition of the rows it is given.
type Partitioned struct {
	t      *Table
	spec   iceberg.PartitionSpec
	fields []partCol
	open   func(partPath string) (*writer.Parquet, string, error)
	parts  map[string]*part
	order  []*part
	key    []byte
	vals   []iceberg.Optional[iceberg.Literal] // a row's partition values, reused
}

type partCol struct {
	col    int // record column of the source
	tr     iceberg.Transform
	id     int // partition field ID
	name   string
	result iceberg.Type
}

type part struct {
	w      *writer.Parquet
	path   string
	values map[int]any
	idx    []int32
}

// NewPartitioned splits rows by the table's partition spec; open makes the
// data file of a partition, given its Hive-style path ("id_bucket=3").
// colOf gives the record column of a table column.
func (t *Table) NewPartitioned(colOf func(name string) int, open func(partPath string) (*writer.Parquet, string, error)) (*Partitioned, error) {
	t.mu.Lock()
	spec := t.tbl.Spec()
	sc := t.tbl.Schema()
	t.mu.Unlock()
	p := &Partitioned{t: t, spec: spec, open: open, parts: map[string]*part{}}
	for _, pf := range spec.Fields() {
		src, ok := sc.FindFieldByID(pf.SourceID())
		if !ok {
			return nil, fmt.Errorf("iceberg table %s: partition source %d is no column", t.Name(), pf.SourceID())
		}
		c := colOf(src.Name)
		if c < 0 {
			return nil, fmt.Errorf("iceberg table %s: partition column %s is not among the rows' columns", t.Name(), src.Name)
		}
		p.fields = append(p.fields, partCol{col: c, tr: pf.Transform, id: pf.FieldID, name: pf.Name, result: pf.Transform.ResultType(src.Type)})
	}
	return p, nil
}

// literalAt is element i of arr as an Iceberg literal (invalid for NULL).
func literalAt(arr arrow.Array, i int) iceberg.Optional[iceberg.Literal] {
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
			v = floorDiv(v, 1000) // the table holds microseconds
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
func (p *Partitioned) Write(ctx context.Context, rec arrow.RecordBatch) error {
	n := int(rec.NumRows())
	var first *part
	same := true
	var cur []*part
	for i := range n {
		p.key = p.key[:0]
		if p.vals == nil {
			p.vals = make([]iceberg.Optional[iceberg.Literal], len(p.fields))
		}
		vals := p.vals
		for j, f := range p.fields {
			v := f.tr.Apply(literalAt(rec.Column(f.col), i))
			vals[j] = v
			if v.Valid {
				p.key = append(p.key, v.Val.String()...)
			} else {
				p.key = append(p.key, 0xff)
			}
			p.key = append(p.key, 0)
		}
		pt := p.parts[string(p.key)]
		if pt == nil {
			var err error
			if pt, err = p.newPart(vals); err != nil {
				return err
			}
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
		return first.w.Write(ctx, rec)
	}
	for _, pt := range cur {
		if err := p.writeTaken(ctx, pt, rec); err != nil {
			return err
		}
		pt.idx = pt.idx[:0]
	}
	return nil
}

func (p *Partitioned) writeTaken(ctx context.Context, pt *part, rec arrow.RecordBatch) error {
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
	return pt.w.Write(ctx, sub)
}

// newPart opens the file of a new partition.
func (p *Partitioned) newPart(vals []iceberg.Optional[iceberg.Literal]) (*part, error) {
	pt := &part{values: map[int]any{}}
	var segs []string
	for j, f := range p.fields {
		human := "null"
		if vals[j].Valid {
			pt.values[f.id] = vals[j].Val.Any()
			human = f.tr.ToHumanStrType(f.result, vals[j].Val.Any())
		} else {
			pt.values[f.id] = nil
		}
		segs = append(segs, url.QueryEscape(f.name)+"="+url.QueryEscape(human))
	}
	var err error
	if pt.w, pt.path, err = p.open(filepath.Join(segs...)); err != nil {
		return nil, err
	}
	p.order = append(p.order, pt)
	return pt, nil
}

// Close closes every partition's file and registers its partition values
// with the table, for the commit.
func (p *Partitioned) Close() error {
	for i, pt := range p.order {
		if err := pt.w.Close(); err != nil {
			for _, rest := range p.order[i+1:] {
				rest.w.Abort()
			}
			return err
		}
		p.t.partOf.Store(pt.path, pt.values)
	}
	return nil
}

// Abort removes every partition's file.
func (p *Partitioned) Abort() error {
	for _, pt := range p.order {
		pt.w.Abort()
	}
	return nil
}

// Buffered and FlushRowGroup bound memory as for one Parquet file.
func (p *Partitioned) Buffered() int {
	n := 0
	for _, pt := range p.order {
		n += pt.w.Buffered()
	}
	return n
}

func (p *Partitioned) FlushRowGroup() error {
	most, at := 0, -1
	for i, pt := range p.order {
		if b := pt.w.Buffered(); b > most {
			most, at = b, i
		}
	}
	if at < 0 {
		return nil
	}
	return p.order[at].w.FlushRowGroup()
}

// Files are the data files written, one per partition.
func (p *Partitioned) Files() []string {
	out := make([]string, len(p.order))
	for i, pt := range p.order {
		out[i] = pt.path
	}
	return out
}

// dataFile describes a data file for a manifest: its metrics from its
// footer, and its partition values from the writer (iceberg-go infers
// them only for order-preserving transforms, never for bucket).
func (t *Table) dataFile(ctx context.Context, path string) (iceberg.DataFile, error) {
	fs, err := t.tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	meta := t.tbl.Metadata()
	spec := meta.PartitionSpec()
	vals, partitioned := t.partOf.Load(path)
	if !partitioned || spec.NumFields() == 0 {
		return tableFileToDataFile(ctx, fs, path, t, spec)
	}
	df, err := tableFileToDataFile(ctx, fs, path, t, *iceberg.UnpartitionedSpec)
	if err != nil {
		return nil, err
	}
	b, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData, df.FilePath(), iceberg.ParquetFile, vals.(map[int]any), nil, nil, df.Count(), df.FileSizeBytes())
	if err != nil {
		return nil, err
	}
	b.ColumnSizes(df.ColumnSizes()).ValueCounts(df.ValueCounts()).NullValueCounts(df.NullValueCounts()).
		LowerBoundValues(df.LowerBoundValues()).UpperBoundValues(df.UpperBoundValues())
	if s := df.SplitOffsets(); len(s) > 0 {
		b.SplitOffsets(s)
	}
	return b.Build(), nil
}
