package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cdcetl/cdcetl/decode"
)

// feed audits lines of format as one file each split, as the pipeline
// does: ObserveFacts, Identify, Add.
func feed(t testing.TB, format string, files [][]string) *Report {
	f, ok := decode.Lookup(format)
	if !ok {
		t.Fatalf("no format %s", format)
	}
	a := New(Options{})
	var o decode.Observation
	var x decode.Facts
	for _, lines := range files {
		fi := a.AddFile("f.json", format)
		for i, l := range lines {
			f.ObserveFacts(false, []byte(l), &o, &x)
			if !x.Valid {
				a.Unreadable(fi, int64(i+1), "not JSON")
				continue
			}
			a.Add(&Event{File: fi, Line: int64(i + 1), NS: o.NS, Table: o.Table, Op: o.Op, Changes: o.Changes, Control: o.Control, Milli: o.Milli,
				Ident: Identify(x.Stream, o.NS, o.Table, x.Position, o.Op, o.Images), Facts: &x})
		}
		a.EndFile(fi, int64(len(lines)))
	}
	return a.Report()
}

// FuzzAuditor: any messages of any format, in any files, audit without
// failing; the counts reconcile (every change message is in its stream's
// and its table's coverage once), the report is valid JSON, and listed
// gaps never exceed those found.
func FuzzAuditor(f *testing.F) {
	f.Add(uint8(1), []byte(`{"database":"d","table":"t","type":"insert","ts":1,"xid":5,"xoffset":1,"commit":true,"position":"mysql-bin.000002:9","gtid":"u:3","data":{"id":1}}
{"database":"d","table":"t","type":"insert","ts":2,"xid":6,"commit":true,"position":"mysql-bin.000004:9","gtid":"u:7","data":{"id":1}}
{"database":"d","table":"t","type":"insert","ts":2,"xid":6,"commit":true,"position":"mysql-bin.000004:9","gtid":"u:7","data":{"id":1}}`))
	f.Add(uint8(3), []byte(`{"status":"END","id":"x","event_count":2,"data_collections":[{"data_collection":"s.a","event_count":2}]}
{"before":null,"after":{"id":1},"op":"c","source":{"connector":"mysql","name":"n","db":"s","table":"a","file":"b.01","pos":4,"gtid":"0-1-5"},"transaction":{"id":"x","total_order":2,"data_collection_order":2}}
not json`))
	f.Add(uint8(0), []byte(`{"data":[{"id":"1"}],"type":"INSERT","database":"d","table":"t","es":5,"id":1,"isDdl":false}
{"data":[{"id":"1"}],"type":"INSERT","database":"d","table":"t","es":4,"id":1,"isDdl":false}`))
	formats := []string{"canal-json", "maxwell-json", "ogg-json", "debezium-json"}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		lines := bytes.Split(data, []byte("\n"))
		if len(lines) > 200 {
			lines = lines[:200]
		}
		var files [][]string
		var cur []string
		for i, l := range lines {
			cur = append(cur, string(l))
			if i%int(2+which%5) == 0 {
				files, cur = append(files, cur), nil
			}
		}
		files = append(files, cur)
		r := feed(t, formats[int(which)%4], files)
		var msgs, tableMsgs int64
		for _, s := range r.Coverage.Streams {
			msgs += s.Messages
			for _, tb := range s.Tables {
				tableMsgs += tb.Messages
			}
		}
		if msgs != r.Coverage.Messages || tableMsgs != r.Coverage.Messages {
			t.Fatalf("%d change messages; streams count %d, tables %d", r.Coverage.Messages, msgs, tableMsgs)
		}
		if int64(len(r.Gaps)) > r.GapsFound || r.Duplicates.Messages > r.Coverage.Messages {
			t.Fatalf("gaps %d listed of %d; duplicates %d of %d", len(r.Gaps), r.GapsFound, r.Duplicates.Messages, r.Coverage.Messages)
		}
		if _, err := json.Marshal(r); err != nil {
			t.Fatal(err)
		}
		if _, err := r.HTML(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestSplitGTID: MySQL's and MariaDB's GTIDs, and what is neither.
func TestSplitGTID(t *testing.T) {
	for _, c := range []struct {
		in, srv string
		n       uint64
		ok      bool
	}{
		{"3e11fa47-71ca-11e1-9e33-c80aa9429562:23", "3e11fa47-71ca-11e1-9e33-c80aa9429562", 23, true},
		{"0-1-123", "0-1", 123, true},
		{"3e11fa47-71ca-11e1-9e33-c80aa9429562:1-23", "", 0, false},
		{"x", "", 0, false},
	} {
		srv, n, ok := splitGTID([]byte(c.in))
		if srv != c.srv && ok || n != c.n || ok != c.ok {
			t.Errorf("%s: %q %d %v", c.in, srv, n, ok)
		}
	}
}

// TestUnreadableGTIDsNoted: GTIDs of no known form (a GTID set) are
// counted in one note, not checked, and not a gap.
func TestUnreadableGTIDsNoted(t *testing.T) {
	var lines []string
	for i := 0; i < 50; i++ {
		lines = append(lines, fmt.Sprintf(`{"data":[{"id":"%d"}],"type":"INSERT","database":"d","table":"t","es":%d,"id":%d,"gtid":"u:1-%d","isDdl":false}`, i, 1000+i, i, i+1))
	}
	r := feed(t, "canal-json", [][]string{lines})
	if r.GapsFound != 0 || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], `50 GTIDs are neither`) || !strings.Contains(r.Notes[0], `"u:1-1", at f.json:1`) {
		t.Fatalf("gaps %+v notes %q", r.Gaps, r.Notes)
	}
}

// TestIdentSet: the identity set answers as a map does, through growth,
// a resize ahead (Expect) and warm-ups, on seeded random identities with
// repeats.
func TestIdentSet(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	a := New(Options{})
	ref := map[uint64]uint64{}
	for i := uint64(1); i <= 200_000; i++ {
		if i == 50_000 {
			a.Expect(300_000)
		}
		id := 1 + r.Uint64N(150_000) // repeats on purpose
		if i%128 == 0 {
			a.Warm([]uint64{id, id + 1})
		}
		first, seen := a.dups.add(id, i)
		want, had := ref[id]
		if seen != had || seen && first != want {
			t.Fatalf("id %d: set says %v %d, map %v %d", id, seen, first, had, want)
		}
		if !had {
			ref[id] = i
		}
	}
	if a.dups.n != len(ref) {
		t.Fatalf("%d held, want %d", a.dups.n, len(ref))
	}
}
