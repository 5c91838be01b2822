package decode

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/internal/cdcgen"
)

// TestFactsFields checks each format's stream evidence on messages as
// the producers write them.
func TestFactsFields(t *testing.T) {
	type want struct {
		stream, gtid, binlog, txn, marker string
		xid, xoffset, pos, total, coll    int64
		hasXid, hasXOffset, commit, valid bool
	}
	cases := []struct {
		format, msg   string
		schemaInclude bool
		want          want
	}{
		{"maxwell-json", `{"database":"test","table":"e","type":"insert","ts":1477053217,"xid":23396,"xoffset":2,"commit":true,"position":"master.000006:800911","gtid":"3e11fa47-71ca-11e1-9e33-c80aa9429562:23","server_id":23042,"data":{"id":1}}`, false,
			want{stream: "23042", gtid: "3e11fa47-71ca-11e1-9e33-c80aa9429562:23", binlog: "master.000006", pos: 800911, xid: 23396, xoffset: 2, hasXid: true, hasXOffset: true, commit: true, valid: true}},
		{"maxwell-json", `{"database":"test","table":"e","type":"insert","ts":1,"xid":5,"data":{"id":1}}`, false,
			want{xid: 5, hasXid: true, valid: true}},
		{"canal-json", `{"data":[{"id":"1"}],"type":"INSERT","database":"d","table":"t","es":1,"id":3,"gtid":"u:7","isDdl":false}`, false,
			want{gtid: "u:7", valid: true}},
		{"debezium-json", `{"before":null,"after":{"id":1},"op":"c","source":{"connector":"mysql","name":"dbserver1","file":"binlog.000002","pos":1033,"row":1,"gtid":"u:9"},"transaction":{"id":"571:53195829","total_order":2,"data_collection_order":1}}`, false,
			want{stream: "mysql/dbserver1", gtid: "u:9", binlog: "binlog.000002", pos: 1033, txn: "571:53195829", total: 2, coll: 1, valid: true}},
		{"debezium-json", `{"schema":{},"payload":{"before":null,"after":{"id":1},"op":"c","source":{"connector":"postgresql","name":"pg","lsn":5}}}`, true,
			want{stream: "postgresql/pg", valid: true}},
		{"debezium-json", `{"status":"END","id":"571:53195832","ts_ms":1,"event_count":2,"data_collections":[{"data_collection":"s1.a","event_count":1}]}`, false,
			want{marker: "E 571:53195832 2", valid: true}},
		{"debezium-json", `{"status":"BEGIN","id":"x","event_count":null,"data_collections":null}`, false,
			want{marker: "B x 0", valid: true}},
		{"ogg-json", `{"table":"A.B","op_type":"I","pos":"00000000000000001443","after":{"id":1}}`, false, want{valid: true}},
		{"canal-json", `{"data":[{"id":"1"}],"type":"INSERT"`, false, want{}},
	}
	var x Facts
	for _, c := range cases {
		f, _ := Lookup(c.format)
		f.Facts(c.schemaInclude, []byte(c.msg), &x)
		got := want{stream: string(x.Stream), gtid: string(x.GTID), binlog: string(x.BinlogFile), pos: x.BinlogPos,
			xid: x.Xid, xoffset: x.XOffset, hasXid: x.HasXid, hasXOffset: x.HasXOffset, commit: x.Commit,
			txn: string(x.TxnID), total: x.TxnTotal, coll: x.TxnCollection, valid: x.Valid}
		if x.Marker != 0 {
			got.marker = string(x.Marker) + " " + string(x.MarkerID) + " " + string(rune('0'+x.MarkerCount))
			if x.Marker == 'E' && len(x.MarkerCollections) == 0 {
				t.Errorf("%s: END without its data_collections", c.msg)
			}
		}
		if got != c.want {
			t.Errorf("%s:\ngot  %+v\nwant %+v", c.msg, got, c.want)
		}
	}
}

// TestFactsPositionTwin checks Facts.Position against the decoder's
// source-position column on every message of the real archives and of
// every generated shape: the audit orders and identifies events by the
// position conversion writes.
func TestFactsPositionTwin(t *testing.T) {
	type input struct {
		format string
		lines  [][]byte
	}
	var inputs []input
	for dir, format := range map[string]string{"canal": "canal-json", "maxwell": "maxwell-json", "ogg": "ogg-json", "debezium": "debezium-json"} {
		files, _ := filepath.Glob(filepath.Join("..", "testdata", "archives", dir, "*.jsonl"))
		for _, p := range files {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			inputs = append(inputs, input{format, bytes.Split(data, []byte("\n"))})
		}
	}
	for _, format := range []string{"canal-json", "maxwell-json", "ogg-json", "debezium-json"} {
		for i, shape := range []string{"products", "envelope", "wide"} {
			data, err := cdcgen.ShapeLines(format, shape, uint64(7+i), 64<<10)
			if err != nil {
				t.Fatal(err)
			}
			inputs = append(inputs, input{format, bytes.Split(data, []byte("\n"))})
		}
	}
	s, err := arrowconv.ParseColumns("sp STRING METADATA FROM 'source-position' VIRTUAL")
	if err != nil {
		t.Fatal(err)
	}
	var x Facts
	checked := 0
	for _, in := range inputs {
		f, _ := Lookup(in.format)
		for _, l := range in.lines {
			if len(bytes.TrimSpace(l)) == 0 {
				continue
			}
			for _, schemaInclude := range []bool{false, true} {
				b := arrowconv.NewBuilder(memory.NewGoAllocator(), s)
				d, err := New(f, s, Options{Producer: true, SchemaInclude: schemaInclude, IgnoreParseErrors: false}, b)
				if err != nil {
					t.Fatal(err)
				}
				_, derr := d.Decode(l)
				rec := b.Flush()
				if derr == nil && rec != nil && rec.NumRows() > 0 {
					sp := rec.Column(1).(*array.String)
					want := "NULL"
					if sp.IsValid(0) {
						want = sp.Value(0)
					}
					f.Facts(schemaInclude, l, &x)
					got := "NULL"
					if x.Position != nil {
						got = string(x.Position)
					}
					if got != want {
						t.Errorf("%s (schema-include %v) %.200s:\nFacts %q\ncolumn %q", in.format, schemaInclude, l, got, want)
					}
					checked++
				}
				if rec != nil {
					rec.Release()
				}
				b.Release()
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d messages compared", checked)
	}
}

// factsText renders every field of Facts.
func factsText(x *Facts) string {
	return fmt.Sprintf("valid=%v pos=%q stream=%q gtid=%q xid=%d/%v xoffset=%d/%v commit=%v binlog=%q:%d txn=%q %d %d marker=%d %q %d %q",
		x.Valid, x.Position, x.Stream, x.GTID, x.Xid, x.HasXid, x.XOffset, x.HasXOffset, x.Commit, x.BinlogFile, x.BinlogPos,
		x.TxnID, x.TxnTotal, x.TxnCollection, x.Marker, x.MarkerID, x.MarkerCount, x.MarkerCollections)
}

// addArchiveSeeds seeds a (which, msg) fuzz target with the first lines of
// the real producer archives, each with its format (which % 4 indexes
// canal, maxwell, ogg, debezium).
func addArchiveSeeds(f *testing.F) {
	for i, dir := range []string{"canal", "maxwell", "ogg", "debezium"} {
		files, _ := filepath.Glob(filepath.Join("..", "testdata", "archives", dir, "*.jsonl"))
		for _, p := range files {
			data, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			for _, l := range bytes.SplitN(data, []byte("\n"), 4) {
				f.Add(uint8(i), l)
			}
		}
	}
}

// FuzzFacts is the fuzz twin of the fast member walk Facts reads with:
// the fast walk and jsonparser's must find the same facts; and a Facts
// reused for a message holds nothing of the one before.
func FuzzFacts(f *testing.F) {
	addArchiveSeeds(f)
	f.Add(uint8(1), []byte(`{"database":"d","table":"t","type":"insert","xid":1,"xoffset":"2","commit":true,"position":"f.1:x","gtid":"u:1","data":{}}`))
	f.Add(uint8(3), []byte(`{"status":"END","id":"a\"b","event_count":2,"data_collections":[{"data_collection":"s.a","event_count":2}]}`))
	formats := []string{"canal-json", "maxwell-json", "ogg-json", "debezium-json"}
	f.Fuzz(func(t *testing.T, which uint8, msg []byte) {
		format, si := formats[int(which)%4], which&4 != 0
		fm, _ := Lookup(format)
		read := func(slow bool, x *Facts) string {
			slowObserve = slow
			defer func() { slowObserve = false }()
			fm.Facts(si, msg, x)
			return factsText(x)
		}
		var x Facts
		fast := read(false, &x)
		if slow := read(true, &Facts{}); fast != slow {
			t.Fatalf("%s %q: the fast walk finds\n%s\njsonparser\n%s", format, msg, fast, slow)
		}
		var y Facts
		read(false, &y)
		fm.Facts(si, []byte(`{"x":1}`), &y)
		if again := read(false, &y); again != fast {
			t.Fatalf("%s %q: a reused Facts finds\n%s\nfresh\n%s", format, msg, again, fast)
		}
	})
}

// FuzzObserveFacts is the fuzz twin of ObserveFacts' one walk: it must
// observe what Observe does and find the facts Facts does, for any
// message, with the fast walk and with jsonparser's.
func FuzzObserveFacts(f *testing.F) {
	addArchiveSeeds(f)
	for i, format := range []string{"canal-json", "maxwell-json", "ogg-json", "debezium-json"} {
		data, _ := cdcgen.ShapeLines(format, "envelope", 5, 4<<10)
		for _, l := range bytes.SplitN(data, []byte("\n"), 3)[:2] {
			f.Add(uint8(i), l)
		}
	}
	f.Add(uint8(1), []byte(`{"database":"d","table":"t","type":"insert","xid":1,"xoffset":2,"commit":true,"position":"f.1:9","gtid":"u:1","server_id":3,"data":{}}`))
	formats := []string{"canal-json", "maxwell-json", "ogg-json", "debezium-json"}
	f.Fuzz(func(t *testing.T, which uint8, msg []byte) {
		format, si := formats[int(which)%4], which&4 != 0
		fm, _ := Lookup(format)
		for _, slow := range []bool{false, true} {
			slowObserve = slow
			var o1, o2 Observation
			var x1, x2 Facts
			ok1 := fm.Observe(si, msg, &o1)
			fm.Facts(si, msg, &x1)
			ok2 := fm.ObserveFacts(si, msg, &o2, &x2)
			slowObserve = false
			if a, b := observationText(fm, &o1), observationText(fm, &o2); ok1 != ok2 || a != b {
				t.Fatalf("%s %q (slow %v): ObserveFacts observes\n%v %s\nObserve\n%v %s", format, msg, slow, ok2, b, ok1, a)
			}
			if a, b := factsText(&x1), factsText(&x2); a != b {
				t.Fatalf("%s %q (slow %v): ObserveFacts finds\n%s\nFacts\n%s", format, msg, slow, b, a)
			}
		}
	})
}
