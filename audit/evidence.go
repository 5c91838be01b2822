package audit

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/buger/jsonparser"
	"github.com/zeebo/xxh3"
)

// --- GTIDs: per server, transaction numbers are contiguous.

// gtidRun is a run of consecutive transaction numbers met in a row, with
// where its first and last were seen.
type gtidRun struct {
	lo, hi       uint64
	loLoc, hiLoc mark
}

type gtidServer struct {
	runs []gtidRun
}

// splitGTID reads a GTID as a server and a transaction number: MySQL's
// "uuid:n", MariaDB's "domain-server-n".
func splitGTID(g []byte) (string, uint64, bool) {
	if i := bytes.LastIndexByte(g, ':'); i > 0 {
		n, err := strconv.ParseUint(string(g[i+1:]), 10, 64)
		return string(g[:i]), n, err == nil
	}
	if i := bytes.LastIndexByte(g, '-'); i > 0 && bytes.Count(g, []byte("-")) == 2 {
		n, err := strconv.ParseUint(string(g[i+1:]), 10, 64)
		return string(g[:i]), n, err == nil
	}
	return "", 0, false
}

func (a *Auditor) gtid(g []byte, here mark) {
	srv, n, ok := splitGTID(g)
	if !ok {
		if a.badGTIDs++; a.badGTIDs == 1 {
			a.badGTID, a.badGTIDAt = string(g), here
		}
		return
	}
	s := a.gtids[srv]
	if s == nil {
		s = &gtidServer{}
		a.gtids[srv] = s
		a.gtidSrv = append(a.gtidSrv, srv)
	}
	if k := len(s.runs); k > 0 {
		r := &s.runs[k-1]
		switch {
		case n >= r.lo && n <= r.hi:
			if n == r.hi {
				r.hiLoc = here
			}
			return
		case n == r.hi+1:
			r.hi, r.hiLoc = n, here
			return
		}
	}
	s.runs = append(s.runs, gtidRun{n, n, here, here})
}

func (a *Auditor) gtidGaps() {
	if a.badGTIDs > 0 {
		a.note(fmt.Sprintf("%s neither MySQL's uuid:n nor MariaDB's domain-server-n (the first, %q, at %s): not checked",
			plural(a.badGTIDs, "GTID is", "GTIDs are"), a.badGTID, a.loc(a.badGTIDAt)))
	}
	for _, srv := range a.gtidSrv {
		runs := a.gtids[srv].runs
		sort.SliceStable(runs, func(i, j int) bool { return runs[i].lo < runs[j].lo })
		cur := runs[0]
		for _, r := range runs[1:] {
			if r.lo <= cur.hi+1 {
				if r.hi > cur.hi {
					cur.hi, cur.hiLoc = r.hi, r.hiLoc
				}
				continue
			}
			lo, hi := cur.hi+1, r.lo-1
			what := fmt.Sprintf("GTID %s:%d", srv, lo)
			if hi > lo {
				what = fmt.Sprintf("GTIDs %s:%d-%d", srv, lo, hi)
			}
			a.gap(Gap{Kind: GapGTID, Stream: "server " + srv, What: what + " not in the archive (" + plural(int64(hi-lo+1), "transaction", "transactions") + ")",
				Missing: int64(hi - lo + 1), Before: a.loc(cur.hiLoc), After: a.loc(r.loLoc), BeforeTime: cur.hiLoc.time(), AfterTime: r.loLoc.time()})
			cur = r
		}
	}
}

// --- Binlog files: mysql-bin.000123 then 000125 leaves 000124 out.

type binlogFile struct {
	name              string
	firstLoc, lastLoc mark
}

func (s *streamState) binlog(name []byte, here mark) {
	i := bytes.LastIndexByte(name, '.')
	if i < 0 || i == len(name)-1 {
		return
	}
	n, err := strconv.ParseInt(string(name[i+1:]), 10, 64)
	if err != nil {
		return
	}
	prefix := string(name[:i])
	m := s.binlogs[prefix]
	if m == nil {
		m = map[int64]*binlogFile{}
		s.binlogs[prefix] = m
	}
	f := m[n]
	if f == nil {
		f = &binlogFile{name: string(name), firstLoc: here}
		m[n] = f
	}
	f.lastLoc = here
}

func (s *streamState) binlogGaps(a *Auditor) {
	prefixes := make([]string, 0, len(s.binlogs))
	for p := range s.binlogs {
		prefixes = append(prefixes, p)
	}
	slices.Sort(prefixes)
	for _, p := range prefixes {
		m := s.binlogs[p]
		nums := make([]int64, 0, len(m))
		for n := range m {
			nums = append(nums, n)
		}
		slices.Sort(nums)
		for i := 1; i < len(nums); i++ {
			prev, next := nums[i-1], nums[i]
			if next == prev+1 {
				continue
			}
			width := len(m[prev].name) - len(p) - 1
			name := func(n int64) string { return fmt.Sprintf("%s.%0*d", p, width, n) }
			what := "binlog file " + name(prev+1)
			if next-prev > 2 {
				what = "binlog files " + name(prev+1) + " to " + name(next-1)
			}
			a.gap(Gap{Kind: GapBinlogFile, Stream: s.name, What: what + " not in the archive (" + m[prev].name + " is followed by " + m[next].name + ")",
				Missing: next - prev - 1, Before: a.loc(m[prev].lastLoc), After: a.loc(m[next].firstLoc), BeforeTime: m[prev].lastLoc.time(), AfterTime: m[next].firstLoc.time()})
		}
	}
}

// --- Maxwell transactions: xoffset 0..n, the last with commit: true.

type maxwellState struct {
	open    map[int64]*mxTxn
	seq     int64 // transactions met
	last    *mxTxn
	lastXid int64
}

type mxTxn struct {
	xid               int64
	seq, touched      int64 // when it began and when last seen, in transactions of the stream
	seen              bitset
	max, commit       int64 // commit -1: none seen
	firstLoc, lastLoc mark
	nextLoc           mark // the stream's first message of another transaction after this one's last
}

func (m *maxwellState) take(a *Auditor, stream string, xid, off int64, commit bool, here mark) {
	if m.last != nil && xid != m.lastXid && m.last.nextLoc.loc == 0 {
		m.last.nextLoc = here
	}
	t := m.open[xid]
	if t == nil {
		t = &mxTxn{xid: xid, seq: m.seq, commit: -1, firstLoc: here}
		m.seq++
		m.open[xid] = t
	}
	m.last, m.lastXid = t, xid
	t.touched = m.seq
	if len(m.open) > 4096 && m.seq%1024 == 0 {
		m.sweep(a, stream)
	}
	if off < 0 || off > 1<<24 {
		return // not a row number a transaction has
	}
	t.seen.set(off)
	t.max = max(t.max, off)
	t.lastLoc = here
	if commit {
		t.commit = off
	}
	if t.commit >= 0 && t.max == t.commit && t.seen.count == t.commit+1 {
		delete(m.open, xid)
	}
}

func (m *maxwellState) gaps(a *Auditor, stream string) {
	txns := make([]*mxTxn, 0, len(m.open))
	for _, t := range m.open {
		txns = append(txns, t)
	}
	sort.Slice(txns, func(i, j int) bool { return txns[i].seq < txns[j].seq })
	for _, t := range txns {
		m.judge(a, stream, t)
	}
	m.open = map[int64]*mxTxn{}
}

// sweep judges the open transactions not seen for a long while: a
// stream's transactions are contiguous, so one left behind by a thousand
// others is as whole as it will be. Broken evidence (xids reused at
// random) then costs bounded memory.
func (m *maxwellState) sweep(a *Auditor, stream string) {
	var old []*mxTxn
	for xid, t := range m.open {
		if t.touched < m.seq-1024 {
			old = append(old, t)
			delete(m.open, xid)
		}
	}
	sort.Slice(old, func(i, j int) bool { return old[i].seq < old[j].seq })
	for _, t := range old {
		m.judge(a, stream, t)
	}
}

// judge reports what transaction t lacks.
func (m *maxwellState) judge(a *Auditor, stream string, t *mxTxn) {
	end := t.max
	if t.commit >= 0 {
		end = max(end, t.commit)
	}
	holes := t.seen.holes(end)
	first, last := t.seq == 0, t.seq == m.seq-1
	leading := len(holes) == 1 && holes[0][0] == 0
	switch {
	case first && (len(holes) == 0 || leading) && (t.commit >= 0 || last):
		if len(holes) > 0 {
			a.note(fmt.Sprintf("%s: transaction xid %d begins before the archive (its first row here is xoffset %d, at %s)", stream, t.xid, holes[0][1]+1, a.loc(t.firstLoc)))
		}
		if t.commit < 0 {
			a.note(fmt.Sprintf("%s: transaction xid %d continues after the archive (no commit after xoffset %d, at %s)", stream, t.xid, t.max, a.loc(t.lastLoc)))
		}
		return
	case last && len(holes) == 0 && t.commit < 0:
		a.note(fmt.Sprintf("%s: transaction xid %d continues after the archive (no commit after xoffset %d, at %s)", stream, t.xid, t.max, a.loc(t.lastLoc)))
		return
	}
	for _, h := range holes {
		a.gapOf(GapTransaction, stream, func() Gap {
			what := fmt.Sprintf("transaction xid %d: row xoffset %d", t.xid, h[0])
			if h[1] > h[0] {
				what = fmt.Sprintf("transaction xid %d: rows xoffset %d-%d", t.xid, h[0], h[1])
			}
			return Gap{Kind: GapTransaction, Stream: stream, What: what + " not in the archive", Missing: h[1] - h[0] + 1,
				Before: a.loc(t.firstLoc), After: a.loc(t.lastLoc), BeforeTime: t.firstLoc.time(), AfterTime: t.lastLoc.time()}
		})
	}
	if t.commit < 0 {
		a.gapOf(GapTransaction, stream, func() Gap {
			return Gap{Kind: GapTransaction, Stream: stream,
				What:    fmt.Sprintf("transaction xid %d cut short: no commit after xoffset %d, and a later transaction follows", t.xid, t.max),
				Missing: 1, Before: a.loc(t.lastLoc), After: a.loc(t.nextLoc), BeforeTime: t.lastLoc.time(), AfterTime: t.nextLoc.time()}
		})
	}
}

// bitset is a growable set of small non-negative numbers.
type bitset struct {
	words []uint64
	count int64
}

func (b *bitset) set(n int64) {
	w := int(n >> 6)
	for w >= len(b.words) {
		b.words = append(b.words, 0)
	}
	if b.words[w]&(1<<(n&63)) == 0 {
		b.words[w] |= 1 << (n & 63)
		b.count++
	}
}

func (b *bitset) has(n int64) bool {
	w := int(n >> 6)
	return w < len(b.words) && b.words[w]&(1<<(n&63)) != 0
}

// holes are the ranges of numbers from 0 to end not in the set.
func (b *bitset) holes(end int64) [][2]int64 {
	var out [][2]int64
	for n := int64(0); n <= end; n++ {
		if b.has(n) {
			continue
		}
		lo := n
		for n+1 <= end && !b.has(n+1) {
			n++
		}
		out = append(out, [2]int64{lo, n})
	}
	return out
}

// --- Debezium transactions: data_collection_order 1..n per table, and
// the transaction topic's END event_count per table.

type dbzTxn struct {
	stream   string
	id       string
	seq      int
	colls    []*dbzColl
	end      bool
	endLoc   mark
	endCount int64
	endColls []dbzEndColl
}

type dbzColl struct {
	table             string // "namespace.table"
	seen              bitset // data_collection_order - 1
	max               int64
	firstLoc, lastLoc mark
}

type dbzEndColl struct {
	name  string
	count int64
}

func (a *Auditor) dbz(s *streamState, tbl *tableState, e *Event, here mark) {
	x := e.Facts
	id := x.TxnID
	if x.Marker != 0 {
		id = x.MarkerID
	}
	// Transaction metadata records name no source: a transaction is its
	// id, whichever stream its events are in.
	h := xxh3.Hash(id)
	if a.txnDone[h] {
		return // a transaction found whole: these are duplicates, counted as such
	}
	t := a.txns[string(id)]
	if t == nil {
		t = &dbzTxn{stream: s.name, id: string(id), seq: len(a.txns)}
		a.txns[t.id] = t
	}
	switch x.Marker {
	case 'E':
		t.end, t.endLoc, t.endCount = true, here, x.MarkerCount
		jsonparser.ArrayEach(x.MarkerCollections, func(v []byte, _ jsonparser.ValueType, _ int, _ error) {
			name, _ := jsonparser.GetString(v, "data_collection")
			n, _ := jsonparser.GetInt(v, "event_count")
			t.endColls = append(t.endColls, dbzEndColl{name, n})
		})
	case 'B':
	default:
		var table string
		if tbl != nil {
			table = tbl.order.Table // made once per table
		} else {
			table = tableName(string(e.NS), string(e.Table))
		}
		var c *dbzColl
		for _, cc := range t.colls {
			if cc.table == table {
				c = cc
			}
		}
		if c == nil {
			c = &dbzColl{table: table, firstLoc: here}
			t.colls = append(t.colls, c)
		}
		if o := x.TxnCollection; o >= 1 && o <= 1<<24 {
			c.seen.set(o - 1)
			c.max = max(c.max, o)
		}
		c.lastLoc = here
	}
	if t.end && t.whole() {
		a.txnDone[h] = true
		delete(a.txns, t.id)
	}
}

// collFor is the table of an END's data collection: Debezium names it
// "db.table", "server.db.table" or "db.schema.table"; the archive's
// tables are "namespace.table".
func (t *dbzTxn) collFor(name string) *dbzColl {
	for _, c := range t.colls {
		if name == c.table || len(name) > len(c.table) && name[len(name)-len(c.table)-1] == '.' && name[len(name)-len(c.table):] == c.table {
			return c
		}
	}
	return nil
}

func (t *dbzTxn) whole() bool {
	for _, ec := range t.endColls {
		c := t.collFor(ec.name)
		if c == nil || c.seen.count != ec.count || c.max != ec.count {
			return false
		}
	}
	return len(t.endColls) > 0
}

func (a *Auditor) dbzGaps() {
	txns := make([]*dbzTxn, 0, len(a.txns))
	for _, t := range a.txns {
		txns = append(txns, t)
	}
	sort.Slice(txns, func(i, j int) bool { return txns[i].seq < txns[j].seq })
	archived := map[string]bool{} // tables with events anywhere in the archive
	for _, s := range a.order {
		for _, t := range s.tableOrder {
			archived[t.order.Table] = true
		}
	}
	inArchive := func(name string) bool {
		for tbl := range archived {
			if name == tbl || len(name) > len(tbl) && name[len(name)-len(tbl)-1] == '.' && name[len(name)-len(tbl):] == tbl {
				return true
			}
		}
		return false
	}
	for _, t := range txns {
		for _, c := range t.colls {
			for _, h := range c.seen.holes(c.max - 1) {
				a.gap(Gap{Kind: GapTransaction, Stream: t.stream, Table: c.table,
					What:    fmt.Sprintf("transaction %s: %s events data_collection_order %s not in the archive", t.id, c.table, span1(h)),
					Missing: h[1] - h[0] + 1, Before: a.loc(c.firstLoc), After: a.loc(c.lastLoc), BeforeTime: c.firstLoc.time(), AfterTime: c.lastLoc.time()})
			}
		}
		if !t.end {
			continue
		}
		for _, ec := range t.endColls {
			c := t.collFor(ec.name)
			switch {
			case c == nil && !inArchive(ec.name):
				a.note(fmt.Sprintf("%s: transaction %s has %d events of %s, a table not in the archive (END at %s)", t.stream, t.id, ec.count, ec.name, a.loc(t.endLoc)))
			case c == nil:
				a.gap(Gap{Kind: GapTransaction, Stream: t.stream, Table: ec.name,
					What:    fmt.Sprintf("transaction %s: all %d events of %s not in the archive (its END says %d)", t.id, ec.count, ec.name, ec.count),
					Missing: ec.count, Before: a.loc(t.endLoc), After: a.loc(t.endLoc), BeforeTime: t.endLoc.time(), AfterTime: t.endLoc.time()})
			case c.max < ec.count:
				a.gap(Gap{Kind: GapTransaction, Stream: t.stream, Table: c.table,
					What:    fmt.Sprintf("transaction %s: %s events data_collection_order %s not in the archive (its END says %d)", t.id, c.table, span1([2]int64{c.max, ec.count - 1}), ec.count),
					Missing: ec.count - c.max, Before: a.loc(c.lastLoc), After: a.loc(t.endLoc), BeforeTime: c.lastLoc.time(), AfterTime: t.endLoc.time()})
			}
		}
	}
}

// span1 writes a hole of 0-based orders as 1-based Debezium orders.
func span1(h [2]int64) string {
	if h[0] == h[1] {
		return strconv.FormatInt(h[0]+1, 10)
	}
	return fmt.Sprintf("%d-%d", h[0]+1, h[1]+1)
}

// --- Kafka Connect file names: per topic and partition, each file's
// first offset follows the previous file's last.

func (a *Auditor) kafkaGaps() {
	type part struct {
		topic string
		p     int64
	}
	by := map[part][]int{}
	var parts []part
	for i, f := range a.files {
		if f.kafka == nil {
			continue
		}
		k := part{f.kafka.Topic, f.kafka.Partition}
		if by[k] == nil {
			parts = append(parts, k)
		}
		by[k] = append(by[k], i)
	}
	for _, k := range parts {
		files := by[k]
		sort.SliceStable(files, func(i, j int) bool { return a.files[files[i]].kafka.StartOffset < a.files[files[j]].kafka.StartOffset })
		for i := 1; i < len(files); i++ {
			prev, next := a.files[files[i-1]], a.files[files[i]]
			want := prev.kafka.StartOffset + prev.Lines
			switch got := next.kafka.StartOffset; {
			case got > want:
				what := fmt.Sprintf("partition %d: offset %d", k.p, want)
				if got-want > 1 {
					what = fmt.Sprintf("partition %d: offsets %d-%d", k.p, want, got-1)
				}
				a.gap(Gap{Kind: GapKafkaOffset, Stream: "kafka " + k.topic, What: what + " not in the archive (" + plural(got-want, "record", "records") + ": a file is missing)",
					Missing: got - want, Before: &Loc{prev.Path, prev.Lines}, After: &Loc{next.Path, 1}, BeforeTime: prev.last.time(), AfterTime: next.first.time()})
			case got < want:
				a.note(fmt.Sprintf("kafka %s partition %d: %s starts at offset %d, inside %s (offsets %d-%d): %s read twice",
					k.topic, k.p, next.Path, got, prev.Path, prev.kafka.StartOffset, want-1, plural(want-got, "record is", "records are")))
			}
		}
	}
}

func (a *Auditor) note(s string) {
	if len(a.notes) < 100*a.opts.Samples {
		a.notes = append(a.notes, s)
		return
	}
	a.notesLeft++
}

// Identify hashes an event's identity for duplicates: its stream, table,
// position, kind and row images. It returns 0 (unchecked) without a
// position.
func Identify(stream, ns, table, position []byte, op byte, images [][]byte) uint64 {
	if position == nil || op == 0 {
		return 0
	}
	var h xxh3.Hasher
	for _, p := range [][]byte{stream, ns, table, position} {
		var n [4]byte
		n[0], n[1], n[2], n[3] = byte(len(p)), byte(len(p)>>8), byte(len(p)>>16), byte(len(p)>>24)
		h.Write(n[:])
		h.Write(p)
	}
	h.Write([]byte{op})
	for _, img := range images {
		h.Write(img)
		h.Write([]byte{0})
	}
	if v := h.Sum64(); v != 0 {
		return v
	}
	return 1
}
