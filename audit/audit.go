package audit

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cdcetl/cdcetl/decode"
)

// Event is one message as the auditor takes it. Its slices are read
// during Add only.
type Event struct {
	File int // index of its file (Auditor.AddFile)
	Line int64
	// NS and Table name its table; Op is 'I', 'U', 'D' or 0 for a message
	// without rows (Control names it); Changes counts its rows; Milli is
	// its event time in epoch milliseconds (0: none). As
	// decode.Observation has them.
	NS, Table []byte
	Op        byte
	Changes   int
	Control   string
	Milli     int64
	// Ident identifies the event for duplicates: a hash of its stream,
	// table, position, kind and row images (Identify); 0 when it has no
	// position.
	Ident uint64
	Facts *decode.Facts
}

// Options tune an audit.
type Options struct {
	// Samples is how many places the report lists per finding (default 5)
	// and duplicate events in all (default 20).
	Samples int
}

// Auditor checks an archive's messages, given in archive order.
type Auditor struct {
	opts    Options
	files   []*fileState
	streams map[string]map[string]*streamState // by format, then id
	order   []*streamState                     // streams in order of first message
	gtids   map[string]*gtidServer
	gtidSrv []string
	// badGTIDs counts GTIDs of no form splitGTID reads; the first of them
	// and its place.
	badGTIDs  int64
	badGTID   string
	badGTIDAt mark
	dups      identSet
	dupRep    Duplicates
	txns      map[string]*dbzTxn // Debezium transactions by id
	txnDone   map[uint64]bool    // Debezium transactions found whole, by hash of id
	notes     []string
	notesLeft int   // notes past the report's limit
	afterCut  int64 // messages after the point audited to
	gaps      gapList
	msgs      int64
	rows      Rows
}

type fileState struct {
	File
	dupOf       map[int]int64
	kafka       *KafkaName
	first, last mark // its first and last message with an event time
}

// mark is a message's place (pack) and event time (epoch ms, 0: none).
type mark struct {
	loc   uint64
	milli int64
}

func (m mark) time() *time.Time {
	if m.milli == 0 || !printable(m.milli) {
		return nil
	}
	t := time.UnixMilli(m.milli).UTC()
	return &t
}

// New returns an Auditor.
func New(opts Options) *Auditor {
	if opts.Samples <= 0 {
		opts.Samples = 5
	}
	return &Auditor{opts: opts, streams: map[string]map[string]*streamState{}, gtids: map[string]*gtidServer{},
		txns: map[string]*dbzTxn{}, txnDone: map[uint64]bool{}, gaps: gapList{limit: 20 * opts.Samples, count: map[gapKey]int64{}}}
}

// kafkaName matches Kafka Connect's sink file names:
// topic+partition+startOffset, then the format's extensions.
var kafkaName = regexp.MustCompile(`^(.+)\+(\d+)\+(\d+)(\.[A-Za-z0-9.]+)?$`)

// AddFile registers the next input of the archive and returns its index.
func (a *Auditor) AddFile(p, format string) int {
	fs := &fileState{File: File{Path: p, Format: format}}
	if m := kafkaName.FindStringSubmatch(path.Base(strings.ReplaceAll(p, "\\", "/"))); m != nil {
		part, err1 := strconv.ParseInt(m[2], 10, 64)
		off, err2 := strconv.ParseInt(m[3], 10, 64)
		if err1 == nil && err2 == nil {
			fs.kafka = &KafkaName{Topic: m[1], Partition: part, StartOffset: off}
			fs.Kafka = fs.kafka
		}
	}
	a.files = append(a.files, fs)
	return len(a.files) - 1
}

// EndFile records how many lines input i has.
func (a *Auditor) EndFile(i int, lines int64) { a.files[i].Lines = lines }

// Unreadable records what the audit could not read at a line of input
// file: a message that is not JSON, or the rest of the input (what says
// which, and why). Evidence the audit cannot read is a gap of its own.
func (a *Auditor) Unreadable(file int, line int64, what string) {
	a.files[file].Unreadable++
	l := a.loc(mark{loc: pack(file, line)})
	a.gap(Gap{Kind: GapUnreadable, Stream: a.files[file].Format, What: what, Missing: 1, Before: l, After: l})
}

// loc packs a file index and a line into one word.
func pack(file int, line int64) uint64 { return uint64(file)<<40 | uint64(line)&(1<<40-1) }

func (a *Auditor) loc(m mark) *Loc {
	l := m.loc
	if l == 0 {
		return nil
	}
	return &Loc{File: a.files[l>>40].Path, Line: int64(l & (1<<40 - 1))}
}

// streamState is one producer stream's evidence.
type streamState struct {
	name, format, id string
	span             spanState
	tables           map[string]map[string]*tableState // by namespace, then name
	tableOrder       []*tableState
	binlogs          map[string]map[int64]*binlogFile // by file name prefix, then number
	mx               maxwellState
}

type tableState struct {
	ns, name string
	span     spanState
	files    []int
	hours    map[int64]int64
	lastPos  []byte
	lastLoc  mark
	order    Order
}

type spanState struct {
	Span
	minMilli, maxMilli int64
	minPos, maxPos     []byte
}

func (s *spanState) add(e *Event, pos []byte) {
	if e.Op == 0 {
		if s.Control == nil {
			s.Control = map[string]int64{}
		}
		s.Control[e.Control]++
	} else {
		s.Messages++
		addRows(&s.Rows, e.Op, int64(e.Changes))
	}
	if e.Milli != 0 {
		if s.minMilli == 0 || e.Milli < s.minMilli {
			s.minMilli = e.Milli
		}
		if s.maxMilli == 0 || e.Milli > s.maxMilli {
			s.maxMilli = e.Milli
		}
	}
	if pos != nil {
		if s.minPos == nil || bytes.Compare(pos, s.minPos) < 0 {
			s.minPos = append(s.minPos[:0], pos...)
		}
		if s.maxPos == nil || bytes.Compare(pos, s.maxPos) > 0 {
			s.maxPos = append(s.maxPos[:0], pos...)
		}
	}
}

func (s *spanState) span() Span {
	out := s.Span
	if s.minMilli != 0 && printable(s.minMilli) && printable(s.maxMilli) {
		a, b := time.UnixMilli(s.minMilli).UTC(), time.UnixMilli(s.maxMilli).UTC()
		out.FirstEvent, out.LastEvent = &a, &b
	}
	out.FirstPosition, out.LastPosition = string(s.minPos), string(s.maxPos)
	return out
}

// printable reports whether epoch milliseconds are a time JSON and RFC
// 3339 can say (years 0 to 9999).
func printable(m int64) bool { return m >= -62167219200000 && m < 253402300800000 }

func addRows(r *Rows, op byte, n int64) {
	switch op {
	case 'I':
		r[0] += n
	case 'U':
		r[1] += n
		r[2] += n
	case 'D':
		r[3] += n
	}
}

func rowsOf(op byte, n int64) int64 {
	if op == 'U' {
		return 2 * n
	}
	return n
}

// stream is the state of the stream a message of format names id; both
// levels are looked up with the message's bytes, which costs no copy.
func (a *Auditor) stream(format string, id []byte) *streamState {
	if s, ok := a.streams[format][string(id)]; ok {
		return s
	}
	name := format
	switch {
	case len(id) > 0 && format == "maxwell-json":
		name += " server_id " + string(id)
	case len(id) > 0:
		name += " " + string(id)
	}
	s := &streamState{name: name, format: format, id: string(id), tables: map[string]map[string]*tableState{}, binlogs: map[string]map[int64]*binlogFile{}}
	s.mx.open = map[int64]*mxTxn{}
	if a.streams[format] == nil {
		a.streams[format] = map[string]*streamState{}
	}
	a.streams[format][s.id] = s
	a.order = append(a.order, s)
	return s
}

func (s *streamState) table(ns, name []byte) *tableState {
	if t, ok := s.tables[string(ns)][string(name)]; ok {
		return t
	}
	t := &tableState{ns: string(ns), name: string(name), hours: map[int64]int64{}}
	t.order.Stream, t.order.Table = s.name, tableName(t.ns, t.name)
	if s.tables[t.ns] == nil {
		s.tables[t.ns] = map[string]*tableState{}
	}
	s.tables[t.ns][t.name] = t
	s.tableOrder = append(s.tableOrder, t)
	return t
}

// tableName is how the report names a table: "namespace.table", or the
// name alone.
func tableName(ns, name string) string {
	switch {
	case ns == "" && name == "":
		return "(no table)"
	case ns == "":
		return name
	}
	return ns + "." + name
}

// Add takes the archive's next message.
func (a *Auditor) Add(e *Event) {
	fs := a.files[e.File]
	fs.Messages++
	x := e.Facts
	s := a.stream(fs.Format, x.Stream)
	here := mark{pack(e.File, e.Line), e.Milli}
	if e.Milli != 0 {
		if fs.first.milli == 0 {
			fs.first = here
		}
		fs.last = here
	}
	pos := x.Position
	s.span.add(e, pos)
	hasTable := len(e.NS) > 0 || len(e.Table) > 0
	var t *tableState
	if hasTable || e.Op != 0 {
		t = s.table(e.NS, e.Table)
		t.span.add(e, pos)
		if n := len(t.files); n == 0 || t.files[n-1] != e.File {
			t.files = append(t.files, e.File)
		}
	}
	if e.Op != 0 {
		a.msgs++
		addRows(&a.rows, e.Op, int64(e.Changes))
	}
	dup := false
	if e.Op != 0 {
		if e.Ident == 0 {
			a.dupRep.Unchecked++
		} else if first, seen := a.dups.add(e.Ident, here.loc); seen {
			dup = true
			a.duplicate(e, s, t, first, here)
		}
	}
	if t != nil && e.Op != 0 && !dup {
		if e.Milli != 0 {
			t.hours[floorDiv(e.Milli, 3_600_000)]++
		}
		if pos != nil {
			if t.lastPos != nil && bytes.Compare(pos, t.lastPos) < 0 {
				t.order.Count++
				if len(t.order.Samples) < a.opts.Samples {
					t.order.Samples = append(t.order.Samples, OrderStep{At: *a.loc(here), Position: string(pos),
						Previous: *a.loc(t.lastLoc), PreviousPosition: string(t.lastPos)})
				}
			}
			t.lastPos, t.lastLoc = append(t.lastPos[:0], pos...), here
		}
	}
	if len(x.GTID) > 0 {
		a.gtid(x.GTID, here)
	}
	if len(x.BinlogFile) > 0 {
		s.binlog(x.BinlogFile, here)
	}
	if x.HasXid && e.Op != 0 {
		s.mx.take(a, s.name, x.Xid, x.XOffset, x.Commit, here) // XOffset 0 when absent: a one-row transaction
	}
	if len(x.TxnID) > 0 || x.Marker != 0 {
		a.dbz(s, t, e, here)
	}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

func (a *Auditor) duplicate(e *Event, s *streamState, t *tableState, first uint64, here mark) {
	a.dupRep.Messages++
	a.dupRep.Rows += rowsOf(e.Op, int64(e.Changes))
	fs := a.files[e.File]
	fs.Duplicates++
	if fs.dupOf == nil {
		fs.dupOf = map[int]int64{}
	}
	fs.dupOf[int(first>>40)]++
	if len(a.dupRep.Samples) < 4*a.opts.Samples {
		kind := map[byte]string{'I': "insert", 'U': "update", 'D': "delete"}[e.Op]
		a.dupRep.Samples = append(a.dupRep.Samples, DuplicateEvent{Stream: s.name, Table: t.order.Table, Kind: kind,
			Position: string(e.Facts.Position), First: *a.loc(mark{loc: first}), Copy: *a.loc(here)})
	}
}

// AfterCut counts n messages left out of the audit for being after the
// point it audits to (pipeline's --as-of).
func (a *Auditor) AfterCut(n int64) { a.afterCut += n }

// Report gives what the audit found.
func (a *Auditor) Report() *Report {
	r := &Report{Gaps: []Gap{}, Order: []Order{}, Quiet: []Quiet{}, Notes: []string{}}
	r.Coverage.Messages, r.Coverage.Rows, r.Coverage.AfterCut = a.msgs, a.rows, a.afterCut
	r.Coverage.Files = []File{}
	for _, f := range a.files {
		if len(f.dupOf) > 0 {
			best, bestN := -1, int64(-1)
			for of, n := range f.dupOf {
				if n > bestN || n == bestN && of < best {
					best, bestN = of, n
				}
			}
			f.DuplicateOf = a.files[best].Path
			a.dupRep.Files = append(a.dupRep.Files, DuplicateFile{File: f.Path, Messages: f.Duplicates, Of: f.DuplicateOf, Whole: f.Duplicates == f.Messages})
		}
		r.Coverage.Files = append(r.Coverage.Files, f.File)
	}
	r.Coverage.Streams = []Stream{}
	for _, s := range a.order {
		st := Stream{Name: s.name, Format: s.format, ID: s.id, Span: s.span.span(), Tables: []Table{}}
		for _, t := range s.tableOrder {
			tt := Table{Table: t.order.Table, Namespace: t.ns, Name: t.name, Span: t.span.span(), Files: []string{}}
			for _, f := range t.files {
				tt.Files = append(tt.Files, a.files[f].Path)
			}
			tt.HoursStart, tt.Hours = hourSeries(t.hours)
			st.Tables = append(st.Tables, tt)
			if t.order.Count > 0 {
				r.Order = append(r.Order, t.order)
			}
			r.Quiet = append(r.Quiet, quietHours(s.name, t.order.Table, t.hours)...)
		}
		r.Coverage.Streams = append(r.Coverage.Streams, st)
		s.binlogGaps(a)
		s.mx.gaps(a, s.name)
	}
	a.gtidGaps()
	a.dbzGaps()
	a.kafkaGaps()
	r.Duplicates = a.dupRep
	r.GapsFound, r.Gaps = a.gaps.found, append(r.Gaps, a.gaps.list...)
	for _, k := range a.gaps.order {
		if n := a.gaps.count[k]; n > int64(a.gaps.limit) {
			a.note(fmt.Sprintf("%s: %d more %s gaps not listed (%d in all)", k.stream, n-int64(a.gaps.limit), k.kind, n))
		}
	}
	r.Notes = append(r.Notes, a.notes...)
	if a.notesLeft > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d more notes not listed", a.notesLeft))
	}
	return r
}

// gapList holds the gaps found: every one counted, the first of each
// kind and stream listed, so an archive whose evidence is broken
// everywhere gives a readable report in bounded memory.
type gapList struct {
	limit int
	found int64
	count map[gapKey]int64
	order []gapKey
	list  []Gap
}

type gapKey struct{ kind, stream string }

func (a *Auditor) gap(g Gap) { a.gapOf(g.Kind, g.Stream, func() Gap { return g }) }

// gapOf counts a gap of kind in stream and, when it is among those
// listed, builds it: an archive with millions of gaps costs their
// counting, not their text.
func (a *Auditor) gapOf(kind, stream string, build func() Gap) {
	l := &a.gaps
	l.found++
	k := gapKey{kind, stream}
	n := l.count[k]
	if n == 0 {
		l.order = append(l.order, k)
	}
	l.count[k] = n + 1
	if n < int64(l.limit) {
		l.list = append(l.list, build())
	}
}

// maxHours bounds a table's hourly series in the report (two years): a
// producer's odd event time must not make it huge.
const maxHours = 2 * 366 * 24

func hourSeries(hours map[int64]int64) (*time.Time, []int64) {
	if len(hours) == 0 {
		return nil, nil
	}
	keys := make([]int64, 0, len(hours))
	for h := range hours {
		keys = append(keys, h)
	}
	slices.Sort(keys)
	lo, hi := keys[0], keys[len(keys)-1]
	if hi-lo >= maxHours || !printable(lo*3_600_000) || !printable(hi*3_600_000) {
		return nil, nil
	}
	out := make([]int64, hi-lo+1)
	for h, n := range hours {
		out[h-lo] = n
	}
	t := time.UnixMilli(lo * 3_600_000).UTC()
	return &t, out
}

// quietHours finds runs of empty hours between two busy ones: busy is at
// least a quarter of the table's median non-empty hour, and at least 10
// events.
func quietHours(stream, table string, hours map[int64]int64) []Quiet {
	if len(hours) < 3 {
		return nil
	}
	counts := make([]int64, 0, len(hours))
	keys := make([]int64, 0, len(hours))
	for h, n := range hours {
		counts, keys = append(counts, n), append(keys, h)
	}
	slices.Sort(counts)
	slices.Sort(keys)
	busy := max(10, counts[len(counts)/2]/4)
	var out []Quiet
	for i := 1; i < len(keys); i++ {
		prev, next := keys[i-1], keys[i]
		if next-prev < 2 || next-prev-1 > maxHours || hours[prev] < busy || hours[next] < busy {
			continue
		}
		out = append(out, Quiet{Stream: stream, Table: table, From: time.UnixMilli((prev + 1) * 3_600_000).UTC(),
			To: time.UnixMilli(next * 3_600_000).UTC(), Hours: int(next - prev - 1), Before: hours[prev], After: hours[next]})
	}
	return out
}

// identSet is an open-addressing set of event identities, each with the
// place it was first seen: 16 bytes a message (32 with the table's
// slack), one cache line touched per look-up.
type identSet struct {
	slots []identSlot
	n     int
}

type identSlot struct{ id, loc uint64 }

// add inserts id (first seen at loc) and reports whether it was there,
// with the place it was first seen.
func (s *identSet) add(id, loc uint64) (uint64, bool) {
	if s.n >= len(s.slots)/2 {
		s.grow()
	}
	mask := uint64(len(s.slots) - 1)
	for i := id & mask; ; i = (i + 1) & mask {
		switch sl := &s.slots[i]; sl.id {
		case id:
			return sl.loc, true
		case 0:
			sl.id, sl.loc = id, loc
			s.n++
			return 0, false
		}
	}
}

func (s *identSet) grow() { s.resize(max(1024, 2*len(s.slots))) }

func (s *identSet) resize(size int) {
	old := s.slots
	s.slots, s.n = make([]identSlot, size), 0
	for _, sl := range old {
		if sl.id != 0 {
			s.add(sl.id, sl.loc)
		}
	}
}

// warm reads the slots of ids, each independently of the others: the
// processor overlaps their cache misses, which add, probing one at a
// time, would take one after another.
func (s *identSet) warm(ids []uint64) {
	if len(s.slots) == 0 {
		return
	}
	mask := uint64(len(s.slots) - 1)
	var sum uint64
	for _, id := range ids {
		sum += s.slots[id&mask].id
	}
	warmSink = sum
}

var warmSink uint64

// Expect sizes the audit for about n messages more (a hint: the set of
// event identities grows as it must anyway), sparing the rehashing of a
// set grown from small.
func (a *Auditor) Expect(n int) {
	want := a.dups.n + n
	if want < 512 || want < len(a.dups.slots)/2 {
		return
	}
	size := 1024
	for size/2 < want && size < maxExpectSlots {
		size *= 2
	}
	if size > len(a.dups.slots) {
		a.dups.resize(size)
	}
}

// maxExpectSlots bounds what a guess may allocate ahead (64 MiB): a guess
// far too high would otherwise touch a huge table all over; past it the
// set grows as it fills.
const maxExpectSlots = 1 << 22

// Warm readies the look-ups of the next events' identities (Event.Ident),
// given before they are added: a batch's cache misses overlap.
func (a *Auditor) Warm(ids []uint64) { a.dups.warm(ids) }

func plural(n int64, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
