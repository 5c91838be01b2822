package decode

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// observed is an Observation as a test compares it: its fields, and the
// types its Types declare.
func observed(t testing.TB, format string, schemaInclude bool, msg []byte) string {
	t.Helper()
	f, ok := Lookup(format)
	if !ok {
		t.Fatalf("no format %s", format)
	}
	var o Observation
	if !f.Observe(schemaInclude, msg, &o) {
		return "(not observed)"
	}
	return observationText(f, &o)
}

// observationText renders everything an Observation holds.
func observationText(f *Format, o *Observation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "table %q.%q event %v %d %q op %q changes %d control %q pk %s key %s",
		o.NS, o.Table, o.Event, o.Milli, o.Position, o.Op, o.Changes, o.Control, o.PrimaryKey, o.KeyImage)
	for _, img := range o.Images {
		fmt.Fprintf(&b, " image %s", img)
	}
	f.Declared(o.Types, func(col []byte, at arrowconv.Type, evidence string) {
		fmt.Fprintf(&b, " %s %s (%s)", col, at, evidence)
	})
	return b.String()
}

// TestObserve: each unit finds its format's table, position, kind, key,
// declared types and images where the format keeps them.
func TestObserve(t *testing.T) {
	for _, tt := range []struct {
		format string
		si     bool
		msg    string
		want   string
	}{
		{"canal-json", false, `{"data":[{"id":1},{"id":2}],"database":"d\u0062","es":1700000000000,"id":7,"isDdl":false,"mysqlType":{"id":"int(11) unsigned"},"pkNames":["id"],"table":"t","type":"UPDATE"}`,
			`table "db"."t" event true 1700000000000 "es=1700000000000 id=7" op 'U' changes 2 control "" pk ["id"] key  image {"id":1} image {"id":2} id BIGINT (mysqlType int(11) unsigned)`},
		{"canal-json", false, `{"database":"d","table":"t","type":"CREATE","isDdl":true,"sql":"create table t"}`,
			`table "d"."t" event true 0 "" op '\x00' changes 0 control "CREATE" pk  key `},
		{"maxwell-json", false, `{"database":"d","table":"t","type":"bootstrap-insert","ts":1700000000,"position":"mysql-bin.000003:1234","xid":9,"xoffset":0,"primary_key_columns":["id"],"data":{"id":1}}`,
			`table "d"."t" event true 1700000000000 "position=mysql-bin.000003:1234 xid=9 xoffset=0" op 'I' changes 1 control "" pk ["id"] key  image {"id":1}`},
		{"maxwell-json", false, `{"type":"table-create","database":"d","table":"t","ts":1700000000123,"def":{"columns":[{"type":"decimal","name":"p","precision":10,"scale":2}],"primary-key":["p"]}}`,
			`table "d"."t" event true 1700000000123 "" op '\x00' changes 0 control "table-create" pk ["p"] key  p DECIMAL(10, 2) (Maxwell DDL def decimal)`},
		{"ogg-json", false, `{"table":"S.T","op_type":"D","op_ts":"2020-05-13 15:40:06.000000","pos":"0001","primary_keys":["ID"],"before":{"ID":1}}`,
			`table "S"."T" event true 1589384406000 "pos=0001" op 'D' changes 1 control "" pk ["ID"] key  image {"ID":1}`},
		{"debezium-json", false, `{"before":{"id":1,"n":null},"after":null,"source":{"db":"d","schema":"s","table":"t","ts_ms":5,"file":"f","pos":3},"op":"d"}`,
			`table "s"."t" event true 5 "file=f pos=3" op 'D' changes 1 control "" pk  key {"id":1,"n":null} image {"id":1,"n":null}`},
		{"debezium-json", true, `{"schema":{"fields":[{"field":"after","fields":[{"field":"d","type":"int32","name":"io.debezium.time.Date"}]}]},"payload":{"after":{"d":1},"source":{"db":"d","collection":"c"},"op":"r"}}`,
			`table "d"."c" event true 0 "" op 'I' changes 1 control "" pk  key  image {"d":1} d DATE (Connect io.debezium.time.Date)`},
		{"debezium-json", true, `{"after":{"d":1}}`,
			`table ""."" event false 0 "" op '\x00' changes 0 control "(no payload)" pk  key `},
		{"debezium-json", false, `{"status":"BEGIN","id":"1"}`,
			`table ""."" event true 0 "" op '\x00' changes 0 control "transaction BEGIN" pk  key `},
		{"json", false, `{"a":1}`, `(not observed)`},
	} {
		if got := observed(t, tt.format, tt.si, []byte(tt.msg)); got != tt.want {
			t.Errorf("%s %s:\n got %s\nwant %s", tt.format, tt.msg, got, tt.want)
		}
	}
}

// FuzzObservation: what the fast walk observes is what jsonparser alone
// observes, for any message of any format (the fuzz twin of pick).
func FuzzObservation(f *testing.F) {
	files, _ := filepath.Glob("../testdata/*-json/*.jsonl")
	archives, _ := filepath.Glob("../testdata/archives/*/*.jsonl")
	for _, p := range append(files, archives...) {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<24)
		for i := 0; i < 4 && sc.Scan(); i++ {
			f.Add(uint8(i), bytes.Clone(sc.Bytes()))
		}
	}
	f.Add(uint8(3), []byte(`{"source":{"file":"f","pos":null,"pos":3,"row":"x\"y"},"op":"c","after":{"a\u0041":1,"a":[1,{"b":2}]}}`))
	f.Add(uint8(1), []byte(`{"type":"insert""data":{"":0A0.""}`))
	formats := []string{"canal-json", "maxwell-json", "ogg-json", "debezium-json"}
	f.Fuzz(func(t *testing.T, which uint8, msg []byte) {
		format, si := formats[int(which)%4], which&4 != 0
		both := func(slow bool) string {
			slowObserve = slow
			defer func() { slowObserve = false }()
			return observed(t, format, si, msg)
		}
		if fast, slow := both(false), both(true); fast != slow {
			t.Fatalf("%s %q: the fast walk observes\n%s\njsonparser\n%s", format, msg, fast, slow)
		}
	})
}

// TestObservationReused: an Observation reused for the next message holds
// nothing of the last one.
func TestObservationReused(t *testing.T) {
	f, _ := Lookup("maxwell-json")
	var o Observation
	f.Observe(false, []byte(`{"database":"d","table":"t\u0031","type":"insert","position":"a\u0031","primary_key_columns":["id"],"data":{"id":1}}`), &o)
	f.Observe(false, []byte(`{"database":"e","table":"u","type":"delete","data":{"id":2}}`), &o)
	got := fmt.Sprintf("%s %s %q %s %d %s", o.NS, o.Table, o.Position, o.PrimaryKey, len(o.Images), o.Images[0])
	if want := `e u ""  1 {"id":2}`; !reflect.DeepEqual(got, want) {
		t.Errorf("reused: %s, want %s", got, want)
	}
}
