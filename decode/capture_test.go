package decode

import (
	"strconv"
	"strings"
	"testing"
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
	for n := 0; n <= 20; n++ {
		name := strings.Repeat("k", n)
		p := newMemberPat(name)
		m := `"` + name + `":`
		for tail := 0; tail <= 18; tail++ {
			for lead := 0; lead <= 2; lead++ {
				base := strings.Repeat(" ", lead) + m + strings.Repeat("1", tail)
				for k := -1; k < len(m); k++ {
					for _, c := range []byte{'k', '"', ':', 'x', 0} {
						b := []byte(base)
						if k >= 0 {
							b[lead+k] = c
						}
						gi, gok := p.at(b, lead)
						wi, wok := want(b, lead, name)
						if gi != wi || gok != wok {
							t.Fatalf("name %q in %q at %d: got %d %v, want %d %v", name, b, lead, gi, gok, wi, wok)
						}
					}
				}
			}
		}
	}
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
