package decode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/writer"
)

// testDecoder is a decoder of format (Flink semantics) for schema, and its
// builder on mem, which the caller releases.
func testDecoder(t testing.TB, mem memory.Allocator, format, schema string, opts map[string]string) (Decoder, *arrowconv.Builder) {
	t.Helper()
	f, ok := Lookup(format)
	if !ok {
		t.Fatalf("no format %s", format)
	}
	s, err := arrowconv.ParseColumns(schema)
	if err != nil {
		t.Fatal(err)
	}
	o, err := ParseOptions(f, opts, false)
	if err != nil {
		t.Fatal(err)
	}
	b := arrowconv.NewBuilder(mem, s)
	d, err := New(f, s, o, b)
	if err != nil {
		b.Release()
		t.Fatal(err)
	}
	return d, b
}

// decodeLines decodes lines with format/schema/options and returns the
// printed rows, or the first error (positioned as file "in").
func decodeLines(t testing.TB, format, schema string, opts map[string]string, lines ...string) ([]string, error) {
	t.Helper()
	mem := memory.NewCheckedAllocator(arrowconv.NewPool())
	defer mem.AssertSize(t, 0)
	d, b := testDecoder(t, mem, format, schema, opts)
	defer b.Release()
	var firstErr error
	for i, l := range lines {
		if _, err := d.Decode([]byte(l)); err != nil {
			firstErr = Locate(err, "in", i+1, 0)
			break
		}
	}
	rec := b.Flush()
	if rec == nil {
		return nil, firstErr
	}
	defer rec.Release()
	var out bytes.Buffer
	p := writer.NewPrint(&out, b.Schema())
	if err := p.Write(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	p.Close()
	return strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n"), firstErr
}

func TestErrorsAreClassified(t *testing.T) {
	tests := []struct {
		name, format, line string
		want               error
		col                int
	}{
		{"syntax", "canal-json", `{"data":[}`, ErrMalformed, 10},
		{"leading zero", "json", `{"id":01}`, ErrMalformed, 7},
		{"not an object", "maxwell-json", `[1]`, ErrMalformed, 1},
		{"blank with spaces", "ogg-json", `   `, ErrMalformed, 4},
		{"unknown canal type", "canal-json", `{"data":[],"type":"TRUNCATE"}`, ErrUnknownOp, 19},
		{"unknown maxwell type", "maxwell-json", `{"data":{},"type":"table-alter"}`, ErrUnknownOp, 19},
		{"ogg truncate", "ogg-json", `{"op_type":"T"}`, ErrUnknownOp, 12},
		{"debezium message", "debezium-json", `{"op":"m"}`, ErrUnknownOp, 7},
		{"missing type", "canal-json", `{"data":[]}`, ErrMissingField, 0},
		{"missing data", "canal-json", `{"type":"INSERT"}`, ErrMissingField, 0},
		{"null element", "canal-json", `{"data":[null],"type":"INSERT"}`, ErrMissingField, 0},
		{"old too short", "canal-json", `{"data":[{"id":"1"}],"old":[],"type":"UPDATE"}`, ErrMissingField, 0},
		{"maxwell update without old", "maxwell-json", `{"data":{"id":1},"type":"update"}`, ErrMissingField, 0},
		{"debezium update without before", "debezium-json", `{"after":{"id":1},"op":"u"}`, ErrMissingField, 0},
		{"debezium create without after", "debezium-json", `{"before":{"id":1},"op":"c"}`, ErrMissingField, 0},
		{"bad value", "json", `{"id":"x"}`, ErrType, 7},
		{"bad value in old of an insert", "canal-json", `{"data":[{"id":"1"}],"old":[{"id":"x"}],"type":"INSERT"}`, ErrType, 35},
		{"bad value in a CREATE", "canal-json", `{"data":[{"id":"x"}],"type":"CREATE"}`, ErrType, 16},
		{"bad source.ts_ms", "debezium-json", `{"after":{"id":1},"op":"c","source":{"ts_ms":"1.5"}}`, ErrType, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			schema := "id INT"
			if tt.name == "bad source.ts_ms" {
				schema += ", ts TIMESTAMP_LTZ(3) METADATA FROM 'source.timestamp' VIRTUAL"
			}
			_, err := decodeLines(t, tt.format, schema, nil, `{"data":[],"type":"INSERT"}`, tt.line)
			if tt.format != "canal-json" {
				_, err = decodeLines(t, tt.format, schema, nil, tt.line)
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			var de *Error
			if !errors.As(err, &de) || de.Line < 1 {
				t.Fatalf("err = %#v, want a *decode.Error with a line", err)
			}
			if tt.col != 0 && de.Column != tt.col {
				t.Errorf("column = %d, want %d (%v)", de.Column, tt.col, err)
			}
		})
	}
}

func TestLenientDropsAndKeepsEarlierRows(t *testing.T) {
	rows, err := decodeLines(t, "canal-json", "id INT, v STRING", map[string]string{"canal-json.ignore-parse-errors": "true"},
		`{"data":[{"id":"1","v":"a"},{"id":"2","v":"b"},{"id":"3","v":"c"}],"old":[{"v":"x"},{"v":"y"}],"type":"UPDATE"}`,
		`{"data":[{"id":"4","v":"d"},null],"type":"INSERT"}`,
		`{"data":[{"id":"x5","v":"e"}],"type":"DELETE"}`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"-U[1, x]", "+U[1, a]", "-U[2, y]", "+U[2, b]", "+I[4, d]", "-D[null, e]"}
	if strings.Join(rows, " ") != strings.Join(want, " ") {
		t.Errorf("rows = %v, want %v", rows, want)
	}
}

func TestStrictAppendsNothingOnError(t *testing.T) {
	rows, err := decodeLines(t, "canal-json", "id INT, v STRING", nil,
		`{"data":[{"id":"1","v":"a"}],"type":"INSERT"}`,
		`{"data":[{"id":"2","v":"b"},{"id":"bad","v":"c"}],"type":"INSERT"}`)
	if !errors.Is(err, ErrType) {
		t.Fatalf("err = %v", err)
	}
	if len(rows) != 1 || rows[0] != "+I[1, a]" {
		t.Errorf("rows = %v, want only the first message's row", rows)
	}
}

func TestMetadataIsCopiedToEveryRowOfAMessage(t *testing.T) {
	rows, err := decodeLines(t, "canal-json", "id INT, db STRING METADATA FROM 'database' VIRTUAL, pk ARRAY<STRING> METADATA FROM 'pk-names' VIRTUAL", nil,
		`{"data":[{"id":"1"},{"id":"2"}],"old":[{},{}],"database":"d","pkNames":["id","x"],"type":"UPDATE"}`)
	if err != nil {
		t.Fatal(err)
	}
	want := "-U[1, d, [id, x]] +U[1, d, [id, x]] -U[2, d, [id, x]] +U[2, d, [id, x]]"
	if got := strings.Join(rows, " "); got != want {
		t.Errorf("rows = %s, want %s", got, want)
	}
}

func TestOptionValidation(t *testing.T) {
	f, _ := Lookup("canal-json")
	tests := []struct {
		kv   map[string]string
		sink bool
		want string
	}{
		{map[string]string{"canal-json.ignore-parse-errors": "abc"}, false, "Unrecognized option for boolean: abc. Expected either true or false(case insensitive)"},
		{map[string]string{"canal-json.timestamp-format.standard": "test"}, false, "Unsupported value 'test' for timestamp-format.standard. Supported values are [SQL, ISO-8601]."},
		{map[string]string{"canal-json.timestamp-format.standard": "sql"}, false, "Unsupported value 'sql'"},
		{map[string]string{"canal-json.map-null-key.mode": "invalid"}, true, "Unsupported value 'invalid' for option map-null-key.mode. Supported values are [LITERAL, FAIL, DROP]."},
		{map[string]string{"canal-json.schema-include": "true"}, false, "unsupported option 'canal-json.schema-include'"},
		{map[string]string{"canal-json.table.include": "(?<=x)a"}, false, "not supported"},
	}
	for _, tt := range tests {
		_, err := ParseOptions(f, tt.kv, tt.sink)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, ErrOption) {
			t.Errorf("ParseOptions(%v) = %v, want %q", tt.kv, err, tt.want)
		}
	}
	// A bad map-null-key.mode is accepted for reading, as in Flink.
	if _, err := ParseOptions(f, map[string]string{"canal-json.map-null-key.mode": "invalid"}, false); err != nil {
		t.Error(err)
	}
	d, _ := Lookup("debezium-json")
	if _, err := ParseOptions(d, map[string]string{"debezium-json.schema-include": "true"}, true); err == nil {
		t.Error("schema-include accepted for a sink")
	}
	j, _ := Lookup("json")
	if _, err := ParseOptions(j, map[string]string{"json.fail-on-missing-field": "true", "json.ignore-parse-errors": "TRUE"}, false); err == nil {
		t.Error("fail-on-missing-field with ignore-parse-errors accepted")
	}
}

func TestCheckSchemaMetadata(t *testing.T) {
	f, _ := Lookup("maxwell-json")
	for schema, want := range map[string]string{
		"id INT, x STRING METADATA FROM 'sql-type' VIRTUAL":            "unknown metadata key 'sql-type'",
		"id INT, x BIGINT METADATA FROM 'ingestion-timestamp' VIRTUAL": "cannot be read as BIGINT",
	} {
		s, err := arrowconv.ParseColumns(schema)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.CheckSchema(s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", schema, err, want)
		}
	}
}

func TestValidateMatchesJackson(t *testing.T) {
	good := []string{`{}`, `{"a":[1,-0,0.5,1e5,1E+2,-1.5e-3,true,false,null,"x\u00e9\n"]}`, "{\"a\":\"raw\tcontrol\x01\"}",
		"\xef\xbb\xbf{}", `{"a":1} trailing`, ` {"a":{}} `, `{"a":[[],{}]}`}
	bad := []string{``, ` `, `{`, `{"a"}`, `{"a":}`, `{a:1}`, `{'a':1}`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":+1}`,
		`{"a":NaN}`, `{"a":tru}`, `{"a":truex}`, `{"a":"\x"}`, `{"a":1,}`, `{"a":[1,]}`, `{"a":1 /* c */}`, "{\"a\":\"\xff\"}",
		`{"a":"\u12"}`, `{"a":1]`, `[`}
	validate := func(msg string) error {
		b := []byte(msg)
		i := 0
		if strings.HasPrefix(msg, "\xef\xbb\xbf") {
			i = 3
		}
		i = skipWS(b, i)
		sc := scanner{msg: b}
		_, _, err := sc.value(i)
		return err
	}
	for _, g := range good {
		if err := validate(g); err != nil {
			t.Errorf("validate(%q) = %v, want ok", g, err)
		}
	}
	for _, b := range bad {
		if err := validate(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("validate(%q) = %v, want ErrMalformed", b, err)
		}
	}
	// Deep nesting is refused, as Jackson refuses it.
	deep := strings.Repeat("[", 1001) + strings.Repeat("]", 1001)
	if err := validate(deep); !errors.Is(err, ErrMalformed) {
		t.Errorf("1001 levels: %v", err)
	}
}

// TestMapDuplicateKeys: in a MAP read from a JSON object, a repeated key
// keeps its first place and its last value, as Jackson's ObjectNode does;
// keys that share a length and last byte (the quick check's bit) are told
// apart by their bytes.
func TestMapDuplicateKeys(t *testing.T) {
	cases := []struct{ obj, want string }{
		{`{"a":"1","b":"2","a":"3"}`, "+I[{a=3, b=2}]"},
		{`{"xa":"1","ya":"2","za":"3"}`, "+I[{xa=1, ya=2, za=3}]"},
		{`{"xa":"1","ya":"2","xa":"3","ya":"4"}`, "+I[{xa=3, ya=4}]"},
		{`{"":"1","b":"2","":"3"}`, "+I[{=3, b=2}]"},
	}
	for _, c := range cases {
		for _, plain := range []string{"", `,"z":"\u0041"`} { // the second walks with jsonparser
			obj := c.obj[:len(c.obj)-1] + plain + "}"
			got, err := decodeLines(t, "json", "m MAP<STRING, STRING>", nil, `{"m":`+obj+`}`)
			if err != nil {
				t.Fatal(err)
			}
			want := c.want
			if plain != "" {
				want = strings.Replace(want, "}]", ", z=A}]", 1)
			}
			if len(got) != 1 || got[0] != want {
				t.Errorf("%s: %v, want %s", obj, got, want)
			}
		}
	}
}

// TestEnvelopeMapReuse: envelope maps and lists of the same bytes as the
// last message's are copies of its value; of other bytes, their own.
// A message dropped between two equal ones (malformed after its maps:
// filled, then rolled back), and a message whose
// conversion nulls a value (lenient), leave no stale value behind.
func TestEnvelopeMapReuse(t *testing.T) {
	msg := func(id int, sqlType, pk string) string {
		return fmt.Sprintf(`{"data":[{"id":"%d"}],"database":"d","table":"t","sqlType":%s,"pkNames":%s,"isDdl":false,"type":"INSERT"}`, id, sqlType, pk)
	}
	a, b := `{"id":-5,"name":12}`, `{"id":4,"name":12}`
	bad := `{"id":"x","name":12}` // not an INT: nulled when lenient
	schema := "id BIGINT, st MAP<STRING, INT> METADATA FROM 'sql-type' VIRTUAL, pk ARRAY<STRING> METADATA FROM 'pk-names' VIRTUAL"
	lines := []string{
		msg(1, a, `["id"]`), msg(2, a, `["id"]`), msg(3, b, `["id"]`), msg(4, b, `["name"]`),
		msg(5, bad, `["id"]`), msg(6, bad, `["id"]`), msg(7, a, `["id"]`), `{"data":[{"id":"9"}],"database":"d","table":"t","sqlType":{"id":-5,"name":12},"pkNames":["id"],"type":"INSERT"`, msg(8, a, `["id"]`),
	}
	got, err := decodeLines(t, "canal-json", schema, map[string]string{"canal-json.ignore-parse-errors": "true"}, lines...)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"+I[1, {id=-5, name=12}, [id]]", "+I[2, {id=-5, name=12}, [id]]", "+I[3, {id=4, name=12}, [id]]", "+I[4, {id=4, name=12}, [name]]",
		"+I[5, {id=null, name=12}, [id]]", "+I[6, {id=null, name=12}, [id]]", "+I[7, {id=-5, name=12}, [id]]", "+I[8, {id=-5, name=12}, [id]]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestEnvelopeMapReuseCountsNulls: a map whose conversion nulled a value
// is converted again in the next message, not copied, so each message
// reports its own nulled value.
func TestEnvelopeMapReuseCountsNulls(t *testing.T) {
	d, b := testDecoder(t, memory.NewGoAllocator(), "canal-json", "id BIGINT, st MAP<STRING, INT> METADATA FROM 'sql-type' VIRTUAL",
		map[string]string{"canal-json.ignore-parse-errors": "true"})
	defer b.Release()
	for i := range 3 {
		res, err := d.Decode([]byte(`{"data":[{"id":"1"}],"database":"d","table":"t","sqlType":{"id":"x"},"isDdl":false,"type":"INSERT"}`))
		if err != nil || len(res.Nulled) != 1 {
			t.Fatalf("message %d: %d values nulled (%v), want 1", i+1, len(res.Nulled), err)
		}
	}
	if rec := b.Flush(); rec != nil {
		rec.Release()
	}
}

// A BIGINT past the long range fails, as Long.parseLong does, and is NULL
// under ignore-parse-errors, as a JSON number and as text, in every
// format: never a value wrapped around 2^64 (18446744073709551616 once
// read as 0).
func TestBigIntOutOfRange(t *testing.T) {
	for _, lit := range []string{"18446744073709551616", "92233720368547758080", "-92233720368547758080", "99999999999999999999"} {
		for _, v := range []string{lit, `"` + lit + `"`} {
			lines := map[string]string{
				"json":          `{"id":1,"v":` + v + `}`,
				"canal-json":    `{"data":[{"id":1,"v":` + v + `}],"type":"INSERT"}`,
				"maxwell-json":  `{"data":{"id":1,"v":` + v + `},"type":"insert"}`,
				"ogg-json":      `{"after":{"id":1,"v":` + v + `},"op_type":"I"}`,
				"debezium-json": `{"after":{"id":1,"v":` + v + `},"op":"c"}`,
			}
			for format, line := range lines {
				if _, err := decodeLines(t, format, "id INT, v BIGINT", nil, line); !errors.Is(err, ErrType) {
					t.Errorf("%s %s: err = %v, want a type error", format, v, err)
				}
				rows, err := decodeLines(t, format, "id INT, v BIGINT", map[string]string{format + ".ignore-parse-errors": "true"}, line)
				if err != nil || len(rows) != 1 || rows[0] != "+I[1, null]" {
					t.Errorf("%s %s lenient: rows %v, err %v, want +I[1, null]", format, v, rows, err)
				}
			}
		}
	}
}
