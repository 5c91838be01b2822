package outdir

import (
	"fmt"
	"testing"
)

func TestParseShard(t *testing.T) {
	for in, want := range map[string]Shard{"": {}, "0/1": {0, 1}, "2/7": {2, 7}, " 6 / 7 ": {6, 7}} {
		got, err := ParseShard(in)
		if err != nil || got != want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"7/7", "-1/3", "1", "1/0", "a/b", "1/2/3", "0/100001"} {
		if _, err := ParseShard(in); err == nil {
			t.Errorf("ParseShard(%q) accepted", in)
		}
	}
}

// TestShardOfIsStable pins the hash: a backfill whose shards run with two
// builds of cdcetl must split the inputs the same way.
func TestShardOfIsStable(t *testing.T) {
	got := fmt.Sprint(ShardOf("d0/f00.json", 7), ShardOf("d0/f00.json.gz", 7), ShardOf("x.json", 3), ShardOf("x.json.zst", 3))
	if got != fmt.Sprint(ShardOf("d0/f00.json", 7), ShardOf("d0/f00.json", 7), ShardOf("x.json", 3), ShardOf("x.json", 3)) {
		t.Errorf("an input and its compressed twin must share a shard: %s", got)
	}
	if got != "1 1 1 1" {
		t.Errorf("ShardOf changed: %s (every running backfill would split differently)", got)
	}
	// Spread: 1000 names over 7 shards, none far from 1/7.
	var n [7]int
	for i := 0; i < 1000; i++ {
		n[ShardOf(fmt.Sprintf("2026/12/%02d/part-%04d.json", i%31, i), 7)]++
	}
	for i, c := range n {
		if c < 100 || c > 190 {
			t.Errorf("shard %d of 7 got %d of 1000 inputs", i, c)
		}
	}
}

func TestShardNames(t *testing.T) {
	if got := TaggedName(JournalName, "2-of-7"); got != "_cdcetl_journal.2-of-7.jsonl" {
		t.Errorf("journal name %s", got)
	}
	for name, want := range map[string]string{"_cdcetl_journal.jsonl": "", "_cdcetl_journal.2-of-7.jsonl": "2-of-7"} {
		if tag, ok := TagOfName(name, JournalName); !ok || tag != want {
			t.Errorf("TagOfName(%s) = %q, %v", name, tag, ok)
		}
	}
	for _, name := range []string{"_cdcetl_journal.jsonl.tmp", "_cdcetl_journal.7-of-7.jsonl", "_cdcetl_journal.02-of-7.jsonl", "_cdcetl_journalx.jsonl"} {
		if _, ok := TagOfName(name, JournalName); ok {
			t.Errorf("TagOfName(%s) accepted", name)
		}
	}
	for name, want := range map[string]string{
		".f00.parquet.123456.tmp":        "",
		".f00.parquet.3-of-7.123456.tmp": "3-of-7",
		".a.3-of-7.parquet.99.tmp":       "",
	} {
		if got := tempTag(name); got != want {
			t.Errorf("tempTag(%s) = %q, want %q", name, got, want)
		}
	}
}

// FuzzParseShard: whatever is accepted is a valid shard that prints back
// as itself.
func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"", "0/1", "2/7", "7/7", " 1 / 2", "-0/3", "99999/100000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := ParseShard(s)
		if err != nil {
			return
		}
		if sh.Count == 0 {
			return
		}
		if sh.Index < 0 || sh.Index >= sh.Count || sh.Count > MaxShards {
			t.Fatalf("%q gave %v", s, sh)
		}
		back, err := ParseShard(sh.String())
		if err != nil || back != sh {
			t.Fatalf("%q → %v → %v, %v", s, sh, back, err)
		}
		if tag := sh.Tag(); tag != "" {
			if got, ok := parseTag(tag); !ok || got != sh {
				t.Fatalf("tag %q of %v reads back as %v, %v", tag, sh, got, ok)
			}
		}
	})
}
