package arrowconv

import (
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// AppendKey appends an encoding of row i's values in cols (a primary key)
// that never confuses two keys and sorts as the keys do within each type:
// integers, dates, timestamps and decimals big-endian with the sign bit
// flipped; strings and bytes with 0 escaped as 0 1 and ended by 0 0. It
// returns the index of a column that is NULL in row i, or -1.
func AppendKey(b []byte, cols []arrow.Array, i int) ([]byte, int) {
	for k, c := range cols {
		if c.IsNull(i) {
			return b, k
		}
		switch a := c.(type) {
		case *array.Int8:
			b = appendSigned(b, int64(a.Value(i)))
		case *array.Int16:
			b = appendSigned(b, int64(a.Value(i)))
		case *array.Int32:
			b = appendSigned(b, int64(a.Value(i)))
		case *array.Int64:
			b = appendSigned(b, a.Value(i))
		case *array.Date32:
			b = appendSigned(b, int64(a.Value(i)))
		case *array.Timestamp:
			b = appendSigned(b, int64(a.Value(i)))
		case *array.Decimal128:
			v := a.Value(i)
			b = binary.BigEndian.AppendUint64(b, uint64(v.HighBits())^(1<<63))
			b = binary.BigEndian.AppendUint64(b, v.LowBits())
		case *array.Boolean:
			if a.Value(i) {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
		case *array.String:
			b = appendEscaped(b, a.Value(i))
		case *array.Binary:
			b = appendEscaped(b, a.Value(i))
		default:
			b = appendEscaped(b, c.ValueStr(i))
		}
	}
	return b, -1
}

func appendSigned(b []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(b, uint64(v)^(1<<63))
}

func appendEscaped[S string | []byte](b []byte, s S) []byte {
	for j := 0; j < len(s); j++ {
		if s[j] == 0 {
			b = append(b, 0, 1)
		} else {
			b = append(b, s[j])
		}
	}
	return append(b, 0, 0)
}
