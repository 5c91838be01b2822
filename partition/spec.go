// Package partition splits rows by a partition spec: Iceberg's transforms
// (identity, year, month, day, hour, bucket, truncate) of columns, as
// --partition-by gives them. Iceberg tables (package lake) register each
// file's partition values; plain Parquet gets Hive-style directories
// (col_day=2024-10-04/), as Flink's filesystem connector lays them out.
package partition

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/apache/iceberg-go"
)

// Field is one field of --partition-by: a transform of a column.
type Field struct {
	Transform string // identity, year, month, day, hour, bucket, truncate
	Width     int    // bucket count or truncate width
	Column    string
}

// String renders the field as --partition-by takes it.
func (p Field) String() string {
	if p.Width > 0 {
		return fmt.Sprintf("%s(%d, %s)", p.Transform, p.Width, p.Column)
	}
	return fmt.Sprintf("%s(%s)", p.Transform, p.Column)
}

// ParsePartitionBy reads a --partition-by value: a comma-separated list of
// COLUMN (identity), identity(COLUMN), year|month|day|hour(COLUMN),
// bucket(N, COLUMN), truncate(N, COLUMN); a column may be `quoted`.
func ParsePartitionBy(s string) ([]Field, error) {
	p := &specParser{s: s}
	var out []Field
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
	return fmt.Errorf("partition spec %q at %d: %s (fields: COLUMN, identity|year|month|day|hour(COLUMN), bucket(N, COLUMN), truncate(N, COLUMN))", p.s, p.pos, fmt.Sprintf(format, args...))
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

func (p *specParser) field() (Field, error) {
	n, err := p.name()
	if err != nil {
		return Field{}, err
	}
	if !p.eat('(') {
		return Field{Transform: "identity", Column: n}, nil
	}
	f := Field{Transform: strings.ToLower(n)}
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

// IcebergTransform is the field's Iceberg transform.
func (p Field) IcebergTransform() iceberg.Transform {
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

// Name is the partition field's name, as Iceberg's Java API names it (and the Hive directory's key).
func (p Field) Name() string {
	switch p.Transform {
	case "identity":
		return p.Column
	case "truncate":
		return p.Column + "_trunc"
	}
	return p.Column + "_" + p.Transform
}
