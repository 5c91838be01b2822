package decode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/buger/jsonparser"
	"pgregory.net/rapid"

	"github.com/cdcetl/cdcetl/writer"
)

// memberPat.at against the plain definition: the bytes `"name":` at i and
// at least one byte after them. Names straddle the 8- and 16-byte word
// limits; each byte of the member is changed in turn, and the member is
// placed so that the message ends at, before and after the word loads.
func TestMemberPatAt(t *testing.T) {
	want := func(b []byte, i int, name string) (int, bool) {
		m := `"` + name + `":`
		if name != "" && i+len(m) < len(b) && string(b[i:i+len(m)]) == m {
			return i + len(m), true
		}
		return 0, false
	}
	var names []string
	for n := 0; n <= 20; n++ {
		names = append(names, strings.Repeat("k", n))
	}
	// Names of several-byte characters: a byte inside a character (é's
	// 0xA9 made 0xA8, è) must be compared like any other.
	names = append(names, "é", "kéy", "日本語", "0ׄ", "prénom_de_l_élève")
	for _, name := range names {
		p := newMemberPat(name)
		m := `"` + name + `":`
		for tail := 0; tail <= 18; tail++ {
			for lead := 0; lead <= 2; lead++ {
				base := strings.Repeat(" ", lead) + m + strings.Repeat("1", tail)
				for k := -1; k < len(m); k++ {
					for _, c := range []byte{'k', '"', ':', 'x', 0, 1} {
						b := []byte(base)
						if k >= 0 {
							if c == 1 {
								c = b[lead+k] ^ 1
							}
							b[lead+k] = c
						}
						gi, gok := p.at(b, lead)
						wi, wok := want(b, lead, name)
						if gi != wi || gok != wok {
							t.Fatalf("name %q in %q at %d: got %d %v, want %d %v", name, b, lead, gi, gok, wi, wok)
						}
						if gi, gok := tryAt(&p, b, lead); gi != wi || gok != wok {
							t.Fatalf("name %q in %q at %d: try then atSlow got %d %v, want %d %v", name, b, lead, gi, gok, wi, wok)
						}
					}
				}
			}
		}
	}
}

// FuzzMemberPatAt: memberPat.at (its inlined word compares and atSlow),
// and try followed by atSlow, against the plain definition, for any name,
// message and position.
func FuzzMemberPatAt(f *testing.F) {
	f.Add("id", []byte(`{"id":1}`), 1)
	f.Add("description", []byte(`"description":"x"`), 0)
	f.Add("a_name_longer_than_16", []byte(`"a_name_longer_than_16":0`), 0)
	f.Add("clé", []byte(`{"clè":1,"x":2,"y":3}`), 1) // é and è differ in their second byte only
	f.Fuzz(func(t *testing.T, name string, b []byte, i int) {
		if i < 0 || i > len(b)+1 { // callers pass an index in the message
			return
		}
		m := `"` + name + `":`
		wi, wok := 0, false
		if name != "" && i >= 0 && i+len(m) < len(b) && string(b[i:i+len(m)]) == m {
			wi, wok = i+len(m), true
		}
		p := newMemberPat(name)
		if gi, gok := p.at(b, i); gi != wi || gok != wok {
			t.Fatalf("name %q in %q at %d: got %d %v, want %d %v", name, b, i, gi, gok, wi, wok)
		}
		if gi, gok := tryAt(&p, b, i); gi != wi || gok != wok {
			t.Fatalf("name %q in %q at %d: try then atSlow got %d %v, want %d %v", name, b, i, gi, gok, wi, wok)
		}
	})
}

// tryAt is at as the envelope walk makes it (nextMember: try, and atSlow
// when try cannot decide), over an order of the one key.
func tryAt(p *memberPat, b []byte, i int) (int, bool) {
	_, vi, ok := nextMember([]envKey{{member: *p}}, 0, b, i)
	return vi, ok
}

// literalEnd against scanLiteral: the literals, cut short, with each byte
// changed, and followed by every byte value or by nothing.
func TestLiteralEnd(t *testing.T) {
	for _, lit := range []string{"true", "false", "null"} {
		for cut := 0; cut <= len(lit); cut++ {
			for k := -1; k < cut; k++ {
				for _, c := range []byte{'x', 'T', 0, 'e', 'l'} {
					for next := -1; next < 256; next++ {
						b := []byte(lit[:cut])
						if k >= 0 {
							b[k] = c
						}
						if next >= 0 {
							b = append(b, byte(next))
						}
						want, err := scanLiteral(b, 0, lit)
						if err != nil {
							want = -1
						}
						if got := literalEnd(b, 0); got != want {
							t.Fatalf("%q as %s: literalEnd %d, scanLiteral %d (%v)", b, lit, got, want, err)
						}
					}
				}
			}
		}
	}
}

// digitsEnd against a byte loop, on runs of digits of every length
// followed by bytes that are no digits (those next to '0' and '9', high
// bytes that carry in the word arithmetic), at every offset.
func TestDigitsEnd(t *testing.T) {
	for n := 0; n <= 24; n++ {
		for _, stop := range []byte{'/', ':', '.', 'e', 0xFA, 0xFF, 0x39 + 0x80, 0} {
			for lead := 0; lead <= 9; lead++ {
				b := []byte(strings.Repeat("x", lead) + strings.Repeat("0123456789", 3)[:n])
				b = append(b, stop, '7', '7')
				for cut := lead; cut <= len(b); cut++ {
					want := lead
					for want < cut && b[want] >= '0' && b[want] <= '9' {
						want++
					}
					if got := digitsEnd(b[:cut], lead); got != want {
						t.Fatalf("%q from %d: %d, want %d", b[:cut], lead, got, want)
					}
				}
			}
		}
	}
}

// scanNumber against JSON's number grammar (as a regular expression) on
// random short strings of number characters.
func TestScanNumberGrammar(t *testing.T) {
	re := regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`)
	rapid.Check(t, func(t *rapid.T) {
		chars := []byte("0123456789-+.eE9x:/")
		b := rapid.SliceOfN(rapid.SampledFrom(chars), 1, 30).Draw(t, "b")
		if b[0] != '-' && (b[0] < '0' || b[0] > '9') {
			b[0] = '1'
		}
		end, err := scanNumber(b, 0)
		m := re.FindIndex(b)
		// The grammar's longest match, unless it stops where a digit,
		// point or exponent part has begun but is incomplete.
		if err == nil && (m == nil || m[1] != end) {
			t.Fatalf("%q: scanNumber %d, grammar %v", b, end, m)
		}
		if err != nil && m != nil && m[1] == len(b) {
			t.Fatalf("%q: scanNumber failed (%v), the grammar takes it all", b, err)
		}
	})
}

// Debezium's "source" members as the compact path and the general walk
// capture them, message after message: the remembered order, messages
// that omit keys or nest values (compact), and messages in another order,
// with repeated or escaped keys, white space, or no source (general).
func TestSourceCapture(t *testing.T) {
	schema := "id INT, tbl STRING METADATA FROM 'source.table' VIRTUAL, db STRING METADATA FROM 'source.database' VIRTUAL"
	msg := func(id int, source string) string {
		return `{"before":null,"after":{"id":` + strconv.Itoa(id) + `},"source":` + source + `,"op":"c"}`
	}
	lines := []string{
		msg(1, `{"db":"a","table":"t1","x":1}`),
		msg(2, `{"db":"b","table":"t2","x":2}`),
		msg(3, `{"table":"t3","x":[1,{"y":2}]}`),
		msg(4, `{"table":"t4","db":"d4"}`),
		msg(5, `{"db":"a","db":"b","table":"t5"}`),
		msg(6, `{ "db" : "w", "table":"t6"}`),
		msg(61, `{"db":"v" ,"table":"t61"}`),
		msg(7, `{"t\u0061ble":"t7","db":"e"}`),
		msg(8, `null`),
		msg(9, `{"table":"t9","db":"f"}`),
		msg(10, `{"table":"t10"}`),
		msg(11, `{"db":"g","table":"t\"11"}`),
	}
	got, err := decodeLines(t, "debezium-json", schema, nil, lines...)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"+I[1, t1, a]", "+I[2, t2, b]", "+I[3, t3, null]", "+I[4, t4, d4]", "+I[5, t5, b]",
		"+I[6, t6, w]", "+I[61, t61, v]", "+I[7, t7, e]", "+I[8, null, null]", "+I[9, t9, f]", "+I[10, t10, null]", `+I[11, t"11, g]`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Malformed sources met on the compact path fail as the general walk
	// does.
	for _, bad := range []string{`{"db":"a","table":tx}`, `{"db":"a" "table":"t"}`, `{"db":"a","table":"t",}`, `{"db":"a","table":"t"`, `{"db":"a";"table":"t"}`} {
		_, err = decodeLines(t, "debezium-json", schema, nil, lines[0], msg(12, bad))
		if err == nil || !strings.Contains(err.Error(), "in:2:") {
			t.Errorf("source %s: error %v, want one at in:2", bad, err)
		}
	}
}

// skipFast against the general scanner: whenever it accepts a value, the
// scanner accepts the same value with the same end; on valid JSON (with
// white space anywhere it may go) it always accepts, so the fast path is
// really taken; on broken JSON it gives up rather than guess.
func TestSkipFastMatchesValue(t *testing.T) {
	var gen func(t *rapid.T, depth int) string
	ws := func(t *rapid.T) string { return rapid.SampledFrom([]string{"", "", "", " ", "\n\t"}).Draw(t, "ws") }
	gen = func(t *rapid.T, depth int) string {
		k := rapid.IntRange(0, 5).Draw(t, "kind")
		if depth > 3 {
			k = 0
		}
		switch k {
		case 1, 2:
			n := rapid.IntRange(0, 3).Draw(t, "n")
			parts := make([]string, n)
			for i := range parts {
				key, _ := json.Marshal(rapid.String().Draw(t, "key"))
				parts[i] = ws(t) + string(key) + ws(t) + ":" + gen(t, depth+1)
			}
			return ws(t) + "{" + strings.Join(parts, ",") + ws(t) + "}" + ws(t)
		case 3:
			n := rapid.IntRange(0, 3).Draw(t, "n")
			parts := make([]string, n)
			for i := range parts {
				parts[i] = gen(t, depth+1)
			}
			return ws(t) + "[" + strings.Join(parts, ",") + ws(t) + "]" + ws(t)
		}
		return ws(t) + rapid.SampledFrom([]string{`1`, `-0.5e3`, `"s"`, `"\u00e9\n"`, `true`, `false`, `null`, `"a\"b"`}).Draw(t, "scalar") + ws(t)
	}
	rapid.Check(t, func(t *rapid.T) {
		b := []byte(gen(t, 0))
		if rapid.Bool().Draw(t, "break") && len(b) > 0 { // break it somewhere
			b[rapid.IntRange(0, len(b)-1).Draw(t, "at")] = rapid.SampledFrom([]byte(`,:{}[]"\ x`)).Draw(t, "with")
		}
		sc := scanner{msg: b}
		_, gend, gerr := sc.value(0)
		fend, ok := skipFast(b, 0, 0)
		if ok && (gerr != nil || fend != gend) {
			t.Fatalf("%q: skipFast accepted up to %d; scanner: end %d, %v", b, fend, gend, gerr)
		}
		if !ok && gerr == nil {
			t.Fatalf("%q: skipFast gave up on valid JSON", b)
		}
	})
}

// TestValueMemo: envelope and Debezium source values remembered from one
// message and met again in the next -- the same, a number that goes on
// past the remembered digits, another type, white space before a value, a
// value that ends the message, values that share the first word or all
// but the last byte with the remembered one and are invalid after it, a
// member that changes every time until the memo rests and then repeats
// again -- decode as the decoder without shortcuts decodes them, message
// by message, errors included.
func TestValueMemo(t *testing.T) {
	canal := func(db, es, table, sqlType string) string {
		return `{"data":[{"id":"1","name":"a"}],"old":null,"database":` + db + `,"es":` + es +
			`,"isDdl":false,"mysqlType":{"id":"INT","name":"VARCHAR(9)"},"sqlType":` + sqlType + `,"table":` + table + `,"ts":5,"type":"INSERT"}`
	}
	dbz := func(version, ts, table, tail string) string {
		return `{"before":null,"after":{"id":1,"name":"a"},"source":{"version":` + version + `,"ts_ms":` + ts +
			`,"db":"inv","table":` + table + `,"pos":77}` + tail
	}
	const (
		db  = `"inventory_of_the_warehouse"` // long enough to be remembered
		tbl = `"products_of_the_warehouse_"`
		st  = `{"id":4,"name":12,"more":-5}`
		ver = `"1.9.7.Final-with-a-long-tag"`
	)
	var changing []string // a value that changes every message, then stays
	for i := range 2*memoMisses + 3 {
		changing = append(changing, canal(fmt.Sprintf(`"inventory_of_the_warehouse_%d"`, i%(memoMisses+5)), "12", tbl, st))
	}
	for _, tc := range []struct {
		format, schema string
		lines          []string
	}{
		{"canal-json", "id INT, name STRING, `database` STRING METADATA FROM 'database' VIRTUAL, `table` STRING METADATA FROM 'table' VIRTUAL, " +
			"et TIMESTAMP_LTZ(3) METADATA FROM 'event-timestamp' VIRTUAL, st MAP<STRING, INT> METADATA FROM 'sql-type' VIRTUAL", append([]string{
			canal(db, "12", tbl, st),
			canal(db, "12", tbl, st),
			canal(db, "12", `null`, st),                                // another type
			canal(db, "12", ` `+tbl, st),                               // white space
			canal(db, "12", ` `+tbl, st),                               // again
			canal(db, "12", tbl, `{"id":4,"name":12,"more":"x"}`),      // a map whose value no longer converts
			canal(`"inventory_of_the_warehouse2"`, "12", tbl, st),      // a longer string
			canal(`"inventory_of_the_warehous"`, "12", tbl, st),        // a shorter one
			canal(db, "12", tbl, `{"id":4,"name":12,"more":-5,"x":1}`), // the same up to a point
			canal(`"inventory_of_the_wareh","x":"a"`, "12", tbl, st),   // the same start, then invalid
			canal(db, "12", tbl, st),
			canal(`1inventory_of_the_warehouse"`, "12", tbl, st), // all but the first byte the same
			canal(db, "12", tbl, st),
			canal(db, "12", tbl, `{"id":4,"name":12,"more":-5]`), // all but the last byte the same
			canal(db, "12", tbl, st),
			canal(db, "12", tbl, st) + " ",
		}, changing...)},
		{"debezium-json", "id INT, name STRING, `table` STRING METADATA FROM 'source.table' VIRTUAL, sts TIMESTAMP_LTZ(3) METADATA FROM 'source.timestamp' VIRTUAL", []string{
			dbz(ver, "10", tbl, `,"op":"c"}`),
			dbz(ver, "10", tbl, `,"op":"c"}`),
			dbz(ver, "101", tbl, `,"op":"c"}`),
			dbz(ver, "10", `"products_of_the_warehouse_2"`, `,"op":"c"}`),
			dbz(ver, "10", `null`, `,"op":"c"}`),
			dbz(ver, `"x"`, tbl, `,"op":"c"}`), // a source value that does not convert
			dbz(ver, "10", tbl, `}`),           // source ends the message: no op
			dbz(`"1.9.7.Final-with-a-long-ta"`+`"`, "10", tbl, `,"op":"c"}`),
			dbz(ver, "10", tbl, `,"op":"c"}`),
		}},
		{"debezium-json", "id INT, name STRING, sch STRING METADATA FROM 'schema' VIRTUAL", []string{
			// schema-include: "schema" is read at the root only; a
			// payload member of that name is not, nor a root member
			// named like a payload field.
			`{"schema":{"type":"struct","optional":false},"payload":{"before":null,"after":{"id":1,"name":"a"},"op":"c","schema":{"no":"not read","x":12345}},"op":"not-read-at-the-root-level-at-all"}`,
			`{"schema":{"type":"struct","optional":false},"payload":{"before":null,"after":{"id":1,"name":"a"},"op":"c","schema":{"no":"not read","x":12345}},"op":"not-read-at-the-root-level-at-all"}`,
			`{"schema":{"type":"struct","optional":false},"payload":{"before":null,"after":{"id":1,"name":"a"},"op":"c","schema":{"no":"not read","x":12345}},"op":"not-read-at-the-root-level-at-all"}`,
		}},
	} {
		t.Run(tc.format, func(t *testing.T) {
			var opts map[string]string
			if strings.Contains(tc.schema, "'schema'") {
				opts = map[string]string{"debezium-json.schema-include": "true"}
			}
			sameWithoutShortcuts(t, tc.format, tc.schema, opts, tc.lines)
		})
	}
}

// valueMemo.hit on its own: a remembered value of every type and length
// matches itself followed by a separator, and nothing that differs in any
// byte, that goes on (numbers and literals), or that is cut short.
func TestValueMemoMatch(t *testing.T) {
	var vals []string
	for n := 1; n <= memoMinLen+10; n++ {
		vals = append(vals, strings.Repeat("7", n), `"`+strings.Repeat("s", n)+`"`, `{"k":`+strings.Repeat("1", n)+`}`, `[`+strings.Repeat("2", n)+`]`)
	}
	vals = append(vals, "true", "false", "null", "-1.5e3", `""`)
	for _, v := range vals {
		var m valueMemo
		for _, lead := range []string{"", `{"a":`} {
			learned := []byte(lead + v + `,"b":1}`)
			sl, _, _, _ := scanScalar(learned, len(lead))
			typ := sl.t
			if v[0] == '{' {
				typ = jsonparser.Object
			} else if v[0] == '[' {
				typ = jsonparser.Array
			}
			m = valueMemo{}
			m.learn(learned, len(lead), len(lead)+len(v), typ)
			for _, tail := range []string{`,"b":1}`, `}`, `]`} {
				b := []byte(lead + v + tail + strings.Repeat(" ", 20))
				end := m.hit(b, len(lead))
				ok := end >= 0
				var s slot
				if ok {
					s = m.slotAt(b, len(lead), end)
				}
				want := v
				if typ == jsonparser.String {
					want = v[1 : len(v)-1]
				}
				if !ok || end != len(lead)+len(v) || string(s.v) != want || s.t != typ {
					t.Fatalf("%q remembered, %q met: %q %v %d %v", v, b, s.v, s.t, end, ok)
				}
			}
			for k := range len(v) {
				for _, c := range []byte{'x', '"', ',', '}', v[k] ^ 1} {
					if c == v[k] {
						continue
					}
					b := []byte(lead + v + `,"b":1}` + strings.Repeat(" ", 20))
					b[len(lead)+k] = c
					if m.hit(b, len(lead)) >= 0 {
						t.Fatalf("%q remembered, %q met: a match", v, b)
					}
				}
			}
			if last := v[len(v)-1]; last != '"' && last != '}' && last != ']' {
				b := []byte(lead + v + `5,"b":1}` + strings.Repeat(" ", 20))
				if m.hit(b, len(lead)) >= 0 {
					t.Fatalf("%q remembered, %q met: a match", v, b)
				}
			}
			if m.hit([]byte(lead+v), len(lead)) >= 0 {
				t.Fatalf("%q remembered, met at the end of the message: a match", v)
			}
		}
	}
}

// TestNonASCIIKeys: keys that differ from a column's or an envelope
// field's name only inside a character (é and è share their first byte)
// are other keys on the fast paths too: the compact row does not take
// "prènom" for the column prénom, nor the compact envelope a key for one
// it learned from an earlier message.
func TestNonASCIIKeys(t *testing.T) {
	sameWithoutShortcuts(t, "maxwell-json", "id BIGINT, prénom STRING", nil, []string{
		`{"data":{"id":1,"prénom":"a"},"database":"d","table":"t","type":"insert"}`,
		`{"data":{"id":2,"prènom":"b"},"database":"d","table":"t","type":"insert"}`,
		`{"0ׄ":"a","type":"insert","data":{"id":3,"prénom":"c"}}`,
		`{"0ׅ":"a","type":"insert","data":{"id":4,"prénom":"d"}}`,
		"{\"0\xd7,\":\"a\",\"type\":\"insert\",\"data\":{\"id\":5}}",
	})
}

// TestSourceDelta: source blocks taken member by member from the last
// block where their bytes are the same -- the same block, a value that
// changes with the same or another length (the members after it move), a
// member missing, added or moved, a nested value, a value that only starts
// the same, an empty block, invalid blocks that start as the last one --
// decode as the decoder without shortcuts decodes them, message by
// message, errors included.
func TestSourceDelta(t *testing.T) {
	schema := "id INT, tbl STRING METADATA FROM 'source.table' VIRTUAL, db STRING METADATA FROM 'source.database' VIRTUAL, " +
		"sts TIMESTAMP_LTZ(3) METADATA FROM 'source.timestamp' VIRTUAL, pos STRING METADATA FROM 'source-position' VIRTUAL"
	block := func(ts, db, table, pos, extra string) string {
		return `{"version":"1.9.7.Final","connector":"mysql","name":"s1","ts_ms":` + ts + `,"snapshot":"false"` + db +
			`,"table":` + table + `,"server_id":1,"file":"bin.3","pos":` + pos + `,"row":0` + extra + `,"query":null}`
	}
	const db = `,"db":"inv"`
	var lines []string
	for i, src := range []string{
		block("1000", db, `"products"`, "77", ""),
		block("1000", db, `"products"`, "77", ""),
		block("1001", db, `"products"`, "78", ""),
		block("10011", db, `"products"`, "79", ""), // the members after ts_ms one byte on
		block("10012", db, `"orders"`, "7", ""),
		block("10012", "", `"orders"`, "7", ""),                 // db missing
		block("10012", db, `"orders"`, "7", `,"gtid":null`),     // a member added
		block("10012", db, `"orders"`, "7", `,"x":{"a":[1,2]}`), // nested
		block("10012", db, `"orders"`, "7", `,"x":{"a":[1,3]}`),
		block("10012", db, `"orders2"`, "7", ""), // starts as the last value
		block("10012", db, `"ord\"ers"`, "7", ""),
		`{"version":"1.9.7.Final","connector":"mysql","table":"t","db":"moved","name":"s1"}`,
		`{}`,
		block("1000", db, `"products"`, "77", ""),
		block("1000", db, `products`, "77", ""), // invalid where the last block had a value
		block("1000", db, `"products"`, "77", ""),
		block("1000", db, `"products"`, "77,", ""), // invalid after the same bytes
		block("1000", db, `"products"`, "77", ""),
		strings.Replace(block("1000", db, `"products"`, "77", ""), `"pos":77,`, `"pos":77;`, 1), // another separator, then the next member
		block("1000", db, `"products"`, "77", ""),
		block("10x0", db, `"products"`, "77", ""), // invalid, as long as the last value
		block("1000", db, `"products"`, "77", ""),
		`null`,
		block("1000", db, `"products"`, "77", ""),
		block("1000", db, `"products"`, "77", "") + ` `,
	} {
		lines = append(lines, `{"before":null,"after":{"id":`+strconv.Itoa(i)+`},"source":`+src+`,"op":"c"}`)
	}
	sameWithoutShortcuts(t, "debezium-json", schema, nil, lines)
}

// sameWithoutShortcuts decodes lines with the decoder's shortcuts and
// without them (plain) and fails unless both give the same results and
// rows, message by message.
func sameWithoutShortcuts(t *testing.T, format, schema string, opts map[string]string, lines []string) {
	t.Helper()
	var got [2][]string
	for k, plain := range []bool{false, true} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		d, b := testDecoder(t, mem, format, schema, opts)
		d.(*base).plain = plain
		for i, l := range lines {
			res, err := d.Decode([]byte(l))
			got[k] = append(got[k], fmt.Sprintf("%d: %d rows, %v", i, res.Rows, err))
		}
		rec := b.Flush()
		var out bytes.Buffer
		if rec != nil {
			p := writer.NewPrint(&out, b.Schema())
			if err := p.Write(context.Background(), rec); err != nil {
				t.Fatal(err)
			}
			p.Close()
			rec.Release()
		}
		got[k] = append(got[k], strings.Split(out.String(), "\n")...)
		b.Release()
		mem.AssertSize(t, 0)
	}
	if strings.Join(got[0], "\n") != strings.Join(got[1], "\n") {
		t.Errorf("with shortcuts:\n%s\nwithout:\n%s", strings.Join(got[0], "\n"), strings.Join(got[1], "\n"))
	}
}
