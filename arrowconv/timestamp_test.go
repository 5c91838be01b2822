package arrowconv

import (
	"math"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

func TestEpochValueRoundTrip(t *testing.T) {
	for _, tt := range []struct {
		days, nod int64
		unit      arrow.TimeUnit
		ok        bool
	}{
		{-719162, 0, arrow.Microsecond, true},                   // 0001-01-01
		{2932896, 86399999999000, arrow.Microsecond, true},      // 9999-12-31 23:59:59.999999
		{-719528, 0, arrow.Microsecond, true},                   // 0000-01-01
		{2932896, 0, arrow.Nanosecond, false},                   // 9999-12-31 needs µs
		{-106751, 0, arrow.Nanosecond, true},                    // 1677-09-22
		{-106752, 0, arrow.Nanosecond, false},                   // 1677-09-21 00:00: before the first nanosecond instant
		{106751, 86399999999999, arrow.Nanosecond, false},       // 2262-04-11 23:59:59.999999999: past the last
		{math.MaxInt64 / 86400, 0, arrow.Microsecond, false},    // far past
		{-(math.MaxInt64 / 86400), 0, arrow.Microsecond, false}, // far before
	} {
		v, ok := EpochValue(tt.days, tt.nod, tt.unit)
		if ok != tt.ok {
			t.Errorf("EpochValue(%d, %d, %s) ok = %v, want %v", tt.days, tt.nod, tt.unit, ok, tt.ok)
			continue
		}
		if !ok {
			continue
		}
		want := time.Unix(tt.days*86400, tt.nod).UTC().Truncate(time.Duration(1e9 / UnitsPerSecond(tt.unit)))
		if got := EpochTime(v, tt.unit); !got.Equal(want) {
			t.Errorf("EpochTime(EpochValue(%d, %d)) = %s, want %s", tt.days, tt.nod, got, want)
		}
	}
}

func TestEpochScale(t *testing.T) {
	for _, tt := range []struct {
		n, from int64
		unit    arrow.TimeUnit
		want    int64
		ok      bool
	}{
		{1500, 1e6, arrow.Microsecond, 1500000, true}, // ms → µs
		{-1, 1e6, arrow.Nanosecond, -1000000, true},   // ms → ns
		{7, 1e9, arrow.Microsecond, 7000000, true},    // s → µs
		{-1, 1e3, arrow.Millisecond, -1, true},        // µs → ms, floor
		{1700000000000000000, 1e6, arrow.Microsecond, 0, false},
		{math.MinInt64, 1e6, arrow.Microsecond, 0, false},
	} {
		got, ok := EpochScale(tt.n, tt.from, tt.unit)
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("EpochScale(%d, %d, %s) = %d, %v; want %d, %v", tt.n, tt.from, tt.unit, got, ok, tt.want, tt.ok)
		}
	}
}
