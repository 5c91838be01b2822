package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cdcetl/cdcetl/audit"
	"github.com/cdcetl/cdcetl/internal/cdcgen"
)

// A built Maxwell archive: transactions of 1-4 rows, each with a GTID,
// an xid, xoffsets and a commit, binlog files of 10 transactions, two
// tables, cut into files of perFile messages.
type mxMsg struct {
	txn, row int
	text     string
}

const mxUUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"

func maxwellArchive(txns int) []mxMsg {
	var out []mxMsg
	for t := 0; t < txns; t++ {
		rows := 1 + t%4
		for r := 0; r < rows; r++ {
			table := []string{"orders", "items"}[(t+r)%2]
			var extra string
			if rows > 1 {
				extra += fmt.Sprintf(`,"xoffset":%d`, r)
			}
			if r == rows-1 {
				extra += `,"commit":true`
			}
			msg := fmt.Sprintf(`{"database":"shop","table":"%s","type":"insert","ts":%d,"xid":%d%s,"position":"mysql-bin.%06d:%d","gtid":"%s:%d","server_id":7,"data":{"id":%d,"v":"x%d"}}`,
				table, 1700000000+60*t, 5000+3*t, extra, 1+t/10, 4+1000*(t%10)+100*r, mxUUID, 100+t, 10*t+r, r)
			out = append(out, mxMsg{t, r, msg})
		}
	}
	return out
}

// layout writes msgs into files of perFile messages named by name(i) and
// returns each message's place "file:line" by (txn, row).
func layout(t *testing.T, dir string, msgs []mxMsg, perFile int, name func(i, first int) string) map[[2]int]audit.Loc {
	t.Helper()
	locs := map[[2]int]audit.Loc{}
	for i := 0; i*perFile < len(msgs); i++ {
		part := msgs[i*perFile : min(len(msgs), (i+1)*perFile)]
		p := filepath.Join(dir, name(i, i*perFile))
		var b strings.Builder
		for j, m := range part {
			b.WriteString(m.text + "\n")
			locs[[2]int{m.txn, m.row}] = audit.Loc{File: p, Line: int64(j + 1)}
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return locs
}

func hourly(i, _ int) string { return fmt.Sprintf("maxwell-%03d.json", i) }

func runAudit(t *testing.T, paths ...string) *audit.Report {
	t.Helper()
	// Small chunks and two workers: chunks come back out of order.
	rep, err := Audit(context.Background(), Config{InputOptions: InputOptions{ChunkSize: 700}, RunOptions: RunOptions{Workers: 2}}, paths, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func without(msgs []mxMsg, drop func(m mxMsg) bool) []mxMsg {
	var out []mxMsg
	for _, m := range msgs {
		if !drop(m) {
			out = append(out, m)
		}
	}
	return out
}

// lastRow is the index of transaction t's last row.
func lastRow(t int) int { return t % 4 }

func gapKinds(r *audit.Report) []string {
	var k []string
	for _, g := range r.Gaps {
		k = append(k, g.Kind)
	}
	slices.Sort(k)
	return k
}

func findGap(t *testing.T, r *audit.Report, kind string) audit.Gap {
	t.Helper()
	for _, g := range r.Gaps {
		if g.Kind == kind {
			return g
		}
	}
	t.Fatalf("no %s gap in %+v", kind, r.Gaps)
	return audit.Gap{}
}

func checkPlace(t *testing.T, g audit.Gap, before, after audit.Loc) {
	t.Helper()
	if g.Before == nil || *g.Before != before || g.After == nil || *g.After != after {
		t.Errorf("%s gap %q: between %v and %v, want %v and %v", g.Kind, g.What, g.Before, g.After, before, after)
	}
}

func TestAuditCompleteArchive(t *testing.T) {
	dir := t.TempDir()
	layout(t, dir, maxwellArchive(120), 40, hourly)
	r := runAudit(t, dir)
	if r.GapsFound != 0 || r.Duplicates.Messages != 0 || len(r.Order) != 0 || len(r.Notes) != 0 {
		t.Fatalf("a complete archive: gaps %+v, duplicates %+v, order %+v, notes %q", r.Gaps, r.Duplicates, r.Order, r.Notes)
	}
	if len(r.Coverage.Streams) != 1 || r.Coverage.Streams[0].Name != "maxwell-json server_id 7" || len(r.Coverage.Streams[0].Tables) != 2 {
		t.Fatalf("coverage %+v", r.Coverage.Streams)
	}
	if r.Coverage.Messages != 300 || r.Coverage.Rows[0] != 300 {
		t.Fatalf("counts: %d messages, rows %v; want 300", r.Coverage.Messages, r.Coverage.Rows)
	}
}

func TestAuditMissingGTIDRange(t *testing.T) {
	dir := t.TempDir()
	msgs := without(maxwellArchive(120), func(m mxMsg) bool { return m.txn >= 32 && m.txn <= 34 })
	locs := layout(t, dir, msgs, 40, hourly)
	r := runAudit(t, dir)
	if k := gapKinds(r); !slices.Equal(k, []string{"gtid"}) {
		t.Fatalf("gaps %+v", r.Gaps)
	}
	g := r.Gaps[0]
	if g.Missing != 3 || !strings.Contains(g.What, fmt.Sprintf("%s:%d-%d", mxUUID, 132, 134)) {
		t.Errorf("gap %+v", g)
	}
	checkPlace(t, g, locs[[2]int{31, lastRow(31)}], locs[[2]int{35, 0}])
}

func TestAuditTransactionCutShort(t *testing.T) {
	dir := t.TempDir()
	// Transaction 50 has three rows: keep only its first.
	msgs := without(maxwellArchive(120), func(m mxMsg) bool { return m.txn == 50 && m.row > 0 })
	locs := layout(t, dir, msgs, 40, hourly)
	r := runAudit(t, dir)
	if k := gapKinds(r); !slices.Equal(k, []string{"transaction"}) {
		t.Fatalf("gaps %+v", r.Gaps)
	}
	g := r.Gaps[0]
	if !strings.Contains(g.What, "xid 5150 cut short") {
		t.Errorf("gap %+v", g)
	}
	checkPlace(t, g, locs[[2]int{50, 0}], locs[[2]int{51, 0}])

	// A row lost from the middle of a transaction.
	dir = t.TempDir()
	msgs = without(maxwellArchive(120), func(m mxMsg) bool { return m.txn == 51 && m.row == 1 })
	locs = layout(t, dir, msgs, 40, hourly)
	r = runAudit(t, dir)
	if k := gapKinds(r); !slices.Equal(k, []string{"transaction"}) {
		t.Fatalf("gaps %+v", r.Gaps)
	}
	if g := r.Gaps[0]; !strings.Contains(g.What, "xid 5153: row xoffset 1 not") || g.Missing != 1 {
		t.Errorf("gap %+v", g)
	}
	checkPlace(t, r.Gaps[0], locs[[2]int{51, 0}], locs[[2]int{51, 3}])
}

func TestAuditMissingBinlogFile(t *testing.T) {
	dir := t.TempDir()
	// Binlog file 3 holds transactions 20-29.
	msgs := without(maxwellArchive(120), func(m mxMsg) bool { return m.txn >= 20 && m.txn <= 29 })
	locs := layout(t, dir, msgs, 40, hourly)
	r := runAudit(t, dir)
	if k := gapKinds(r); !slices.Equal(k, []string{"binlog-file", "gtid"}) {
		t.Fatalf("gaps %+v", r.Gaps)
	}
	g := findGap(t, r, "binlog-file")
	if g.Missing != 1 || !strings.Contains(g.What, "binlog file mysql-bin.000003 not in the archive") {
		t.Errorf("gap %+v", g)
	}
	checkPlace(t, g, locs[[2]int{19, lastRow(19)}], locs[[2]int{30, 0}])
	if g := findGap(t, r, "gtid"); g.Missing != 10 {
		t.Errorf("gap %+v", g)
	}
}

func TestAuditMissingKafkaConnectFile(t *testing.T) {
	dir := t.TempDir()
	kafka := func(_, first int) string { return fmt.Sprintf("shop.events+0+%010d.json", first) }
	layout(t, dir, maxwellArchive(120), 40, kafka)
	if r := runAudit(t, dir); r.GapsFound != 0 {
		t.Fatalf("complete Kafka Connect archive: %+v", r.Gaps)
	}
	lost := filepath.Join(dir, kafka(0, 80))
	if err := os.Remove(lost); err != nil {
		t.Fatal(err)
	}
	r := runAudit(t, dir)
	g := findGap(t, r, "kafka-offset")
	if g.Missing != 40 || !strings.Contains(g.What, "partition 0: offsets 80-119") {
		t.Errorf("gap %+v", g)
	}
	checkPlace(t, g, audit.Loc{File: filepath.Join(dir, kafka(0, 40)), Line: 40}, audit.Loc{File: filepath.Join(dir, kafka(0, 120)), Line: 1})
	for _, k := range gapKinds(r) {
		if k != "kafka-offset" && k != "gtid" && k != "transaction" && k != "binlog-file" {
			t.Errorf("unexpected gap kind %s", k)
		}
	}
}

func TestAuditDuplicatedFile(t *testing.T) {
	dir := t.TempDir()
	layout(t, dir, maxwellArchive(120), 40, hourly)
	orig := filepath.Join(dir, hourly(1, 0))
	data, err := os.ReadFile(orig)
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(dir, "maxwell-999-copy.json")
	if err := os.WriteFile(cp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r := runAudit(t, dir)
	if r.GapsFound != 0 || len(r.Order) != 0 {
		t.Fatalf("gaps %+v order %+v", r.Gaps, r.Order)
	}
	d := r.Duplicates
	if d.Messages != 40 || len(d.Files) != 1 || d.Files[0].File != cp || d.Files[0].Of != orig || !d.Files[0].Whole {
		t.Fatalf("duplicates %+v", d)
	}
	if s := d.Samples[0]; s.First != (audit.Loc{File: orig, Line: 1}) || s.Copy != (audit.Loc{File: cp, Line: 1}) {
		t.Errorf("first sample %+v", s)
	}
}

func TestAuditPositionsOutOfOrder(t *testing.T) {
	dir := t.TempDir()
	msgs := maxwellArchive(120)
	// The second and third hours' files hold each other's messages.
	swapped := append(append(append([]mxMsg{}, msgs[:40]...), msgs[80:120]...), msgs[40:80]...)
	swapped = append(swapped, msgs[120:]...)
	locs := layout(t, dir, swapped, 40, hourly)
	r := runAudit(t, dir)
	if r.GapsFound != 0 || r.Duplicates.Messages != 0 {
		t.Fatalf("gaps %+v duplicates %+v", r.Gaps, r.Duplicates)
	}
	if len(r.Order) != 2 {
		t.Fatalf("order %+v", r.Order)
	}
	for _, o := range r.Order {
		if o.Count != 1 {
			t.Errorf("%s went back %d times, want 1", o.Table, o.Count)
		}
		// The first message of the table in the third file steps back.
		at := o.Samples[0].At
		m := msgs[40]
		if !strings.Contains(m.text, `"table":"`+strings.TrimPrefix(o.Table, "shop.")+`"`) {
			m = msgs[41]
		}
		if want := locs[[2]int{m.txn, m.row}]; at != want {
			t.Errorf("%s: stepped back at %v, want %v", o.Table, at, want)
		}
	}
}

func TestAuditUnreadableMessage(t *testing.T) {
	dir := t.TempDir()
	msgs := maxwellArchive(20)
	msgs[7].text = msgs[7].text[:40] // cut short, as a crashed writer leaves it
	locs := layout(t, dir, msgs, 40, hourly)
	r := runAudit(t, dir)
	g := findGap(t, r, "unreadable")
	checkPlace(t, g, locs[[2]int{msgs[7].txn, msgs[7].row}], locs[[2]int{msgs[7].txn, msgs[7].row}])
}

// Debezium with the transaction topic in the archive: each event's
// transaction block against the END records' counts per table.
func debeziumArchive(t *testing.T, dir string, drop func(txn, event int) bool) {
	t.Helper()
	var events, markers strings.Builder
	for j := 0; j < 30; j++ {
		id := fmt.Sprintf("571:%d", 53195800+j)
		n := map[string]int{}
		for e := 0; e < 1+j%3; e++ {
			table := []string{"a", "b"}[e%2]
			n[table]++
			if drop(j, e) {
				continue
			}
			fmt.Fprintf(&events, `{"before":null,"after":{"id":%d},"source":{"connector":"mysql","name":"dbserver1","db":"s1","table":"%s","file":"mysql-bin.000003","pos":%d,"row":0,"ts_ms":%d},"op":"c","ts_ms":1,"transaction":{"id":"%s","total_order":%d,"data_collection_order":%d}}`+"\n",
				100*j+e, table, 1000*j+10*e, 1700000000000+60000*int64(j), id, e+1, n[table])
		}
		fmt.Fprintf(&markers, `{"status":"BEGIN","id":"%s","event_count":null,"data_collections":null}`+"\n", id)
		var colls []string
		for _, tb := range []string{"a", "b"} {
			if n[tb] > 0 {
				colls = append(colls, fmt.Sprintf(`{"data_collection":"s1.%s","event_count":%d}`, tb, n[tb]))
			}
		}
		fmt.Fprintf(&markers, `{"status":"END","id":"%s","event_count":%d,"data_collections":[%s]}`+"\n", id, 1+j%3, strings.Join(colls, ","))
	}
	for name, text := range map[string]string{"dbserver1.s1+0+0000000000.json": events.String(), "dbserver1.transaction+0+0000000000.json": markers.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAuditDebeziumTransactions(t *testing.T) {
	dir := t.TempDir()
	debeziumArchive(t, dir, func(int, int) bool { return false })
	if r := runAudit(t, dir); r.GapsFound != 0 || len(r.Notes) != 0 {
		t.Fatalf("complete: gaps %+v notes %q", r.Gaps, r.Notes)
	}
	// Transaction 8 has three events: a, b, a. Its last is lost: only the
	// END record tells.
	dir = t.TempDir()
	debeziumArchive(t, dir, func(j, e int) bool { return j == 8 && e == 2 })
	r := runAudit(t, dir)
	if k := gapKinds(r); !slices.Equal(k, []string{"transaction"}) {
		t.Fatalf("gaps %+v", r.Gaps)
	}
	if g := r.Gaps[0]; g.Table != "s1.a" || g.Missing != 1 || !strings.Contains(g.What, "transaction 571:53195808: s1.a events data_collection_order 2 not in the archive (its END says 2)") {
		t.Errorf("gap %+v", g)
	}
	// Its first event lost: data_collection_order 1 is missing, whatever
	// the END says.
	dir = t.TempDir()
	debeziumArchive(t, dir, func(j, e int) bool { return j == 8 && e == 0 })
	r = runAudit(t, dir)
	if k := gapKinds(r); !slices.Equal(k, []string{"transaction"}) || !strings.Contains(r.Gaps[0].What, "data_collection_order 1 not") {
		t.Fatalf("gaps %+v", r.Gaps)
	}
}

// Generated archives of every format and shape hold no gap, duplicate or
// step back, except Maxwell's envelope shape, whose xids are random.
func TestAuditGeneratedArchives(t *testing.T) {
	for _, format := range []string{"canal-json", "maxwell-json", "ogg-json", "debezium-json"} {
		for i, shape := range cdcgen.Shapes {
			if format == "maxwell-json" && shape == "envelope" {
				continue
			}
			data, err := cdcgen.ShapeLines(format, shape, uint64(11+i), 256<<10)
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(t.TempDir(), "in.json")
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			r := runAudit(t, p)
			if r.GapsFound != 0 || r.Duplicates.Messages != 0 {
				t.Errorf("%s %s: gaps %+v, duplicates %+v", format, shape, r.Gaps, r.Duplicates)
			}
			if r.Coverage.Messages == 0 || int64(strings.Count(string(data), "\n")) != r.Coverage.Files[0].Lines {
				t.Errorf("%s %s: %d messages, %d lines", format, shape, r.Coverage.Messages, r.Coverage.Files[0].Lines)
			}
		}
	}
}

// TestAuditAsOf: an audit up to a point before a gap finds none; the
// messages after the point are counted as left out.
func TestAuditAsOf(t *testing.T) {
	dir := t.TempDir()
	msgs := without(maxwellArchive(120), func(m mxMsg) bool { return m.txn >= 32 && m.txn <= 34 })
	layout(t, dir, msgs, 40, hourly)
	at := time.Unix(1700000000+60*20, 0).UTC()
	rep, err := Audit(context.Background(), Config{InputOptions: InputOptions{AsOf: &AsOf{Time: at}}, RunOptions: RunOptions{Workers: 2}}, []string{dir}, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, m := range msgs {
		if m.txn <= 20 {
			kept++
		}
	}
	if rep.GapsFound != 0 || rep.Coverage.Messages != int64(kept) || rep.Coverage.AfterCut != int64(len(msgs)-kept) {
		t.Fatalf("as of %s: gaps %+v, %d messages (want %d), %d after (want %d)", at, rep.Gaps, rep.Coverage.Messages, kept, rep.Coverage.AfterCut, len(msgs)-kept)
	}
	// Past the gap it is found.
	rep, err = Audit(context.Background(), Config{InputOptions: InputOptions{AsOf: &AsOf{Time: at.Add(time.Hour)}}, RunOptions: RunOptions{Workers: 2}}, []string{dir}, audit.Options{})
	if err != nil || rep.GapsFound != 1 {
		t.Fatalf("as of %s: %v %+v", at.Add(time.Hour), err, rep.Gaps)
	}
}

// TestAuditThousandsOfInputs: 2,000 hourly files as Kafka Connect writes
// them, with one lost, one delivered twice and one transaction cut short:
// exactly those are found, at their places, whatever the chunks' order.
func TestAuditThousandsOfInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 2,000 files")
	}
	dir := t.TempDir()
	if err := cdcgen.WriteArchive(dir, 2000, 3, true, 9); err != nil {
		t.Fatal(err)
	}
	r := runAudit(t, dir)
	kinds := map[string]int{}
	for _, g := range r.Gaps {
		kinds[g.Kind]++
	}
	if r.GapsFound != 3 || kinds["kafka-offset"] != 1 || kinds["gtid"] != 1 || kinds["transaction"] != 1 {
		t.Fatalf("gaps %+v", r.Gaps)
	}
	// Hours 3 and 4 have no events (no file), hour 13's file is lost,
	// hour 7's is there twice.
	if n := len(r.Coverage.Files); n != 2000-2-1+1 {
		t.Errorf("%d files", n)
	}
	if d := r.Duplicates; len(d.Files) != 1 || !d.Files[0].Whole || !strings.Contains(d.Files[0].File, "retry") {
		t.Errorf("duplicates %+v", d)
	}
	g := findGap(t, r, "kafka-offset")
	if !strings.HasSuffix(g.Before.File, fmt.Sprintf("+%010d.json.gz", 0)) && g.After.Line != 1 {
		t.Errorf("kafka gap %+v", g)
	}
}
