package decode

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// TestSourceMembersMap: source.properties made from the members the
// compact source path listed equals the map the general converter makes
// from the block, message after message (members changing, missing,
// reordered, nested, NULL, escaped; empty; a repeated "source"), strict and
// lenient, with Flink's and with producer semantics.
func TestSourceMembersMap(t *testing.T) {
	src := func(ts int, extra string) string {
		return fmt.Sprintf(`{"version":"1.9.7.Final","connector":"mysql","name":"dbserver1","ts_ms":%d,"snapshot":"false","db":"inventory","sequence":null,"table":"products","server_id":223344,"gtid":null,"file":"mysql-bin.000003","pos":%d,"row":0%s}`, ts, ts*7, extra)
	}
	var lines []string
	for i := range 40 {
		s := src(1589373515000+i, "")
		switch i % 8 {
		case 3:
			s = src(1589373515000+i, `,"thread":{"id":7},"query":[1,"a"]`)
		case 2:
			s = `{}` // after a full block: its members are none, not the last block's
		case 5:
			s = `{"db":"inv\"entory","connector":"mysql","ts_ms":` + fmt.Sprint(i) + `,"table":"t","x":1.5e3,"y":true}`
		case 6:
			s = src(1589373515000+i, `,"w":"2"`)
		case 4: // the members in order (the compact path), a value escaped
			s = strings.Replace(src(1589373515000+i, ""), `"dbserver1"`, `"db\"server\\1"`, 1)
			s = strings.Replace(strings.Replace(s, `"row":0`, `"row":-0`, 1), `"server_id":223344`, `"server_id":2.50E3`, 1)
		case 1: // in order, a boolean, a negative number and a large one
			s = strings.Replace(strings.Replace(src(1589373515000+i, ""), `"row":0`, `"row":-17`, 1), `"server_id":223344`, `"server_id":true`, 1)
			s = strings.Replace(s, `"pos":`, `"pos":123456789012345678901234567890`, 1)
			s = s[:strings.Index(s, `"pos":`)+len(`"pos":123456789012345678901234567890`)] + s[strings.Index(s, `,"row"`):]
		}
		msg := `{"before":null,"after":{"id":` + fmt.Sprint(i) + `},"source":` + s + `,"op":"c","ts_ms":1}`
		if i%8 == 7 {
			msg = `{"before":null,"after":{"id":1},"source":` + src(1, "") + `,"source":` + src(2, `,"z":"q"`) + `,"op":"c","ts_ms":1}`
		}
		lines = append(lines, msg)
	}
	for _, producer := range []bool{false, true} { // the only type source.properties takes is STRING
		for _, lenient := range []string{"false", "true"} {
			schema := "id INT, ts TIMESTAMP_LTZ(3) METADATA FROM 'source.timestamp' VIRTUAL, db STRING METADATA FROM 'source.database' VIRTUAL, " +
				"props MAP<STRING, STRING> METADATA FROM 'source.properties' VIRTUAL"
			decodeAll := func() (string, string) {
				d, b := srcDecoder(t, schema, lenient, producer)
				defer b.Release()
				var errs strings.Builder
				for _, l := range lines {
					if res, err := d.Decode([]byte(l)); err != nil {
						fmt.Fprintln(&errs, err)
					} else if res.Err != nil || len(res.Nulled) > 0 {
						fmt.Fprintln(&errs, res.Err, res.Nulled)
					}
				}
				rec := b.Flush()
				defer rec.Release()
				return fmt.Sprint(rec.Column(len(rec.Columns()) - 1).(*array.Map)), errs.String()
			}
			fast, fastErrs := decodeAll()
			sourceMembersFast = false
			general, generalErrs := decodeAll()
			sourceMembersFast = true
			if fast != general || fastErrs != generalErrs {
				t.Errorf("producer %v, lenient %s: from the members\n%s\n%s\nthe general converter\n%s\n%s", producer, lenient, fast, fastErrs, general, generalErrs)
			}
			if !strings.Contains(fast, `"1589373515038"`) || !strings.Contains(fast, `"inv\"entory"`) || !strings.Contains(fast, `"db\"server\\1"`) {
				t.Errorf("the maps lack a member they should hold:\n%s", fast)
			}
		}
	}
}

// srcDecoder is a debezium-json decoder of schema, lenient or not, with
// Flink's or producer semantics.
func srcDecoder(t *testing.T, schema, lenient string, producer bool) (Decoder, *arrowconv.Builder) {
	t.Helper()
	f, _ := Lookup("debezium-json")
	s, err := arrowconv.ParseColumns(schema)
	if err != nil {
		t.Fatal(err)
	}
	o, err := ParseOptions(f, map[string]string{"debezium-json.ignore-parse-errors": lenient}, false)
	if err != nil {
		t.Fatal(err)
	}
	o.Producer = producer
	if err := o.Check(f); err != nil {
		t.Fatal(err)
	}
	b := arrowconv.NewBuilder(memory.NewGoAllocator(), s)
	d, err := New(f, s, o, b)
	if err != nil {
		t.Fatal(err)
	}
	return d, b
}

// A source block read after a new key order was learned (a producer that
// changed its field order) names its keys by the new order, the empty
// block included: the keys kept from the last block are not reused. The
// fuzz twin found the empty block given the old keys.
func TestSourceKeysAfterNewOrder(t *testing.T) {
	lines := []string{
		`{"after":{"id":1},"source":{"version":"1","connector":"mysql","db":"inv","table":"t"},"op":"c"}`,
		`{"after":{"id":2},"source":{"version":"1","connector":"mysql","db":"inv","table":"t"},"op":"c"}`,
		`{"after":{"id":3},"source":{"table":"t","db":"inv","x":1},"op":"c"}`,
		`{"after":{"id":4},"source":{},"op":"c"}`,
		`{"after":{"id":5},"source":{"table":"u","db":"inv","x":2},"op":"c"}`,
	}
	schema := "id INT, db STRING METADATA FROM 'source.database' VIRTUAL, props MAP<STRING, STRING> METADATA FROM 'source.properties' VIRTUAL"
	decodeAll := func() string {
		d, b := srcDecoder(t, schema, "false", false)
		defer b.Release()
		for _, l := range lines {
			if _, err := d.Decode([]byte(l)); err != nil {
				t.Fatal(err)
			}
		}
		rec := b.Flush()
		defer rec.Release()
		return fmt.Sprint(rec.Column(len(rec.Columns()) - 1).(*array.Map))
	}
	fast := decodeAll()
	sourceMembersFast = false
	general := decodeAll()
	sourceMembersFast = true
	if fast != general {
		t.Errorf("from the members\n%s\nthe general converter\n%s", fast, general)
	}
}
