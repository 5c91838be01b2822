package decode

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/buger/jsonparser"
	"github.com/twpayne/go-geom/encoding/wkb"
	"github.com/twpayne/go-geom/encoding/wkt"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/internal/javatext"
	"github.com/cdcetl/cdcetl/internal/setting"
)

// Producer semantics (docs/producer-semantics.md): each value decoded as
// its producer meant it. The converters here are chosen once per column
// when a decoder is built (newInner asks newProducerInner first); they
// differ from Flink's where a producer's encoding does. What a message
// itself says about a value (a Debezium field's Connect schema) reaches a
// converter through its column's colEnc, set once per distinct schema.

// logical is how a producer encoded a value of a column.
type logical uint8

const (
	lgText       logical = iota // text or plain JSON numbers (Canal, Maxwell, GoldenGate; Debezium strings)
	lgDays                      // epoch days (io.debezium.time.Date, Connect Date)
	lgMillis                    // epoch or day milliseconds (Timestamp, Time, Connect Timestamp/Time)
	lgMicros                    // MicroTimestamp, MicroTime
	lgNanos                     // NanoTimestamp, NanoTime
	lgDecimalB64                // Connect Decimal: base64 two's complement, scale in the schema
	lgVarDecimal                // VariableScaleDecimal: {"scale": s, "value": base64}
	lgDouble                    // decimal.handling.mode=double
	lgGeometry                  // io.debezium.data.geometry.*: {"wkb": base64, "srid": n}
)

// colEnc is a column's encoding in the current message.
type colEnc struct {
	kind  logical
	scale int // lgDecimalB64: the value's scale
}

// defaultEnc is how a producer writes a value of type t when the message
// says nothing: Debezium's connector settings (decimal.handling.mode,
// time.precision.mode) for debezium-json, text for the others.
func defaultEnc(tr traits, o *Options, t arrowconv.Type) colEnc {
	if !tr.connect {
		return colEnc{}
	}
	switch t.Kind {
	case arrowconv.Decimal:
		switch o.DecimalHandling {
		case "string":
			return colEnc{}
		case "double":
			return colEnc{kind: lgDouble}
		}
		return colEnc{kind: lgDecimalB64, scale: t.Scale}
	case arrowconv.Date:
		return colEnc{kind: lgDays}
	case arrowconv.Time:
		switch {
		case o.TimePrecision == "connect":
			return colEnc{kind: lgMillis}
		case o.TimePrecision == "adaptive_time_microseconds":
			return colEnc{kind: lgMicros}
		}
		return colEnc{kind: adaptive(t.Precision)}
	case arrowconv.Timestamp, arrowconv.TimestampLTZ:
		if o.TimePrecision == "connect" {
			return colEnc{kind: lgMillis}
		}
		return colEnc{kind: adaptive(t.Precision)}
	}
	return colEnc{}
}

// adaptive is time.precision.mode=adaptive: the unit follows the source
// column's precision (0-3 ms, 4-6 µs, 7-9 ns).
func adaptive(p int) logical {
	switch {
	case p <= 3:
		return lgMillis
	case p <= 6:
		return lgMicros
	}
	return lgNanos
}

// unitOf is the nanoseconds in one count of an epoch encoding.
func unitOf(k logical) int64 {
	switch k {
	case lgMillis:
		return 1e6
	case lgMicros:
		return 1e3
	case lgNanos:
		return 1
	}
	return 0
}

// producerCtx is the producer part of a convCtx.
type producerCtx struct {
	opts        *Options
	placeholder []byte // Debezium's unavailable value, and its base64 form for bytes columns
	placeB64    []byte
	scratch     []byte
	geom        []byte
}

// newProducerInner returns the producer converter for typ appending to
// col, or nil where Flink's converter is the producer's too. enc is the
// column's encoding (nil for nested values: their type's default).
func (cx *convCtx) newProducerInner(typ arrowconv.Type, col arrowconv.Column, enc *colEnc) conv {
	p := cx.prod
	if enc == nil {
		e := defaultEnc(cx.traits, p.opts, typ)
		enc = &e
	}
	name := typ.String()
	switch typ.Kind {
	case arrowconv.Boolean:
		c := col.(*arrowconv.BoolCol)
		return func(v []byte, t jsonparser.ValueType) error {
			v, t = cx.unwrapMongo(v, t)
			switch t {
			case jsonparser.Boolean:
				c.Append(v[0] == 't')
				return nil
			case jsonparser.Number:
				f, ok := javatext.ParseFloat(v, 64)
				if !ok {
					return cx.fail(v, name, "")
				}
				c.Append(f != 0) // MySQL's tinyint(1)/bit(1)/bool: any non-zero is true
				return nil
			case jsonparser.String:
				s := javatext.Trim(cx.textOf(v, t))
				switch {
				case len(s) == 1 && (s[0] == '1' || s[0]|0x20 == 't'):
					c.Append(true)
					return nil
				case len(s) == 1 && (s[0] == '0' || s[0]|0x20 == 'f'):
					c.Append(false)
					return nil
				case bytes.EqualFold(s, []byte("true")):
					c.Append(true)
					return nil
				case bytes.EqualFold(s, []byte("false")):
					c.Append(false)
					return nil
				}
				if n, ok := javatext.ParseInt(s, 64); ok {
					c.Append(n != 0)
					return nil
				}
			}
			return cx.fail(v, name, "want true/false, or a number (MySQL's tinyint(1): non-zero is true)")
		}
	case arrowconv.TinyInt, arrowconv.SmallInt, arrowconv.Int, arrowconv.BigInt:
		bits := map[arrowconv.Kind]int{arrowconv.TinyInt: 8, arrowconv.SmallInt: 16, arrowconv.Int: 32, arrowconv.BigInt: 64}[typ.Kind]
		lo, hi := -int64(1)<<(bits-1), int64(1)<<(bits-1)-1
		if bits == 64 {
			lo, hi = math.MinInt64, math.MaxInt64
		}
		put := intAppender(col)
		outside := fmt.Sprintf("outside %s's range (%d to %d)", name, lo, hi)
		if bits == 64 {
			outside += ": a bigint unsigned column needs DECIMAL(20, 0)"
		}
		general := func(v []byte, t jsonparser.ValueType) error {
			v, t = cx.unwrapMongo(v, t)
			var s []byte
			switch t {
			case jsonparser.Number:
				s = v
			case jsonparser.String:
				s = javatext.Trim(cx.textOf(v, t))
			case jsonparser.Boolean:
				put(map[bool]int64{false: 0, true: 1}[v[0] == 't'])
				return nil
			default:
				return cx.fail(v, name, "")
			}
			n, ok := javatext.ParseInt(s, 64)
			if !ok {
				if _, err := strconv.ParseInt(string(s), 10, 64); err != nil && err.(*strconv.NumError).Err == strconv.ErrRange {
					return cx.fail(v, name, outside)
				}
				if !cx.dec.Parse(s) {
					return cx.fail(v, name, "not an integer")
				}
				return cx.fail(v, name, "not a whole number")
			}
			if n < lo || n > hi {
				return cx.fail(v, name, outside)
			}
			put(n)
			return nil
		}
		return producerIntFast(cx, col, bits, general)
	case arrowconv.Float, arrowconv.Double:
		bits := 64
		if typ.Kind == arrowconv.Float {
			bits = 32
		}
		put := floatAppender(col)
		return func(v []byte, t jsonparser.ValueType) error {
			v, t = cx.unwrapMongo(v, t)
			if t == jsonparser.Boolean {
				v, t = boolNumber(v) // 1 or 0, as in the integers
			}
			if t != jsonparser.Number && t != jsonparser.String {
				return cx.fail(v, name, "")
			}
			text := v // a number literal is its own text
			if t == jsonparser.String {
				text = javatext.Trim(cx.textOf(v, t))
			}
			if bits == 64 && cx.shortcuts() { // tests: the general path for every value
				// Short decimals (most values), as the Flink DOUBLE
				// converter reads them: the general path takes a string
				// allocation and strconv's parser per value.
				if f, ok := javatext.ShortDecimalFloat(text); ok {
					put(f)
					return nil
				}
			}
			f, ok := javatext.ParseFloat(text, bits)
			if !ok {
				return cx.fail(v, name, "")
			}
			put(f)
			return nil
		}
	case arrowconv.Decimal:
		c := col.(*arrowconv.FixedCol[decimal128.Num])
		prec, scale := typ.Precision, typ.Scale
		return func(v []byte, t jsonparser.ValueType) error {
			v, t = cx.unwrapMongo(v, t)
			if t == jsonparser.Boolean {
				v, t = boolNumber(v) // 1 or 0, as in the integers
			}
			n, err := cx.producerDecimal(v, t, enc, prec, scale, name)
			if err != nil {
				return err
			}
			c.Append(n)
			return nil
		}
	case arrowconv.Char, arrowconv.VarChar, arrowconv.String:
		if !cx.mongo {
			return nil // Flink's rule: content, and compact JSON text for containers
		}
		flink := cx.newFlinkInner(typ, col)
		return func(v []byte, t jsonparser.ValueType) error {
			v, t = cx.unwrapMongo(v, t)
			return flink(v, t)
		}
	case arrowconv.Binary, arrowconv.VarBinary, arrowconv.Bytes:
		c := col.(*arrowconv.BytesCol)
		return func(v []byte, t jsonparser.ValueType) error {
			v, t = cx.unwrapMongo(v, t)
			b, err := cx.producerBytes(v, t, enc, name)
			if err != nil {
				return err
			}
			c.Append(b)
			return nil
		}
	case arrowconv.Date:
		c := col.(*arrowconv.FixedCol[int32])
		return func(v []byte, t jsonparser.ValueType) error {
			v, t = cx.unwrapMongo(v, t)
			switch t {
			case jsonparser.Number:
				if enc.kind != lgDays {
					return cx.failHint(v, name, "an epoch number", dateHint(v, t))
				}
				n, ok := javatext.ParseInt(v, 32)
				if !ok {
					return cx.fail(v, name, "outside the epoch days DATE can hold")
				}
				c.Append(int32(n))
				return nil
			case jsonparser.String:
				pt, ok := parseProducerTime(cx.textOf(v, t))
				switch {
				case ok && pt.zero:
					cx.zeroDates++
					c.AppendNull()
					return nil
				case ok && pt.nsOfDay == 0 && !pt.hasZone:
					if pt.days < math.MinInt32 || pt.days > math.MaxInt32 {
						return cx.fail(v, name, "outside DATE's range")
					}
					c.Append(int32(pt.days))
					return nil
				case ok:
					return cx.fail(v, name, "the value has a time of day: declare the column TIMESTAMP")
				}
			}
			return cx.fail(v, name, "expected yyyy-MM-dd")
		}
	case arrowconv.Time:
		put := timeAppender(typ, col)
		keep := arrowconv.UnitNanos(arrowconv.TimeUnit(typ.Precision))
		if typ.Precision < 9 {
			keep = int64(math.Pow10(9 - typ.Precision)) // the fraction up to the precision
		}
		return func(v []byte, t jsonparser.ValueType) error {
			v, t = cx.unwrapMongo(v, t)
			var ns int64
			switch t {
			case jsonparser.Number:
				u := unitOf(enc.kind)
				n, ok := javatext.ParseInt(v, 64)
				if u == 0 || !ok {
					return cx.fail(v, name, "an epoch number needs Debezium's time encoding (time.precision.mode)")
				}
				if ns, ok = mulCheck(n, u); !ok || ns < 0 || ns >= javatext.NanosPerDay {
					return cx.fail(v, name, "outside a day (00:00:00 to 23:59:59.999999999): MySQL TIME intervals need BIGINT")
				}
			case jsonparser.String:
				var ok bool
				if ns, ok = parseProducerClock(cx.textOf(v, t)); !ok {
					return cx.fail(v, name, "expected HH:mm:ss[.f] within a day (MySQL TIME intervals past 24 hours or negative need a STRING or BIGINT column)")
				}
			default:
				return cx.fail(v, name, "")
			}
			put(ns - ns%keep)
			return nil
		}
	case arrowconv.Timestamp, arrowconv.TimestampLTZ:
		c, ltz, unit, outside := timestampTarget(typ, col)
		tz := p.opts.SourceTZ
		return func(v []byte, t jsonparser.ValueType) error {
			v, t = cx.unwrapMongo(v, t)
			switch t {
			case jsonparser.Number:
				u := unitOf(enc.kind)
				if u == 0 {
					if !cx.traits.connect {
						return cx.failHint(v, name, "an epoch number", timestampHint(cx.format, v, t, cx.iso, ltz))
					}
					u = 1e6 // MongoDB $date: epoch milliseconds
				}
				n, ok := javatext.ParseInt(v, 64)
				if !ok {
					if _, err := strconv.ParseInt(string(v), 10, 64); err != nil && err.(*strconv.NumError).Err == strconv.ErrRange {
						return cx.fail(v, name, fmt.Sprintf("epoch %s %s is %s", unitName(u), v, outside))
					}
					return cx.fail(v, name, "not a whole epoch number")
				}
				ts, ok := arrowconv.EpochScale(n, u, unit)
				if !ok {
					return cx.fail(v, name, fmt.Sprintf("epoch %s %d is %s", unitName(u), n, outside))
				}
				c.Append(ts)
				return nil
			case jsonparser.String:
				pt, ok := parseProducerTime(cx.textOf(v, t))
				if !ok {
					return cx.failHint(v, name, "expected yyyy-MM-dd[ T:]HH:mm[:ss[.f]] with an optional zone", "")
				}
				if pt.zero {
					cx.zeroDates++
					c.AppendNull()
					return nil
				}
				days, nod := pt.days, pt.nsOfDay
				switch {
				case pt.hasZone:
					days, nod = shiftCivil(days, nod, -int64(pt.offset)*1e9) // to UTC
				case ltz && tz != nil && tz != time.UTC:
					days, nod = shiftCivil(days, nod, -zoneOffset(tz, days, nod)*1e9)
				}
				ts, ok := arrowconv.EpochValue(days, nod, unit)
				if !ok {
					return cx.fail(v, name, outside)
				}
				c.Append(ts)
				return nil
			}
			return cx.fail(v, name, "")
		}
	}
	return nil
}

func mulCheck(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	r := a * b
	if r/b != a {
		return 0, false
	}
	return r, true
}

func unitName(u int64) string {
	switch u {
	case 1e6:
		return "milliseconds"
	case 1e3:
		return "microseconds"
	}
	return "nanoseconds"
}

// intAppender appends an int64 to a TINYINT..BIGINT column.
func intAppender(col arrowconv.Column) func(int64) {
	switch c := col.(type) {
	case *arrowconv.FixedCol[int8]:
		return func(n int64) { c.Append(int8(n)) }
	case *arrowconv.FixedCol[int16]:
		return func(n int64) { c.Append(int16(n)) }
	case *arrowconv.FixedCol[int32]:
		return func(n int64) { c.Append(int32(n)) }
	}
	c := col.(*arrowconv.FixedCol[int64])
	return func(n int64) { c.Append(n) }
}

// floatAppender appends a double to a FLOAT (narrowed) or DOUBLE column.
func floatAppender(col arrowconv.Column) func(float64) {
	if c, ok := col.(*arrowconv.FixedCol[float32]); ok {
		return func(f float64) { c.Append(float32(f)) }
	}
	c := col.(*arrowconv.FixedCol[float64])
	return func(f float64) { c.Append(f) }
}

// boolNumber is a JSON boolean as the number MySQL stores for it (1 or
// 0): inference joins booleans with numbers into the numbers' type.
func boolNumber(v []byte) ([]byte, jsonparser.ValueType) {
	if v[0] == 't' {
		return numberOne, jsonparser.Number
	}
	return numberZero, jsonparser.Number
}

var numberOne, numberZero = []byte("1"), []byte("0")

// producerDecimal reads a DECIMAL(prec, scale) value as the producer wrote
// it: a JSON number or decimal text, Debezium's base64 two's-complement
// bytes (Connect Decimal, decimal.handling.mode=precise) or
// {"scale", "value"} (VariableScaleDecimal). It rounds HALF_UP to scale;
// a value with more than prec digits is an error (Flink makes it NULL).
func (cx *convCtx) producerDecimal(v []byte, t jsonparser.ValueType, enc *colEnc, prec, scale int, name string) (decimal128.Num, error) {
	switch {
	case t == jsonparser.Object:
		sv, _, _, err1 := jsonparser.Get(v, "scale")
		bv, bt, _, err2 := jsonparser.Get(v, "value")
		s, ok := javatext.ParseInt(sv, 32)
		if err1 != nil || err2 != nil || !ok || bt != jsonparser.String {
			return decimal128.Num{}, cx.fail(v, name, `a variable-scale decimal needs {"scale": n, "value": base64}`)
		}
		return cx.decimalFromBase64(v, bv, int(s), prec, scale, name)
	case t == jsonparser.String && enc.kind == lgDecimalB64:
		// In precise mode every string is base64 ("1234" too): decimal text
		// means decimal.handling.mode=string, which the schema or the
		// option says.
		return cx.decimalFromBase64(v, cx.textOf(v, t), enc.scale, prec, scale, name)
	case t != jsonparser.Number && t != jsonparser.String:
		return decimal128.Num{}, cx.fail(v, name, "")
	}
	text := v // a number literal is its own text (textOf would canonicalize it)
	if t == jsonparser.String {
		text = cx.textOf(v, t)
	}
	if u, ok := javatext.ShortDecimal(text, prec, scale); ok {
		return decimal128.FromI64(u), nil // the usual short literal, exact
	}
	if !cx.dec.Parse(javatext.Trim(text)) {
		return decimal128.Num{}, cx.failHint(v, name, "", decimalHint(text, t))
	}
	n, ok := cx.dec.ToDecimal128(prec, scale)
	if !ok {
		return decimal128.Num{}, cx.fail(v, name, fmt.Sprintf("more than %d digits (%d after the point)", prec, scale))
	}
	return n, nil
}

// decimalFromBase64 reads base64 two's-complement big-endian bytes holding
// an unscaled value of scale from, and rescales it to DECIMAL(prec, to).
func (cx *convCtx) decimalFromBase64(v, b64 []byte, from, prec, to int, name string) (decimal128.Num, error) {
	raw, err := base64.StdEncoding.DecodeString(string(b64))
	if err != nil || len(raw) == 0 {
		return decimal128.Num{}, cx.failHint(v, name, "not base64, as decimal.handling.mode=precise writes decimals",
			"for decimal text set "+setting.Option.String()+" debezium-json.decimal.handling.mode=string (or send the schema: schema-include)")
	}
	u := new(big.Int).SetBytes(raw)
	if raw[0]&0x80 != 0 { // negative: two's complement
		u.Sub(u, new(big.Int).Lsh(big.NewInt(1), uint(8*len(raw))))
	}
	n, ok := rescaleHalfUp(u, from, to, prec)
	if !ok {
		return decimal128.Num{}, cx.fail(v, name, fmt.Sprintf("%s has more than %d digits", new(big.Float).SetInt(u).Text('g', 40), prec))
	}
	return n, nil
}

// rescaleHalfUp turns unscaled u at scale from into scale to, rounding
// HALF_UP, and checks it fits precision prec.
func rescaleHalfUp(u *big.Int, from, to, prec int) (decimal128.Num, bool) {
	u = new(big.Int).Set(u)
	if to > from {
		u.Mul(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(to-from)), nil))
	} else if to < from {
		div := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(from-to)), nil)
		q, r := new(big.Int).QuoRem(u, div, new(big.Int))
		if new(big.Int).Mul(new(big.Int).Abs(r), big.NewInt(2)).Cmp(div) >= 0 {
			if u.Sign() < 0 {
				q.Sub(q, big.NewInt(1))
			} else {
				q.Add(q, big.NewInt(1))
			}
		}
		u = q
	}
	lim := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(prec)), nil)
	if new(big.Int).Abs(u).Cmp(lim) >= 0 {
		return decimal128.Num{}, false
	}
	return decimal128.FromBigInt(u), true
}

// producerBytes reads a BYTES value as the producer wrote it: Canal's
// ISO-8859-1 text (MySQL's own geometry form, an SRID then WKB, stays as
// it is), base64 for the others, Debezium's geometry struct as its WKB,
// Maxwell's geometry WKT as WKB.
func (cx *convCtx) producerBytes(v []byte, t jsonparser.ValueType, enc *colEnc, name string) ([]byte, error) {
	p := cx.prod
	if t == jsonparser.Object {
		wkbv, wt, _, err := jsonparser.Get(v, "wkb")
		if err != nil || wt != jsonparser.String {
			return nil, cx.fail(v, name, `an object here must be a Debezium geometry {"wkb": base64, "srid": n}`)
		}
		b, err := base64.StdEncoding.DecodeString(string(wkbv))
		if err != nil {
			return nil, cx.fail(v, name, "wkb is not base64")
		}
		return b, nil
	}
	if t != jsonparser.String {
		return nil, cx.fail(v, name, "")
	}
	s := cx.textOf(v, t)
	if cx.traits.latin1Binary {
		// Canal writes binary values as ISO-8859-1 text: each char one byte.
		out := p.scratch[:0]
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRune(s[i:])
			if r > 0xFF || (r == utf8.RuneError && n == 1) {
				return nil, cx.fail(v, name, "not ISO-8859-1 text (Canal writes binary values as ISO-8859-1)")
			}
			out = append(out, byte(r))
			i += n
		}
		p.scratch = out
		if enc.kind == lgGeometry && len(out) >= 4 {
			return out[4:], nil // MySQL's SRID prefix; the rest is WKB
		}
		return out, nil
	}
	if cx.traits.wktGeometry && looksWKT(s) {
		g, err := wkt.Unmarshal(string(s))
		if err != nil {
			return nil, cx.fail(v, name, "not WKT: "+err.Error())
		}
		b, err := wkb.Marshal(g, binary.LittleEndian)
		if err != nil {
			return nil, cx.fail(v, name, err.Error())
		}
		return b, nil
	}
	out := p.scratch[:0]
	n := base64.StdEncoding.DecodedLen(len(s))
	if cap(out) < n {
		out = make([]byte, n)
	}
	m, err := base64.StdEncoding.Decode(out[:n], s)
	if err != nil {
		return nil, cx.fail(v, name, "invalid base64")
	}
	p.scratch = out
	return out[:m], nil
}

// looksWKT reports whether s starts like well-known text (POINT(...), ...).
func looksWKT(s []byte) bool {
	i := bytes.IndexByte(s, '(')
	if i <= 0 {
		return bytes.HasSuffix(bytes.ToUpper(s), []byte(" EMPTY"))
	}
	for _, c := range bytes.TrimSpace(s[:i]) {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == ' ') {
			return false
		}
	}
	return true
}

// unwrapMongo unwraps MongoDB extended JSON (Debezium's MongoDB
// connector): {"$oid": h}, {"$numberLong": n}, {"$numberInt": n},
// {"$numberDouble": n}, {"$numberDecimal": n}, {"$date": ...},
// {"$binary": {"base64": b}} (or the legacy {"$binary": b, "$type": t}),
// {"$symbol": s}: the value inside, as the JSON type it stands for.
func (cx *convCtx) unwrapMongo(v []byte, t jsonparser.ValueType) ([]byte, jsonparser.ValueType) {
	if t == jsonparser.Object && cx.mongo {
		return cx.unwrapMongoObject(v)
	}
	return v, t // inlined: every producer value asks, few are Mongo's wrappers
}

func (cx *convCtx) unwrapMongoObject(v []byte) ([]byte, jsonparser.ValueType) {
	t := jsonparser.Object
	i := skipWS(v, 1)
	if i+2 >= len(v) || v[i] != '"' || v[i+1] != '$' {
		return v, t
	}
	var key string
	var iv []byte
	var it jsonparser.ValueType
	n := 0
	jsonparser.ObjectEach(v, func(k, kv []byte, kt jsonparser.ValueType, _ int) error {
		if n == 0 {
			key, iv, it = string(k), kv, kt
		}
		n++
		return nil
	})
	switch key {
	case "$oid", "$symbol":
		return iv, jsonparser.String
	case "$numberLong", "$numberInt", "$numberDouble", "$numberDecimal":
		return iv, jsonparser.Number // numeric text, read as a JSON number is
	case "$date":
		if it == jsonparser.Object {
			return cx.unwrapMongo(iv, it)
		}
		return iv, it
	case "$binary":
		if it == jsonparser.Object {
			b, bt, _, err := jsonparser.Get(iv, "base64")
			if err == nil {
				return b, bt
			}
		}
		return iv, it
	}
	return v, t
}

// producerTime is a date, date-time or instant as producers write them.
type producerTime struct {
	days, nsOfDay int64
	hasZone       bool
	offset        int  // seconds east of UTC, with hasZone
	zero          bool // MySQL's zero date or a zero month or day
}

// parseProducerTime reads yyyy-MM-dd, optionally followed by ' ', 'T' or
// GoldenGate's ':' and HH:mm[:ss[.f{1,9}]], and a zone: Z, ±hh, ±hh:mm,
// ±hhmm. A year, month or day of zeros is MySQL's zero date.
func parseProducerTime(b []byte) (producerTime, bool) { return readProducerTime(b, true) }

// readProducerTime is parseProducerTime; fast false leaves out the one-step
// reading of the common shape (FuzzProducerTime compares the two).
func readProducerTime(b []byte, fast bool) (producerTime, bool) {
	// The shape nearly every value has, read in one step: yyyy-MM-dd, then
	// ' ', 'T' or ':' and HH:mm:ss, a fraction, no zone.
	if y, m, d, ok := javatext.FixedDate(b); fast && ok && m >= 1 && m <= 12 && d >= 1 && d <= javatext.DaysIn(y, m) {
		if len(b) == 10 {
			return producerTime{days: javatext.EpochDays(y, m, d)}, true
		}
		if len(b) >= 19 && (b[10] == ' ' || b[10] == 'T' || b[10] == ':') {
			if h, mi, s, ok := javatext.FixedClock(b[11:]); ok && h <= 23 && mi <= 59 && s <= 59 {
				c := javatext.Cursor{B: b, I: 19}
				frac, _ := c.Fraction()
				if c.Done() {
					return producerTime{days: javatext.EpochDays(y, m, d), nsOfDay: int64(h)*3600e9 + int64(mi)*60e9 + int64(s)*1e9 + int64(frac)}, true
				}
			}
		}
	}
	var pt producerTime
	c := javatext.Cursor{B: b}
	y, ok1 := c.Digits(4, 4)
	if !ok1 || !c.Lit('-') {
		return pt, false
	}
	m, ok2 := c.Digits(2, 2)
	if !ok2 || !c.Lit('-') {
		return pt, false
	}
	d, ok3 := c.Digits(2, 2)
	if !ok3 {
		return pt, false
	}
	if m == 0 || d == 0 {
		pt.zero = true // 0000-00-00, and MySQL's partial zero dates
	} else if m > 12 || d > javatext.DaysIn(y, m) {
		return pt, false
	}
	if !c.Done() {
		if !(c.Lit(' ') || c.Lit('T') || c.Lit(':')) {
			return pt, false
		}
		h, okh := c.Digits(2, 2)
		if !okh || !c.Lit(':') {
			return pt, false
		}
		mi, okm := c.Digits(2, 2)
		if !okm {
			return pt, false
		}
		s, frac := 0, 0
		if c.Lit(':') {
			var oks bool
			if s, oks = c.Digits(2, 2); !oks {
				return pt, false
			}
			frac, _ = c.Fraction()
		}
		if h > 23 || mi > 59 || s > 59 {
			return pt, false
		}
		pt.nsOfDay = int64(h)*3600e9 + int64(mi)*60e9 + int64(s)*1e9 + int64(frac)
	}
	if !c.Done() {
		off, ok := parseZone(b[c.I:])
		if !ok {
			return pt, false
		}
		pt.hasZone, pt.offset = true, off
	}
	if !pt.zero {
		pt.days = javatext.EpochDays(y, m, d)
	}
	return pt, true
}

// producerCivil is parseProducerTime as an instant in UTC (a zone applied;
// no zone: the text is UTC), for timestamp metadata; zero dates fail.
func producerCivil(b []byte) (javatext.Civil, bool) {
	pt, ok := parseProducerTime(b)
	if !ok || pt.zero {
		return javatext.Civil{}, false
	}
	days, nod := pt.days, pt.nsOfDay
	if pt.hasZone {
		days, nod = shiftCivil(days, nod, -int64(pt.offset)*1e9)
	}
	return javatext.Civil{Days: days, NsOfDay: nod}, true
}

// parseZone reads Z, ±hh, ±hh:mm, ±hhmm (and ±hh:mm:ss) as seconds east
// of UTC.
func parseZone(b []byte) (int, bool) {
	if len(b) == 1 && (b[0] == 'Z' || b[0] == 'z') {
		return 0, true
	}
	if len(b) < 3 || (b[0] != '+' && b[0] != '-') {
		return 0, false
	}
	c := javatext.Cursor{B: b[1:]}
	h, ok := c.Digits(2, 2)
	if !ok {
		return 0, false
	}
	m, s := 0, 0
	if !c.Done() {
		c.Lit(':')
		if m, ok = c.Digits(2, 2); !ok {
			return 0, false
		}
		if !c.Done() {
			if !c.Lit(':') {
				return 0, false
			}
			if s, ok = c.Digits(2, 2); !ok || !c.Done() {
				return 0, false
			}
		}
	}
	if h > 18 || m > 59 || s > 59 {
		return 0, false
	}
	off := h*3600 + m*60 + s
	if b[0] == '-' {
		off = -off
	}
	return off, true
}

// parseProducerClock reads HH:mm[:ss[.f]] with an optional zone (Debezium's
// ZonedTime), as nanoseconds of the day in UTC.
func parseProducerClock(b []byte) (int64, bool) {
	c := javatext.Cursor{B: b}
	h, ok1 := c.Digits(2, 2)
	if !ok1 || !c.Lit(':') {
		return 0, false
	}
	mi, ok2 := c.Digits(2, 2)
	if !ok2 {
		return 0, false
	}
	s, frac := 0, 0
	if c.Lit(':') {
		var ok bool
		if s, ok = c.Digits(2, 2); !ok {
			return 0, false
		}
		frac, _ = c.Fraction()
	}
	if h > 23 || mi > 59 || s > 59 {
		return 0, false
	}
	ns := int64(h)*3600e9 + int64(mi)*60e9 + int64(s)*1e9 + int64(frac)
	if !c.Done() {
		off, ok := parseZone(b[c.I:])
		if !ok {
			return 0, false
		}
		ns = ((ns-int64(off)*1e9)%javatext.NanosPerDay + javatext.NanosPerDay) % javatext.NanosPerDay
	}
	return ns, true
}

// shiftCivil adds ns nanoseconds to a day and time of day.
func shiftCivil(days, nod, ns int64) (int64, int64) {
	nod += ns
	days += floorDiv(nod, javatext.NanosPerDay)
	nod -= floorDiv(nod, javatext.NanosPerDay) * javatext.NanosPerDay
	return days, nod
}

// zoneOffset is the offset (seconds east of UTC) of zone tz at the wall
// time days+nod: the offset in force then (the earlier one in a gap or an
// overlap, as time.Date resolves them).
func zoneOffset(tz *time.Location, days, nod int64) int64 {
	sec := days*86400 + nod/1e9
	wall := time.Unix(sec, 0).UTC()
	t := time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), 0, tz)
	_, off := t.Zone()
	return int64(off)
}

// unchanged tracks, for the row being emitted, the columns whose values
// the producer did not send: Debezium's unavailable-value placeholder
// (Postgres TOAST), and under an update or a delete a key missing from the
// image (GoldenGate compressed images, Maxwell's binlog_row_image=MINIMAL).
// Such a column is NULL in the row and listed in unchanged-columns, so a
// merge keeps the old value.
type unchanged struct {
	cols        []bool // per column, for the current row
	absent      bool   // the current row is an update or delete image
	placeholder []byte
	placeB64    []byte
}

// not reports whether the value v (t) is one the producer did not send.
func (u *unchanged) not(v []byte, t jsonparser.ValueType) bool {
	switch t {
	case jsonparser.NotExist:
		return u.absent
	case jsonparser.String:
		return len(u.placeholder) > 0 && (bytes.Equal(v, u.placeholder) || bytes.Equal(v, u.placeB64))
	case jsonparser.Array:
		// A Postgres array that was not sent: the placeholder as its element.
		inner := bytes.TrimSpace(v[1 : len(v)-1])
		return len(u.placeholder) > 0 && len(inner) == len(u.placeholder)+2 && inner[0] == '"' && bytes.Equal(inner[1:len(inner)-1], u.placeholder)
	}
	return false
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// producerIntFast puts an INT or BIGINT column's integers (most of its
// values: JSON numbers, or Canal's text) straight into it, as general
// would: what ParseInt takes at the column's width is in range and is
// its own text (a string with escapes or blanks around is not taken, and
// general unescapes and trims it). Anything else, and every value
// without shortcuts (the fuzz twins compare the two), goes to general.
// Half of the producer integer's work was its general path's frame, the
// Mongo test and the appender's call.
func producerIntFast(cx *convCtx, col arrowconv.Column, bits int, general conv) conv {
	switch c := col.(type) {
	case *arrowconv.FixedCol[int32]:
		if bits == 32 {
			return intLiterals(cx, c, bits, general)
		}
	case *arrowconv.FixedCol[int64]:
		if bits == 64 {
			return intLiterals(cx, c, bits, general)
		}
	}
	return general
}

// intLiterals is producerIntFast's converter for a column of T (bits wide).
func intLiterals[T int32 | int64](cx *convCtx, c *arrowconv.FixedCol[T], bits int, general conv) conv {
	return func(v []byte, t jsonparser.ValueType) error {
		if (t == jsonparser.Number || t == jsonparser.String) && cx.shortcuts() {
			if n, ok := javatext.ParseInt(v, bits); ok {
				c.Append(T(n))
				return nil
			}
		}
		return general(v, t)
	}
}
