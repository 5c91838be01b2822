package arrowconv

import (
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// How TIMESTAMP(p) and TIMESTAMP_LTZ(p) values are held.
//
// Flink accepts years 0000 to 9999. int64 nanoseconds reach only
// 1677-09-21 to 2262-04-11, which leaves out MySQL's 9999-12-31 sentinels
// and 0001-01-01 defaults. So precisions 0 to 6 are held in microseconds
// (about ±292,000 years) and only 7 to 9, which need the digits, in
// nanoseconds. The Parquet unit still follows the declared precision.

// TimestampUnit is the Arrow unit of a TIMESTAMP or TIMESTAMP_LTZ column
// of the given precision.
func TimestampUnit(precision int) arrow.TimeUnit {
	if precision <= 6 {
		return arrow.Microsecond
	}
	return arrow.Nanosecond
}

// TimeUnit is the Arrow unit of a TIME(p) column: milliseconds up to
// precision 3 (time32), micro- and nanoseconds above (time64).
func TimeUnit(precision int) arrow.TimeUnit {
	switch {
	case precision <= 3:
		return arrow.Millisecond
	case precision <= 6:
		return arrow.Microsecond
	}
	return arrow.Nanosecond
}

// UnitNanos is the number of nanoseconds in one unit of u.
func UnitNanos(u arrow.TimeUnit) int64 { return unitNanos(u) }

// unitNanos is the number of nanoseconds in one unit.
func unitNanos(u arrow.TimeUnit) int64 {
	switch u {
	case arrow.Second:
		return 1e9
	case arrow.Millisecond:
		return 1e6
	case arrow.Microsecond:
		return 1e3
	}
	return 1
}

// UnitsPerSecond is the number of units of u in one second.
func UnitsPerSecond(u arrow.TimeUnit) int64 { return 1e9 / unitNanos(u) }

const nanosPerDay = 86400 * int64(time.Second)

// EpochValue combines a day number (1970-01-01 = 0) and the nanoseconds of
// the day (0 ≤ nsOfDay < one day) into a value of unit u, digits below the
// unit cut off. ok is false when the instant does not fit in int64 units.
func EpochValue(days, nsOfDay int64, u arrow.TimeUnit) (v int64, ok bool) {
	un := unitNanos(u)
	perDay := nanosPerDay / un
	if days > math.MaxInt64/perDay || days < math.MinInt64/perDay {
		return 0, false
	}
	hi := days * perDay
	r := hi + nsOfDay/un
	if r < hi {
		return 0, false
	}
	return r, true
}

// EpochScale converts n counts of fromNanos nanoseconds each (an epoch
// number in seconds, milliseconds, ...) to unit u, cutting digits below
// the unit; ok is false on overflow.
func EpochScale(n, fromNanos int64, u arrow.TimeUnit) (int64, bool) {
	un := unitNanos(u)
	if fromNanos >= un {
		m := fromNanos / un
		if n > math.MaxInt64/m || n < math.MinInt64/m {
			return 0, false
		}
		return n * m, true
	}
	return floorDiv(n, un/fromNanos), true
}

// EpochTime is the instant of a value of unit u, in UTC.
func EpochTime(v int64, u arrow.TimeUnit) time.Time {
	per := UnitsPerSecond(u)
	sec := floorDiv(v, per)
	return time.Unix(sec, (v-sec*per)*unitNanos(u)).UTC()
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// TimestampRange describes the instants a column of unit u holds, for
// errors: "years -290308 to 294247" or the exact nanosecond bounds.
func TimestampRange(u arrow.TimeUnit) string {
	lo, hi := EpochTime(math.MinInt64, u), EpochTime(math.MaxInt64, u)
	if u == arrow.Nanosecond {
		return fmt.Sprintf("%s to %s", lo.Format("2006-01-02 15:04:05.999999999"), hi.Format("2006-01-02 15:04:05.999999999"))
	}
	return fmt.Sprintf("years %d to %d", lo.Year()+1, hi.Year()-1)
}

// TimeNanos returns value i of a TIME column (time32 or time64) as
// nanoseconds of the day.
func TimeNanos(a arrow.Array, i int) int64 {
	switch t := a.(type) {
	case *array.Time32:
		return int64(t.Value(i)) * unitNanos(t.DataType().(*arrow.Time32Type).Unit)
	case *array.Time64:
		return int64(t.Value(i)) * unitNanos(t.DataType().(*arrow.Time64Type).Unit)
	}
	panic("arrowconv: not a TIME array: " + a.DataType().String())
}
