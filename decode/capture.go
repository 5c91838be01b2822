package decode

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/buger/jsonparser"
)

// The single pass over a message: the scanner validates it while the
// envelope fields and every row object inside a row field ("data", "old",
// "before", "after") are captured as slots, so rows are converted straight
// from the captured values without walking the JSON again.

// envKey is one key of the previous message's envelope (idx -1: not read).
type envKey struct {
	name   string
	fast   string    // plainKey(name): what the scanner may match raw
	member memberPat // the compact member start of fast
	idx    int
	// memo is the member's last long value, for the compact path: made
	// when the general walk meets a long value of a memoOK member (see
	// memoable), nil for the others, which take no time over it.
	memo   *valueMemo
	memoOK bool
	capt   bool // the member's value is captured (idx >= 0 and read at its level)
}

// newEnvKey makes the envelope key name of field idx (-1: none) at level.
func (d *base) newEnvKey(name string, idx, level int) envKey {
	fast := plainKey(name)
	k := envKey{name: name, fast: fast, member: newMemberPat(fast), idx: idx}
	k.capt, k.memoOK = d.memoable(idx, level)
	return k
}

// newSourceKey makes the key name of Debezium's source block (idx its
// sourcePropIndex). Its values are short: no memo.
func newSourceKey(name string, idx int) envKey {
	fast := plainKey(name)
	return envKey{name: name, fast: fast, member: newMemberPat(fast), idx: idx, capt: idx >= 0}
}

// valueMemo is the raw text of the value a member had in the last message
// that the compact path read. Producers repeat most envelope values byte
// for byte (Canal's mysqlType and sqlType, Debezium's schema, long names):
// the same bytes are the same value, valid as before, so one comparison
// replaces the walk. Only long values are kept (a short one is scanned as
// fast as it is compared), and members whose value changes with every
// message (positions, times) make the memo rest instead of copying their
// value each time.
type valueMemo struct {
	raw    []byte
	t      jsonparser.ValueType
	quote  int  // 1 for a string: its slot leaves the quotes out
	open   bool // a number or literal: it does not end itself
	misses int  // in a row; from memoMisses the memo rests
	rest   int  // values to pass over before trying again
}

const (
	memoMinLen = 24 // shorter values are scanned
	memoMisses = 16
	memoRest   = 1024
)

// hit returns the end of the value at b[vi] when its bytes are the
// remembered value's, or -1; the caller makes the slot (slotAt). A number
// or literal must end there ("12" remembered, "123" met: no hit): the
// callers would walk the member again, and the memo never learn the new
// value.
func (m *valueMemo) hit(b []byte, vi int) int {
	n := len(m.raw)
	if n == 0 || vi < 0 || vi+n >= len(b) || string(b[vi:vi+n]) != string(m.raw) || m.open && !endsValue(b[vi+n]) {
		return -1
	}
	return vi + n
}

// slotAt is the slot of the remembered value hit at b[vi:end].
func (m *valueMemo) slotAt(b []byte, vi, end int) slot {
	return slot{b[vi+m.quote : end-m.quote], m.t}
}

// learn records the long value b[vi:end] of type t after a miss, unless
// the memo rests: a member whose long value changed memoMisses times in a
// row passes memoRest values over before it is remembered again, so that
// values that change every message are not copied every time.
func (m *valueMemo) learn(b []byte, vi, end int, t jsonparser.ValueType) {
	if m.misses++; m.misses >= memoMisses {
		m.misses, m.rest, m.raw = 0, memoRest, m.raw[:0]
		return
	}
	// Only a value that starts where its member's colon ends (compact
	// JSON): a hit then starts with the value itself.
	if vi < 0 || end > len(b) || b[vi] <= ' ' {
		m.raw = m.raw[:0]
		return
	}
	m.raw, m.t = append(m.raw[:0], b[vi:end]...), t
	m.quote = 0
	if t == jsonparser.String {
		m.quote = 1
	}
	last := m.raw[len(m.raw)-1]
	m.open = !(last == '"' || last == '}' || last == ']')
}

// endsValue says whether c may follow a value in compact JSON (what the
// fast paths read; they walk anything else again).
func endsValue(c byte) bool { return c == ',' || c == '}' || c == ']' }

// capturedRow is a row object met during the scan: where it starts in the
// message and where its slots are in the pool.
type capturedRow struct {
	off, start int
}

// rowField says how an envelope field holds rows.
type rowField uint8

const (
	notRows   rowField = iota
	rowObject          // maxwell data/old, ogg and debezium before/after
	rowArray           // canal data/old
)

// rowFieldsOf is the format's row fields (by envelope index).
func (d *base) rowFieldsOf() {
	d.rowKinds = make([]rowField, len(d.envNames))
	d.elems = make([][]slot, len(d.envNames))
	d.markField = -1
	for i, n := range d.envNames {
		switch d.format.Name + "." + n {
		case "canal-json.data", "canal-json.old":
			d.rowKinds[i] = rowArray
		case "maxwell-json.data", "maxwell-json.old", "ogg-json.before", "ogg-json.after",
			"debezium-json.before", "debezium-json.after":
			d.rowKinds[i] = rowObject
		}
		if n == "old" {
			d.markField = i
		}
		if n == "payload" {
			d.payloadField = i
		}
	}
}

// capture scans the root object at msg[i]: it validates everything and
// fills d.env, d.pool and d.captured.
// It returns the index after the root object.
func (d *base) capture(i int) (int, error) {
	d.resetCapture()
	if d.cx.traits.plain {
		return d.captureRow(i)
	}
	if !d.plain {
		if end, ok := d.captureEnvelopeFast(i, 0); ok {
			return end, nil
		}
		d.resetCapture() // the general walk starts afresh
	}
	return d.captureEnvelope(i, 0)
}

func (d *base) resetCapture() {
	for k := range d.env {
		d.env[k] = slot{t: jsonparser.NotExist}
	}
	d.pool, d.captured = d.pool[:0], d.captured[:0]
	clear(d.present)
}

// captureEnvelopeFast captures a compact envelope whose keys all come in
// the remembered order (some may be missing: the order is the union of the
// keys seen). It gives up (ok false) at anything else -- white space, a new
// or repeated key, an error -- and the caller starts over with the general
// walk, which also produces the exact error.
func (d *base) captureEnvelopeFast(i, level int) (end int, ok bool) {
	sc := &d.sc
	b := sc.msg
	order := d.keyOrder[level]
	if len(order) == 0 || sc.depth >= maxDepth {
		return 0, false
	}
	sc.depth++
	defer func() { sc.depth-- }()
	j := i + 1
	if j < len(b) && b[j] == '}' {
		return j + 1, true
	}
	for pos := 0; ; pos++ {
		var vi int
		var found bool
		if pos, vi, found = nextMember(order, pos, b, j); !found {
			return 0, false
		}
		k := &order[pos]
		idx := k.idx
		sc.expect = ""
		var next int
		m := k.memo
		if m != nil && m.rest > 0 {
			m.rest-- // see learn
			m = nil
		}
		next = -1
		if m != nil {
			next = m.hit(b, vi)
		}
		if next >= 0 {
			m.misses = 0
			if k.capt {
				d.env[idx] = m.slotAt(b, vi, next)
			}
		} else {
			if v, end, scalar, err := scanScalar(b, vi); scalar && k.memoOK {
				// A scalar, skipped or captured as a plain value: what
				// captureMember does with it (sc.value's scan), without its
				// calls. An error goes to the general walk, as there.
				if err != nil {
					return 0, false
				}
				if k.capt {
					d.env[idx] = v
				}
				next = end
			} else if next, err = d.captureMember(idx, idx >= 0, level, vi); err != nil {
				return 0, false
			}
			if m != nil && next-vi >= memoMinLen && next < len(b) {
				t := jsonparser.Unknown // a skipped member's type is not needed
				if k.capt {
					t = d.env[idx].t
				}
				m.learn(b, vi, next, t)
			}
		}
		if next >= len(b) {
			return 0, false
		}
		switch b[next] {
		case ',':
			j = next + 1
		case '}':
			return next + 1, true
		default:
			return 0, false
		}
	}
}

// memoable says whether the member of envelope field idx (-1: a member
// nobody reads) at level is captured (what captureMember decides) and
// whether a valueMemo may give it: a skipped member, or one captured as a
// plain value -- not rows, not Debezium's source or payload (their members
// are captured in turn), and not without shortcuts.
func (d *base) memoable(idx, level int) (capt, memo bool) {
	if d.plain {
		return false, false
	}
	capt = idx >= 0
	if capt && d.opts.SchemaInclude {
		capt = (idx == 0 || idx == d.payloadField) == (level == 0) // schema and payload at the root, the rest inside
	}
	if !capt {
		return false, true
	}
	return true, d.rowKinds[idx] == notRows && idx != d.srcField && idx != d.markField &&
		!(d.opts.SchemaInclude && idx == d.payloadField)
}

// nextMember finds the compact member at b[j] among order[pos:] (keys a
// message leaves out are passed over) and returns its position in order
// and the index of its value.
func nextMember(order []envKey, pos int, b []byte, j int) (int, int, bool) {
	for ; pos < len(order); pos++ {
		m := &order[pos].member
		vi := m.try(b, j)
		if vi == tryOther {
			var ok bool
			if vi, ok = m.atSlow(b, j); !ok {
				continue
			}
		}
		if vi >= 0 {
			return pos, vi, true
		}
	}
	return 0, 0, false
}

// maxEnvKeys bounds the remembered envelope key order.
const maxEnvKeys = 64

// captureEnvelope captures the members of an envelope object. With
// schema-include the root (level 0) holds only "schema" and "payload", and
// the payload (level 1) the rest.
func (d *base) captureEnvelope(i, level int) (int, error) {
	sc := &d.sc
	// Producers write envelope keys in the same order every time: compare
	// with the previous message's keys before hashing.
	order := d.keyOrder[level]
	pos := 0
	defer func() { d.keyOrder[level] = order }()
	if len(order) > 0 && !d.plain {
		sc.expect = order[0].fast
	}
	return sc.object(i, func(k []byte, vi int) (int, error) {
		if !(pos < len(order) && (sc.hit || order[pos].name == string(k))) {
			// Not the predicted key: messages of one stream differ in
			// optional fields (maxwell's "old"), so the order is the union of
			// the keys seen, searched before hashing.
			j := 0
			for j < len(order) && order[j].name != string(k) {
				j++
			}
			if j < pos && level == 0 {
				// Met before the predicted place: keys in another order,
				// or a key repeated (Result.Repeated).
				d.repeated = true
			}
			if j == len(order) {
				idx, ok := d.envIdx[string(k)]
				if !ok {
					idx = -1
				}
				if len(order) >= maxEnvKeys { // garbage keys must not grow it without bound
					order, j = order[:0], 0
				} else {
					j = min(pos, len(order))
				}
				name := d.internKey(k)
				order = slices.Insert(order, j, d.newEnvKey(name, idx, level))
			}
			pos = j
		}
		idx := order[pos].idx
		ok := idx >= 0
		pos++
		next, err := d.captureMember(idx, ok, level, vi)
		if k := &order[pos-1]; err == nil && k.memoOK && k.memo == nil && next-vi >= memoMinLen {
			k.memo = new(valueMemo) // a long value: the compact path compares it next time
		}
		if pos < len(order) && !d.plain {
			sc.expect = order[pos].fast // after the value: its own objects predict their keys
		}
		return next, err
	})
}

// captureMember captures (or only validates) the value of envelope field
// idx at vi and returns the index after it.
func (d *base) captureMember(idx int, ok bool, level, vi int) (int, error) {
	sc := &d.sc
	if ok && d.opts.SchemaInclude {
		isRoot := idx == 0 || idx == d.payloadField // "schema", "payload"
		ok = isRoot == (level == 0)
	}
	if !ok {
		if !d.plain {
			if next, ok := skipFast(sc.msg, vi, sc.depth); ok {
				return next, nil
			}
		}
		_, next, err := sc.value(vi)
		return next, err
	}
	vi = skipWS(sc.msg, vi)
	start := vi
	var next int
	var err error
	c := byte(0)
	if vi < len(sc.msg) {
		c = sc.msg[vi]
	}
	if idx == d.markField {
		sc.mark = d.markFn
	}
	switch {
	case d.opts.SchemaInclude && idx == d.payloadField && c == '{':
		next, err = d.captureEnvelope(vi, 1)
		if err == nil {
			d.env[idx] = slot{sc.msg[start:next], jsonparser.Object}
		}
	case idx == d.srcField && c == '{':
		next, err = d.captureSource(vi)
		if err == nil {
			d.env[idx] = slot{sc.msg[start:next], jsonparser.Object}
		}
	case d.rowKinds[idx] == rowObject && c == '{':
		next, err = d.captureRow(vi)
		if err == nil {
			d.env[idx] = slot{sc.msg[start:next], jsonparser.Object}
		}
	case d.rowKinds[idx] == rowArray && c == '[':
		elems := d.elems[idx][:0]
		next, err = sc.array(vi, func(ei int) (int, error) {
			if ei < len(sc.msg) && sc.msg[ei] == '{' {
				n, err := d.captureRow(ei)
				if err == nil {
					elems = append(elems, slot{sc.msg[ei:n], jsonparser.Object})
				}
				return n, err
			}
			v, n, err := sc.value(ei)
			elems = append(elems, v)
			return n, err
		})
		d.elems[idx] = elems
		if err == nil {
			d.env[idx] = slot{sc.msg[start:next], jsonparser.Array}
		}
	default:
		if (c == '{' || c == '[') && sc.mark == nil && !d.plain {
			if end, ok := skipFast(sc.msg, vi, sc.depth); ok {
				t := jsonparser.Object
				if c == '[' {
					t = jsonparser.Array
				}
				d.env[idx], next = slot{sc.msg[vi:end], t}, end
				break
			}
		}
		var v slot
		v, next, err = sc.value(vi)
		d.env[idx] = v
	}
	sc.mark = nil
	return next, err
}

// captureSource captures debezium's "source" object at vi: its members of
// interest go to d.src. A repeated "source" replaces the earlier one whole.
// Producers write its keys in one order, remembered in d.srcOrder: a
// compact object in that order (keys may be missing) is matched member by
// member without scanning the keys; anything else takes the general walk,
// which also produces the exact error, and teaches the order.
func (d *base) captureSource(vi int) (int, error) {
	sc := &d.sc
	clear(d.src[:]) // the zero slot is jsonparser.NotExist
	d.srcFastSeq = 0
	if !d.plain && len(d.srcOrder) > 0 && sc.depth < maxDepth {
		if end, ok := d.captureSourceFast(vi); ok {
			d.srcFastSeq, d.srcFastAt = d.msgSeq, vi
			return end, nil
		}
		clear(d.src[:])
	}
	seen := d.srcSeen[:0]
	end, err := sc.object(vi, func(k []byte, vi int) (int, error) {
		p := sourcePropIndex(k) // before the value's keys overwrite k
		if len(seen) <= maxEnvKeys {
			seen = append(seen, d.internKey(k))
		}
		v, n, err := sc.value(vi)
		if err == nil && p >= 0 {
			d.src[p] = v
		}
		return n, err
	})
	d.srcSeen = seen
	if err == nil && !d.plain {
		d.learnSourceOrder(seen)
	}
	return end, err
}

// learnSourceOrder makes keys (one message's, in order) the remembered
// order, unless that order already holds them in this order (messages
// that omit some keys then still take the compact path).
func (d *base) learnSourceOrder(keys []string) {
	if len(keys) > maxEnvKeys || isSubsequence(keys, d.srcOrder) {
		return
	}
	order := make([]envKey, 0, len(keys))
	for i, k := range keys {
		if slices.Contains(keys[:i], k) || plainKey(k) == "" {
			return // repeated or escaped keys: leave them to the general walk
		}
		order = append(order, newSourceKey(k, sourcePropIndex([]byte(k))))
	}
	d.srcOrder = order
	d.srcPrev.raw, d.srcPrev.members = d.srcPrev.raw[:0], d.srcPrev.members[:0]                                   // placed in the old order
	d.srcKeys.pos, d.srcKeys.data, d.srcKeys.starts = d.srcKeys.pos[:0], d.srcKeys.data[:0], d.srcKeys.starts[:0] // named by the old order
}

// isSubsequence reports whether keys occur in order, in order.
func isSubsequence(keys []string, order []envKey) bool {
	j := 0
	for _, k := range keys {
		for j < len(order) && order[j].name != k {
			j++
		}
		if j == len(order) {
			return false
		}
		j++
	}
	return true
}

// captureSourceFast is captureSource's compact path (see there); ok false
// means the caller walks the object afresh.
func (d *base) captureSourceFast(i int) (end int, ok bool) {
	sc := &d.sc
	b := sc.msg
	sc.depth++
	defer func() { sc.depth-- }()
	j := i + 1
	// The last block read this way, and where its members were: a member
	// whose bytes, separator included, are the same as the last block's at
	// the same place is taken from there (see srcBlock). Every block read
	// becomes the last one, "{}" too: its members (none) are this
	// message's (see sourceMembersMap).
	prev := &d.srcPrev
	rec := d.srcNext.members[:0]
	defer func() {
		if ok {
			d.srcNext.raw = append(d.srcNext.raw[:0], b[i:end]...)
			d.srcNext.members = rec
			d.srcPrev, d.srcNext = d.srcNext, d.srcPrev
		} else {
			d.srcNext.members = rec
		}
	}()
	if j < len(b) && b[j] == '}' {
		return j + 1, true
	}
	// While aligned, member m of prev is where the block is now, shifted
	// by delta bytes, and the block's bytes up to same (relative to i) are
	// prev's shifted so.
	m, delta := 0, 0
	same := commonPrefix(b[i:], prev.raw)
	order := d.srcOrder
	for pos := 0; ; pos++ {
		// Members m to k are here, the same: their values shifted by
		// delta. One pass takes their slots, one append their records.
		k := m
		for ; k >= 0 && k < len(prev.members) && int(prev.members[k].sep)+delta < same; k++ {
			if pm := &prev.members[k]; pm.p >= 0 {
				v0 := i + int(pm.v0) + delta
				d.src[pm.p] = slot{b[v0 : v0+int(pm.vn)], pm.t}
			}
		}
		if k > m {
			n0 := len(rec)
			rec = append(rec, prev.members[m:k]...)
			if delta != 0 {
				for x := n0; x < len(rec); x++ {
					r := &rec[x]
					r.start, r.sep, r.v0 = r.start+int32(delta), r.sep+int32(delta), r.v0+int32(delta)
				}
			}
			m = k
			last := rec[len(rec)-1]
			pos = int(last.pos)
			next := i + int(last.sep)
			if b[next] == '}' {
				return next + 1, true
			}
			j = next + 1
			continue
		}
		var vi int
		var found bool
		if pos, vi, found = nextMember(order, pos, b, j); !found {
			return 0, false
		}
		v, next, scalar, err := scanScalar(b, vi)
		if !scalar {
			v, next, err = sc.value(vi) // a nested value: validated by the general scanner
		}
		if err != nil || next >= len(b) {
			return 0, false
		}
		p := order[pos].idx
		if p >= 0 {
			d.src[p] = v
		}
		if c := b[next]; c != ',' && c != '}' {
			return 0, false
		}
		v0 := offsetIn(b, v.v) - i // a string's slot leaves its quotes out
		r := srcMember{pos: int16(pos), p: int8(p), t: v.t, start: int32(j - i), sep: int32(next - i), v0: int32(v0), vn: int32(len(v.v))}
		rec = append(rec, r)
		// Aligned again when prev has this member next: compare on from
		// its separator.
		if m >= 0 && m < len(prev.members) && prev.members[m].pos == r.pos {
			pm := prev.members[m]
			delta = int(r.sep - pm.sep)
			same = int(r.sep) + commonPrefix(b[next:], prev.raw[pm.sep:])
			m++
		} else {
			m = -1 // not aligned: the rest is read member by member
		}
		if b[next] == '}' {
			return next + 1, true
		}
		j = next + 1
	}
}

// srcBlock is a Debezium source block the compact path read, and its
// members. Producers write the block with the same fields in the same
// order every time, and only a few change (the time, the position): its
// members that are the same bytes as the last block's at the same place
// are taken without a scan.
type srcBlock struct {
	raw     []byte
	members []srcMember
}

// srcMember is where one member of a source block is, relative to the
// block: its start, the separator after its value (',' or '}'), the
// value's slot bytes (a string's without its quotes) and type, its key's
// place in the remembered order and its property (-1: none).
type srcMember struct {
	start, sep, v0, vn int32
	t                  jsonparser.ValueType
	pos                int16
	p                  int8
}

// commonPrefix is the length of the longest common prefix of a and b,
// eight bytes a step.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	k := 0
	for ; k+8 <= n; k += 8 {
		if x := load64(a, k) ^ load64(b, k); x != 0 {
			return k + bits.TrailingZeros64(x)>>3
		}
	}
	for k < n && a[k] == b[k] {
		k++
	}
	return k
}

// captureRow captures the row object at msg[i] into the pool.
func (d *base) captureRow(i int) (int, error) {
	start := len(d.pool)
	d.pool = slices.Grow(d.pool, len(d.phys))[:start+len(d.phys)]
	slots := d.pool[start:]
	d.captured = append(d.captured, capturedRow{off: i, start: start})
	sc := &d.sc
	clear(slots) // the zero slot is jsonparser.NotExist (the pool's memory is reused)
	if !d.plain {
		if end, ok := d.captureRowFast(i, slots); ok {
			if sc.mark != nil { // "old": its keys are the columns captured
				for col, v := range slots {
					if v.t != jsonparser.NotExist {
						d.markNext = col + 1
						d.present[col] = true
					}
				}
			}
			return end, nil
		}
		clear(slots) // the general walk starts afresh
	}
	next := 0 // predicted column: CDC tools write keys in a fixed order
	if len(d.fastNames) > 0 && !d.plain {
		sc.expect = d.fastNames[0]
	}
	var folded []foldHit
	return sc.object(i, func(k []byte, vi int) (int, error) {
		col := -1 // look the key up before the value overwrites it
		if next < len(d.phys) && (sc.hit || d.phys[next].Name == string(k)) {
			col = next
		} else if c, ok := d.row.names[string(k)]; ok {
			col = c
		}
		if col >= 0 && folded != nil {
			if err := checkFold(folded, col, k); err != nil {
				return 0, withOffset(err, vi)
			}
		}
		if col < 0 && d.row.fold != nil {
			// --column-case insensitive: a key no column has exactly.
			if c, ok := d.row.fold[strings.ToLower(string(k))]; ok {
				if err := checkFold(folded, c, k); err != nil {
					return 0, withOffset(err, vi)
				}
				if d.pool[start+c].t != jsonparser.NotExist && !hasFold(folded, c) {
					return 0, withOffset(foldConflict(d.phys[c].Name, string(k)), vi)
				}
				folded = append(folded, foldHit{c, string(k)})
				col = c
			}
		}
		if col < 0 && d.opts.RejectUnknownKeys {
			return 0, &msgError{off: vi, err: errorf(ErrUnknownKey, fmt.Sprintf("key %q is not a column", k))}
		}
		v, end, err := sc.value(vi)
		if err != nil {
			return 0, err
		}
		if col >= 0 {
			d.pool[start+col] = v // a repeated key keeps its last value
			next = col + 1
		}
		if next < len(d.fastNames) && !d.plain {
			sc.expect = d.fastNames[next]
		}
		return end, nil
	})
}

// captureRowFast captures a row object written the way CDC producers write
// them: compact, schema columns in schema order (all of them, or some, as
// in an update's "old"), scalar values. It gives up (ok false) at anything
// else -- white space, another key, a repeated key, a nested value, an
// error -- and the caller walks the object with the general scanner, which
// also produces the exact error. slots must be cleared.
//
// Not inlined: inside captureRow, whose general walk keeps many values
// live, the loop spilled its registers at every member and called
// memberPat.at and scanScalar; on its own it inlines both and keeps its
// state in registers (decode instructions: wide rows -8 to -10%,
// products -4%).
//
//go:noinline
func (d *base) captureRowFast(i int, slots []slot) (end int, ok bool) {
	b := d.sc.msg
	j := i + 1
	if j < len(b) && b[j] == '}' {
		return j + 1, true
	}
	for col := 0; ; col++ {
		vi, found := 0, false
		for ; col < len(d.fastMembers); col++ {
			if vi, found = d.fastMembers[col].at(b, j); found {
				break
			}
		}
		if !found {
			return 0, false
		}
		v, next, scalar, err := scanScalar(b, vi)
		if !scalar || err != nil || next >= len(b) {
			return 0, false
		}
		slots[col] = v
		switch b[next] {
		case ',':
			j = next + 1
		case '}':
			return next + 1, true
		default:
			return 0, false
		}
	}
}

// memberPat is the compact member start `"name":` of a plainKey name,
// prepared so that a match of up to 16 bytes is two masked word compares
// rather than a call: the fast paths try one at every member.
type memberPat struct {
	s      string // "" for a name that is not a plainKey: never matches
	w0, w1 uint64
	m0, m1 uint64
	// need is the bytes from the member's start that the word compares
	// read and a match needs (16, or the pattern and one byte more), and
	// more than any message holds for a pattern they cannot take: at's
	// inlined test is then one subtraction and two compares.
	need int
}

// noWords is need for a pattern the word compares cannot take.
const noWords = math.MaxInt / 2

// newMemberPat prepares name's pattern (its zero value is not one).
func newMemberPat(name string) memberPat {
	if name == "" {
		return memberPat{need: noWords}
	}
	p := memberPat{s: `"` + name + `":`, need: noWords}
	if len(p.s) <= 16 {
		p.need = max(16, len(p.s)+1)
		// Patterns and masks are read as at reads the message (word), so
		// they agree in any byte order.
		var w, m [16]byte
		copy(w[:], p.s)
		for k := range len(p.s) { // every byte: ranging over the string steps over a character's later bytes
			m[k] = 0xFF
		}
		p.w0, p.w1 = word(w[:], 0), word(w[:], 8)
		p.m0, p.m1 = word(m[:], 0), word(m[:], 8)
	}
	return p
}

// at matches the member start at b[i], followed by at least one byte, and
// returns the index of the value: the common case (a prepared name with 16
// bytes to load) is two masked word compares; atSlow takes the rest. The
// compiler inlines it only where default.pgo marks the call hot (the
// compact row loop); try is its common case for the other loops.
func (p *memberPat) at(b []byte, i int) (int, bool) {
	if i >= 0 && i <= len(b)-p.need {
		if (word(b, i)^p.w0)&p.m0|(word(b, i+8)^p.w1)&p.m1 == 0 {
			return i + len(p.s), true
		}
		return 0, false
	}
	return p.atSlow(b, i)
}

// try is at's common case, small enough for the compiler to inline
// without a profile's help (at was called out of line at every member of
// the envelope walk): the value's index on a match, -1 on a mismatch,
// tryOther when the word compares cannot decide.
func (p *memberPat) try(b []byte, i int) int {
	if i >= 0 && i <= len(b)-p.need {
		if (word(b, i)^p.w0)&p.m0|(word(b, i+8)^p.w1)&p.m1 == 0 {
			return i + len(p.s)
		}
		return -1
	}
	return tryOther
}

// tryOther is try's answer when atSlow must decide.
const tryOther = -2

// atSlow is at where the word compares cannot be made: a name longer than
// 16 bytes, a member within 16 bytes of the message's end.
func (p *memberPat) atSlow(b []byte, i int) (int, bool) {
	n := len(p.s)
	if n == 0 || i+n >= len(b) {
		return 0, false
	}
	if string(b[i:i+n]) == p.s {
		return i + n, true
	}
	return 0, false
}

// markKey records that a key occurs in "old" (at any depth).
func (d *base) markKey(k []byte) {
	// "old" lists its columns in schema order too: try the one after the
	// last found before the map.
	if c := d.markNext; c < len(d.phys) && d.phys[c].Name == string(k) {
		d.present[c], d.markNext = true, c+1
		return
	}
	if c, ok := d.row.names[string(k)]; ok {
		d.present[c], d.markNext = true, c+1
	} else if d.row.fold != nil {
		if c, ok := d.row.fold[strings.ToLower(string(k))]; ok {
			d.present[c], d.markNext = true, c+1
		}
	}
}

// rowSlots returns the captured slots of the row object s (a slot of the
// current message), or scans it when it was not captured.
func (d *base) rowSlots(s slot, scratch []slot) []slot {
	off := offsetIn(d.cx.msg, s.v)
	n := len(d.phys)
	for k := d.lastCaptured; k < len(d.captured); k++ {
		if d.captured[k].off == off {
			d.lastCaptured = k + 1
			return d.pool[d.captured[k].start : d.captured[k].start+n]
		}
	}
	for k := 0; k < d.lastCaptured && k < len(d.captured); k++ {
		if d.captured[k].off == off {
			return d.pool[d.captured[k].start : d.captured[k].start+n]
		}
	}
	d.row.scan(s.v, scratch)
	return scratch
}

// internKey returns k as a string, allocating only the first time a key is
// seen (envelopes repeat the same few keys).
func (d *base) internKey(k []byte) string {
	if s, ok := d.interned[string(k)]; ok {
		return s
	}
	s := string(k)
	if d.interned == nil {
		d.interned = map[string]string{}
	}
	if len(d.interned) < 4096 {
		d.interned[s] = s
	}
	return s
}
