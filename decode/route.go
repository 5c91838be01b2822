package decode

import (
	"bytes"
	"math/bits"

	"github.com/buger/jsonparser"
)

// Routing reads a message's source table before it is decoded, so it has
// to cost much less than decoding: a walk over the envelope's top level
// that jumps over values (strings eight bytes at a time, nested values by
// counting brackets) without validating them. The decoder the message then
// goes to validates it whole; for valid JSON the jump is exact, and an
// invalid message fails there, whichever table it was sent to.
//
// Canal and Debezium write the table after the row images ("data";
// "before", "after"), so their envelopes are walked from the end, stopping
// once the keys are found: the images are never read. The last occurrence
// of a key is the one found first, as a full parse keeps the last. A
// message with more after its JSON object (which decoding ignores) can
// fool the walk from the end; decoding says so (Result.Trailing) and
// RouteForward, which walks from the start, settles it.

// Route reads the source table of a message of format f: Canal's and
// Maxwell's "database" and "table", GoldenGate's "table" split at its
// first dot, Debezium's source.schema (else source.db) and source.table
// (MongoDB: source.collection), inside "payload" with schemaInclude. ok is
// false when the message names no table.
func Route(f *Format, schemaInclude bool, msg []byte) (namespace, table string, ok bool) {
	ns, tbl, esc, ok := RouteRaw(f, schemaInclude, msg)
	if !ok {
		return "", "", false
	}
	if !esc {
		return string(ns), string(tbl), true
	}
	return string(safeUnescape(ns)), string(safeUnescape(tbl)), true
}

// RouteRaw is Route without allocating: ns and table are slices of msg,
// still escaped when esc. (GoldenGate's "SCHEMA.TABLE" is split on its raw
// text; an escaped dot there is a table name nobody writes.)
func RouteRaw(f *Format, schemaInclude bool, msg []byte) (ns, table []byte, esc, ok bool) {
	return f.unit.route(schemaInclude, msg)
}

// splitOgg splits GoldenGate's "SCHEMA.TABLE" at its first dot.
func splitOgg(v []byte, esc, found bool) (ns, table []byte, _, ok bool) {
	if !found {
		return nil, nil, false, false
	}
	if i := bytes.IndexByte(v, '.'); i >= 0 {
		return v[:i], v[i+1:], esc, true
	}
	return nil, v, esc, true
}

// firstStrings is topStrings stopping once every key was met.
func firstStrings(b []byte, keys []string, vals [][]byte, esc, found []bool) {
	var done [4]bool
	left := len(keys)
	walkTopUntil(b, 0, func(k []byte, kesc bool, vi int) (int, bool) {
		for n, want := range keys {
			if done[n] || !keyIs(k, kesc, want) {
				continue
			}
			done[n] = true
			left--
			if vi < len(b) && b[vi] == '"' {
				if end, e := jumpString(b, vi); end-1 > vi {
					vals[n], esc[n], found[n] = b[vi+1:end-1], e, true
					return end, left == 0
				}
			}
			break
		}
		return jumpValue(b, vi), left == 0
	})
}

// GuessRaw is RouteRaw by a cheaper rule that a message can fool: the
// last `"table":` and `"database":` (Canal) or `"source":{` (Debezium)
// anywhere in the message, unchecked. It is for a router that checks
// what decoding read (Decoder.Routed) and corrects a wrong guess.
func GuessRaw(f *Format, schemaInclude bool, msg []byte) (ns, table []byte, esc, ok bool) {
	return f.unit.guess(nil, schemaInclude, msg)
}

// Canal's routing keys, as the searches from the end take them.
const (
	keyDatabase = `"database":`
	keyTable    = `"table":`
)

var patDatabase = []byte(keyDatabase)

var sourcePats = [4][]byte{patSchema, patDB, patTable, patCollection}

// Guess is GuessRaw for the next message.
func (g *Guesser) Guess(msg []byte) (ns, table []byte, esc, ok bool) {
	return g.Format.unit.guess(g, g.SchemaInclude, msg)
}

// leadingString reads the string value after pre (which ends at its
// opening quote) when b starts with pre, as Maxwell and GoldenGate write
// their leading keys, compactly: a look for the closing quote instead of
// a walk over the members. A value with an escape is left to the walk
// (ok false).
func leadingString(b []byte, pre string) (v, rest []byte, ok bool) {
	if len(b) < len(pre) || string(b[:len(pre)]) != pre {
		return nil, nil, false
	}
	b = b[len(pre):]
	end := bytes.IndexByte(b, '"')
	if end < 0 || bytes.IndexByte(b[:end], '\\') >= 0 {
		return nil, nil, false
	}
	return b[:end], b[end+1:], true
}

// canal guesses from the last `"table":` and the `"database":` as far from
// the end as last time, else the last one (then remembered).
func (g *Guesser) canal(msg []byte) (ns, table []byte, esc, ok bool) {
	k := len(msg) - g.dbFromEnd
	if g.dbFromEnd == 0 || !keyAt(msg, k, patDatabase) {
		if k = lastIndexColon(msg, keyDatabase); k >= 0 {
			g.dbFromEnd = len(msg) - k
		}
	}
	db, e1, ok1 := stringAfter(msg, k, len(keyDatabase))
	tb, e2, ok2 := stringAfter(msg, lastIndexColon(msg, keyTable), len(keyTable))
	return db, tb, e1 || e2, ok1 || ok2
}

// debezium guesses from the last `"source":{`: first where the keys were
// last time, else by a search of the block (then remembered).
func (g *Guesser) debezium(msg []byte) (ns, table []byte, esc, ok bool) {
	k := lastIndexColon(msg, `"source":`)
	if k < 0 {
		return nil, nil, false, false
	}
	vs := k + len(`"source":`)
	if g.known {
		hold := true
		for i, off := range g.at {
			if off >= 0 && !keyAt(msg, vs+off, sourcePats[i]) {
				hold = false
				break
			}
		}
		if hold {
			return sourceGuess(msg[vs:], g.at)
		}
	}
	src := msg[vs:jumpValue(msg, vs)]
	g.at = findSourceKeys(src)
	g.known = true
	return sourceGuess(src, g.at)
}

// keyAt says whether b holds the key pattern pat at i.
func keyAt(b []byte, i int, pat []byte) bool {
	return i >= 0 && i+len(pat) <= len(b) && string(b[i:i+len(pat)]) == string(pat)
}

// guessSource is sourceTable by a search of the object's bytes for each
// key instead of a walk over its members (Debezium's source block has a
// dozen). A key pattern `"k":` cannot occur inside a JSON string (its
// quotes would be escaped there); a nested object's member of the same
// name could fool it, which the router's check of what decoding read
// corrects.
func guessSource(src []byte) (ns, table []byte, esc, ok bool) {
	return sourceGuess(src, findSourceKeys(src))
}

// findSourceKeys finds the keys sourceGuess reads: "collection" only when
// "table" has no string value.
func findSourceKeys(src []byte) sourceKeys {
	at := sourceKeys{bytes.Index(src, patSchema), bytes.Index(src, patDB), bytes.Index(src, patTable), -1}
	if _, _, ok := stringAfter(src, at[2], len(patTable)); !ok {
		at[3] = bytes.Index(src, patCollection)
	}
	return at
}

// sourceGuess reads the namespace (schema, else db) and the table (table,
// else collection) of a source object whose keys are at at.
func sourceGuess(src []byte, at sourceKeys) (ns, table []byte, esc, ok bool) {
	val := func(i int) ([]byte, bool, bool) { return stringAfter(src, at[i], len(sourcePats[i])) }
	schema, e0, f0 := val(0)
	db, e1, f1 := val(1)
	tb, e2, f2 := val(2)
	var e3, f3 bool
	if !f2 {
		tb, e3, f3 = val(3)
	}
	ns = schema
	if !f0 || len(ns) == 0 {
		ns = db
	}
	return ns, tb, e0 || e1 || e2 || e3, f0 || f1 || f2 || f3
}

// The members guessSource looks for.
var (
	patSchema     = []byte(`"schema":`)
	patDB         = []byte(`"db":`)
	patTable      = []byte(`"table":`)
	patCollection = []byte(`"collection":`)
)

// stringAfter is the string value of the member whose `"key":` (n bytes)
// starts at k in b (k < 0: none), without its quotes: ok is false when
// the value is no string or an empty one.
func stringAfter(b []byte, k, n int) (v []byte, esc, ok bool) {
	if k < 0 {
		return nil, false, false
	}
	i := skipWS(b, k+n)
	if i >= len(b) || b[i] != '"' {
		return nil, false, false
	}
	end, e := jumpString(b, i)
	if end-1 <= i {
		return nil, false, false
	}
	return b[i+1 : end-1], e, true
}

// RouteForward is Route walking every envelope from its start: exact when
// a message has more after its JSON object (see Result.Trailing).
func RouteForward(f *Format, schemaInclude bool, msg []byte) (namespace, table string, ok bool) {
	ns, tbl, esc, ok := RouteForwardRaw(f, schemaInclude, msg)
	if !ok {
		return "", "", false
	}
	if !esc {
		return string(ns), string(tbl), true
	}
	return string(safeUnescape(ns)), string(safeUnescape(tbl)), true
}

// RouteForwardRaw is RouteRaw walking from the start.
func RouteForwardRaw(f *Format, schemaInclude bool, msg []byte) (ns, table []byte, esc, ok bool) {
	return f.unit.routeForward(schemaInclude, msg)
}

// routeDBTable is the top-level "database" and "table" of a message
// (Canal, Maxwell), walking from its start.
func routeDBTable(msg []byte) (ns, table []byte, esc, ok bool) {
	var v [2][]byte
	var e, found [2]bool
	topStrings(msg, 0, routeKeysDBTable, v[:], e[:], found[:])
	return v[0], v[1], e[0] || e[1], found[0] || found[1]
}

// routedDBTable is the captured top-level "database" and "table" (Canal,
// Maxwell).
func routedDBTable(d *base) (ns, table []byte, esc, ok bool) {
	db, ok1 := routedString(d.get(d.routeDB))
	tb, ok2 := routedString(d.get(d.routeTable))
	return db, tb, hasEscape(db) || hasEscape(tb), ok1 || ok2
}

// routedString is a captured envelope field as a routing name.
func routedString(s slot) ([]byte, bool) {
	if s.t != jsonparser.String {
		return nil, false
	}
	return s.v, true
}

// sourceTable reads Debezium's source block: schema (else db), table
// (else collection).
func sourceTable(src []byte) (ns, table []byte, esc, ok bool) {
	var v [4][]byte
	var e, found [4]bool
	topStrings(src, 0, routeKeysSource, v[:], e[:], found[:])
	ns = v[0]
	if !found[0] || len(ns) == 0 {
		ns = v[1]
	}
	table = v[2]
	if !found[2] {
		table = v[3]
	}
	return ns, table, e[0] || e[1] || e[2] || e[3], found[0] || found[1] || found[2] || found[3]
}

// lastTopMember finds the last occurrence of pattern (`"key":`, as
// compact JSON writes it) and returns the bounds of its value when that
// member is a member of the object b itself: what follows the value is
// members of b and b's closing brace, the end of b. ok is false when it
// cannot tell (the caller walks instead).
func lastTopMember(b []byte, pattern string) (vs, ve int, ok bool) {
	k := lastIndexColon(b, pattern)
	if k <= 0 {
		return 0, 0, false
	}
	vs = k + len(pattern)
	if vs >= len(b) || b[vs] == ' ' {
		return 0, 0, false
	}
	ve = jumpValue(b, vs)
	// The rest: (',' member)* '}' and nothing but white space.
	i := skipWS(b, ve)
	for i < len(b) && b[i] == ',' {
		i = skipWS(b, i+1)
		if i >= len(b) || b[i] != '"' {
			return 0, 0, false
		}
		end, _ := jumpString(b, i)
		if end-i == len(pattern)-1 && string(b[i:end]) == pattern[:len(pattern)-1] {
			return 0, 0, false // a later one: that one counts
		}
		i = skipWS(b, end)
		if i >= len(b) || b[i] != ':' {
			return 0, 0, false
		}
		i = skipWS(b, jumpValue(b, skipWS(b, i+1)))
	}
	if i >= len(b) || b[i] != '}' || lastNonWS(b, len(b)-1) != i {
		return 0, 0, false
	}
	// The pattern must start a key: preceded by '{' or ',' (white space
	// aside), not be the tail of a string.
	j := lastNonWS(b, k-1)
	if j < 0 || b[j] != ',' && b[j] != '{' {
		return 0, 0, false
	}
	return vs, ve, true
}

// lastIndexColon is bytes.LastIndex for a pattern ending in ':', found
// from colon to colon (much faster than a general search from the end);
// for an object value (`"key":{`), from brace to brace, which are rarer.
func lastIndexColon(b []byte, pattern string) int {
	n := len(pattern)
	if pattern == `"source":` {
		for end := len(b); ; {
			c := bytes.LastIndexByte(b[:end], '{')
			if c < 0 {
				break
			}
			if c >= n && string(b[c-n:c]) == pattern {
				return c - n
			}
			end = c
		}
		return -1
	}
	for end := len(b); ; {
		c := bytes.LastIndexByte(b[:end], ':')
		if c < 0 {
			return -1
		}
		if c+1 >= n && string(b[c+1-n:c+1]) == pattern {
			return c + 1 - n
		}
		end = c
	}
}

// endsObject reports whether msg's last byte other than white space closes
// an object (the walk from the end can start there).
func endsObject(msg []byte) bool {
	i := len(msg) - 1
	for i >= 0 && (msg[i] == ' ' || msg[i] == '\t' || msg[i] == '\r' || msg[i] == '\n') {
		i--
	}
	return i >= 0 && msg[i] == '}'
}

// backStrings is topStrings walking the object that ends msg from its
// last member, stopping once every key's last occurrence is met.
func backStrings(b []byte, keys []string, vals [][]byte, esc, found []bool) {
	var done [4]bool
	left := len(keys)
	walkBack(b, func(k []byte, kesc bool, vs, ve int) bool {
		for n, want := range keys {
			if done[n] || !keyIs(k, kesc, want) {
				continue
			}
			done[n] = true // the last occurrence decides, string or not
			left--
			if b[vs] == '"' && ve-1 > vs {
				vals[n], esc[n], found[n] = b[vs+1:ve-1], hasEscape(b[vs+1:ve-1]), true
			}
			break
		}
		return left == 0
	})
}

// backObject returns the object value of key's last occurrence in the
// object that ends b.
func backObject(b []byte, key string) ([]byte, bool) {
	var obj []byte
	seen := false
	walkBack(b, func(k []byte, kesc bool, vs, ve int) bool {
		if !keyIs(k, kesc, key) {
			return false
		}
		seen = true
		if b[vs] == '{' {
			obj = b[vs:ve]
		}
		return true
	})
	return obj, seen && obj != nil
}

// walkBack calls member for the members of the object that ends b, last
// first: the raw key, whether it is escaped, and the value's bounds;
// member returns true to stop. It stops too at anything unexpected.
func walkBack(b []byte, member func(key []byte, esc bool, vs, ve int) bool) {
	i := lastNonWS(b, len(b)-1)
	if i < 0 || b[i] != '}' {
		return
	}
	i--
	for {
		i = lastNonWS(b, i)
		if i < 0 || b[i] == '{' {
			return
		}
		ve := i + 1
		vs := backValue(b, i)
		if vs < 0 || vs >= ve {
			return
		}
		i = lastNonWS(b, vs-1)
		if i < 0 || b[i] != ':' {
			return
		}
		i = lastNonWS(b, i-1)
		if i < 0 || b[i] != '"' {
			return
		}
		ks := backString(b, i)
		if ks < 0 {
			return
		}
		key := b[ks+1 : i]
		if member(key, hasEscape(key), vs, ve) {
			return
		}
		i = lastNonWS(b, ks-1)
		if i < 0 || b[i] != ',' {
			return
		}
		i--
	}
}

func lastNonWS(b []byte, i int) int {
	for i >= 0 && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i--
	}
	return i
}

// backString returns the index of the quote opening the string whose
// closing quote is b[i] (-1 when there is none): the nearest quote before
// it not escaped, that is not preceded by an odd run of backslashes.
func backString(b []byte, i int) int {
	for j := i - 1; j >= 0; {
		q := bytes.LastIndexByte(b[:j+1], '"')
		if q < 0 {
			return -1
		}
		n := 0
		for k := q - 1; k >= 0 && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q
		}
		j = q - 1
	}
	return -1
}

// backValue returns where the value ending at b[i] starts (-1 when it
// cannot tell).
func backValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return backString(b, i)
	case '}', ']':
		depth := 0
		for i >= 0 {
			switch b[i] {
			case '"':
				if i = backString(b, i); i < 0 {
					return -1
				}
			case '}', ']':
				depth++
			case '{', '[':
				depth--
				if depth == 0 {
					return i
				}
			}
			i--
		}
		return -1
	}
	for i >= 0 {
		switch b[i] {
		case ',', ':', '[', '{', ' ', '\t', '\r', '\n':
			return i + 1
		}
		i--
	}
	return -1
}

var (
	routeKeysDBTable = []string{"database", "table"}
	routeKeysTable   = []string{"table"}
	routeKeysSource  = []string{"schema", "db", "table", "collection"}
)

// topStrings walks the object at b[i:] and, for each of keys whose value
// is a string, sets vals (the content, escaped), esc and found.
func topStrings(b []byte, i int, keys []string, vals [][]byte, esc, found []bool) {
	walkTop(b, i, func(k []byte, kesc bool, vi int) int {
		for n, want := range keys {
			if !keyIs(k, kesc, want) {
				continue
			}
			// The last one counts, as a full parse keeps it.
			if vi < len(b) && b[vi] == '"' {
				if end, e := jumpString(b, vi); end-1 > vi {
					vals[n], esc[n], found[n] = b[vi+1:end-1], e, true
					return end
				}
			}
			vals[n], esc[n], found[n] = nil, false, false
			break
		}
		return jumpValue(b, vi)
	})
}

// topObject returns the object value of key in the object b.
func topObject(b []byte, key string) ([]byte, bool) {
	var obj []byte
	walkTop(b, 0, func(k []byte, kesc bool, vi int) int {
		end := jumpValue(b, vi)
		if keyIs(k, kesc, key) { // the last one counts, as a full parse keeps it
			obj = nil
			if vi < len(b) && b[vi] == '{' {
				obj = b[vi:end]
			}
		}
		return end
	})
	return obj, obj != nil
}

func keyIs(k []byte, esc bool, want string) bool {
	if !esc {
		return string(k) == want
	}
	return string(safeUnescape(k)) == want
}

// safeUnescape resolves a JSON string's escapes; routing reads messages
// not yet validated, so a malformed escape leaves the text as it is.
func safeUnescape(v []byte) []byte {
	out, err := jsonparser.Unescape(v, nil)
	if err != nil {
		return v
	}
	return out
}

// walkTop calls member for each member of the object starting at or after
// b[i] (white space first): the raw key, whether it is escaped, and where
// its value starts; member returns the index after the value. It stops at
// the object's end or at anything that is not an object.
func walkTop(b []byte, i int, member func(key []byte, esc bool, vi int) int) {
	walkTopUntil(b, i, func(key []byte, esc bool, vi int) (int, bool) { return member(key, esc, vi), false })
}

// walkTopUntil is walkTop whose member can stop the walk.
func walkTopUntil(b []byte, i int, member func(key []byte, esc bool, vi int) (int, bool)) {
	i = skipWS(b, i)
	if i >= len(b) || b[i] != '{' {
		return
	}
	i++
	for {
		i = skipWS(b, i)
		if i >= len(b) || b[i] != '"' {
			return
		}
		end, esc := jumpString(b, i)
		key := b[i+1 : max(end-1, i+1)]
		i = skipWS(b, end)
		if i >= len(b) || b[i] != ':' {
			return
		}
		i = skipWS(b, i+1)
		var stop bool
		if i, stop = member(key, esc, i); stop {
			return
		}
		i = skipWS(b, i)
		if i >= len(b) || b[i] != ',' {
			return
		}
		i++
	}
}

// jumpString returns the index after the string starting at b[i] (a
// quote), and whether it holds an escape.
func jumpString(b []byte, i int) (int, bool) {
	esc := false
	i++
	for {
		for i+8 <= len(b) {
			w := load64(b, i)
			if m := hasZero(w^0x2222222222222222) | hasZero(w^0x5c5c5c5c5c5c5c5c); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(b) {
			return len(b), esc
		}
		switch b[i] {
		case '"':
			return i + 1, esc
		case '\\':
			esc = true
			i += 2
		default:
			i++
		}
	}
}

// jumpValue returns the index after the value starting at b[i].
func jumpValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		end, _ := jumpString(b, i)
		return end
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i, _ = jumpString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	// A number or literal: up to the next delimiter.
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
		i++
	}
	return i
}
