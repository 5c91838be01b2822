package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cdcetl/cdcetl/internal/outdir"
	"github.com/cdcetl/cdcetl/objstore"
	"github.com/cdcetl/cdcetl/reader"
)

// TestBucketLocks: on a bucket, as in a directory, a whole run does not
// start while a shard's lock is live, a shard of another count does not
// either, and a shard of the same count does; once the shard's lock
// expires (its holder killed), the whole run goes on. In-process mem://
// buckets, so it needs no server.
func TestBucketLocks(t *testing.T) {
	bg := context.Background()
	in := writeInputs(t, t.TempDir(), 6, 10)
	out := fmt.Sprintf("mem://locks-%d/out/", time.Now().UnixNano())
	loc, err := objstore.Open(bg, out)
	if err != nil {
		t.Fatal(err)
	}
	old := outdir.BucketLease
	outdir.BucketLease = 300 * time.Millisecond
	defer func() { outdir.BucketLease = old }()
	// A live shard 0/3 elsewhere (renewing its lease).
	held, _, err := loc.TakeLease(bg, outdir.TaggedName(outdir.LockName, "0-of-3"), outdir.BucketLease)
	if err != nil {
		t.Fatal(err)
	}
	run := func(sh Shard) (Stats, error) {
		cfg := canalConfig(t, 2)
		cfg.To, cfg.OutDir, cfg.Shard = ToParquet, out, sh
		return Run(bg, cfg, []string{in})
	}
	if _, err := run(Shard{}); err == nil || !strings.Contains(err.Error(), "shard 0/3 is writing there") {
		t.Fatalf("a whole run beside a live shard: %v", err)
	}
	if _, err := run(Shard{Index: 1, Count: 7}); err == nil || !strings.Contains(err.Error(), "another sharding") {
		t.Fatalf("a shard of another count: %v", err)
	}
	st, err := run(Shard{Index: 1, Count: 3})
	if err != nil {
		t.Fatalf("a shard of the same count: %v", err)
	}
	// The shard 0/3 dies without releasing; after its lease expires a
	// whole run converts the rest.
	held.Release(bg)
	loc.Bucket.WriteAll(bg, loc.Key(outdir.TaggedName(outdir.LockName, "0-of-3")), []byte(`{"holder":"gone/1/x","expires":"2000-01-01T00:00:00Z"}`), nil)
	whole, err := run(Shard{})
	if err != nil {
		t.Fatalf("a whole run after the shard died: %v", err)
	}
	if st.Files+whole.Files != 6 || whole.Skipped != st.Files {
		t.Errorf("shard converted %d, the whole run %d and skipped %d; want 6 in all, the shard's skipped", st.Files, whole.Files, whole.Skipped)
	}
	if ok, _ := loc.Bucket.Exists(bg, loc.Key(outdir.LockName)); ok {
		t.Error("the whole run's lock is still in the bucket")
	}
}

// TestBucketRecovery: what a killed run put into a bucket for stems no
// journal entry owns (listed in its uploaded pending file) is deleted by
// the next start: plain outputs, dead letters, and partition files and
// rolls; nothing else is.
func TestBucketRecovery(t *testing.T) {
	bg := context.Background()
	in := writeInputs(t, t.TempDir(), 2, 5)
	out := fmt.Sprintf("mem://recovery-%d/out/", time.Now().UnixNano())
	loc, err := objstore.Open(bg, out)
	if err != nil {
		t.Fatal(err)
	}
	put := func(rel string) {
		if err := loc.Bucket.WriteAll(bg, loc.Key(rel), []byte("x"), nil); err != nil {
			t.Fatal(err)
		}
	}
	put(outdir.PendingName)
	loc.Bucket.WriteAll(bg, loc.Key(outdir.PendingName), []byte(`{"stem":"lost.json","partitioned":true}`+"\n"+`{"stem":"gone.json"}`+"\n"), nil)
	orphans := []string{"id_bucket=1/lost.json.parquet", "id_bucket=2/lost.json~3.parquet", "gone.json.parquet", "_dead_letters/gone.json.jsonl"}
	kept := []string{"id_bucket=1/lost.jsonx.parquet", "keep/lost.json.parquet", "gone.json~2.parquet", "other/x.parquet"}
	for _, k := range append(slices.Clone(orphans), kept...) {
		put(k)
	}
	cfg := canalConfig(t, 2)
	cfg.To, cfg.OutDir = ToParquet, out
	if _, err := Run(bg, cfg, []string{in}); err != nil {
		t.Fatal(err)
	}
	for _, k := range orphans {
		if ok, _ := loc.Bucket.Exists(bg, loc.Key(k)); ok {
			t.Errorf("%s, left by a killed run, is still there", k)
		}
	}
	for _, k := range append(kept, "sub0/f00.json.parquet", "sub1/f01.json.parquet", outdir.JournalName) {
		if ok, _ := loc.Bucket.Exists(bg, loc.Key(k)); !ok {
			t.Errorf("%s is gone", k)
		}
	}
	if ok, _ := loc.Bucket.Exists(bg, loc.Key(outdir.PendingName)); ok {
		t.Error("the pending file is still there")
	}
}

// TestBucketDeadLetters: with the output in a bucket, an input's dead
// letters go there (under _dead_letters/) with its outputs, and the
// counts reconcile.
func TestBucketDeadLetters(t *testing.T) {
	bg := context.Background()
	in := filepath.Join(t.TempDir(), "in")
	os.MkdirAll(in, 0o755)
	os.WriteFile(filepath.Join(in, "a.json"), []byte(`{"data":[{"id":"1","name":"x"}],"type":"INSERT"}`+"\nnot json\n"), 0o644)
	out := fmt.Sprintf("mem://dead-%d/out/", time.Now().UnixNano())
	cfg := canalConfig(t, 1)
	cfg.To, cfg.OutDir = ToParquet, out
	cfg.Options.IgnoreParseErrors = true
	st, err := Run(bg, cfg, []string{in})
	if err != nil {
		t.Fatal(err)
	}
	loc, _ := objstore.Open(bg, out)
	b, err := loc.Bucket.ReadAll(bg, loc.Key("_dead_letters/a.json.jsonl"))
	if err != nil || !strings.Contains(string(b), "not json") {
		t.Fatalf("dead letters in the bucket: %q, %v", b, err)
	}
	if st.Dropped != 1 || st.DeadLetters != 1 || st.Messages != 1 || st.Lines != 2 {
		t.Errorf("counts: %+v", st)
	}
}

// TestBucketShardRecovery: a shard cleans up after another shard of its
// count that was killed (its lease expired), and leaves alone what a
// running shard (live lease) has in flight.
func TestBucketShardRecovery(t *testing.T) {
	bg := context.Background()
	in := writeInputs(t, t.TempDir(), 3, 5)
	for _, live := range []bool{false, true} {
		out := fmt.Sprintf("mem://shard-recovery-%d/out/", time.Now().UnixNano())
		loc, err := objstore.Open(bg, out)
		if err != nil {
			t.Fatal(err)
		}
		pending := outdir.TaggedName(outdir.PendingName, "1-of-3")
		loc.Bucket.WriteAll(bg, loc.Key(pending), []byte(`{"stem":"lost.json"}`+"\n"), nil)
		loc.Bucket.WriteAll(bg, loc.Key("lost.json.parquet"), []byte("x"), nil)
		var holder *objstore.Lease
		if live {
			if holder, _, err = loc.TakeLease(bg, outdir.TaggedName(outdir.LockName, "1-of-3"), outdir.BucketLease); err != nil {
				t.Fatal(err)
			}
		} else {
			loc.Bucket.WriteAll(bg, loc.Key(outdir.TaggedName(outdir.LockName, "1-of-3")), []byte(`{"holder":"gone/1/x","expires":"2000-01-01T00:00:00Z"}`), nil)
		}
		cfg := canalConfig(t, 1)
		cfg.To, cfg.OutDir, cfg.Shard = ToParquet, out, Shard{Index: 0, Count: 3}
		if _, err := Run(bg, cfg, []string{in}); err != nil {
			t.Fatal(err)
		}
		orphan, _ := loc.Bucket.Exists(bg, loc.Key("lost.json.parquet"))
		stillPending, _ := loc.Bucket.Exists(bg, loc.Key(pending))
		if orphan != live || stillPending != live {
			t.Errorf("shard 1 live=%v: its in-flight output there=%v, pending there=%v; want both %v", live, orphan, stillPending, live)
		}
		if holder != nil {
			holder.Release(bg)
		}
	}
}

// TestBucketOwnOutputs: a bucket input that is the run's output location,
// or inside it, is refused as a directory one is; an output below an input
// prefix is left out of the inputs.
func TestBucketOwnOutputs(t *testing.T) {
	bg := context.Background()
	base := fmt.Sprintf("mem://own-%d/", time.Now().UnixNano())
	loc, _ := objstore.Open(bg, base)
	loc.Bucket.WriteAll(bg, "in/a.json", []byte(`{"data":[{"id":"1","name":"x"}],"type":"INSERT"}`+"\n"), nil)
	run := func(out, in string) (Stats, error) {
		cfg := canalConfig(t, 1)
		cfg.To, cfg.OutDir = ToParquet, out
		return Run(bg, cfg, []string{in})
	}
	for _, c := range [][2]string{{base + "in/", base + "in/"}, {base, base + "in/"}} {
		if _, err := run(c[0], c[1]); !errors.Is(err, reader.ErrOwnOutput) {
			t.Errorf("-o %s, input %s: %v, want it refused", c[0], c[1], err)
		}
	}
	st, err := run(base+"in/out/", base+"in/")
	if err != nil || st.Files != 1 {
		t.Fatalf("output below the input prefix: %d files, %v", st.Files, err)
	}
	st, err = run(base+"in/out/", base+"in/")
	if err != nil || st.Skipped != 1 || st.Files != 0 {
		t.Errorf("rerun: its own outputs must not become inputs: %+v, %v", st, err)
	}
}

// stallStore is an input store whose Open waits (for up to wait) until
// release is closed: a run that is still reading when something else
// happens.
type stallStore struct {
	data    []byte
	opened  chan struct{}
	release chan struct{}
	wait    time.Duration
}

func (s *stallStore) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	select {
	case s.opened <- struct{}{}:
	default:
	}
	select {
	case <-s.release:
	case <-time.After(s.wait):
	}
	return io.NopCloser(bytes.NewReader(s.data)), nil
}

// TestBucketLeaseLostCleansStaging: a run whose bucket lock is taken over
// while it works stops with the lock's error and leaves no staging
// directory behind (nor does a run that succeeds).
func TestBucketLeaseLostCleansStaging(t *testing.T) {
	bg := context.Background()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	old := outdir.BucketLease
	outdir.BucketLease = 300 * time.Millisecond
	defer func() { outdir.BucketLease = old }()
	out := fmt.Sprintf("mem://lease-%d/out/", time.Now().UnixNano())
	loc, err := objstore.Open(bg, out)
	if err != nil {
		t.Fatal(err)
	}
	store := &stallStore{data: []byte(canalLines(0, 20)), opened: make(chan struct{}, 1), release: make(chan struct{}), wait: time.Second}
	cfg := canalConfig(t, 2)
	cfg.To, cfg.OutDir = ToParquet, out
	done := make(chan error, 1)
	go func() {
		_, err := runToBucket(bg, cfg, []reader.File{{Path: "test://in/a.json", Rel: "a.json", Store: store, Key: "a.json", Size: int64(len(store.data))}})
		done <- err
	}()
	<-store.opened
	// Another process takes the lock over: the run's next renewal sees it.
	loc.Bucket.WriteAll(bg, loc.Key(outdir.LockName), []byte(`{"holder":"elsewhere/1/x","expires":"2999-01-01T00:00:00Z"}`), nil)
	err = <-done
	if err == nil || !strings.Contains(err.Error(), "taken over") {
		t.Fatalf("err = %v, want the lock's loss", err)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "cdcetl-staging-*")); len(left) != 0 {
		t.Errorf("staging left behind: %v", left)
	}
	// And a run that succeeds.
	loc.Bucket.Delete(bg, loc.Key(outdir.LockName))
	close(store.release)
	if _, err := runToBucket(bg, cfg, []reader.File{{Path: "test://in/a.json", Rel: "a.json", Store: store, Key: "a.json", Size: int64(len(store.data))}}); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "cdcetl-staging-*")); len(left) != 0 {
		t.Errorf("staging left behind by a run that succeeded: %v", left)
	}
}
