package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/cdcetl/cdcetl/audit"
	"github.com/cdcetl/cdcetl/internal/cdcgen"
	"github.com/cdcetl/cdcetl/internal/faultproxy"
	"github.com/cdcetl/cdcetl/lake"
	"github.com/cdcetl/cdcetl/objstore"
)

// The S3 tests run against a real S3 server: .ci/run starts versitygw
// and sets CDCETL_TEST_S3 (read-write) and CDCETL_TEST_S3_READONLY (the
// same storage through a server that refuses writes), with the
// credentials in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
func s3Endpoint(t *testing.T) string {
	t.Helper()
	ep := os.Getenv("CDCETL_TEST_S3")
	if ep == "" {
		t.Skip("no S3 server: set CDCETL_TEST_S3 (.ci/run starts versitygw)")
	}
	return ep
}

// s3Test starts a test of the binary against the S3 server (skipped with
// -short or without one): the endpoint, a temporary directory holding the
// built binary, and a prefix of the test's own in every bucket.
func s3Test(t *testing.T, name string) (ep, dir, bin, run string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	ep = s3Endpoint(t)
	dir = t.TempDir()
	return ep, dir, buildCLI(t, dir), fmt.Sprintf("%s-%d", name, time.Now().UnixNano())
}

// s3URL is a location on the test server; each test uses a prefix of its
// own.
func s3URL(endpoint, bucket, prefix string) string {
	return fmt.Sprintf("s3://%s/%s?endpoint=%s&use_path_style=true&region=us-east-1", bucket, prefix, endpoint)
}

func openLoc(t *testing.T, raw string) *objstore.Location {
	t.Helper()
	loc, err := objstore.Open(context.Background(), raw)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// uploadTree puts every file below dir into the location.
func uploadTree(t *testing.T, dir string, loc *objstore.Location) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return loc.Bucket.WriteAll(context.Background(), loc.Key(filepath.ToSlash(rel)), b, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// uploadArchive puts shardArchive's two arguments (local) into the
// archive bucket under run/a and run/b.
func uploadArchive(t *testing.T, ep, run string, local []string) {
	t.Helper()
	for i, arg := range []string{"a", "b"} {
		uploadTree(t, local[i], openLoc(t, s3URL(ep, "archive", run+"/"+arg)))
	}
}

// killRandomly starts the command rounds times and kills it with SIGKILL
// after a random time below maxMs milliseconds.
func killRandomly(t *testing.T, bin string, args []string, rounds, maxMs int, seed1, seed2 uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed1, seed2))
	for k := 0; k < rounds; k++ {
		cmd := exec.Command(bin, args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.IntN(maxMs)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
	}
}

// journaledOutputs is the set of outputs the ok entries of the journal
// objects name.
func journaledOutputs(t *testing.T, loc *objstore.Location, journals ...string) map[string]bool {
	t.Helper()
	listed := map[string]bool{}
	for _, name := range journals {
		journal, err := loc.Bucket.ReadAll(context.Background(), loc.Key(name))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(journal))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var e struct {
				Status  string
				Outputs []string
			}
			if json.Unmarshal(sc.Bytes(), &e) == nil && e.Status == "ok" {
				for _, o := range e.Outputs {
					listed[o] = true
				}
			}
		}
	}
	return listed
}

// flatCopies writes each object to its own file in a new directory (for
// eachRowOnce) and returns their paths; listed, when set, must name each.
func flatCopies(t *testing.T, files map[string][]byte, listed map[string]bool) []string {
	t.Helper()
	tmp := t.TempDir()
	var outs []string
	for rel, b := range files {
		if listed != nil && !listed[rel] {
			t.Errorf("%s is in the bucket but no journal entry lists it", rel)
		}
		p := filepath.Join(tmp, strings.ReplaceAll(rel, string(filepath.Separator), "_"))
		os.WriteFile(p, b, 0o644)
		outs = append(outs, p)
	}
	return outs
}

// bucketFiles maps every object below the location (relative key) to its
// bytes, leaving out cdcetl's bookkeeping.
func bucketFiles(t *testing.T, loc *objstore.Location) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	it := loc.Bucket.List(&blob.ListOptions{Prefix: loc.Prefix})
	for {
		o, err := it.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rel := strings.TrimPrefix(o.Key, loc.Prefix)
		if o.IsDir || strings.HasPrefix(rel, "_cdcetl") {
			continue
		}
		b, err := loc.Bucket.ReadAll(context.Background(), o.Key)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.FromSlash(rel)] = b
	}
	return out
}

// TestS3InAndOut: an archive in a bucket converts into a bucket (streamed
// in, uploaded out) to the very files a local conversion of the same
// archive writes, byte for byte; with a schema and routed; a rerun
// converts nothing; three shards at once into one bucket prefix write the
// same files again.
func TestS3InAndOut(t *testing.T) {
	ep, dir, bin, run := s3Test(t, "inout")
	local, _ := shardArchive(t, filepath.Join(dir, "in"))
	uploadArchive(t, ep, run, local)
	remote := []string{s3URL(ep, "archive", run+"/a"), s3URL(ep, "archive", run+"/b")}
	for _, m := range []struct {
		name string
		mode []string
	}{
		{"schema", []string{"--format", "debezium-json", "--schema", "id BIGINT, name STRING, file STRING METADATA FROM 'file.name' VIRTUAL"}},
		// Without lineage: _file would hold the local path in one run
		// and the object's URL in the other.
		{"routed", []string{"--format", "debezium-json", "--no-lineage"}},
		// Hive-style partitions, rolled, with success files.
		{"partitioned", []string{"--format", "debezium-json", "--schema", "id BIGINT, name STRING", "--partition-by", "bucket(4, id)",
			"--option", "sink.rolling-policy.file-size=2kb", "--option", "sink.partition-commit.policy.kind=success-file"}},
	} {
		name, mode := m.name, m.mode
		flags := append([]string{"convert", "--quiet", "--workers", "2"}, mode...)
		// Streamed from the bucket, the rows are those of the local files.
		if name == "schema" {
			print := append(append([]string{"convert", "--quiet"}, mode...), "--to", "print")
			a, err1 := exec.Command(bin, append(slices.Clone(print), local...)...).Output()
			b, err2 := exec.Command(bin, append(slices.Clone(print), remote...)...).Output()
			if err1 != nil || err2 != nil || !bytes.Equal(a, b) || len(a) == 0 {
				t.Fatalf("bucket inputs print other rows than the local files (%v, %v)", err1, err2)
			}
			// One object named by its URL is one input, as a file is.
			one := filepath.Join(local[0], "d0", "f00.json")
			a, err1 = exec.Command(bin, append(slices.Clone(print), one)...).Output()
			b, err2 = exec.Command(bin, append(slices.Clone(print), s3URL(ep, "archive", run+"/a/d0/f00.json"))...).Output()
			if err1 != nil || err2 != nil || !bytes.Equal(a, b) || len(a) == 0 {
				t.Fatalf("one object by URL prints other rows than its file (%v, %v)", err1, err2)
			}
		}
		// The reference: the bucket's inputs into a local directory (Parquet
		// footers name the input, so the inputs must be the same).
		ref := filepath.Join(dir, "ref-"+name)
		if out, err := exec.Command(bin, append(append(flags, "-o", ref), remote...)...).CombinedOutput(); err != nil {
			t.Fatalf("%s: local run: %v\n%s", name, err, out)
		}
		want := outputFiles(t, ref)
		outURL := s3URL(ep, "lake", run+"/"+name)
		if out, err := exec.Command(bin, append(append(flags, "-o", outURL), remote...)...).CombinedOutput(); err != nil {
			t.Fatalf("%s: bucket run: %v\n%s", name, err, out)
		}
		sameOutputs(t, name+", bucket to bucket", bucketFiles(t, openLoc(t, outURL)), want)
		loud := append([]string{"convert", "--workers", "2"}, mode...)
		msg, err := exec.Command(bin, append(append(loud, "-o", outURL), remote...)...).CombinedOutput()
		if err != nil || !strings.Contains(string(msg), "nothing to do") {
			t.Errorf("%s: rerun: %v\n%s", name, err, msg)
		}
		shardURL := s3URL(ep, "shards", run+"/"+name)
		runShards(t, bin, 3, append(append(flags, "-o", shardURL), remote...))
		sameOutputs(t, name+", 3 shards into a bucket", bucketFiles(t, openLoc(t, shardURL)), want)
	}
}

// TestS3KillAndRestart: a conversion from and into a bucket is killed
// with SIGKILL at random moments, 25 times, then finishes. Every row is
// in the bucket's outputs exactly once, every output object is one the
// journal lists (nothing a killed run left behind), and no pending file
// stays.
func TestS3KillAndRestart(t *testing.T) {
	ep, dir, bin, run := s3Test(t, "kill")
	local, total := shardArchive(t, filepath.Join(dir, "in"))
	uploadArchive(t, ep, run, local)
	outURL := s3URL(ep, "lake", run)
	args := []string{"convert", "--quiet", "--format", "debezium-json", "--schema", "id BIGINT, name STRING", "--to", "json", "-o", outURL, "--workers", "2",
		s3URL(ep, "archive", run+"/a"), s3URL(ep, "archive", run+"/b")}
	killRandomly(t, bin, args, 25, 400, 5, 1)
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("final run: %v\n%s", err, out)
	}
	loc := openLoc(t, outURL)
	listed := journaledOutputs(t, loc, "_cdcetl_journal.jsonl")
	outs := flatCopies(t, bucketFiles(t, loc), listed)
	if len(outs) != 100 {
		t.Fatalf("%d outputs, want 100", len(outs))
	}
	eachRowOnce(t, outs, total)
	if ok, _ := loc.Bucket.Exists(context.Background(), loc.Key("_cdcetl_pending.jsonl")); ok {
		t.Error("the pending file is still in the bucket")
	}
}

// TestS3RefusesWrites: a server that refuses writes stops the run before
// any input is read, with exit status 1, the reason and what to check;
// and credentials in the URL are refused (exit 2).
func TestS3RefusesWrites(t *testing.T) {
	ro := os.Getenv("CDCETL_TEST_S3_READONLY")
	if ro == "" {
		t.Skip("no read-only S3 server: set CDCETL_TEST_S3_READONLY")
	}
	ep, dir, bin, run := s3Test(t, "ro")
	local, _ := shardArchive(t, filepath.Join(dir, "in"))
	cmd := exec.Command(bin, "convert", "--format", "debezium-json", "--schema", "id BIGINT, name STRING", "-o", s3URL(ro, "lake", run), local[0])
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "permission denied") || !strings.Contains(string(out), "credentials") {
		t.Errorf("a bucket that refuses writes: %v\n%s", err, out)
	}
	if got := bucketFiles(t, openLoc(t, s3URL(ep, "lake", run))); len(got) != 0 {
		t.Errorf("%d objects written through a server that refuses writes", len(got))
	}
	cmd = exec.Command(bin, "convert", "--format", "debezium-json", "--schema", "id BIGINT", "--to", "print", "s3://archive/x?endpoint="+ep+"&secret_access_key=abc")
	out, err = cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "never from the URL") {
		t.Errorf("a credential in the URL: %v\n%s", err, out)
	}
}

// TestS3Iceberg: an Iceberg warehouse in a bucket (catalog in a local
// SQLite file): three shards at once load the bucket's archive into the
// same changelog tables, which then hold exactly the rows one run loads
// into a local warehouse; a rerun commits nothing.
func TestS3Iceberg(t *testing.T) {
	ep, dir, bin, run := s3Test(t, "ice")
	local, _ := shardArchive(t, filepath.Join(dir, "in"))
	uploadArchive(t, ep, run, local)
	remote := []string{s3URL(ep, "archive", run+"/a"), s3URL(ep, "archive", run+"/b")}
	flags := []string{"convert", "--quiet", "--workers", "1", "--format", "debezium-json", "--to", "iceberg"}
	ref := filepath.Join(dir, "ref")
	if out, err := exec.Command(bin, append(append(slices.Clone(flags), "-o", ref), local...)...).CombinedOutput(); err != nil {
		t.Fatalf("local warehouse: %v\n%s", err, out)
	}
	want := lakeRows(t, ref)
	cat := "sqlite:" + filepath.Join(dir, "catalog.db")
	wh := s3URL(ep, "lake", run)
	if out, err := exec.Command(bin, append(slices.Clone(flags), "-o", wh, remote[0])...).CombinedOutput(); err == nil || !strings.Contains(string(out), "needs a catalog outside it") {
		t.Errorf("a warehouse in a bucket without --catalog: %v\n%s", err, out)
	}
	runShards(t, bin, 3, append(append(slices.Clone(flags), "--catalog", cat, "-o", wh), remote...))
	base, props, err := objstore.Warehouse(wh)
	if err != nil {
		t.Fatal(err)
	}
	l, err := lake.OpenRemote(context.Background(), t.TempDir(), base, props, cat, lake.ModeChangelog)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := lakeRowsOf(t, l)
	if len(got) != len(want) || len(want) != 3 {
		t.Fatalf("%d tables in the bucket's warehouse, want %d (and 3)", len(got), len(want))
	}
	for tbl, rows := range want {
		if !slices.Equal(got[tbl], rows) {
			t.Errorf("table %s: %s", tbl, diffRows(got[tbl], rows))
		}
	}
	loud := slices.DeleteFunc(slices.Clone(flags), func(a string) bool { return a == "--quiet" })
	msg, err := exec.Command(bin, append(append(loud, "--catalog", cat, "-o", wh), remote...)...).CombinedOutput()
	if err != nil || !strings.Contains(string(msg), "nothing to do") {
		t.Errorf("rerun: %v\n%s", err, msg)
	}
}

// TestS3IcebergUpsert: an upsert table in a bucket's warehouse (inserts,
// updates and deletes over 300 keys in 12 inputs, so later inputs delete
// rows of earlier ones by position and by equality) holds the same rows
// as the same load into a local warehouse.
func TestS3IcebergUpsert(t *testing.T) {
	ep, dir, bin, run := s3Test(t, "upsert")
	in := filepath.Join(dir, "in")
	alive := keyedArchive(t, in, 0, 12)
	uploadTree(t, in, openLoc(t, s3URL(ep, "archive", run)))
	flags := []string{"convert", "--quiet", "--format", "debezium-json", "--schema", "id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED",
		"--to", "iceberg", "--table-mode", "upsert", "--table", "inv.kv"}
	ref := filepath.Join(dir, "ref")
	if out, err := exec.Command(bin, append(slices.Clone(flags), "-o", ref, in)...).CombinedOutput(); err != nil {
		t.Fatalf("local warehouse: %v\n%s", err, out)
	}
	want := lakeRows(t, ref)
	cat := "sqlite:" + filepath.Join(dir, "catalog.db")
	wh := s3URL(ep, "lake", run)
	if out, err := exec.Command(bin, append(slices.Clone(flags), "--catalog", cat, "-o", wh, s3URL(ep, "archive", run))...).CombinedOutput(); err != nil {
		t.Fatalf("bucket warehouse: %v\n%s", err, out)
	}
	base, props, _ := objstore.Warehouse(wh)
	l, err := lake.OpenRemote(context.Background(), t.TempDir(), base, props, cat, lake.ModeUpsert)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := lakeRowsOf(t, l)
	if len(want["inv.kv"]) != alive {
		t.Fatalf("the local upsert table has %d rows, %d keys are alive", len(want["inv.kv"]), alive)
	}
	if !slices.Equal(got["inv.kv"], want["inv.kv"]) {
		t.Errorf("the bucket's upsert table: %s", diffRows(got["inv.kv"], want["inv.kv"]))
	}
}

// TestS3MoveKilled: inputs in a bucket, outputs in a bucket, converted
// inputs moved to another prefix (--on-success move=), killed 20 times at
// random moments: at the end every row is in the outputs once, every
// input is under done/ exactly once and none is left where it was.
func TestS3MoveKilled(t *testing.T) {
	ep, dir, bin, run := s3Test(t, "move")
	local, total := shardArchive(t, filepath.Join(dir, "in"))
	uploadArchive(t, ep, run, local)
	outURL := s3URL(ep, "lake", run)
	args := []string{"convert", "--quiet", "--format", "debezium-json", "--schema", "id BIGINT, name STRING", "--to", "json", "-o", outURL, "--workers", "2",
		"--on-success", "move=" + s3URL(ep, "archive", run+"/done"), s3URL(ep, "archive", run+"/a"), s3URL(ep, "archive", run+"/b")}
	killRandomly(t, bin, args, 20, 500, 8, 3)
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("final run: %v\n%s", err, out)
	}
	outs := flatCopies(t, bucketFiles(t, openLoc(t, outURL)), nil)
	if len(outs) != 100 {
		t.Fatalf("%d outputs, want 100", len(outs))
	}
	eachRowOnce(t, outs, total)
	for _, arg := range []string{"a", "b"} {
		if left := bucketFiles(t, openLoc(t, s3URL(ep, "archive", run+"/"+arg))); len(left) != 0 {
			t.Errorf("%d inputs left under %s", len(left), arg)
		}
	}
	done := bucketFiles(t, openLoc(t, s3URL(ep, "archive", run+"/done")))
	if len(done) != 100 {
		t.Errorf("%d inputs under done/, want 100", len(done))
	}
	want := map[string]int{}
	for _, d := range local {
		filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				b, _ := os.ReadFile(p)
				want[string(b)]++
			}
			return nil
		})
	}
	for _, b := range done {
		want[string(b)]--
	}
	for _, n := range want {
		if n != 0 {
			t.Fatal("done/ does not hold every input exactly once")
		}
	}
}

// TestS3PartitionedKilled: a partitioned, rolled Parquet conversion from
// and into a bucket, killed 20 times at random moments, then finished:
// every row is in the bucket's files exactly once (a killed run's
// partition files, which the next run's names need not match, are
// deleted at the next start through the uploaded pending file).
func TestS3PartitionedKilled(t *testing.T) {
	ep, dir, bin, run := s3Test(t, "hive")
	local, total := shardArchive(t, filepath.Join(dir, "in"))
	uploadArchive(t, ep, run, local)
	outURL := s3URL(ep, "lake", run)
	args := []string{"convert", "--quiet", "--format", "debezium-json", "--schema", "id BIGINT, name STRING", "-o", outURL, "--workers", "2",
		"--partition-by", "bucket(8, id)", "--option", "sink.rolling-policy.file-size=1kb",
		s3URL(ep, "archive", run+"/a"), s3URL(ep, "archive", run+"/b")}
	killRandomly(t, bin, args, 20, 600, 4, 4)
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("final run: %v\n%s", err, out)
	}
	tree := t.TempDir()
	for rel, b := range bucketFiles(t, openLoc(t, outURL)) {
		p := filepath.Join(tree, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, b, 0o644)
	}
	ids, files := parquetIDs(t, tree)
	if len(ids) != total {
		t.Fatalf("%d rows in %d files, want %d", len(ids), len(files), total)
	}
	for i, id := range ids {
		if id != i {
			t.Fatalf("row %d is missing or doubled", i)
		}
	}
}

// TestS3ShardsKilled: three shards at once from and into a bucket, one
// of them killed with SIGKILL and restarted at random moments, 30 times
// (the restarted shard takes over its dead predecessor's lease); after a
// last run of each, every row is in the bucket's outputs exactly once,
// every object is listed by a shard's journal, and no pending file stays.
func TestS3ShardsKilled(t *testing.T) {
	ep, dir, bin, run := s3Test(t, "shardkill")
	local, total := shardArchive(t, filepath.Join(dir, "in"))
	uploadArchive(t, ep, run, local)
	outURL := s3URL(ep, "lake", run)
	args := []string{"convert", "--quiet", "--format", "debezium-json", "--schema", "id BIGINT, name STRING", "--to", "json", "-o", outURL, "--workers", "1",
		s3URL(ep, "archive", run+"/a"), s3URL(ep, "archive", run+"/b")}
	const n = 3
	killShards(t, bin, args, n, 30, 300, 6, 6)
	loc := openLoc(t, outURL)
	var journals []string
	for i := 0; i < n; i++ {
		journals = append(journals, fmt.Sprintf("_cdcetl_journal.%d-of-%d.jsonl", i, n))
	}
	listed := journaledOutputs(t, loc, journals...)
	for i := 0; i < n; i++ {
		if ok, _ := loc.Bucket.Exists(context.Background(), loc.Key(fmt.Sprintf("_cdcetl_pending.%d-of-%d.jsonl", i, n))); ok {
			t.Errorf("shard %d's pending file is still there", i)
		}
	}
	outs := flatCopies(t, bucketFiles(t, loc), listed)
	if len(outs) != 100 {
		t.Fatalf("%d outputs, want 100", len(outs))
	}
	eachRowOnce(t, outs, total)
}

// keyedArchive writes inputs of inserts, updates and deletes over 300
// keys (files from..to-1 of one random walk) and returns how many keys
// are alive after file to-1.
func keyedArchive(t *testing.T, dir string, from, to int) int {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	rng := rand.New(rand.NewPCG(2, 8))
	alive := map[int]bool{}
	for f := 0; f < to; f++ {
		var b strings.Builder
		for r := 0; r < 200; r++ {
			id := rng.IntN(300)
			switch {
			case !alive[id]:
				fmt.Fprintf(&b, `{"before":null,"after":{"id":%d,"v":"c%d-%d"},"op":"c"}`+"\n", id, f, r)
				alive[id] = true
			case rng.IntN(4) == 0:
				fmt.Fprintf(&b, `{"before":{"id":%d,"v":"x"},"after":null,"op":"d"}`+"\n", id)
				delete(alive, id)
			default:
				fmt.Fprintf(&b, `{"before":{"id":%d,"v":"x"},"after":{"id":%d,"v":"u%d-%d"},"op":"u"}`+"\n", id, id, f, r)
			}
		}
		if f >= from {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.json", f)), []byte(b.String()), 0o644)
		}
	}
	return len(alive)
}

// TestS3MaterializeAfterShards: the final single step of a sharded load.
// Three shards convert an archive into a bucket; one run without --shard
// and with --materialize folds their changes into the table's current
// state in the bucket; more inputs arrive, and the next such run folds
// them into that snapshot. Both snapshots equal those of the same runs
// into a local directory, byte for byte.
func TestS3MaterializeAfterShards(t *testing.T) {
	ep, dir, bin, run := s3Test(t, "mat")
	in := filepath.Join(dir, "in")
	keyedArchive(t, in, 0, 8)
	arch := openLoc(t, s3URL(ep, "archive", run))
	uploadTree(t, in, arch)
	flags := []string{"convert", "--quiet", "--workers", "2", "--format", "debezium-json", "--schema", "id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED", "--table", "inv.kv"}
	src := s3URL(ep, "archive", run)
	ref, out := filepath.Join(dir, "ref"), s3URL(ep, "lake", run)
	for round := 0; round < 2; round++ {
		if round == 1 {
			more := filepath.Join(dir, "more")
			keyedArchive(t, more, 8, 12)
			uploadTree(t, more, arch)
		}
		refRep, outRep := filepath.Join(dir, "ref.json"), filepath.Join(dir, "out.json")
		if msg, err := exec.Command(bin, append(slices.Clone(flags), "--materialize", "--report", refRep, "-o", ref, src)...).CombinedOutput(); err != nil {
			t.Fatalf("round %d, local: %v\n%s", round, err, msg)
		}
		runShards(t, bin, 3, append(slices.Clone(flags), "-o", out, src))
		if msg, err := exec.Command(bin, append(slices.Clone(flags), "--materialize", "--report", outRep, "-o", out, src)...).CombinedOutput(); err != nil {
			t.Fatalf("round %d, the final step: %v\n%s", round, err, msg)
		}
		// The second round folds only the new inputs into the snapshot it
		// found (in the bucket): as many change rows as the local run read.
		folded := func(p string) int64 {
			var rep struct {
				Materialized []struct{ Changes int64 } `json:"materialized"`
			}
			b, _ := os.ReadFile(p)
			if json.Unmarshal(b, &rep) != nil || len(rep.Materialized) != 1 {
				t.Fatalf("%s: %s", p, b)
			}
			return rep.Materialized[0].Changes
		}
		if a, b := folded(refRep), folded(outRep); a != b || a == 0 {
			t.Errorf("round %d: the bucket's fold read %d change rows, the local one %d", round, b, a)
		}
		want := outputFiles(t, ref)
		got := bucketFiles(t, openLoc(t, out))
		n := 0
		for k, b := range want {
			if !strings.Contains(k, "_current") {
				continue
			}
			n++
			if !bytes.Equal(got[k], b) {
				t.Errorf("round %d: %s differs from the local snapshot's (%d bytes against %d)", round, k, len(got[k]), len(b))
			}
		}
		if n < 1 {
			t.Fatalf("round %d: the local run made no snapshot file", round)
		}
		state := filepath.Join("_current", "inv", "kv", "_cdcetl_state.json")
		a, err1 := os.ReadFile(filepath.Join(ref, state))
		b, err2 := openLoc(t, out).Bucket.ReadAll(context.Background(), openLoc(t, out).Key(filepath.ToSlash(state)))
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Errorf("round %d: the snapshot's state differs (%v, %v):\n%s\n%s", round, err1, err2, a, b)
		}
	}
}

// TestS3Faults: reading the archive from and writing the outputs to a
// bucket through a proxy that fails a third of the requests (500s, 503s,
// resets before and after the server acted, bodies cut short, stalls
// longer than --bucket-timeout), a conversion converts every row exactly
// once after at most one rerun; the journal lists every output and no
// pending file stays. Seeded: the faults are drawn the same way each time
// (which request meets them depends on the order requests arrive in).
func TestS3Faults(t *testing.T) {
	ep, dir, bin, run := s3Test(t, "faults")
	local, total := shardArchive(t, filepath.Join(dir, "in"))
	uploadArchive(t, ep, run, local)
	proxy, err := faultproxy.Start(ep, faultproxy.Config{Seed: 30, Rate: 0.3, Stall: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	outURL := s3URL(proxy.URL, "lake", run)
	args := []string{"convert", "--quiet", "--format", "debezium-json", "--schema", "id BIGINT, name STRING", "--to", "json", "-o", outURL, "--workers", "2",
		"--bucket-timeout", "500ms", "--bucket-attempts", "8",
		s3URL(proxy.URL, "archive", run+"/a"), s3URL(proxy.URL, "archive", run+"/b")}
	runs := 0
	for ; runs < 2; runs++ {
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
		hung := ctx.Err() != nil
		cancel()
		if hung {
			t.Fatalf("run %d hung (killed after 4 minutes)\n%s", runs+1, out)
		}
		if err == nil {
			break
		}
		t.Logf("run %d: %v\n%s", runs+1, err, out)
	}
	t.Logf("faults met: %v", proxy.Counts())
	if runs == 2 {
		t.Fatal("two runs through the faults both failed")
	}
	loc := openLoc(t, s3URL(ep, "lake", run))
	listed := journaledOutputs(t, loc, "_cdcetl_journal.jsonl")
	outs := flatCopies(t, bucketFiles(t, loc), listed)
	if len(outs) != 100 {
		t.Fatalf("%d outputs, want 100", len(outs))
	}
	eachRowOnce(t, outs, total)
	if ok, _ := loc.Bucket.Exists(context.Background(), loc.Key("_cdcetl_pending.jsonl")); ok {
		t.Error("the pending file is still in the bucket")
	}
	for _, f := range []string{"500", "503", "reset before", "reset after", "truncated body", "stall"} {
		if proxy.Counts()[f] == 0 {
			t.Errorf("no request met %q: the test did not test it", f)
		}
	}
}

// TestS3NeverAnswers: a server that takes connections and never answers
// (reading, or writing) fails the run within the deadline and the tries
// given, exit 1, naming the bucket and what to do, instead of hanging.
func TestS3NeverAnswers(t *testing.T) {
	_, dir, bin, _ := s3Test(t, "silent")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c) // read nothing, answer nothing
		}
	}()
	silent := "http://" + ln.Addr().String()
	local, _ := shardArchive(t, filepath.Join(dir, "in"))
	for name, args := range map[string][]string{
		"reading": {"--to", "print", s3URL(silent, "archive", "x/")},
		"writing": {"-o", s3URL(silent, "lake", "x/"), local[0]},
	} {
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, bin, append([]string{"convert", "--format", "debezium-json", "--schema", "id BIGINT, name STRING",
			"--bucket-timeout", "300ms", "--bucket-attempts", "2"}, args...)...)
		out, err := cmd.CombinedOutput()
		hung := ctx.Err() != nil
		cancel()
		if hung {
			t.Fatalf("%s: hung (killed after 60 s)\n%s", name, out)
		}
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Errorf("%s: %v, want exit 1\n%s", name, err, out)
		}
		if took := time.Since(start); took > 20*time.Second {
			t.Errorf("%s: took %s to give up", name, took)
		}
		msg := string(out)
		if !strings.Contains(msg, ln.Addr().String()) && !strings.Contains(msg, "s3://") || !strings.Contains(msg, "--bucket-timeout") {
			t.Errorf("%s: the error names neither the place nor what to do:\n%s", name, msg)
		}
	}
}

// TestS3Audit: an archive in a bucket audits as it does on disk: the same
// gaps, duplicates and counts, its places named by the objects' URLs.
func TestS3Audit(t *testing.T) {
	ep, dir, bin, run := s3Test(t, "audit")
	local := filepath.Join(dir, "archive")
	if err := cdcgen.WriteArchive(local, 24, 20, true, 5); err != nil {
		t.Fatal(err)
	}
	remote := s3URL(ep, "archive", run)
	uploadTree(t, local, openLoc(t, remote))
	report := func(in string) audit.Report {
		out, err := exec.Command(bin, "audit", "--json", in).Output()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 4 {
			t.Fatalf("audit %s: %v (want exit status 4: gaps)", in, err)
		}
		var r audit.Report
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, b := report(local), report(remote)
	summary := func(r audit.Report) string {
		var s []string
		for _, g := range r.Gaps {
			s = append(s, fmt.Sprintf("%s %s %d %s:%d %s:%d", g.Kind, g.What, g.Missing, filepath.Base(g.Before.File), g.Before.Line, filepath.Base(g.After.File), g.After.Line))
		}
		return fmt.Sprintf("%d files, %d messages, rows %v, duplicates %d/%d, gaps %d: %s", len(r.Coverage.Files), r.Coverage.Messages, r.Coverage.Rows,
			r.Duplicates.Messages, r.Duplicates.Rows, r.GapsFound, strings.Join(s, "; "))
	}
	if sa, sb := summary(a), summary(b); sa != sb {
		t.Fatalf("on disk:\n%s\nin the bucket:\n%s", sa, sb)
	}
	if !strings.HasPrefix(b.Gaps[0].Before.File, "s3://archive/") {
		t.Errorf("a bucket's place is its URL: %s", b.Gaps[0].Before.File)
	}
}

// TestS3Inspect: inspect reads an archive in a bucket as on disk: the same
// formats, tables, counts and inferred DDL.
func TestS3Inspect(t *testing.T) {
	ep, dir, bin, run := s3Test(t, "inspect")
	local := filepath.Join(dir, "archive")
	if err := cdcgen.WriteArchive(local, 6, 10, false, 8); err != nil {
		t.Fatal(err)
	}
	remote := s3URL(ep, "archive", run)
	uploadTree(t, local, openLoc(t, remote))
	inspect := func(in string) string {
		out, err := exec.Command(bin, "inspect", "--json", in).Output()
		if err != nil {
			t.Fatalf("inspect %s: %v", in, err)
		}
		var ins struct {
			Files []struct {
				Path   string
				Format string
				Lines  int64
				Tables []struct {
					Table    string
					Messages int64
				}
			}
			Tables []struct{ DDL string }
		}
		if err := json.Unmarshal(out, &ins); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, f := range ins.Files {
			fmt.Fprintf(&b, "%s %s %d %v\n", filepath.Base(f.Path), f.Format, f.Lines, f.Tables)
		}
		for _, tb := range ins.Tables {
			b.WriteString(tb.DDL)
		}
		return b.String()
	}
	if a, b := inspect(local), inspect(remote); a != b || !strings.Contains(a, "maxwell-json") {
		t.Fatalf("on disk:\n%s\nin the bucket:\n%s", a, b)
	}
}
