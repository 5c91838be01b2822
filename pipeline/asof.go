package pipeline

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/cdcetl/cdcetl/decode"
)

// AsOf cuts an archive at a point: messages whose event time (or source
// position) is after it are left out, so a current-state snapshot or an
// upsert table holds each key as it was at that point. Messages that do
// not say when they happened are kept, and counted.
type AsOf struct {
	// Time, when not zero, is the cut: event times after it are left out
	// (Canal es, Maxwell ts, GoldenGate op_ts, Debezium source.ts_ms, each
	// to its producer's precision).
	Time time.Time
	// Position, otherwise: source positions (the source-position metadata,
	// as 'cdcetl audit' and 'cdcetl inspect' print them) after it are left
	// out.
	Position string
}

// asOfLayouts are the timestamps ParseAsOf reads, UTC unless they say.
var asOfLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"}

// ParseAsOf reads --as-of: a timestamp (RFC 3339, or "YYYY-MM-DD[
// hh:mm[:ss[.fff]]]" in UTC), or a source position. A position's numeric
// parts ('/'-separated) may be written without their zero padding.
func ParseAsOf(s string) (*AsOf, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("--as-of: give a timestamp (2026-11-30T02:00:00Z) or a source position")
	}
	for _, l := range asOfLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return &AsOf{Time: t.UTC()}, nil
		}
	}
	if looksLikeTime(s) {
		return nil, fmt.Errorf("--as-of %q: not a timestamp this reads (2026-11-30T02:00:00Z, 2026-11-30 02:00:00.250, 2026-11-30) nor a source position", s)
	}
	var b []byte
	for i, part := range strings.Split(s, "/") {
		if i > 0 {
			b = append(b, '/')
		}
		b = decode.AppendPositionPart(b, []byte(part))
	}
	return &AsOf{Position: string(b)}, nil
}

// looksLikeTime: a date's shape, which no source position has.
func looksLikeTime(s string) bool {
	return len(s) >= 10 && s[4] == '-' && s[7] == '-' && !strings.Contains(s, "/")
}

func (a *AsOf) String() string {
	if !a.Time.IsZero() {
		return a.Time.Format(time.RFC3339Nano)
	}
	return "position " + a.Position
}

// asOfFilter decides, message by message, which side of the cut it is on.
type asOfFilter struct {
	a   *AsOf
	pos []byte // a.Position, made once
	o   decode.Observation
	x   decode.Facts
}

// after reports whether msg is after the cut; placed is false when msg
// says nothing of when it happened (it is kept).
func (f *asOfFilter) after(format *decode.Format, schemaInclude bool, msg []byte) (after, placed bool) {
	msg = bytes.TrimPrefix(msg, []byte("\xef\xbb\xbf"))
	if !f.a.Time.IsZero() {
		if !format.Observe(schemaInclude, msg, &f.o) || !f.o.Event || f.o.Milli == 0 {
			return false, false
		}
		return f.o.Milli > f.a.Time.UnixMilli(), true
	}
	format.Facts(schemaInclude, msg, &f.x)
	if f.x.Position == nil {
		return false, false
	}
	return bytes.Compare(f.x.Position, f.pos) > 0, true
}

// skip counts and reports a message after the cut (a filtered one).
func (f *asOfFilter) skip(format *decode.Format, schemaInclude bool, msg []byte, st *Stats) bool {
	after, placed := f.after(format, schemaInclude, msg)
	switch {
	case after:
		st.Filtered++
		st.AfterAsOf++
		return true
	case !placed:
		st.UnplacedAsOf++
	}
	return false
}
