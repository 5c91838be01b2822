package decode

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/cdcetl/cdcetl/internal/testutil"
)

// sequenceFormats are the formats checkSequence takes.
var sequenceFormats = [...]string{"canal-json", "maxwell-json", "ogg-json", "debezium-json", "json"}

// TestShortcutsSequences: the decoders with and without their shortcuts
// agree on sequences of related messages, each a seed message or the one
// before it mutated. The shortcuts remember what earlier messages held
// (the envelope's key order, long values, the last source block) and
// match later messages against it; a wrong match needs a message that
// nearly repeats an earlier one, which the fuzz targets, mutating one
// message at a time, rarely make. (This found a key that differed from a
// learned one only inside a several-byte character taken for it.)
func TestShortcutsSequences(t *testing.T) {
	n := 40000
	if testing.Short() || raceBuild {
		n = 10000
	}
	for _, producer := range []bool{false, true} {
		for _, format := range sequenceFormats {
			t.Run(fmt.Sprintf("%s/producer=%v", format, producer), func(t *testing.T) { checkSequence(t, format, producer, 1, n) })
		}
	}
}

// FuzzShortcutsSequences is TestShortcutsSequences with the fuzzer's seeds.
func FuzzShortcutsSequences(f *testing.F) {
	f.Add(uint64(2), uint8(1))
	f.Fuzz(func(t *testing.T, seed uint64, format uint8) {
		checkSequence(t, sequenceFormats[int(format)%len(sequenceFormats)], format >= 128, seed, 1000)
	})
}

// checkSequence decodes n messages of format, made from the format's test
// data with rng seed, with four decoders -- strict and lenient, with
// shortcuts and without, under Flink's or producer semantics -- and fails
// where a pair disagrees: an error, a result, or the rows (compared batch
// by batch).
func checkSequence(t *testing.T, format string, producer bool, seed uint64, n int) {
	t.Helper()
	var seeds [][]byte
	files, _ := filepath.Glob(filepath.Join(testutil.Root(), "testdata", format, "*.jsonl"))
	for _, p := range files {
		lines, err := fileLines(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			if len(l) <= 4096 {
				seeds = append(seeds, l)
			}
		}
	}
	if len(seeds) == 0 {
		t.Fatalf("no test data for %s", format)
	}
	if format == "debezium-json" {
		for _, m := range placeholderSeeds {
			seeds = append(seeds, []byte(m))
		}
	}
	// Keys with a several-byte character, for the shortcuts to learn: a
	// column's (the rows' "name" as "prénom") and an envelope member's.
	for _, m := range seeds[:len(seeds):len(seeds)] {
		seeds = append(seeds, []byte(strings.ReplaceAll(string(m), `"name":`, `"prénom":`)))
		if len(m) > 0 && m[0] == '{' {
			seeds = append(seeds, append([]byte(`{"clé":1,`), m[1:]...))
		}
	}
	// A column whose name has a several-byte character, for the compact
	// row's patterns.
	decs := shortcutDecoders(t, format, producer, ", `prénom` STRING", nil)
	rng := rand.New(rand.NewPCG(seed, 34))
	// Bytes a mutation writes: structure, a character's lead and later
	// bytes, and what keys and values start with.
	alphabet := []byte{'"', '{', '}', '[', ']', ':', ',', ' ', '\\', '0', '1', '-', '.', 'a', 'd', 'e', 'i', 'n', 't', 'u', 0xc3, 0xa9, 0xd7, 0x80}
	var hist []string
	last := seeds[0]
	for it := range n {
		var m []byte
		if rng.IntN(4) == 0 {
			m = append([]byte(nil), seeds[rng.IntN(len(seeds))]...)
		} else {
			m = append([]byte(nil), last...)
			for range 1 + rng.IntN(3) {
				if len(m) == 0 {
					m = append(m, '{')
				}
				p := rng.IntN(len(m))
				switch rng.IntN(6) {
				case 0:
					m[p] = alphabet[rng.IntN(len(alphabet))]
				case 1:
					m[p] ^= 1 << rng.IntN(8) // a character's byte made another's
				case 2:
					m = append(m[:p], append([]byte{alphabet[rng.IntN(len(alphabet))]}, m[p:]...)...)
				case 3:
					m = append(m[:p], m[p+1:]...)
				case 4:
					m = m[:p]
				case 5: // the rest of another message
					o := seeds[rng.IntN(len(seeds))]
					m = append(m[:p:p], o[rng.IntN(len(o)+1):]...)
				}
			}
			if len(m) > 8192 {
				m = m[:8192]
			}
		}
		last = m
		if hist = append(hist, fmt.Sprintf("%q", m)); len(hist) > 24 {
			hist = hist[1:]
		}
		var errs [4]string
		var res [4]Result
		for i, x := range decs {
			r, err := x.d.Decode(m)
			res[i] = r
			if err != nil {
				errs[i] = err.Error()
			}
		}
		for i := range 2 {
			r, p := res[i], res[i+2]
			if errs[i] != errs[i+2] || r.Rows != p.Rows || r.Outcome != p.Outcome || len(r.Nulled) != len(p.Nulled) || (r.Err == nil) != (p.Err == nil) {
				t.Fatalf("message %d, decoder %d: %q %+v, without shortcuts %q %+v; the messages up to it:\n%s",
					it, i, errs[i], r, errs[i+2], p, strings.Join(hist, "\n"))
			}
		}
		if it%64 == 63 || it == n-1 {
			for i := range 2 {
				a, b := decs[i].b.Flush(), decs[i+2].b.Flush()
				if (a == nil) != (b == nil) || a != nil && !array.RecordEqual(a, b) {
					t.Fatalf("messages up to %d, decoder %d: rows differ without shortcuts; the last messages:\n%s", it, i, strings.Join(hist, "\n"))
				}
				if a != nil {
					a.Release()
					b.Release()
				}
			}
		}
	}
}
