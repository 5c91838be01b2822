package writer

import (
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// ValueFormatter returns the function that renders values of type dt as
// Flink's Row.toString does; tests use it on Arrow data read back from files.
func ValueFormatter(dt arrow.DataType) func(dst []byte, arr arrow.Array, i int) []byte {
	return newRender(dt)
}

// render appends value i of arr as Flink's Row.toString shows it (spec §12).
// One renderer is built per column type, once per schema.
type render func(dst []byte, arr arrow.Array, i int) []byte

func newRender(dt arrow.DataType) render {
	var r render
	switch t := dt.(type) {
	case *arrow.BooleanType:
		r = func(dst []byte, a arrow.Array, i int) []byte {
			return strconv.AppendBool(dst, a.(*array.Boolean).Value(i))
		}
	case *arrow.Int8Type:
		r = func(dst []byte, a arrow.Array, i int) []byte {
			return strconv.AppendInt(dst, int64(a.(*array.Int8).Value(i)), 10)
		}
	case *arrow.Int16Type:
		r = func(dst []byte, a arrow.Array, i int) []byte {
			return strconv.AppendInt(dst, int64(a.(*array.Int16).Value(i)), 10)
		}
	case *arrow.Int32Type:
		r = func(dst []byte, a arrow.Array, i int) []byte {
			return strconv.AppendInt(dst, int64(a.(*array.Int32).Value(i)), 10)
		}
	case *arrow.Int64Type:
		r = func(dst []byte, a arrow.Array, i int) []byte {
			return strconv.AppendInt(dst, a.(*array.Int64).Value(i), 10)
		}
	case *arrow.Float32Type:
		r = func(dst []byte, a arrow.Array, i int) []byte {
			return arrowconv.AppendJavaFloat(dst, a.(*array.Float32).Value(i))
		}
	case *arrow.Float64Type:
		r = func(dst []byte, a arrow.Array, i int) []byte {
			return arrowconv.AppendJavaDouble(dst, a.(*array.Float64).Value(i))
		}
	case *arrow.Decimal128Type:
		scale := int(t.Scale)
		r = func(dst []byte, a arrow.Array, i int) []byte {
			return arrowconv.AppendDecimal(dst, a.(*array.Decimal128).Value(i), scale, false)
		}
	case *arrow.StringType:
		r = func(dst []byte, a arrow.Array, i int) []byte { return append(dst, a.(*array.String).Value(i)...) }
	case *arrow.LargeStringType:
		r = func(dst []byte, a arrow.Array, i int) []byte { return append(dst, a.(*array.LargeString).Value(i)...) }
	case *arrow.BinaryType:
		r = func(dst []byte, a arrow.Array, i int) []byte {
			dst = append(dst, '[')
			for k, b := range a.(*array.Binary).Value(i) {
				if k > 0 {
					dst = append(dst, ", "...)
				}
				dst = strconv.AppendInt(dst, int64(int8(b)), 10)
			}
			return append(dst, ']')
		}
	case *arrow.Date32Type:
		r = func(dst []byte, a arrow.Array, i int) []byte {
			return appendDate(dst, time.Unix(int64(a.(*array.Date32).Value(i))*86400, 0).UTC())
		}
	case *arrow.Time32Type, *arrow.Time64Type:
		r = func(dst []byte, a arrow.Array, i int) []byte {
			return appendLocalTime(dst, arrowconv.TimeNanos(a, i))
		}
	case *arrow.TimestampType:
		instant := t.TimeZone != ""
		unit := t.Unit
		r = func(dst []byte, a arrow.Array, i int) []byte {
			tm := arrowconv.EpochTime(int64(a.(*array.Timestamp).Value(i)), unit)
			dst = appendDate(dst, tm)
			dst = append(dst, 'T')
			nod := int64(tm.Hour())*3600e9 + int64(tm.Minute())*60e9 + int64(tm.Second())*1e9 + int64(tm.Nanosecond())
			if instant {
				// Instant.toString always shows the seconds.
				dst = appendTwo(dst, tm.Hour())
				dst = append(dst, ':')
				dst = appendTwo(dst, tm.Minute())
				dst = append(dst, ':')
				dst = appendTwo(dst, tm.Second())
				dst = appendNanoGroups(dst, tm.Nanosecond())
				return append(dst, 'Z')
			}
			return appendLocalTime(dst, nod)
		}
	case *arrow.ListType:
		elem := newRender(t.Elem())
		r = func(dst []byte, a arrow.Array, i int) []byte {
			l := a.(*array.List)
			start, end := l.ValueOffsets(i)
			child := l.ListValues()
			dst = append(dst, '[')
			for j := start; j < end; j++ {
				if j > start {
					dst = append(dst, ", "...)
				}
				dst = elem(dst, child, int(j))
			}
			return append(dst, ']')
		}
	case *arrow.MapType:
		key := newRender(t.KeyType())
		val := newRender(t.ItemType())
		r = func(dst []byte, a arrow.Array, i int) []byte {
			m := a.(*array.Map)
			start, end := m.ValueOffsets(i)
			keys, items := m.Keys(), m.Items()
			dst = append(dst, '{')
			for j := start; j < end; j++ {
				if j > start {
					dst = append(dst, ", "...)
				}
				dst = key(dst, keys, int(j))
				dst = append(dst, '=')
				dst = val(dst, items, int(j))
			}
			return append(dst, '}')
		}
	case *arrow.StructType:
		fields := make([]render, t.NumFields())
		for k := range fields {
			fields[k] = newRender(t.Field(k).Type)
		}
		r = func(dst []byte, a arrow.Array, i int) []byte {
			s := a.(*array.Struct)
			dst = append(dst, "+I["...) // a nested row prints with its own kind
			for k, f := range fields {
				if k > 0 {
					dst = append(dst, ", "...)
				}
				dst = f(dst, s.Field(k), i)
			}
			return append(dst, ']')
		}
	default:
		r = func(dst []byte, a arrow.Array, i int) []byte { return append(dst, a.ValueStr(i)...) }
	}
	return func(dst []byte, a arrow.Array, i int) []byte {
		if a.IsNull(i) {
			return append(dst, "null"...)
		}
		return r(dst, a, i)
	}
}

// appendDate writes LocalDate.toString.
func appendDate(dst []byte, t time.Time) []byte { return arrowconv.AppendISODate(dst, t) }

// appendLocalTime writes LocalTime.toString for nanoseconds of the day:
// HH:mm, then :ss when seconds or nanos are set, then the fraction in groups
// of 3, 6 or 9 digits.
func appendLocalTime(dst []byte, nod int64) []byte {
	h := nod / 3600e9
	m := nod / 60e9 % 60
	s := nod / 1e9 % 60
	ns := int(nod % 1e9)
	dst = appendTwo(dst, int(h))
	dst = append(dst, ':')
	dst = appendTwo(dst, int(m))
	if s > 0 || ns > 0 {
		dst = append(dst, ':')
		dst = appendTwo(dst, int(s))
		dst = appendNanoGroups(dst, ns)
	}
	return dst
}

func appendNanoGroups(dst []byte, ns int) []byte {
	switch {
	case ns == 0:
		return dst
	case ns%1e6 == 0:
		dst = append(dst, '.')
		return appendPad(dst, ns/1e6, 3)
	case ns%1e3 == 0:
		dst = append(dst, '.')
		return appendPad(dst, ns/1e3, 6)
	}
	dst = append(dst, '.')
	return appendPad(dst, ns, 9)
}

func appendTwo(dst []byte, v int) []byte { return append(dst, byte('0'+v/10), byte('0'+v%10)) }

func appendPad(dst []byte, v, width int) []byte {
	var buf [20]byte
	s := strconv.AppendInt(buf[:0], int64(v), 10)
	for k := len(s); k < width; k++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}
