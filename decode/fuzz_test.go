package decode

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/buger/jsonparser"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/internal/testutil"
)

// fuzzSchema exercises every converter; the format's metadata keys are added.
const fuzzSchema = "id INT, name STRING, description STRING, weight FLOAT, d DECIMAL(10, 2), big DECIMAL(38, 10), ts TIMESTAMP(3), " +
	"ltz TIMESTAMP_LTZ(3), arr ARRAY<INT>, m MAP<STRING, STRING>, r ROW<a INT, b ARRAY<STRING>>, bin BYTES, dt DATE, t TIME, " +
	"b BOOLEAN, bi BIGINT, db DOUBLE, ti TINYINT, si SMALLINT, ms MULTISET<STRING>"

// placeholderSeeds hold Debezium's unavailable-value placeholder where the
// decoders convert whole images (a create's after, an update's and a
// delete's before), as text, as base64 for BYTES and as an array's element:
// under producer semantics those values are "not sent", NULL and listed.
var placeholderSeeds = []string{
	`{"op":"c","after":{"id":1,"name":"__debezium_unavailable_value","bin":"X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ==","arr":[ "__debezium_unavailable_value" ],"description":"d"}}`,
	`{"op":"u","before":{"id":1,"description":"__debezium_unavailable_value","bin":"AQI=","arr":["__debezium_unavailable_value"]},"after":{"id":1,"description":"x"}}`,
	`{"op":"d","before":{"id":2,"name":"__debezium_unavailable_value","description":"__debezium_unavailable_valu","bin":"X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ=="}}`,
}

// fuzzDecoder checks, for any message, in strict and lenient mode: no
// panic; an error is positioned and leaves nothing appended; the columns
// stay the same length (Flush panics otherwise).
func fuzzDecoder(f *testing.F, format string) { fuzzDecoderWith(f, format, false, nil) }

// fuzzDecoderWith is fuzzDecoder with producer semantics on or off and
// extra options.
func fuzzDecoderWith(f *testing.F, format string, producer bool, extra map[string]string) {
	seeds := 0
	for _, dir := range []string{filepath.Join(testutil.Root(), "testdata", format), filepath.Join(testutil.Root(), "..", "shared", "conformance", "flink")} {
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, p := range files {
			base := filepath.Base(p)
			if !(strings.HasSuffix(p, ".jsonl") || strings.HasPrefix(base, strings.TrimSuffix(format, "-json")) && strings.HasSuffix(p, ".txt")) {
				continue
			}
			lines, _ := fileLines(p)
			for _, l := range lines {
				f.Add(l)
				seeds++
			}
		}
	}
	if seeds == 0 {
		f.Fatal("no seeds")
	}
	decs := shortcutDecoders(f, format, producer, "", extra)
	f.Add([]byte(`{"id" :1,"name"x,"description":"a"}`))
	f.Add([]byte(`{"i\u0064":1,"name":"n","name":"m","data":{"id":2},"data":{"id" : 3}}`))
	f.Add([]byte(`{"data":[{"id":"1","db":"4.7","weight":"1.5","bi":"92233720368547758080"}],"database":"inv","type":"INSERT"}`)) // numbers as text
	for _, m := range placeholderSeeds {
		f.Add([]byte(m))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		var errs [4]string
		var recs [4]arrow.RecordBatch
		var results [4]Result
		for i, x := range decs {
			// Twice: the second decoding may reuse values of the first (an
			// envelope map of the same bytes), which the plain decoders never do.
			for range 2 {
				before := x.b.Len()
				res, err := x.d.Decode(msg)
				results[i] = res
				if err != nil {
					errs[i] = err.Error()
					if i%2 == 1 {
						t.Fatalf("lenient decoder returned an error: %v", err)
					}
					var de *Error
					if e := Locate(err, "f", 1, 0); !errors.As(e, &de) || de.Line != 1 || de.Err == nil || de.Column > len(msg)+1 {
						t.Fatalf("badly positioned error %#v", e)
					}
					if x.b.Len() != before {
						t.Fatalf("failed message appended %d rows", x.b.Len()-before)
					}
				} else if x.b.Len()-before != res.Rows {
					t.Fatalf("Result.Rows = %d, appended %d", res.Rows, x.b.Len()-before)
				}
			}
			recs[i] = x.b.Flush()
			if recs[i] != nil {
				defer recs[i].Release()
			}
		}
		for i := range 2 {
			if errs[i] != errs[i+2] {
				t.Fatalf("decoder %d: error %q, without shortcuts: %q", i, errs[i], errs[i+2])
			}
			if (recs[i] == nil) != (recs[i+2] == nil) || recs[i] != nil && !array.RecordEqual(recs[i], recs[i+2]) {
				t.Fatalf("decoder %d and the same without shortcuts decoded different rows:\n%v\n%v", i, recs[i], recs[i+2])
			}
			r, p := results[i], results[i+2]
			if r.Rows != p.Rows || r.Outcome != p.Outcome || len(r.Nulled) != len(p.Nulled) || (r.Err == nil) != (p.Err == nil) {
				t.Fatalf("decoder %d: result %+v, without shortcuts %+v", i, r, p)
			}
		}
	})
}

// fileLines returns the lines of the file at path, each a copy.
func fileLines(path string) ([][]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var lines [][]byte
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, append([]byte(nil), sc.Bytes()...))
	}
	return lines, sc.Err()
}

// shortcutDecoder is a decoder and the builder it appends to.
type shortcutDecoder struct {
	b *arrowconv.Builder
	d Decoder
}

// shortcutDecoders returns four decoders of format over fuzzSchema (with
// the format's metadata keys, cdcetl's lineage keys, the producer-only
// shapes under producer semantics, and columns): 0 and 1 are strict and
// lenient, 2 and 3 the same without the shortcuts (every key scanned,
// every value converted), so each pair must agree on everything.
func shortcutDecoders(tb testing.TB, format string, producer bool, columns string, extra map[string]string) []shortcutDecoder {
	tb.Helper()
	fm, _ := Lookup(format)
	schema := fuzzSchema + columns
	for _, m := range fm.Metadata {
		schema += ", `" + m.Key + "` " + m.Type.String() + " METADATA FROM '" + m.Key + "' VIRTUAL"
	}
	// cdcetl's lineage keys, every format: the line and the log position.
	schema += ", `file.line` BIGINT METADATA FROM 'file.line' VIRTUAL, `source-position` STRING METADATA FROM 'source-position' VIRTUAL"
	if producer {
		// Producer-only shapes: spatial values, TIME with a fraction, and the
		// unchanged list and key-only before images.
		schema += ", geo BYTES, t6 TIME(6), ts9 TIMESTAMP(9), `unchanged-columns` ARRAY<STRING> METADATA FROM 'unchanged-columns' VIRTUAL, PRIMARY KEY (id) NOT ENFORCED"
	}
	s, err := arrowconv.ParseColumns(schema)
	if err != nil {
		tb.Fatal(err)
	}
	var decs []shortcutDecoder
	for _, plain := range []bool{false, true} {
		for _, lenient := range []string{"false", "true"} {
			kv := map[string]string{format + ".ignore-parse-errors": lenient}
			if format == "canal-json" {
				kv[format+".database.include"] = "inv.*|null|"
			}
			for k, v := range extra {
				kv[k] = v
			}
			o, err := ParseOptions(fm, kv, false)
			if err != nil {
				tb.Fatal(err)
			}
			o.Producer, o.CaseInsensitive = producer, producer
			if err := o.Check(fm); err != nil {
				tb.Fatal(err)
			}
			b := arrowconv.NewBuilder(memory.NewGoAllocator(), s)
			d, err := New(fm, s, o, b)
			if err != nil {
				tb.Fatal(err)
			}
			d.(*base).plain = plain
			decs = append(decs, shortcutDecoder{b, d})
		}
	}
	return decs
}

func FuzzCanal(f *testing.F)    { fuzzDecoder(f, "canal-json") }
func FuzzMaxwell(f *testing.F)  { fuzzDecoder(f, "maxwell-json") }
func FuzzOgg(f *testing.F)      { fuzzDecoder(f, "ogg-json") }
func FuzzDebezium(f *testing.F) { fuzzDecoder(f, "debezium-json") }
func FuzzJSON(f *testing.F)     { fuzzDecoder(f, "json") }

// The same under producer semantics (docs/producer-semantics.md).
func FuzzCanalProducer(f *testing.F)    { fuzzDecoderWith(f, "canal-json", true, nil) }
func FuzzMaxwellProducer(f *testing.F)  { fuzzDecoderWith(f, "maxwell-json", true, nil) }
func FuzzOggProducer(f *testing.F)      { fuzzDecoderWith(f, "ogg-json", true, nil) }
func FuzzDebeziumProducer(f *testing.F) { fuzzDecoderWith(f, "debezium-json", true, nil) }
func FuzzDebeziumProducerSchema(f *testing.F) {
	fuzzDecoderWith(f, "debezium-json", true, map[string]string{"debezium-json.schema-include": "true"})
}

// FuzzParseOptions: any key and value are accepted or refused with
// ErrOption, never a panic, for every format, reading and writing.
func FuzzParseOptions(f *testing.F) {
	for _, kv := range [][2]string{
		{"ignore-parse-errors", "true"}, {"timestamp-format.standard", "ISO-8601"}, {"table.include", "a(b|c)*"},
		{"database.include", "(?=x)"}, {"map-null-key.mode", "literal"}, {"schema-include", "TRUE"}, {"tabel.include", "x"},
		{"fail-on-missing-field", "yes"}, {"", ""},
	} {
		f.Add(kv[0], kv[1])
	}
	f.Fuzz(func(t *testing.T, key, value string) {
		for _, fm := range Formats() {
			for _, sink := range []bool{false, true} {
				_, err := ParseOptions(fm, map[string]string{fm.Name + "." + key: value}, sink)
				if err != nil && !errors.Is(err, ErrOption) {
					t.Fatalf("%s.%s=%q: error %v does not wrap ErrOption", fm.Name, key, value, err)
				}
			}
		}
	})
}

// FuzzHints: the hint and warning helpers, which see whatever message
// failed, never panic.
func FuzzHints(f *testing.F) {
	for _, s := range []string{
		`{"schema":{},"payload":{"op":"c","after":{"id":1}}}`, `{"database":"d","table":"t","type":"insert","data":{"id":1}}`,
		`{"data":[{"id":"1"}],"type":"ALTER","isDdl":true}`, `{"op_type":"I","table":"A.B","after":{"ID":1}}`, `{"a":`, `[]`, ``,
		`{"data":null,"isDdl":true,"sql":"CREATE TABLE t (id int)","type":"CREATE"}`, `{"type":"table-create","sql":"create table t (id int)","def":{}}`,
		`{"status":"END","id":"1:2","event_count":2}`, `{"source":{"db":"d"},"ddl":"CREATE TABLE t (id INT)","tableChanges":[]}`,
	} {
		f.Add([]byte(s))
	}
	errs := []error{errorf(ErrUnknownOp, "x"), errorf(ErrType, "y"), &msgError{off: 0, err: errorf(ErrType, "z"), hint: "h"}}
	f.Fuzz(func(t *testing.T, msg []byte) {
		Sniff(msg)
		Detect([][]byte{msg, msg}, 1)
		for _, fm := range Formats() {
			for _, e := range errs {
				Hint(fm, Options{}, msg, e)
			}
			RowKeys(fm, Options{SchemaInclude: true}, msg)
			RowKeys(fm, Options{}, msg)
		}
		for _, iso := range []bool{false, true} {
			timestampHint("canal-json", msg, jsonparser.String, iso, iso)
		}
		dateHint(msg, jsonparser.String)
		decimalHint(msg, jsonparser.String)
	})
}
