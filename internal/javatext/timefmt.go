package javatext

import (
	"encoding/binary"
	"math"
	"time"
)

// Date and time parsing with the exact java.time patterns Flink uses
// (TimeFormats.java): ISO_LOCAL_DATE, "HH:mm:ss" + optional fraction, and the
// SQL / ISO-8601 timestamp shapes. Resolver styles matter: ISO_LOCAL_DATE and
// ISO_LOCAL_DATE_TIME are STRICT (2021-02-30 fails, hour 24 fails); the
// formatters Flink builds itself are SMART (2021-02-30 becomes 2021-02-28,
// 24:00:00 is midnight of the next day).

const NanosPerDay = 86400 * int64(time.Second)

type Cursor struct {
	B []byte
	I int
}

func (c *Cursor) Digits(min, max int) (int, bool) {
	v, n := 0, 0
	for c.I < len(c.B) && n < max && c.B[c.I] >= '0' && c.B[c.I] <= '9' {
		v = v*10 + int(c.B[c.I]-'0')
		c.I++
		n++
	}
	return v, n >= min
}

func (c *Cursor) Lit(ch byte) bool {
	if c.I < len(c.B) && c.B[c.I] == ch {
		c.I++
		return true
	}
	return false
}

func (c *Cursor) Done() bool { return c.I == len(c.B) }

// ISOYear reads ISO_LOCAL_DATE's year: 4 digits, or a sign and 4 to 10
// digits ('+' is required above 9999).
func (c *Cursor) ISOYear() (int, bool) {
	neg, signed := false, false
	if c.I < len(c.B) && (c.B[c.I] == '+' || c.B[c.I] == '-') {
		neg, signed = c.B[c.I] == '-', true
		c.I++
	}
	start := c.I
	y, ok := c.Digits(4, 10)
	if !ok {
		return 0, false
	}
	n := c.I - start
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

func DaysIn(y, m int) int {
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

// Date reads yyyy-MM-dd. strict rejects days past the month's end; smart
// clamps them to the last day.
func (c *Cursor) Date(strict bool) (y, m, d int, ok bool) {
	if y, m, d, ok = FixedDate(c.B[c.I:]); ok {
		c.I += 10
	} else if y, m, d, ok = c.DateFields(); !ok {
		return 0, 0, 0, false
	}
	if m < 1 || m > 12 || d < 1 || d > 31 {
		return 0, 0, 0, false
	}
	if dim := DaysIn(y, m); d > dim {
		if strict {
			return 0, 0, 0, false
		}
		d = dim
	}
	return y, m, d, true
}

// DateFields reads yyyy-MM-dd's fields, unchecked.
func (c *Cursor) DateFields() (y, m, d int, ok bool) {
	if y, ok = c.ISOYear(); !ok || !c.Lit('-') {
		return 0, 0, 0, false
	}
	if m, ok = c.Digits(2, 2); !ok || !c.Lit('-') {
		return 0, 0, 0, false
	}
	if d, ok = c.Digits(2, 2); !ok {
		return 0, 0, 0, false
	}
	return y, m, d, true
}

// Fraction reads an optional '.' and 0 to 9 digits, as nanoseconds.
func (c *Cursor) Fraction() (int, bool) {
	if !c.Lit('.') {
		return 0, true
	}
	ns, n := 0, 0
	for c.I < len(c.B) && n < 9 && c.B[c.I] >= '0' && c.B[c.I] <= '9' {
		ns = ns*10 + int(c.B[c.I]-'0')
		c.I++
		n++
	}
	return ns * fracScale[n], true
}

// fracScale[n] makes n digits of a fraction nanoseconds.
var fracScale = [10]int{1e9, 1e8, 1e7, 1e6, 1e5, 1e4, 1e3, 100, 10, 1}

// Clock reads HH:mm[:ss[.f]] (secondsOptional) or HH:mm:ss[.f]. It returns
// nanoseconds of the day, and extra=1 for SMART's 24:00:00.
func (c *Cursor) Clock(secondsOptional, smart bool) (ns int64, extra int, ok bool) {
	if h, mi, s, ok := FixedClock(c.B[c.I:]); ok {
		c.I += 8
		frac, _ := c.Fraction()
		return ClockNanos(h, mi, s, frac, smart)
	}
	h, ok1 := c.Digits(2, 2)
	if !ok1 || !c.Lit(':') {
		return 0, 0, false
	}
	mi, ok2 := c.Digits(2, 2)
	if !ok2 {
		return 0, 0, false
	}
	s, frac := 0, 0
	if c.Lit(':') {
		var ok3 bool
		if s, ok3 = c.Digits(2, 2); !ok3 {
			return 0, 0, false
		}
		if frac, ok3 = c.Fraction(); !ok3 {
			return 0, 0, false
		}
	} else if !secondsOptional {
		return 0, 0, false
	}
	return ClockNanos(h, mi, s, frac, smart)
}

// ClockNanos checks a read clock's fields and returns its nanoseconds of
// the day (extra=1 for SMART's 24:00:00).
func ClockNanos(h, mi, s, frac int, smart bool) (ns int64, extra int, ok bool) {
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

// FixedDate reads the shape nearly every date has, four-digit year
// "yyyy-MM-dd" at b[0:10], in one step; ok false leaves anything else
// (signs, long years, malformed text) to the general reader, which reads
// this shape to the same fields.
func FixedDate(b []byte) (y, m, d int, ok bool) {
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

// FixedClock reads "HH:mm:ss" at b[0:8] in one step, as FixedDate does.
func FixedClock(b []byte) (h, mi, s int, ok bool) {
	if len(b) < 8 || b[2] != ':' || b[5] != ':' {
		return 0, 0, 0, false
	}
	h0, h1, m0, m1, s0, s1 := b[0]-'0', b[1]-'0', b[3]-'0', b[4]-'0', b[6]-'0', b[7]-'0'
	if h0 > 9 || h1 > 9 || m0 > 9 || m1 > 9 || s0 > 9 || s1 > 9 {
		return 0, 0, 0, false
	}
	return int(h0)*10 + int(h1), int(m0)*10 + int(m1), int(s0)*10 + int(s1), true
}

// EpochDays is the proleptic Gregorian day number of y-m-d (1970-01-01 = 0).
func EpochDays(y, m, d int) int64 {
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

// ParseDate is ISO_LOCAL_DATE (strict), as days since the epoch.
func ParseDate(b []byte) (int32, bool) {
	c := Cursor{B: b}
	y, m, d, ok := c.Date(true)
	if !ok || !c.Done() {
		return 0, false
	}
	days := EpochDays(y, m, d)
	if days < math.MinInt32 || days > math.MaxInt32 {
		return 0, false
	}
	return int32(days), true
}

// ParseTime is "HH:mm:ss" with an optional fraction (SMART), as
// nanoseconds of the day. Flink keeps whole seconds only: its caller drops
// the fraction.
func ParseTime(b []byte) (int64, bool) {
	c := Cursor{B: b}
	ns, _, ok := c.Clock(false, true)
	if !ok || !c.Done() {
		return 0, false
	}
	return ns, true
}

// Civil is an instant as a day number (1970-01-01 = 0) and the nanoseconds
// of that day, wall time read as UTC: what the parsers produce, before
// [arrowconv.EpochValue] puts it in the column's unit (which may not hold
// it).
type Civil struct{ Days, NsOfDay int64 }

// ParseTimestamp parses TIMESTAMP (ltz false) or TIMESTAMP_LTZ (ltz true)
// text in the SQL or ISO-8601 standard.
func ParseTimestamp(b []byte, iso, ltz bool) (Civil, bool) {
	c := Cursor{B: b}
	strict := iso && !ltz // ISO_LOCAL_DATE_TIME is STRICT; Flink's own builders are SMART
	y, m, d, ok := c.Date(strict)
	if !ok {
		return Civil{}, false
	}
	sep := byte(' ')
	if iso {
		sep = 'T'
	}
	if !c.Lit(sep) {
		return Civil{}, false
	}
	ns, extra, ok := c.Clock(iso, !strict)
	if !ok {
		return Civil{}, false
	}
	if ltz && !c.Lit('Z') {
		return Civil{}, false
	}
	if !c.Done() {
		return Civil{}, false
	}
	return Civil{EpochDays(y, m, d) + int64(extra), ns}, true
}

// ParseOggCurrentTS parses ogg's current_ts (spec §6): first the pattern
// yyyy-MM-dd'T'HH:mm:ss.SSSSSS truncated to milliseconds, then a
// java.sql.Timestamp-style "yyyy-[m]m-[d]d hh:mm:ss[.f]", then a bare date.
// ok false means NULL (never an error).
func ParseOggCurrentTS(b []byte) (Civil, bool) {
	var c StampCache
	return c.OggCurrentTS(b)
}

// OggCurrentTS is ParseOggCurrentTS through the cache.
func (sc *StampCache) OggCurrentTS(b []byte) (Civil, bool) {
	// The minute of the last one: ":ss.SSSSSS" to the end (26 bytes).
	if sc.hit(b) && len(b) == 26 {
		if s, ok := seconds(b); ok {
			if frac, ok := fractionToEnd(b[19:]); ok {
				ns := sc.ns + int64(s)*1e9 + int64(frac)
				return Civil{sc.days, ns - ns%1e6}, true
			}
		}
	}
	c := Cursor{B: b}
	if y, m, d, ok := c.Date(false); ok && c.Lit('T') {
		// HH:mm:ss.SSSSSS to the end. FixedClock reads exactly what the
		// clock's fields read one by one, and fails where they would
		// (TestFixedDateClockMatchGeneral).
		if h, mi, s, ok := FixedClock(c.B[c.I:]); ok && len(c.B)-c.I == 15 && c.B[c.I+8] == '.' {
			at := c.I
			c.I += 9
			if frac, ok := c.Digits(6, 6); ok && h < 24 && mi < 60 && s < 60 {
				days := EpochDays(y, m, d)
				if at == 11 { // the date was yyyy-MM-dd: the prefix is the minute
					sc.keep(b, days, h, mi)
				}
				ns := int64(h)*3600e9 + int64(mi)*60e9 + int64(s)*1e9 + int64(frac)*1000
				ns -= ns % 1e6
				return Civil{days, ns}, true
			}
		}
	}
	t := Trim(b)
	sp := -1
	for i, ch := range t {
		if ch == ' ' {
			sp = i
			break
		}
	}
	if sp >= 0 {
		y, m, d, ok := SQLDate(t[:sp])
		if !ok {
			return Civil{}, false
		}
		ns, ok := SQLClock(t[sp+1:])
		if !ok {
			return Civil{}, false
		}
		return Civil{EpochDays(y, m, d), ns}, true
	}
	y, m, d, ok := SQLDate(t)
	if !ok {
		return Civil{}, false
	}
	return Civil{EpochDays(y, m, d), 0}, true
}

// StampCache remembers the minute of the last timestamp a parser read in
// GoldenGate's fixed shape: its first 16 bytes ("yyyy-MM-dd HH:mm", or
// with a 'T') and the day and nanoseconds they stand for. The op_ts and
// current_ts of consecutive messages share their minute, so most texts
// are read from their seconds on, with no date to check or count: the
// same instant and verdict as a fresh parse (FuzzStampCache), as whatever
// follows the 16 bytes is read and checked as the full parse would. The
// zero value is empty; one cache serves one field.
type StampCache struct {
	w0, w1 uint64 // the 16 bytes, as little-endian words
	set    bool
	days   int64 // their day (1970-01-01 = 0)
	ns     int64 // the nanoseconds of that day at their minute
}

// hit says that b starts with the remembered 16 bytes and has the three
// of the seconds after them.
func (sc *StampCache) hit(b []byte) bool {
	return sc.set && len(b) >= 19 && binary.LittleEndian.Uint64(b) == sc.w0 && binary.LittleEndian.Uint64(b[8:]) == sc.w1
}

// keep remembers b's first 16 bytes as the minute h:mi of day days (b
// read in the fixed shape: h and mi checked).
func (sc *StampCache) keep(b []byte, days int64, h, mi int) {
	sc.w0, sc.w1, sc.set = binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:]), true
	sc.days, sc.ns = days, int64(h)*3600e9+int64(mi)*60e9
}

// fractionToEnd reads b, all of it, as Fraction followed by Done would: an
// optional '.' and up to nine digits, in nanoseconds. (Cursor's methods
// step through memory; this keeps its state in registers.)
func fractionToEnd(b []byte) (int, bool) {
	if len(b) == 0 {
		return 0, true
	}
	if b[0] != '.' || len(b) > 10 {
		return 0, false
	}
	ns := 0
	for _, ch := range b[1:] {
		d := ch - '0'
		if d > 9 {
			return 0, false
		}
		ns = ns*10 + int(d)
	}
	return ns * pow10ns[len(b)-1], true
}

// pow10ns[n] scales a fraction of n digits to nanoseconds.
var pow10ns = [10]int{1e9, 1e8, 1e7, 1e6, 1e5, 1e4, 1e3, 1e2, 1e1, 1}

// seconds reads the fixed shape's ":ss" at b[16:19] (two digits, below
// 60).
func seconds(b []byte) (int, bool) {
	s0, s1 := b[17]-'0', b[18]-'0'
	s := int(s0)*10 + int(s1)
	return s, b[16] == ':' && s0 <= 9 && s1 <= 9 && s <= 59
}

// SQLDate is java.sql.Date.valueOf: yyyy-[m]m-[d]d.
func SQLDate(b []byte) (y, m, d int, ok bool) {
	c := Cursor{B: b}
	if y, ok = c.Digits(4, 4); !ok || !c.Lit('-') {
		return 0, 0, 0, false
	}
	if m, ok = c.Digits(1, 2); !ok || !c.Lit('-') {
		return 0, 0, 0, false
	}
	if d, ok = c.Digits(1, 2); !ok || !c.Done() {
		return 0, 0, 0, false
	}
	if m < 1 || m > 12 || d < 1 || d > 31 {
		return 0, 0, 0, false
	}
	return y, m, d, true
}

// SQLClock is the time part of java.sql.Timestamp.valueOf: hh:mm:ss[.f{1,9}].
func SQLClock(b []byte) (int64, bool) {
	c := Cursor{B: b}
	h, ok := c.Digits(1, 2)
	if !ok || !c.Lit(':') {
		return 0, false
	}
	mi, ok := c.Digits(1, 2)
	if !ok || !c.Lit(':') {
		return 0, false
	}
	s, ok := c.Digits(1, 2)
	if !ok {
		return 0, false
	}
	frac := 0
	if c.Lit('.') {
		start := c.I
		f, ok := c.Digits(1, 9)
		if !ok {
			return 0, false
		}
		for n := c.I - start; n < 9; n++ {
			f *= 10
		}
		frac = f
	}
	if !c.Done() {
		return 0, false
	}
	return int64(h)*3600e9 + int64(mi)*60e9 + int64(s)*1e9 + int64(frac), true
}

// ParseOggOpTS parses ogg's op_ts: yyyy-M-d with an optional " H:m:s[.f]",
// one or two digits per field, truncated to milliseconds.
func ParseOggOpTS(b []byte) (Civil, bool) {
	var c StampCache
	return c.OggOpTS(b)
}

// OggOpTS is ParseOggOpTS through the cache.
func (sc *StampCache) OggOpTS(b []byte) (Civil, bool) {
	// The minute of the last one: its seconds and fraction to the end.
	if sc.hit(b) {
		if s, ok := seconds(b); ok {
			if frac, ok := fractionToEnd(b[19:]); ok {
				ns := sc.ns + int64(s)*1e9 + int64(frac)
				return Civil{sc.days, ns - ns%1e6}, true
			}
		}
	}
	// The shape GoldenGate writes, "yyyy-MM-dd HH:mm:ss.ffffff", in fixed
	// steps; whatever it does not take, oggOpTS reads (and decides).
	if y, m, d, ok := FixedDate(b); ok && len(b) >= 19 && b[10] == ' ' {
		if h, mi, s, ok := FixedClock(b[11:]); ok {
			c := Cursor{B: b, I: 19}
			frac, _ := c.Fraction()
			if c.Done() && m >= 1 && m <= 12 && d >= 1 && d <= DaysIn(y, m) && h <= 23 && mi <= 59 && s <= 59 {
				days := EpochDays(y, m, d)
				sc.keep(b, days, h, mi)
				ns := int64(h)*3600e9 + int64(mi)*60e9 + int64(s)*1e9 + int64(frac)
				return Civil{days, ns - ns%1e6}, true
			}
		}
	}
	return oggOpTS(b)
}

// oggOpTS is ParseOggOpTS field by field, for any shape.
func oggOpTS(b []byte) (Civil, bool) {
	c := Cursor{B: b}
	y, ok := c.Digits(4, 4)
	if !ok || !c.Lit('-') {
		return Civil{}, false
	}
	m, ok := c.Digits(1, 2)
	if !ok || !c.Lit('-') {
		return Civil{}, false
	}
	d, ok := c.Digits(1, 2)
	if !ok || m < 1 || m > 12 || d < 1 || d > DaysIn(y, m) {
		return Civil{}, false
	}
	var ns int64
	if c.Lit(' ') {
		h, ok1 := c.Digits(1, 2)
		if !ok1 || !c.Lit(':') {
			return Civil{}, false
		}
		mi, ok2 := c.Digits(1, 2)
		if !ok2 || !c.Lit(':') {
			return Civil{}, false
		}
		s, ok3 := c.Digits(1, 2)
		if !ok3 || h > 23 || mi > 59 || s > 59 {
			return Civil{}, false
		}
		frac, _ := c.Fraction()
		ns = int64(h)*3600e9 + int64(mi)*60e9 + int64(s)*1e9 + int64(frac)
		ns -= ns % 1e6
	}
	if !c.Done() {
		return Civil{}, false
	}
	return Civil{EpochDays(y, m, d), ns}, true
}
