package decode

import (
	"encoding/base64"
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/buger/jsonparser"
	"pgregory.net/rapid"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// twosComplement is how Kafka Connect's Decimal writes an unscaled value:
// big-endian two's complement in the fewest bytes.
func twosComplement(u *big.Int) []byte {
	if u.Sign() >= 0 {
		b := u.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	n := (u.BitLen() + 8) / 8 // room for the sign bit
	m := new(big.Int).Add(u, new(big.Int).Lsh(big.NewInt(1), uint(8*n)))
	b := m.Bytes()
	for len(b) < n {
		b = append([]byte{0xff}, b...)
	}
	// The fewest bytes: drop a leading 0xff while the sign stays.
	for len(b) > 1 && b[0] == 0xff && b[1]&0x80 != 0 {
		b = b[1:]
	}
	return b
}

// producerDecoder returns a decoder of format under producer semantics,
// with options kv (and what set sets), for the columns schema, and its
// builder (the caller releases it).
func producerDecoder(t interface{ Fatal(...any) }, format, schema string, kv map[string]string, set ...func(*Options)) (Decoder, *arrowconv.Builder) {
	f, _ := Lookup(format)
	s, err := arrowconv.ParseColumns(schema)
	if err != nil {
		t.Fatal(err)
	}
	o, err := ParseOptions(f, kv, false)
	if err != nil {
		t.Fatal(err)
	}
	o.Producer = true
	for _, fn := range set {
		fn(&o)
	}
	if err := o.Check(f); err != nil {
		t.Fatal(err)
	}
	b := arrowconv.NewBuilder(memory.NewGoAllocator(), s)
	d, err := New(f, s, o, b)
	if err != nil {
		b.Release()
		t.Fatal(err)
	}
	return d, b
}

// decodeOne decodes msg as debezium-json with producer semantics and
// returns the batch (which the caller releases).
func decodeOne(t *rapid.T, schema string, msg string, kv map[string]string) arrow.RecordBatch {
	d, b := producerDecoder(t, "debezium-json", schema, kv)
	defer b.Release()
	if _, err := d.Decode([]byte(msg)); err != nil {
		t.Fatalf("%s: %v", msg, err)
	}
	return b.Flush()
}

// TestDebeziumDecimalProperty: any DECIMAL(p, s) value, written as
// Debezium writes it (base64 two's complement at the source scale, in the
// schema or implied by the column), decodes back to the same value, rounded
// HALF_UP when the column's scale is smaller.
func TestDebeziumDecimalProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := rapid.IntRange(1, 38).Draw(t, "precision")
		s := rapid.IntRange(0, p).Draw(t, "scale")
		digits := rapid.IntRange(1, p).Draw(t, "digits")
		u := new(big.Int)
		for i := 0; i < digits; i++ {
			u.Mul(u, big.NewInt(10))
			u.Add(u, big.NewInt(int64(rapid.IntRange(0, 9).Draw(t, fmt.Sprintf("d%d", i)))))
		}
		if rapid.Bool().Draw(t, "negative") {
			u.Neg(u)
		}
		b64 := base64.StdEncoding.EncodeToString(twosComplement(u))
		// Without a schema the source scale is the column's.
		rec := decodeOne(t, fmt.Sprintf("v DECIMAL(%d, %d)", p, s), `{"before":null,"after":{"v":"`+b64+`"},"op":"c"}`, nil)
		got := rec.Column(1).(*array.Decimal128).Value(0)
		rec.Release()
		if want := decimal128.FromBigInt(u); got != want {
			t.Fatalf("DECIMAL(%d, %d) %s (%s): got %s", p, s, u, b64, got.BigInt())
		}
		// With a schema at another scale: rescaled HALF_UP to the column's.
		from := rapid.IntRange(0, 10).Draw(t, "sourceScale")
		schema := fmt.Sprintf(`{"type":"struct","fields":[{"type":"struct","field":"after","fields":[{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"%d"},"field":"v"}]}]}`, from)
		want, ok := rescaleHalfUp(u, from, s, p)
		if !ok {
			return // more digits than the column holds: an error, checked elsewhere
		}
		rec = decodeOne(t, fmt.Sprintf("v DECIMAL(%d, %d)", p, s), `{"schema":`+schema+`,"payload":{"before":null,"after":{"v":"`+b64+`"},"op":"c"}}`,
			map[string]string{"debezium-json.schema-include": "true"})
		got = rec.Column(1).(*array.Decimal128).Value(0)
		rec.Release()
		if got != want {
			t.Fatalf("%s at scale %d into DECIMAL(%d, %d): got %s, want %s", u, from, p, s, got.BigInt(), want.BigInt())
		}
		// HALF_UP by hand: |u| / 10^(from-s) rounded half away from zero.
		if from > s {
			div := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(from-s)), nil)
			q, r := new(big.Int).QuoRem(new(big.Int).Abs(u), div, new(big.Int))
			if new(big.Int).Mul(r, big.NewInt(2)).Cmp(div) >= 0 {
				q.Add(q, big.NewInt(1))
			}
			if u.Sign() < 0 {
				q.Neg(q)
			}
			if want.BigInt().Cmp(q) != 0 {
				t.Fatalf("rescale %s from %d to %d: %s, HALF_UP gives %s", u, from, s, want.BigInt(), q)
			}
		}
	})
}

// TestDebeziumTemporalProperty: any instant of years 0001-9999, written as
// Debezium writes it for the column's precision (Date in days, Timestamp
// ms, MicroTimestamp µs, NanoTimestamp ns where it fits, MicroTime µs of
// the day), decodes back to the same value, with and without the schema.
func TestDebeziumTemporalProperty(t *testing.T) {
	lo := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	hi := time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC).UnixMicro()
	rapid.Check(t, func(t *rapid.T) {
		us := rapid.Int64Range(lo, hi).Draw(t, "micros")
		tm := time.UnixMicro(us).UTC()
		days := floorDiv(us, 86400e6)
		tod := us - days*86400e6
		ms := floorDiv(us, 1000)
		nsFits := tm.Year() > 1677 && tm.Year() < 2262
		cols := "d DATE, ts3 TIMESTAMP(3), ts6 TIMESTAMP(6), t6 TIME(6), ltz6 TIMESTAMP_LTZ(6)"
		after := fmt.Sprintf(`{"d":%d,"ts3":%d,"ts6":%d,"t6":%d,"ltz6":%d`, days, ms, us, tod, us)
		fields := `{"type":"int32","name":"io.debezium.time.Date","field":"d"},{"type":"int64","name":"io.debezium.time.Timestamp","field":"ts3"},` +
			`{"type":"int64","name":"io.debezium.time.MicroTimestamp","field":"ts6"},{"type":"int64","name":"io.debezium.time.MicroTime","field":"t6"},` +
			`{"type":"int64","name":"io.debezium.time.MicroTimestamp","field":"ltz6"}`
		if nsFits {
			cols += ", ts9 TIMESTAMP(9)"
			after += fmt.Sprintf(`,"ts9":%d`, us*1000)
			fields += `,{"type":"int64","name":"io.debezium.time.NanoTimestamp","field":"ts9"}`
		}
		after += "}"
		check := func(rec arrow.RecordBatch, how string) {
			defer rec.Release()
			if got := int64(rec.Column(1).(*array.Date32).Value(0)); got != days {
				t.Fatalf("%s: DATE %d, want %d (%s)", how, got, days, tm)
			}
			if got := int64(rec.Column(2).(*array.Timestamp).Value(0)); got != ms*1000 {
				t.Fatalf("%s: TIMESTAMP(3) %d µs, want %d (%s)", how, got, ms*1000, tm)
			}
			if got := int64(rec.Column(3).(*array.Timestamp).Value(0)); got != us {
				t.Fatalf("%s: TIMESTAMP(6) %d, want %d (%s)", how, got, us, tm)
			}
			if got := int64(rec.Column(4).(*array.Time64).Value(0)); got != tod {
				t.Fatalf("%s: TIME(6) %d, want %d", how, got, tod)
			}
			if got := int64(rec.Column(5).(*array.Timestamp).Value(0)); got != us {
				t.Fatalf("%s: TIMESTAMP_LTZ(6) %d, want %d", how, got, us)
			}
			if nsFits {
				if got := int64(rec.Column(6).(*array.Timestamp).Value(0)); got != us*1000 {
					t.Fatalf("%s: TIMESTAMP(9) %d, want %d", how, got, us*1000)
				}
			}
		}
		// Without a schema: time.precision.mode=adaptive by the precision.
		check(decodeOne(t, cols, `{"before":null,"after":`+after+`,"op":"c"}`, nil), "adaptive")
		schema := `{"type":"struct","fields":[{"type":"struct","field":"after","fields":[` + fields + `]}]}`
		check(decodeOne(t, cols, `{"schema":`+schema+`,"payload":{"before":null,"after":`+after+`,"op":"c"}}`,
			map[string]string{"debezium-json.schema-include": "true"}), "schema")
	})
}

// TestProducerDoubleShortcut: under producer semantics a DOUBLE read
// through the short-decimal path is, bit for bit, what the general path
// (Double.parseDouble's rules) reads, from a JSON number or from text
// (GoldenGate and Canal write numbers as strings), with leading zeros,
// signs and whitespace in the text; a literal the short path declines
// still decodes.
func TestProducerDoubleShortcut(t *testing.T) {
	var decs [2]Decoder
	var bs [2]*arrowconv.Builder
	for i := range decs {
		decs[i], bs[i] = producerDecoder(t, "ogg-json", "id INT, db DOUBLE", nil)
		defer bs[i].Release()
	}
	decs[1].(*base).plain = true
	rapid.Check(t, func(t *rapid.T) {
		sign := rapid.SampledFrom([]string{"", "-"}).Draw(t, "sign")
		zeros := rapid.IntRange(0, 2).Draw(t, "leading zeros")
		lit := sign + strings.Repeat("0", zeros) + rapid.StringMatching(`(0|[1-9][0-9]{0,16})(\.[0-9]{1,17})?([eE][+-]?[0-9]{1,2})?`).Draw(t, "literal")
		val := `"` + rapid.SampledFrom([]string{"", " ", "\t"}).Draw(t, "pad") + lit + `"`
		if zeros == 0 && rapid.Bool().Draw(t, "number") {
			val = lit // a valid JSON number: no leading zeros
		}
		msg := `{"table":"inv.t","op_type":"I","after":{"id":1,"db":` + val + `}}`
		var got [2]uint64
		for i, d := range decs {
			if _, err := d.Decode([]byte(msg)); err != nil {
				t.Fatalf("%s (plain %v): %v", msg, i == 1, err)
			}
			rec := bs[i].Flush()
			got[i] = math.Float64bits(rec.Column(2).(*array.Float64).Value(0))
			rec.Release()
		}
		if got[0] != got[1] {
			t.Fatalf("%s: %v with the short path, %v without", msg, math.Float64frombits(got[0]), math.Float64frombits(got[1]))
		}
	})
}

// TestProducerBooleansAsNumbers: under producer semantics a JSON boolean
// in a numeric column is 1 or 0 (MySQL's booleans are TINYINT(1)), in
// DECIMAL and DOUBLE as in the integers: inference joins booleans with
// any number into that number's type, so a column of both must decode.
func TestProducerBooleansAsNumbers(t *testing.T) {
	d, b := producerDecoder(t, "maxwell-json", "i INT, n DECIMAL(38, 2), f DOUBLE", nil)
	defer b.Release()
	for _, msg := range []string{
		`{"database":"d","table":"t","type":"insert","data":{"i":true,"n":true,"f":true}}`,
		`{"database":"d","table":"t","type":"insert","data":{"i":false,"n":false,"f":false}}`,
		`{"database":"d","table":"t","type":"insert","data":{"i":7,"n":2.25,"f":1.5}}`,
	} {
		if _, err := d.Decode([]byte(msg)); err != nil {
			t.Fatalf("%s: %v", msg, err)
		}
	}
	rec := b.Flush()
	defer rec.Release()
	var got []string
	for r := 0; r < int(rec.NumRows()); r++ {
		got = append(got, fmt.Sprintf("%v %v %v", rec.Column(1).ValueStr(r), rec.Column(2).ValueStr(r), rec.Column(3).ValueStr(r)))
	}
	want := []string{"1 1 1", "0 0 0", "7 2.25 1.5"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("rows %q, want %q", got, want)
	}
}

// TestValueChecks: a value its column's check refuses is an error naming
// the column and the value, on the common path and on the one of plain
// json's fail-on-missing-field; other values and other columns convert.
func TestValueChecks(t *testing.T) {
	checks := map[string]func([]byte, jsonparser.ValueType) bool{
		"n": func(v []byte, t jsonparser.ValueType) bool { return t == jsonparser.Number },
	}
	for _, tc := range []struct{ format, kv, msg string }{
		{"maxwell-json", "", `{"database":"d","table":"t","type":"insert","data":{"id":1,"n":%s}}`},
		{"json", "json.fail-on-missing-field", `{"id":1,"n":%s}`},
	} {
		kv := map[string]string{}
		if tc.kv != "" {
			kv[tc.kv] = "true"
		}
		d, b := producerDecoder(t, tc.format, "id INT, n DECIMAL(10, 2)", kv, func(o *Options) { o.ValueChecks = checks })
		if _, err := d.Decode([]byte(fmt.Sprintf(tc.msg, "1.5"))); err != nil {
			t.Errorf("%s: 1.5: %v", tc.format, err)
		}
		_, err := d.Decode([]byte(fmt.Sprintf(tc.msg, `"1.5"`)))
		if err == nil || !strings.Contains(err.Error(), `"1.5"`) || !strings.Contains(err.Error(), "n") || !strings.Contains(err.Error(), "did not foresee") {
			t.Errorf("%s: text 1.5: %v, want the check's error", tc.format, err)
		}
		b.Release()
	}
}

// producerTimeSeeds are date-times of every shape the one-step reader
// takes and of the shapes next to them it must leave to the general one.
var producerTimeSeeds = []string{
	"2020-05-12 21:06:09.856", "2020-05-12T21:06:09", "2020-05-12:21:06:09.123456",
	"2020-05-12 21:06:09.", "2020-05-12 21:06:09.123456789", "2020-05-12 21:06:09.1234567891",
	"2024-02-29 23:59:59.999", "2023-02-29 00:00:00", "2020-13-01 00:00:00", "2020-00-10 00:00:00",
	"0000-00-00 00:00:00", "2020-05-12 24:00:00", "2020-05-12 21:60:00", "2020-05-12 21:06:60",
	"2020-05-12 21:06", "2020-05-12 21:06:09Z", "2020-05-12 21:06:09.5+08:00", "2020-05-12",
	"2020-05-12 21:06:09.85x", "2020/05/12 21:06:09", "2020-05-12_21:06:09", "9999-12-31 23:59:59.999999999",
	"0001-01-01 00:00:00", "2020-05-12 2a:06:09", "202a-05-12 21:06:09", "2020-0a-12 21:06:09", "2020-05-1a 21:06:09", "2020-05-12 21:06:09 ", "\xb0020-05-12 21:06:09",
}

// TestProducerTimeOneStep: the one-step reading of the common shapes
// gives what the general reader gives, on values it takes and values it
// leaves (FuzzProducerTime goes on from these).
func TestProducerTimeOneStep(t *testing.T) {
	for _, s := range producerTimeSeeds {
		fast, fok := readProducerTime([]byte(s), true)
		slow, sok := readProducerTime([]byte(s), false)
		if fok != sok || fast != slow {
			t.Errorf("%q: one step %+v %v, general %+v %v", s, fast, fok, slow, sok)
		}
	}
	if pt, ok := parseProducerTime([]byte("2020-05-12 21:06:09.856")); !ok || pt.days != 18394 || pt.nsOfDay != (21*3600+6*60+9)*1e9+856e6 {
		t.Errorf("2020-05-12 21:06:09.856: %+v %v", pt, ok)
	}
}

// FuzzProducerTime is the one-step reader's twin: on any text it must
// agree with the general reader.
func FuzzProducerTime(f *testing.F) {
	for _, s := range producerTimeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, fok := readProducerTime(b, true)
		slow, sok := readProducerTime(b, false)
		if fok != sok || fast != slow {
			t.Fatalf("%q: one step %+v %v, general %+v %v", b, fast, fok, slow, sok)
		}
	})
}
