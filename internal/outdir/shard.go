package outdir

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cdcetl/cdcetl/internal/setting"
	"github.com/zeebo/xxh3"
)

// Shard is one of Count parts of a run's inputs (Index counts from 0, as
// a Kubernetes Indexed Job's JOB_COMPLETION_INDEX does). The zero Shard is
// the whole run.
//
// Each input belongs to exactly one shard, decided by a stable hash of its
// output stem: the path relative to its argument, without .gz/.zst. Two
// inputs that would share an output name (a/x.json and b/x.json under two
// arguments, or x.json and x.json.gz) therefore always meet in one shard,
// which gives them distinct names as one run would; so n shards write
// exactly the files one unsharded run writes.
type Shard struct {
	Index, Count int
}

// MaxShards bounds n in --shard i/n.
const MaxShards = 100000

// ErrShardSpec is returned (wrapped) for a --shard value that is not i/n.
var ErrShardSpec = setting.Error("want %s i/n with 0 <= i < n (e.g. 2/7, or CDCETL_SHARD=2/7)", setting.Shard)

// ParseShard reads "i/n". An empty string is the whole run.
func ParseShard(s string) (Shard, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Shard{}, nil
	}
	a, b, ok := strings.Cut(s, "/")
	if !ok {
		return Shard{}, fmt.Errorf("%q: %w", s, ErrShardSpec)
	}
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil || n < 1 || n > MaxShards || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("%q: %w", s, ErrShardSpec)
	}
	return Shard{Index: i, Count: n}, nil
}

// Sharded reports whether s is a part rather than the whole run.
func (s Shard) Sharded() bool { return s.Count > 1 }

// String is "i/n" ("" for the whole run).
func (s Shard) String() string {
	if s.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// Tag names the shard's own files: "<i>-of-<n>", or "" for a whole run
// (--shard 0/1 is a whole run too).
func (s Shard) Tag() string {
	if !s.Sharded() {
		return ""
	}
	return fmt.Sprintf("%d-of-%d", s.Index, s.Count)
}

// Owns reports whether the input at rel (relative to its argument) is this
// shard's.
func (s Shard) Owns(rel string) bool {
	if !s.Sharded() {
		return true
	}
	return ShardOf(rel, s.Count) == s.Index
}

// ShardOf is the shard, of n, that the input at rel belongs to.
func ShardOf(rel string, n int) int {
	if n <= 1 {
		return 0
	}
	key := filepath.ToSlash(BaseStem(rel))
	return int(xxh3.HashString(key) % uint64(n))
}

// parseTag reads a shard tag back ("" and false when s is not one).
func parseTag(s string) (Shard, bool) {
	a, b, ok := strings.Cut(s, "-of-")
	if !ok {
		return Shard{}, false
	}
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || n < 2 || i < 0 || i >= n || strconv.Itoa(i) != a || strconv.Itoa(n) != b {
		return Shard{}, false
	}
	return Shard{i, n}, true
}

// TaggedName inserts a shard's tag before a file name's extension:
// _cdcetl_journal.jsonl → _cdcetl_journal.2-of-7.jsonl.
func TaggedName(name, tag string) string {
	if tag == "" {
		return name
	}
	ext := filepath.Ext(name)
	return strings.TrimSuffix(name, ext) + "." + tag + ext
}

// TagOfName is the shard tag in a file name made by TaggedName from base
// ("" for base itself; false when name is neither).
func TagOfName(name, base string) (string, bool) {
	if name == base {
		return "", true
	}
	ext := filepath.Ext(base)
	mid, ok := strings.CutPrefix(name, strings.TrimSuffix(base, ext)+".")
	if !ok {
		return "", false
	}
	mid, ok = strings.CutSuffix(mid, ext)
	if !ok {
		return "", false
	}
	if _, ok := parseTag(mid); !ok {
		return "", false
	}
	return mid, true
}
