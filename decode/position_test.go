package decode

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// TestSourcePosition checks each format's source-position rule (docs/types-and-formats.md,
// position.go) and file.line, and that positions sort in log order.
func TestSourcePosition(t *testing.T) {
	cases := []struct {
		format, msg, want string
	}{
		{"canal-json", `{"data":[{"id":"1"}],"type":"INSERT","database":"d","table":"t","es":1589373515000,"id":3,"isDdl":false}`, "00000001589373515000/00000000000000000003"},
		{"canal-json", `{"data":[{"id":"1"}],"type":"INSERT","database":"d","table":"t","isDdl":false}`, "NULL"},
		{"maxwell-json", `{"database":"d","table":"t","type":"insert","ts":1700000000,"xid":7,"xoffset":2,"position":"mysql-bin.000003:4242","data":{"id":1}}`, "mysql-bin.000003/00000000000000004242/00000000000000000002"},
		{"maxwell-json", `{"database":"d","table":"t","type":"insert","ts":1700000001,"xid":8,"data":{"id":1}}`, "00000000001700000001/00000000000000000008/"},
		{"ogg-json", `{"table":"D.T","op_type":"I","pos":"00000000000000001443","csn":"99","after":{"id":1}}`, "00000000000000001443"},
		{"ogg-json", `{"table":"D.T","op_type":"I","csn":"99","after":{"id":1}}`, "00000000000000000099"},
		{"debezium-json", `{"before":null,"after":{"id":1},"op":"c","source":{"connector":"mysql","file":"binlog.000002","pos":1033,"row":1,"ts_ms":1}}`, "binlog.000002/00000000000000001033/00000000000000000001"},
		{"debezium-json", `{"before":null,"after":{"id":1},"op":"c","source":{"connector":"postgresql","lsn":24023128,"txId":555,"ts_ms":1}}`, "00000000000024023128"},
		{"debezium-json", `{"before":null,"after":{"id":1},"op":"c","source":{"connector":"sqlserver","commit_lsn":"00000025:00000d98:0025","change_lsn":"00000025:00000d98:0002","event_serial_no":1}}`, "00000025:00000d98:0025/00000025:00000d98:0002/00000000000000000001"},
		{"debezium-json", `{"before":null,"after":{"id":1},"op":"c","source":{"connector":"oracle","scn":"2122184","commit_scn":"2122185"}}`, "00000000000002122185/00000000000002122184"},
		{"debezium-json", `{"before":null,"after":{"id":1},"op":"c","source":{"connector":"mongodb","ts_ms":1558965508000,"ord":31}}`, "00000001558965508000/00000000000000000031"},
		{"debezium-json", `{"before":null,"after":{"id":1},"op":"c","source":{"ts_ms":17,"lsn":5}}`, "00000000000000000017/////00000000000000000005//////"},
		{"debezium-json", `{"before":null,"after":{"id":1},"op":"c"}`, "NULL"},
	}
	for _, c := range cases {
		f, _ := Lookup(c.format)
		s, err := arrowconv.ParseColumns("id BIGINT, ln BIGINT METADATA FROM 'file.line' VIRTUAL, sp STRING METADATA FROM 'source-position' VIRTUAL")
		if err != nil {
			t.Fatal(err)
		}
		o := Options{Producer: true, CaseInsensitive: true}
		b := arrowconv.NewBuilder(memory.NewGoAllocator(), s)
		d, err := New(f, s, o, b)
		if err != nil {
			t.Fatal(err)
		}
		d.SetLine(42)
		if _, err := d.Decode([]byte(c.msg)); err != nil {
			t.Fatalf("%s: %v", c.msg, err)
		}
		rec := b.Flush()
		ln := rec.Column(2).(*array.Int64).Value(0)
		sp := rec.Column(3).(*array.String)
		got := "NULL"
		if sp.IsValid(0) {
			got = sp.Value(0)
		}
		if ln != 42 || got != c.want {
			t.Errorf("%s %s:\nline %d, position %q\nwant 42, %q", c.format, c.msg, ln, got, c.want)
		}
		rec.Release()
		b.Release()
	}
	// Padding makes text order numeric order.
	if !(string(appendPositionPart(nil, []byte("999"))) < string(appendPositionPart(nil, []byte("1000")))) {
		t.Error("padded positions do not sort numerically")
	}
}
