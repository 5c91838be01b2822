package decode

import (
	"math"
	"time"
)

// Date and time parsing with the exact java.time patterns Flink uses
// (TimeFormats.java): ISO_LOCAL_DATE, "HH:mm:ss" + optional fraction, and the
// SQL / ISO-8601 timestamp shapes. Resolver styles matter: ISO_LOCAL_DATE and
// ISO_LOCAL_DATE_TIME are STRICT (2021-02-30 fails, hour 24 fails); the
// formatters Flink builds itself are SMART (2021-02-30 becomes 2021-02-28,
// 24:00:00 is midnight of the next day).

const nanosPerDay = 86400 * int64(time.Second)

type cursor struct {
	b []byte
	i int
}

func (c *cursor) digits(min, max int) (int, bool) {
	v, n := 0, 0
	for c.i < len(c.b) && n < max && c.b[c.i] >= '0' && c.b[c.i] <= '9' {
		v = v*10 + int(c.b[c.i]-'0')
		c.i++
		n++
	}
	return v, n >= min
}

func (c *cursor) lit(ch byte) bool {
	if c.i < len(c.b) && c.b[c.i] == ch {
		c.i++
		return true
	}
	return false
}

func (c *cursor) done() bool { return c.i == len(c.b) }

// isoYear reads ISO_LOCAL_DATE's year: 4 digits, or a sign and 4 to 10
// digits ('+' is required above 9999).
func (c *cursor) isoYear() (int, bool) {
	neg, signed := false, false
	if c.i < len(c.b) && (c.b[c.i] == '+' || c.b[c.i] == '-') {
		neg, signed = c.b[c.i] == '-', true
		c.i++
	}
	start := c.i
	y, ok := c.digits(4, 10)
	if !ok {
		return 0, false
	}
	n := c.i - start
	if !signed && n > 4 {
		return 0, false
	}
	if signed && !neg && n == 4 {
		return 0, false // strict EXCEEDS_PAD: '+' only when the year needs it
	}
	if neg {
		y = -y
	}
	return y, true
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// date reads yyyy-MM-dd. strict rejects days past the month's end; smart
// clamps them to the last day.
func (c *cursor) date(strict bool) (y, m, d int, ok bool) {
	if y, m, d, ok = fixedDate(c.b[c.i:]); ok {
		c.i += 10
	} else if y, m, d, ok = c.dateFields(); !ok {
		return 0, 0, 0, false
	}
	if m < 1 || m > 12 || d < 1 || d > 31 {
		return 0, 0, 0, false
	}
	if dim := daysIn(y, m); d > dim {
		if strict {
			return 0, 0, 0, false
		}
		d = dim
	}
	return y, m, d, true
}

// dateFields reads yyyy-MM-dd's fields, unchecked.
func (c *cursor) dateFields() (y, m, d int, ok bool) {
	if y, ok = c.isoYear(); !ok || !c.lit('-') {
		return 0, 0, 0, false
	}
	if m, ok = c.digits(2, 2); !ok || !c.lit('-') {
		return 0, 0, 0, false
	}
	if d, ok = c.digits(2, 2); !ok {
		return 0, 0, 0, false
	}
	return y, m, d, true
}

// fraction reads an optional '.' and 0 to 9 digits, as nanoseconds.
func (c *cursor) fraction() (int, bool) {
	if !c.lit('.') {
		return 0, true
	}
	ns, n := 0, 0
	for c.i < len(c.b) && n < 9 && c.b[c.i] >= '0' && c.b[c.i] <= '9' {
		ns = ns*10 + int(c.b[c.i]-'0')
		c.i++
		n++
	}
	for ; n < 9; n++ {
		ns *= 10
	}
	return ns, true
}

// clock reads HH:mm[:ss[.f]] (secondsOptional) or HH:mm:ss[.f]. It returns
// nanoseconds of the day, and extra=1 for SMART's 24:00:00.
func (c *cursor) clock(secondsOptional, smart bool) (ns int64, extra int, ok bool) {
	if h, mi, s, ok := fixedClock(c.b[c.i:]); ok {
		c.i += 8
		frac, _ := c.fraction()
		return clockNanos(h, mi, s, frac, smart)
	}
	h, ok1 := c.digits(2, 2)
	if !ok1 || !c.lit(':') {
		return 0, 0, false
	}
	mi, ok2 := c.digits(2, 2)
	if !ok2 {
		return 0, 0, false
	}
	s, frac := 0, 0
	if c.lit(':') {
		var ok3 bool
		if s, ok3 = c.digits(2, 2); !ok3 {
			return 0, 0, false
		}
		if frac, ok3 = c.fraction(); !ok3 {
			return 0, 0, false
		}
	} else if !secondsOptional {
		return 0, 0, false
	}
	return clockNanos(h, mi, s, frac, smart)
}

// clockNanos checks a read clock's fields and returns its nanoseconds of
// the day (extra=1 for SMART's 24:00:00).
func clockNanos(h, mi, s, frac int, smart bool) (ns int64, extra int, ok bool) {
	if mi > 59 || s > 59 {
		return 0, 0, false
	}
	if h == 24 && smart && mi == 0 && s == 0 && frac == 0 {
		return 0, 1, true
	}
	if h > 23 {
		return 0, 0, false
	}
	return int64(h)*3600e9 + int64(mi)*60e9 + int64(s)*1e9 + int64(frac), 0, true
}

// fixedDate reads the shape nearly every date has, four-digit year
// "yyyy-MM-dd" at b[0:10], in one step; ok false leaves anything else
// (signs, long years, malformed text) to the general reader, which reads
// this shape to the same fields.
func fixedDate(b []byte) (y, m, d int, ok bool) {
	if len(b) < 10 || b[4] != '-' || b[7] != '-' {
		return 0, 0, 0, false
	}
	y0, y1, y2, y3 := b[0]-'0', b[1]-'0', b[2]-'0', b[3]-'0'
	m0, m1, d0, d1 := b[5]-'0', b[6]-'0', b[8]-'0', b[9]-'0'
	if y0 > 9 || y1 > 9 || y2 > 9 || y3 > 9 || m0 > 9 || m1 > 9 || d0 > 9 || d1 > 9 {
		return 0, 0, 0, false
	}
	return int(y0)*1000 + int(y1)*100 + int(y2)*10 + int(y3), int(m0)*10 + int(m1), int(d0)*10 + int(d1), true
}

// fixedClock reads "HH:mm:ss" at b[0:8] in one step, as fixedDate does.
func fixedClock(b []byte) (h, mi, s int, ok bool) {
	if len(b) < 8 || b[2] != ':' || b[5] != ':' {
		return 0, 0, 0, false
	}
	h0, h1, m0, m1, s0, s1 := b[0]-'0', b[1]-'0', b[3]-'0', b[4]-'0', b[6]-'0', b[7]-'0'
	if h0 > 9 || h1 > 9 || m0 > 9 || m1 > 9 || s0 > 9 || s1 > 9 {
		return 0, 0, 0, false
	}
	return int(h0)*10 + int(h1), int(m0)*10 + int(m1), int(s0)*10 + int(s1), true
}

// epochDays is the proleptic Gregorian day number of y-m-d (1970-01-01 = 0).
func epochDays(y, m, d int) int64 {
	// Howard Hinnant's days_from_civil.
	yy := int64(y)
	if m <= 2 {
		yy--
	}
	if yy >= 0 && yy < 1<<32 { // the usual case, in unsigned arithmetic: cheaper divisions
		u := uint64(yy)
		era := u / 400
		yoe := u - era*400
		doy := (153*uint64((m+9)%12)+2)/5 + uint64(d) - 1
		return int64(era*146097+yoe*365+yoe/4-yoe/100+doy) - 719468
	}
	era := yy / 400
	if yy < 0 && yy%400 != 0 {
		era = (yy - 399) / 400
	}
	yoe := yy - era*400
	mp := int64((m + 9) % 12)
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// parseDate is ISO_LOCAL_DATE (strict), as days since the epoch.
func parseDate(b []byte) (int32, bool) {
	c := cursor{b: b}
	y, m, d, ok := c.date(true)
	if !ok || !c.done() {
		return 0, false
	}
	days := epochDays(y, m, d)
	if days < math.MinInt32 || days > math.MaxInt32 {
		return 0, false
	}
	return int32(days), true
}

// parseTime is "HH:mm:ss" with an optional fraction (SMART), as
// nanoseconds of the day. Flink keeps whole seconds only: its caller drops
// the fraction.
func parseTime(b []byte) (int64, bool) {
	c := cursor{b: b}
	ns, _, ok := c.clock(false, true)
	if !ok || !c.done() {
		return 0, false
	}
	return ns, true
}

// civil is an instant as a day number (1970-01-01 = 0) and the nanoseconds
// of that day, wall time read as UTC: what the parsers produce, before
// [arrowconv.EpochValue] puts it in the column's unit (which may not hold
// it).
type civil struct{ days, nsOfDay int64 }

// parseTimestamp parses TIMESTAMP (ltz false) or TIMESTAMP_LTZ (ltz true)
// text in the SQL or ISO-8601 standard.
func parseTimestamp(b []byte, iso, ltz bool) (civil, bool) {
	c := cursor{b: b}
	strict := iso && !ltz // ISO_LOCAL_DATE_TIME is STRICT; Flink's own builders are SMART
	y, m, d, ok := c.date(strict)
	if !ok {
		return civil{}, false
	}
	sep := byte(' ')
	if iso {
		sep = 'T'
	}
	if !c.lit(sep) {
		return civil{}, false
	}
	ns, extra, ok := c.clock(iso, !strict)
	if !ok {
		return civil{}, false
	}
	if ltz && !c.lit('Z') {
		return civil{}, false
	}
	if !c.done() {
		return civil{}, false
	}
	return civil{epochDays(y, m, d) + int64(extra), ns}, true
}

// parseOggCurrentTS parses ogg's current_ts (spec §6): first the pattern
// yyyy-MM-dd'T'HH:mm:ss.SSSSSS truncated to milliseconds, then a
// java.sql.Timestamp-style "yyyy-[m]m-[d]d hh:mm:ss[.f]", then a bare date.
// ok false means NULL (never an error).
func parseOggCurrentTS(b []byte) (civil, bool) {
	c := cursor{b: b}
	if y, m, d, ok := c.date(false); ok && c.lit('T') {
		h, ok1 := c.digits(2, 2)
		_ = ok1
		if ok1 && c.lit(':') {
			mi, ok2 := c.digits(2, 2)
			if ok2 && c.lit(':') {
				s, ok3 := c.digits(2, 2)
				if ok3 && c.lit('.') {
					frac, ok4 := c.digits(6, 6)
					if ok4 && c.done() && h < 24 && mi < 60 && s < 60 {
						ns := int64(h)*3600e9 + int64(mi)*60e9 + int64(s)*1e9 + int64(frac)*1000
						ns -= ns % 1e6
						return civil{epochDays(y, m, d), ns}, true
					}
				}
			}
		}
	}
	t := javaTrim(b)
	sp := -1
	for i, ch := range t {
		if ch == ' ' {
			sp = i
			break
		}
	}
	if sp >= 0 {
		y, m, d, ok := sqlDate(t[:sp])
		if !ok {
			return civil{}, false
		}
		ns, ok := sqlClock(t[sp+1:])
		if !ok {
			return civil{}, false
		}
		return civil{epochDays(y, m, d), ns}, true
	}
	y, m, d, ok := sqlDate(t)
	if !ok {
		return civil{}, false
	}
	return civil{epochDays(y, m, d), 0}, true
}

// sqlDate is java.sql.Date.valueOf: yyyy-[m]m-[d]d.
func sqlDate(b []byte) (y, m, d int, ok bool) {
	c := cursor{b: b}
	if y, ok = c.digits(4, 4); !ok || !c.lit('-') {
		return 0, 0, 0, false
	}
	if m, ok = c.digits(1, 2); !ok || !c.lit('-') {
		return 0, 0, 0, false
	}
	if d, ok = c.digits(1, 2); !ok || !c.done() {
		return 0, 0, 0, false
	}
	if m < 1 || m > 12 || d < 1 || d > 31 {
		return 0, 0, 0, false
	}
	return y, m, d, true
}

// sqlClock is the time part of java.sql.Timestamp.valueOf: hh:mm:ss[.f{1,9}].
func sqlClock(b []byte) (int64, bool) {
	c := cursor{b: b}
	h, ok := c.digits(1, 2)
	if !ok || !c.lit(':') {
		return 0, false
	}
	mi, ok := c.digits(1, 2)
	if !ok || !c.lit(':') {
		return 0, false
	}
	s, ok := c.digits(1, 2)
	if !ok {
		return 0, false
	}
	frac := 0
	if c.lit('.') {
		start := c.i
		f, ok := c.digits(1, 9)
		if !ok {
			return 0, false
		}
		for n := c.i - start; n < 9; n++ {
			f *= 10
		}
		frac = f
	}
	if !c.done() {
		return 0, false
	}
	return int64(h)*3600e9 + int64(mi)*60e9 + int64(s)*1e9 + int64(frac), true
}

// parseOggOpTS parses ogg's op_ts: yyyy-M-d with an optional " H:m:s[.f]",
// one or two digits per field, truncated to milliseconds.
func parseOggOpTS(b []byte) (civil, bool) {
	c := cursor{b: b}
	y, ok := c.digits(4, 4)
	if !ok || !c.lit('-') {
		return civil{}, false
	}
	m, ok := c.digits(1, 2)
	if !ok || !c.lit('-') {
		return civil{}, false
	}
	d, ok := c.digits(1, 2)
	if !ok || m < 1 || m > 12 || d < 1 || d > daysIn(y, m) {
		return civil{}, false
	}
	var ns int64
	if c.lit(' ') {
		h, ok1 := c.digits(1, 2)
		if !ok1 || !c.lit(':') {
			return civil{}, false
		}
		mi, ok2 := c.digits(1, 2)
		if !ok2 || !c.lit(':') {
			return civil{}, false
		}
		s, ok3 := c.digits(1, 2)
		if !ok3 || h > 23 || mi > 59 || s > 59 {
			return civil{}, false
		}
		frac, _ := c.fraction()
		ns = int64(h)*3600e9 + int64(mi)*60e9 + int64(s)*1e9 + int64(frac)
		ns -= ns % 1e6
	}
	if !c.done() {
		return civil{}, false
	}
	return civil{epochDays(y, m, d), ns}, true
}
