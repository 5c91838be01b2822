package decode

import (
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
