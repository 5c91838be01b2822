package writer

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// dictTable against a Go map: every value added is found at its index,
// and values never added are not found, with values of every short-hash
// shape (empty, 1-3, 4-7, 8-16 bytes, longer) that share prefixes and
// suffixes. A probe bound of 1 or 2 forces the fallbacks (maphash for all,
// then spreading out).
func TestDictTable(t *testing.T) {
	defer func(p int) { maxProbe = p }(maxProbe)
	for _, probe := range []int{64, 2, 1} {
		maxProbe = probe
		rng := rand.New(rand.NewPCG(7, uint64(probe)))
		for round := range 3 {
			tab := newDictTable()
			var vals []string
			ref := map[string]int32{}
			gen := func() string {
				switch rng.IntN(5) {
				case 0:
					return fmt.Sprint(rng.IntN(300))
				case 1:
					return fmt.Sprintf("user_%06d_x", rng.IntN(3000))
				case 2:
					return fmt.Sprintf("A %d with %d and tail", rng.IntN(40), rng.IntN(40))
				case 3:
					return string(rune('a' + rng.IntN(26)))
				}
				return ""
			}
			for range 5000 {
				v := gen()
				i := tab.find([]byte(v), vals)
				want, ok := ref[v]
				if !ok {
					want = -1
				}
				if i != want {
					t.Fatalf("probe %d round %d: find(%q) = %d, want %d", probe, round, v, i, want)
				}
				if i < 0 {
					i = int32(len(vals))
					vals = append(vals, v)
					tab.add(i, vals)
					ref[v] = i
				}
			}
			for v, want := range ref {
				if i := tab.find([]byte(v), vals); i != want {
					t.Fatalf("probe %d: find(%q) = %d, want %d", probe, v, i, want)
				}
			}
			if i := tab.find([]byte("never added, and long enough"), vals); i != -1 {
				t.Fatalf("found a value never added at %d", i)
			}
			if probe == 1 && !tab.full {
				t.Errorf("probe bound 1: the table never fell back to maphash")
			}
			tab.reset()
			if i := tab.find([]byte(vals[0]), vals); i != -1 {
				t.Fatalf("after reset: found %q at %d", vals[0], i)
			}
		}
	}
}
