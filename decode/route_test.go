package decode

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// routeReference is Route by encoding/json: what a full parse says.
func routeReference(f *Format, schemaInclude bool, msg []byte) (string, string, bool) {
	obj := func(b []byte) map[string]json.RawMessage {
		var m map[string]json.RawMessage
		if json.Unmarshal(b, &m) != nil {
			return nil
		}
		return m
	}
	str := func(m map[string]json.RawMessage, k string) (string, bool) {
		var s string
		if v, ok := m[k]; ok && json.Unmarshal(v, &s) == nil {
			return s, true
		}
		return "", false
	}
	m := obj(msg)
	switch f.Name {
	case "canal-json", "maxwell-json":
		db, ok1 := str(m, "database")
		tb, ok2 := str(m, "table")
		return db, tb, ok1 || ok2
	case "ogg-json":
		full, ok := str(m, "table")
		if !ok {
			return "", "", false
		}
		for i := 0; i < len(full); i++ {
			if full[i] == '.' {
				return full[:i], full[i+1:], true
			}
		}
		return "", full, true
	case "debezium-json":
		if schemaInclude {
			m = obj(m["payload"])
		}
		src := obj(m["source"])
		if src == nil {
			return "", "", false
		}
		schema, ok0 := str(src, "schema")
		db, ok1 := str(src, "db")
		tb, ok2 := str(src, "table")
		coll, ok3 := str(src, "collection")
		ns := schema
		if !ok0 || ns == "" {
			ns = db
		}
		if !ok2 {
			tb = coll
		}
		return ns, tb, ok0 || ok1 || ok2 || ok3
	}
	return "", "", false
}

// FuzzRoute: on valid JSON, Route says what a full parse says.
func FuzzRoute(f *testing.F) {
	for _, s := range []string{
		`{"data":[{"table":"no","database":"no"}],"database":"inventory","table":"products","type":"INSERT"}`,
		`{"database":"d\"b","table":"t\u0061ble","data":{"x":{"table":"nested"}}}`,
		`{"table":"SCOTT.EMP","op_type":"I","after":{"table":"x"}}`,
		`{"before":null,"after":{"source":{"table":"no"}},"source":{"db":"inventory","schema":"public","table":"t"},"op":"c"}`,
		`{"schema":{"source":{}},"payload":{"source":{"db":"d","collection":"c"},"op":"u"}}`,
		` { "table" : "a.b" , "table" : "c.d" } `,
		`{"source":{"db":"x"},"source":{"db":"y"}}`,
		`{"source":{"db":"x","table":"t"},"op":"c","source":null}`,
		`{"after":{"source":{"db":"no"}},"source":{"db":"x","table":"t"},"op":"c"}`,
		`[1,2]`, `"str"`, `{"a":[{"b":"]}"}],"table":"t"}`,
	} {
		f.Add([]byte(s), false)
	}
	f.Add([]byte(`{"schema":{},"payload":{"source":{"db":"d","table":"t"}}}`), true)
	formats := []string{"canal-json", "maxwell-json", "ogg-json", "debezium-json"}
	f.Fuzz(func(t *testing.T, msg []byte, schemaInclude bool) {
		if !json.Valid(msg) || !utf8.Valid(msg) {
			for _, name := range formats { // must not panic
				RouteRaw(mustLookup(name), schemaInclude, msg)
				RouteForwardRaw(mustLookup(name), schemaInclude, msg)
			}
			return
		}
		for _, name := range formats {
			fm := mustLookup(name)
			wns, wtb, wok := routeReference(fm, schemaInclude, msg)
			// What decoding read (when it accepts the message) is the same.
			dec, b := routedDecoder(t, fm, schemaInclude)
			defer b.Release()
			if out, err := dec.Decode(msg); err == nil && out.Outcome != Blank {
				ns, tb, esc, ok := dec.Routed()
				if esc {
					ns, tb = unescape(nil, ns), unescape(nil, tb)
				}
				if string(ns) != wns || string(tb) != wtb || ok != wok {
					t.Fatalf("%s %s: decoding read %q, %q, %v; a full parse says %q, %q, %v", name, msg, ns, tb, ok, wns, wtb, wok)
				}
			}
			for r, route := range []func(*Format, bool, []byte) (string, string, bool){Route, RouteForward} {
				if r == 0 && (name == "maxwell-json" || name == "ogg-json") && repeatsTopKey(msg) {
					continue // Route stops at the first; decoding flags it (Result.Repeated)
				}
				ns, tb, ok := route(fm, schemaInclude, msg)
				if ns != wns || tb != wtb || ok != wok {
					t.Fatalf("%s %s: routed to %q, %q, %v; a full parse says %q, %q, %v", name, msg, ns, tb, ok, wns, wtb, wok)
				}
			}
		}
	})
}

func mustLookup(name string) *Format {
	f, ok := Lookup(name)
	if !ok {
		panic(name)
	}
	return f
}

// repeatsTopKey reports whether a JSON object has a top-level key twice.
func repeatsTopKey(msg []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(msg))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		k, _ := t.(string)
		if seen[k] {
			return true
		}
		seen[k] = true
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return false
}

// TestRepeatedKeyFlag: decoding flags a message whose top-level keys
// repeat, so a router that stopped at the first can look again.
func TestRepeatedKeyFlag(t *testing.T) {
	f := mustLookup("maxwell-json")
	s, _ := arrowconv.ParseColumns("id INT")
	b := arrowconv.NewBuilder(memory.DefaultAllocator, s)
	defer b.Release()
	dec, err := New(f, s, Options{}, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		msg  string
		want bool
	}{
		{`{"database":"a","table":"t","type":"insert","data":{"id":1}}`, false},
		{`{"database":"a","table":"t","type":"insert","data":{"id":1}}`, false},
		{`{"database":"a","table":"t","type":"insert","data":{"id":1},"table":"u"}`, true},
	} {
		out, err := dec.Decode([]byte(tt.msg))
		if err != nil || out.Repeated != tt.want {
			t.Errorf("%s: Repeated %v (%v), want %v", tt.msg, out.Repeated, err, tt.want)
		}
	}
}

// routedDecoder is a producer-semantics decoder keeping route keys.
func routedDecoder(t *testing.T, f *Format, schemaInclude bool) (Decoder, *arrowconv.Builder) {
	s, _ := arrowconv.ParseColumns("id STRING")
	b := arrowconv.NewBuilder(memory.DefaultAllocator, s)
	opts := Options{Producer: true, CaseInsensitive: true, RouteKeys: true, SchemaInclude: schemaInclude && f.Name == "debezium-json"}
	if err := opts.Check(f); err != nil {
		t.Fatal(err)
	}
	d, err := New(f, s, opts, b)
	if err != nil {
		t.Fatal(err)
	}
	return d, b
}

// jsonMember is `"k":v` as a JSON object's member.
func jsonMember(k string, v any) string {
	b, _ := json.Marshal(map[string]any{k: v})
	return string(b[1 : len(b)-1])
}

// FuzzGuessSource: on a Debezium source block of scalars (the shape every
// connector writes), the byte search finds what the member walk finds,
// whatever the values hold (a value spelling `"table":"x"` included:
// inside a JSON string its quotes are escaped).
func FuzzGuessSource(f *testing.F) {
	f.Add("inventory", "", "products", `"table":"decoy"`, uint8(0))
	f.Add("", "public", "orders", "x", uint8(3))
	f.Add("db", "sch", "", `\u0022`, uint8(5))
	f.Fuzz(func(t *testing.T, db, schema, table, filler string, order uint8) {
		members := []string{}
		add := func(k string, v any) { members = append(members, jsonMember(k, v)) }
		add("version", "2.7.0")
		add("filler", filler)
		if order&1 == 0 {
			add("db", db)
		}
		if order&2 == 0 {
			add("schema", schema)
		} else {
			add("schema", nil)
		}
		if order&4 == 0 {
			add("table", table)
		} else {
			add("collection", table)
		}
		add("ts_ms", 1700000000000)
		// Rotate the members by order, so keys come in several orders.
		r := int(order) % len(members)
		members = append(members[r:], members[:r]...)
		src := []byte("{" + strings.Join(members, ",") + "}")
		ns1, tb1, e1, ok1 := sourceTable(src)
		ns2, tb2, e2, ok2 := guessSource(src)
		if string(ns1) != string(ns2) || string(tb1) != string(tb2) || e1 != e2 || ok1 != ok2 {
			t.Fatalf("%s: walk %q %q %v %v, search %q %q %v %v", src, ns1, tb1, e1, ok1, ns2, tb2, e2, ok2)
		}
	})
}

// FuzzGuesser: the Guesser's guess for a message after another is
// GuessRaw's, unless the second message has a key the first lacked (the
// guess then takes it as absent, unchecked) while the keys the first had
// sit where they sat -- the one shortcut the router's check corrects.
func FuzzGuesser(f *testing.F) {
	f.Add("inventory", "", "products", uint8(0), "inventory", "public", "orders", uint8(0), "xx")
	f.Add("db", "", "t", uint8(0), "db", "s", "t", uint8(8), "")
	f.Add("db", "s", "", uint8(4), "db2", "s", "c", uint8(4), `\u0022`)
	format, _ := Lookup("debezium-json")
	f.Fuzz(func(t *testing.T, db1, sc1, tb1 string, o1 uint8, db2, sc2, tb2 string, o2 uint8, filler string) {
		msg := func(db, schema, table string, order uint8) []byte {
			var members []string
			add := func(k string, v any) { members = append(members, jsonMember(k, v)) }
			add("version", "2.7.0")
			if order&1 == 0 {
				add("db", db)
			}
			if order&2 == 0 {
				add("table", table)
			} else {
				add("table", nil)
			}
			if order&4 != 0 {
				add("collection", table)
			}
			if order&8 != 0 {
				add("filler", filler)
			}
			if order&16 == 0 && schema != "" {
				add("schema", schema)
			}
			add("ts_ms", 1700000000000)
			src := "{" + strings.Join(members, ",") + "}"
			return []byte(`{"before":null,"after":{"id":1},"source":` + src + `,"op":"c"}`)
		}
		m1, m2 := msg(db1, sc1, tb1, o1), msg(db2, sc2, tb2, o2)
		g := Guesser{Format: format}
		same := func(m []byte, why string) {
			ns1, tb1, e1, ok1 := g.Guess(m)
			ns2, tb2, e2, ok2 := GuessRaw(format, false, m)
			if string(ns1) != string(ns2) || string(tb1) != string(tb2) || e1 != e2 || ok1 != ok2 {
				t.Fatalf("%s %s: guesser %q %q %v %v, GuessRaw %q %q %v %v", why, m, ns1, tb1, e1, ok1, ns2, tb2, e2, ok2)
			}
		}
		same(m1, "first message")
		k := lastIndexColon(m2, `"source":`) + len(`"source":`)
		at := findSourceKeys(m2[k:jumpValue(m2, k)])
		remembered := g.at
		shortcut := true
		for i, off := range remembered {
			if off >= 0 && !keyAt(m2, k+off, sourcePats[i]) {
				shortcut = false
			}
		}
		gained := false
		for i := range at {
			if remembered[i] < 0 && at[i] >= 0 {
				gained = true
			}
		}
		if shortcut && gained {
			g.Guess(m2) // may differ from GuessRaw: the router checks it
			return
		}
		same(m2, "second message")
	})
}

// FuzzCanalGuesser: Canal's guess with a memory equals GuessRaw on a
// second message, except where the "database" key sits as far from the
// end as in the first message and a later `"database":` (a column of that
// name in mysqlType) follows it: then the guess reads the key where it
// was, as documented, and the router's check corrects a wrong table.
func FuzzCanalGuesser(f *testing.F) {
	f.Add("inventory", "products", "", uint8(0), "inventory", "products", "x", uint8(0))
	f.Add("db", "t", "ab", uint8(2), "db2", "t2", "abc", uint8(1))
	f.Add("db", "t", "", uint8(4), "db", "t", "", uint8(12))
	format, _ := Lookup("canal-json")
	f.Fuzz(func(t *testing.T, db1, tb1, sql1 string, o1 uint8, db2, tb2, sql2 string, o2 uint8) {
		msg := func(db, table, sql string, order uint8) []byte {
			var members []string
			add := func(k string, v any) { members = append(members, jsonMember(k, v)) }
			row := map[string]any{"id": "1"}
			if order&1 != 0 {
				row["database"] = db + "x" // a column named database, before the key
			}
			add("data", []any{row})
			add("old", nil)
			if order&2 == 0 {
				add("database", db)
			}
			add("es", 1589373516000)
			if order&4 != 0 {
				add("mysqlType", map[string]string{"database": "VARCHAR(64)", "id": "BIGINT"})
			}
			add("sql", sql)
			if order&8 == 0 {
				add("table", table)
			}
			add("type", "INSERT")
			return []byte("{" + strings.Join(members, ",") + "}")
		}
		m1, m2 := msg(db1, tb1, sql1, o1), msg(db2, tb2, sql2, o2)
		g := Guesser{Format: format}
		ns1, t1, e1, ok1 := g.Guess(m1)
		ns2, t2, e2, ok2 := GuessRaw(format, false, m1)
		if string(ns1) != string(ns2) || string(t1) != string(t2) || e1 != e2 || ok1 != ok2 {
			t.Fatalf("first message %s: guesser %q %q %v %v, GuessRaw %q %q %v %v", m1, ns1, t1, e1, ok1, ns2, t2, e2, ok2)
		}
		at := -1
		if g.dbFromEnd > 0 && keyAt(m2, len(m2)-g.dbFromEnd, patDatabase) {
			at = len(m2) - g.dbFromEnd
		}
		ns1, t1, e1, ok1 = g.Guess(m2)
		ns2, t2, e2, ok2 = GuessRaw(format, false, m2)
		if last := lastIndexColon(m2, `"database":`); at >= 0 && last != at {
			if last < at {
				t.Fatalf("%s: the remembered key at %d is after the last one at %d", m2, at, last)
			}
			want, _, _ := stringAfter(m2, at, len(patDatabase))
			if string(ns1) != string(want) || string(t1) != string(t2) {
				t.Fatalf("%s: guesser %q %q, want the remembered key's %q and GuessRaw's table %q", m2, ns1, t1, want, t2)
			}
			return
		}
		if string(ns1) != string(ns2) || string(t1) != string(t2) || e1 != e2 || ok1 != ok2 {
			t.Fatalf("second message %s: guesser %q %q %v %v, GuessRaw %q %q %v %v", m2, ns1, t1, e1, ok1, ns2, t2, e2, ok2)
		}
	})
}

// FuzzLeadingGuess: Maxwell's and GoldenGate's guess from their leading
// keys is GuessRaw's walk, on any message.
func FuzzLeadingGuess(f *testing.F) {
	f.Add(`{"database":"inventory","table":"products","type":"insert","data":{"id":1}}`)
	f.Add(`{"database":"inv","table":"","type":"insert"}`)
	f.Add(`{"database":"","table":"t"}`)
	f.Add(`{"database":"a\"b","table":"t"}`)
	f.Add(`{"database":"a","table":"t\u0022x"}`)
	f.Add(`{"database":"a","table":"t`)
	f.Add(`{"table":"INVENTORY.PRODUCTS","op_type":"I","after":{"id":1}}`)
	f.Add(`{"table":"PRODUCTS","op_type":"I"}`)
	f.Add(`{"table":".x"}`)
	f.Fuzz(func(t *testing.T, m string) {
		for _, name := range []string{"maxwell-json", "ogg-json"} {
			format, _ := Lookup(name)
			g := Guesser{Format: format}
			ns1, tb1, e1, ok1 := g.Guess([]byte(m))
			ns2, tb2, e2, ok2 := GuessRaw(format, false, []byte(m))
			if string(ns1) != string(ns2) || string(tb1) != string(tb2) || e1 != e2 || ok1 != ok2 {
				t.Fatalf("%s %q: guesser %q %q %v %v, GuessRaw %q %q %v %v", name, m, ns1, tb1, e1, ok1, ns2, tb2, e2, ok2)
			}
		}
	})
}
