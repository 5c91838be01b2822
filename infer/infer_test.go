package infer

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/cdcetl/cdcetl/arrowconv"
)

func TestValueLattice(t *testing.T) {
	for _, tt := range []struct {
		values []string // JSON values
		want   string
	}{
		{[]string{"1", "2"}, "INT"},
		{[]string{"1", "5000000000"}, "BIGINT"},
		{[]string{"1", "2.50"}, "DECIMAL(38, 2)"},
		{[]string{"1.5", "2.125"}, "DECIMAL(38, 3)"},
		{[]string{"1", "1e3"}, "DOUBLE"},
		{[]string{"true", "false"}, "BOOLEAN"},
		{[]string{"true", "1"}, "INT"},
		{[]string{`"2020-01-01"`, `"2020-01-01 10:00:00.123"`}, "TIMESTAMP(3)"},
		{[]string{`"2020-01-01T10:00:00Z"`}, "TIMESTAMP_LTZ(0)"},
		{[]string{`"10:11:12.5"`}, "TIME(1)"},
		{[]string{`"2020-05-13:15:40:06.123456"`}, "TIMESTAMP(6)"},
		{[]string{"1", `"x"`}, "STRING"},
		{[]string{`{"a":1}`}, "STRING"},
		{[]string{"null"}, "STRING"},
		{[]string{"null", "3"}, "INT"},
		{[]string{"123456789012345678901234567890"}, "DECIMAL(38, 0)"},
	} {
		var vt valueType
		for _, v := range tt.values {
			vt.join(classifyJSON(t, v))
		}
		if got := vt.typ().String(); got != tt.want {
			t.Errorf("%v: %s, want %s", tt.values, got, tt.want)
		}
	}
}

func classifyJSON(t *testing.T, v string) valueType {
	fe := NewFileEvidence("maxwell-json", 0, Options{})
	fe.Observe([]byte(`{"database":"d","table":"t","type":"insert","data":{"c":`+v+`}}`), 1)
	return fe.Of(Key{"d", "t"}).cols["c"].vals
}

// TestDriftAndVersions: a later input adds a column, widens one, and
// changes one incompatibly; the changes say so, and the last starts
// version 2.
func TestDriftAndVersions(t *testing.T) {
	ts := NewTables("canal-json")
	msg := func(types string) []byte {
		return []byte(`{"data":[{"id":"1"}],"database":"inv","table":"p","type":"INSERT","isDdl":false,"pkNames":["id"],"mysqlType":{` + types + `}}`)
	}
	fe := NewFileEvidence("canal-json", 0, Options{})
	fe.Observe(msg(`"id":"int","qty":"int","price":"decimal(10,2)"`), 1)
	if ch := ts.Merge(fe, "a.json"); len(ch) != 0 {
		t.Fatalf("first input: changes %v", ch)
	}
	fe = NewFileEvidence("canal-json", 1, Options{})
	fe.Observe(msg(`"id":"int","qty":"bigint","price":"decimal(10,2)","note":"varchar(32)"`), 7)
	ch := ts.Merge(fe, "b.json")
	if len(ch) != 2 || !strings.Contains(ch[0].What, "widened qty INT to BIGINT") || !strings.Contains(ch[1].What, "added column note STRING") || ch[1].Line != 7 {
		t.Fatalf("second input: changes %+v", ch)
	}
	fe = NewFileEvidence("canal-json", 2, Options{})
	fe.Observe(msg(`"id":"int","qty":"bigint","price":"varchar(10)","note":"varchar(32)"`), 3)
	ch = ts.Merge(fe, "c.json")
	tbl := ts.Table(Key{"inv", "p"})
	if len(ch) != 1 || !strings.Contains(ch[0].What, "price DECIMAL(10, 2) became STRING: incompatible, schema version 2") || tbl.Version != 2 {
		t.Fatalf("third input: changes %+v, version %d", ch, tbl.Version)
	}
	// The DDL reads back to the same table.
	ddl := tbl.DDL(nil)
	back, err := LoadTable(ddl)
	if err != nil {
		t.Fatalf("%v\n%s", err, ddl)
	}
	if back.DDL(nil) != ddl || back.Version != 2 || back.Key != tbl.Key {
		t.Errorf("round trip:\n%s\nvs\n%s", back.DDL(nil), ddl)
	}
	if _, err := arrowconv.ParseDDL(ddl); err != nil {
		t.Error(err)
	}
}

// TestClassifyNumberOnePass: the one-pass classifyNumber gives what the
// plain reading of its rule gives (exponent: DOUBLE; else the digits
// before the point, leading zeros and one sign left out, and after it).
func TestClassifyNumberOnePass(t *testing.T) {
	ref := func(v []byte) valueType {
		if bytes.ContainsAny(v, "eE") {
			return valueType{k: kDouble}
		}
		digits := v
		if len(digits) > 0 && (digits[0] == '-' || digits[0] == '+') {
			digits = digits[1:]
		}
		intPart, frac := digits, []byte(nil)
		if i := bytes.IndexByte(digits, '.'); i >= 0 {
			intPart, frac = digits[:i], digits[i+1:]
		}
		intPart = bytes.TrimLeft(intPart, "0")
		return classifyDigits(v, intPart, frac)
	}
	rapid.Check(t, func(t *rapid.T) {
		v := []byte(rapid.StringMatching(`[-+]?[0-9]{0,40}(\.[0-9]{0,40})?([eE][-+]?[0-9]{1,3})?`).Draw(t, "v"))
		if got, want := classifyNumber(v), ref(v); got != want {
			t.Fatalf("classifyNumber(%q) = %+v, want %+v", v, got, want)
		}
	})
}

// TestFormMatch: the eight-bytes-at-a-time form matches exactly as a byte
// by byte reading of the form would.
func TestFormMatch(t *testing.T) {
	ref := func(v []byte, f string) bool {
		if len(v) != len(f) {
			return false
		}
		for i, c := range v {
			switch {
			case f[i] == 'd':
				if c < '0' || c > '9' {
					return false
				}
			case f[i] == ' ' && i == 10:
				if c != ' ' && c != 'T' && c != ':' {
					return false
				}
			case c != f[i]:
				return false
			}
		}
		return true
	}
	rapid.Check(t, func(t *rapid.T) {
		f := rapid.SampledFrom([]string{"dddd-dd-dd", "dddd-dd-dd dd:dd:dd", "dddd-dd-dd dd:dd:dd.ddd", "dddd-dd-dd dd:dd:dd.dddddd", "dddd-dd-dd dd:dd:dd.d"}).Draw(t, "form")
		// Mostly the form's own shape, with a byte or two anything.
		v := []byte(f)
		for i := range v {
			if v[i] == 'd' {
				v[i] = byte('0' + rapid.IntRange(0, 9).Draw(t, "digit"))
			}
		}
		if len(v) > 10 && rapid.Bool().Draw(t, "T") {
			v[10] = 'T'
		}
		for range rapid.IntRange(0, 2).Draw(t, "changes") {
			v[rapid.IntRange(0, len(v)-1).Draw(t, "at")] = rapid.Byte().Draw(t, "b")
		}
		if rapid.IntRange(0, 9).Draw(t, "cut") == 0 {
			v = v[:rapid.IntRange(0, len(v)).Draw(t, "len")]
		}
		fm := newForm(f)
		if got, want := fm.match(v), ref(v, f); got != want {
			t.Fatalf("form %q, %q: match %v, want %v", f, v, got, want)
		}
	})
}

// TestMaxwellEventTimes: Maxwell writes ts in seconds in row records and
// in milliseconds in DDL records; both give the same instant's
// milliseconds.
func TestMaxwellEventTimes(t *testing.T) {
	fe := NewFileEvidence("maxwell-json", 0, Options{})
	fe.Observe([]byte(`{"database":"test","table":"tb","type":"table-create","ts":1452637552000,"sql":"create table tb (id int)","def":{"database":"test","table":"tb","columns":[{"type":"int","name":"id","signed":true}],"primary-key":["id"]}}`), 1)
	fe.Observe([]byte(`{"database":"test","table":"tb","type":"insert","ts":1452637553,"data":{"id":1}}`), 2)
	e := fe.Of(fe.Tables()[0])
	if e.FirstEventMilli != 1452637552000 || e.LastEventMilli != 1452637553000 {
		t.Errorf("events %d .. %d, want 1452637552000 .. 1452637553000", e.FirstEventMilli, e.LastEventMilli)
	}
}

// TestDriftWithinInput: a column whose producer type changes within one
// input (Debezium int32, then int64, then string) takes the last type and
// reports each change where it happened, read whole or in parts.
func TestDriftWithinInput(t *testing.T) {
	msg := func(id int, typ, v string) []byte {
		return []byte(`{"schema":{"type":"struct","fields":[{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"` + typ + `","optional":true,"field":"code"}],"optional":true,"field":"after"}]},"payload":{"before":null,"after":{"id":` + strconv.Itoa(id) + `,"code":` + v + `},"op":"c","source":{"db":"d","table":"t"}}}`)
	}
	lines := [][]byte{msg(1, "int32", "1"), msg(2, "int32", "2"), msg(3, "int64", "3"), msg(4, "string", `"x"`)}
	changes := func(parts ...int) []string {
		var evs []*FileEvidence
		start := 0
		for _, end := range append(parts, len(lines)) {
			fe := NewFileEvidence("debezium-json", 0, Options{SchemaInclude: true})
			for i := start; i < end; i++ {
				fe.Observe(lines[i], i+1)
			}
			evs = append(evs, fe)
			start = end
		}
		for _, fe := range evs[1:] {
			evs[0].Join(fe)
		}
		ts := NewTables("debezium-json")
		var out []string
		for _, c := range ts.Merge(evs[0], "a.json") {
			out = append(out, fmt.Sprintf("%d %s", c.Line, c.What))
		}
		if typ := ts.Table(Key{"d", "t"}).column("code").Type.String(); typ != "STRING" {
			t.Errorf("code is %s, want STRING", typ)
		}
		return out
	}
	whole := changes()
	if len(whole) != 2 || !strings.HasPrefix(whole[0], "3 code INT became BIGINT") || !strings.HasPrefix(whole[1], "4 code BIGINT became STRING") {
		t.Fatalf("changes %q", whole)
	}
	for _, parts := range [][]int{{1}, {2}, {3}, {1, 3}} {
		if got := changes(parts...); !slices.Equal(got, whole) {
			t.Errorf("read in parts %v: %q, whole %q", parts, got, whole)
		}
	}
}

// TestKeyOnlyBeforeImages: Debezium before images that hold only the key
// (Postgres REPLICA IDENTITY DEFAULT) name the key, whether the other
// columns are NULL or left out (Debezium's documentation shows them left
// out); a full image after a column was dropped does not.
func TestKeyOnlyBeforeImages(t *testing.T) {
	src := `"source":{"db":"postgres","schema":"public","table":"customers"}`
	create := `{"before":null,"after":{"id":1,"first_name":"Anne","last_name":"K","email":"a@x"},` + src + `,"op":"c"}`
	cases := []struct {
		name string
		msgs []string
		key  []string
	}{
		{"left out", []string{create, `{"before":{"id":1},"after":null,` + src + `,"op":"d"}`}, []string{"id"}},
		{"null", []string{create, `{"before":{"id":1,"first_name":null,"last_name":null,"email":null},"after":null,` + src + `,"op":"d"}`}, []string{"id"}},
		{"full image", []string{create, `{"before":{"id":1,"first_name":"Anne","last_name":"K","email":"a@x"},"after":null,` + src + `,"op":"d"}`}, nil},
		{"column dropped", []string{create, `{"before":{"id":1,"first_name":"Anne","last_name":"K"},"after":null,` + src + `,"op":"d"}`}, nil},
	}
	for _, c := range cases {
		fe := NewFileEvidence("debezium-json", 0, Options{})
		for i, m := range c.msgs {
			fe.Observe([]byte(m), i+1)
		}
		e := fe.Of(Key{"public", "customers"})
		if got := e.InferredKey(); !slices.Equal(got, c.key) {
			t.Errorf("%s: key %v, want %v", c.name, got, c.key)
		}
	}
}
