package outdir

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"gocloud.dev/blob"

	"github.com/cdcetl/cdcetl/internal/setting"
	"github.com/cdcetl/cdcetl/objstore"
)

// Output to a bucket (-o s3://bucket/prefix): the run works in a local
// staging directory exactly as it does in a local output directory, and a
// Bucket puts each input's outputs into the bucket before the input is
// journaled there.
//
// The bucket's journal (_cdcetl_journal[.<i>-of-<n>].jsonl) is the truth:
// an object no journal entry lists may be from a killed run. The order
// that keeps it so:
//  1. At start, the journal, pending and schema files are downloaded into
//     staging; outputs a killed run left for stems no journal entry owns
//     are deleted from the bucket (by the killed run's pending file).
//  2. The run's pending file is uploaded before any output.
//  3. An input's outputs are uploaded (and their staging copies removed),
//     then it is journaled in staging. Each object is one PUT (a multipart
//     upload completes as one): a reader of the bucket sees an output
//     whole or not at all, never a partial object.
//  4. The journal file is uploaded at most every journalFlush, and at the
//     end. An input whose entry did not reach the bucket is converted
//     again by the next run, into the same names, after step 1 removed
//     what it had put there: nothing twice, nothing lost.
//
// A kill leaves, for a reader of the bucket, complete objects only: some
// outputs of the inputs in flight, which the next run's start deletes or
// replaces. A reader that wants whole inputs only reads what the journal
// lists.
type Bucket struct {
	loc     *objstore.Location
	staging string
	pending string // the run's pending file name
	journal string // the run's journal file name
	lake    bool   // Iceberg: data files are uploaded by their commits
	lease   *objstore.Lease
	ctx     context.Context // the run's, cancelled if the lease is lost

	mu        sync.Mutex
	lastFlush time.Time
	schemas   map[string][]byte // uploaded schema files, by relative path
}

// journalFlush bounds how often the journal object is rewritten.
const journalFlush = 5 * time.Second

// OpenBucket takes the bucket location url's lock (for shard sh),
// downloads the bucket's journal, pending and schema files
// into a new staging directory and removes what killed runs left.
func OpenBucket(ctx context.Context, url string, sh Shard, lake bool) (*Bucket, error) {
	loc, err := objstore.Open(ctx, url)
	if err != nil {
		return nil, err
	}
	if err := loc.Check(ctx); err != nil {
		return nil, err
	}
	staging, err := os.MkdirTemp("", "cdcetl-staging-*")
	if err != nil {
		return nil, fmt.Errorf("staging directory for %s: %w", url, err)
	}
	p := &Bucket{loc: loc, staging: staging, pending: TaggedName(PendingName, sh.Tag()), journal: JournalFile(sh), lake: lake, schemas: map[string][]byte{}}
	if p.lease, p.ctx, err = lockBucket(ctx, loc, sh); err != nil {
		os.RemoveAll(staging)
		return nil, err
	}
	fail := func(err error) (*Bucket, error) {
		p.lease.Release(context.WithoutCancel(ctx))
		os.RemoveAll(staging)
		return nil, err
	}
	// The top level: journals and pending files. A shard recovers another
	// shard's pending file only while it holds that shard's lease (taken
	// only if free), so nothing of a shard that runs is touched; the
	// leases are taken before the journals are read.
	var names []string
	it := loc.Bucket.List(&blob.ListOptions{Prefix: loc.Prefix, Delimiter: "/"})
	for {
		o, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return fail(fmt.Errorf("listing %s: %w", url, objstore.Explain(err)))
		}
		if !o.IsDir {
			names = append(names, strings.TrimPrefix(o.Key, loc.Prefix))
		}
	}
	var held []*objstore.Lease
	defer func() {
		for _, l := range held {
			l.Release(context.WithoutCancel(ctx))
		}
	}()
	var pendings []string
	for _, name := range names {
		tag, isPending := TagOfName(name, PendingName)
		if !isPending {
			continue
		}
		if tag != sh.Tag() && sh.Sharded() {
			tctx, cancel := context.WithTimeout(ctx, time.Second)
			l, _, err := loc.TakeLease(tctx, TaggedName(LockName, tag), BucketLease)
			cancel()
			if err != nil {
				continue // that shard runs (or its lease is not yet expired): it recovers its own
			}
			held = append(held, l)
		}
		pendings = append(pendings, name)
	}
	for _, name := range names {
		_, isJournal := TagOfName(name, JournalName)
		if isJournal || slices.Contains(pendings, name) {
			if err := p.download(ctx, name); err != nil {
				if i := slices.Index(pendings, name); i >= 0 && objstore.IsNotFound(err) {
					// Its shard finished (and removed it) between the
					// listing and the taking of its lease: nothing to do.
					pendings = slices.Delete(pendings, i, i+1)
					continue
				}
				return fail(err)
			}
		}
	}
	// Routed tables' schema files: <ns>/<table>/_schema.sql and
	// <ns>/<table>/v<n>/_schema.sql.
	if err := p.downloadSchemas(ctx, loc.Prefix, 0); err != nil {
		return fail(err)
	}
	if len(pendings) > 0 {
		j, err := OpenJournal(staging, sh.Tag())
		if err != nil {
			return fail(err)
		}
		defer j.Close()
		for _, name := range pendings {
			if err := p.recover(ctx, name, j); err != nil {
				return fail(err)
			}
		}
	}
	return p, nil
}

// BucketLease is how long a bucket lock lasts without renewal: a killed
// run's lock is taken over this long after it died.
var BucketLease = 30 * time.Second

// lockBucket takes the bucket location's locks, as LockDir does for a
// directory: a whole run's lease (_cdcetl.lock) while no shard's is live,
// or a shard's own (_cdcetl.<i>-of-<n>.lock) while no whole run's and no
// other count's is live. (Object stores lock one object at a time, so the
// checks of the others are made after taking one's own: two runs that
// start in the same instant may both stop, never both go on.)
func lockBucket(ctx context.Context, loc *objstore.Location, sh Shard) (*objstore.Lease, context.Context, error) {
	tag := sh.Tag()
	lease, lctx, err := loc.TakeLease(ctx, TaggedName(LockName, tag), BucketLease)
	if err != nil {
		return nil, nil, err
	}
	refuse := func(msg string) (*objstore.Lease, context.Context, error) {
		lease.Release(context.WithoutCancel(ctx))
		return nil, nil, fmt.Errorf("output %s: %s", loc.URL, msg)
	}
	if tag != "" {
		if _, live, err := loc.LeaseInfo(ctx, LockName); err != nil {
			return refuse(err.Error())
		} else if live {
			return refuse(fmt.Sprintf("a run without %s is writing there; wait for it to finish", setting.Shard))
		}
	}
	it := loc.Bucket.List(&blob.ListOptions{Prefix: loc.Prefix + "_cdcetl.", Delimiter: "/"})
	for {
		o, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return refuse(objstore.Explain(err).Error())
		}
		name := strings.TrimPrefix(o.Key, loc.Prefix)
		other, ok := TagOfName(name, LockName)
		if !ok || other == "" || other == tag {
			continue
		}
		_, live, err := loc.LeaseInfo(ctx, name)
		if err != nil {
			return refuse(err.Error())
		}
		o2, _ := parseTag(other)
		switch {
		case live && tag == "":
			return refuse(fmt.Sprintf("shard %s is writing there; a run without %s waits for every shard to finish", o2, setting.Shard))
		case live && o2.Count != sh.Count:
			return refuse(fmt.Sprintf("shard %s of another sharding (n=%d) is writing there; run one shard count at a time (wait for it, or use %s i/%d)", o2, o2.Count, setting.Shard, o2.Count))
		}
	}
	return lease, lctx, nil
}

// downloadSchemas finds schema files up to three levels below prefix.
func (p *Bucket) downloadSchemas(ctx context.Context, prefix string, depth int) error {
	if depth > 3 {
		return nil
	}
	it := p.loc.Bucket.List(&blob.ListOptions{Prefix: prefix, Delimiter: "/"})
	for {
		o, err := it.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("listing %s: %w", p.loc.URL, objstore.Explain(err))
		}
		rel := strings.TrimPrefix(o.Key, p.loc.Prefix)
		if o.IsDir {
			base := filepath.Base(strings.TrimSuffix(rel, "/"))
			if depth < 2 && !strings.HasPrefix(base, "_") || depth == 2 && IsVersionDir(base) {
				if err := p.downloadSchemas(ctx, o.Key, depth+1); err != nil {
					return err
				}
			}
			continue
		}
		if filepath.Base(rel) == SchemaFile && depth >= 2 {
			if err := p.download(ctx, rel); err != nil {
				return err
			}
			b, _ := os.ReadFile(filepath.Join(p.staging, filepath.FromSlash(rel)))
			p.schemas[rel] = b
		}
	}
}

// download copies the object at rel into staging.
func (p *Bucket) download(ctx context.Context, rel string) error {
	b, err := p.loc.Bucket.ReadAll(ctx, p.loc.Key(rel))
	if err != nil {
		return fmt.Errorf("%s: %w", p.loc.Name(p.loc.Key(rel)), objstore.Explain(err))
	}
	local := filepath.Join(p.staging, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
		return err
	}
	return os.WriteFile(local, b, 0o644)
}

// recover deletes from the bucket the outputs of the stems in a killed
// run's pending file that no journal entry owns, then the pending file.
func (p *Bucket) recover(ctx context.Context, name string, j *Journal) error {
	stems, err := ReadPending(p.staging, name)
	if err != nil {
		return err
	}
	var TableDirs []string
	for rel := range p.schemas {
		TableDirs = append(TableDirs, path.Dir(rel))
	}
	var keys []string // every object below the prefix, for partitioned stems
	for _, s := range stems {
		if _, ok := j.Owner(s.Stem); ok {
			continue
		}
		if s.Partitioned {
			if keys == nil {
				if keys, err = p.listAll(ctx); err != nil {
					return err
				}
			}
			roots, stem := []string{""}, s.Stem
			if s.Routed {
				roots, stem = TableDirs, RoutedStem(s.Stem)
			}
			for _, k := range keys {
				rel := strings.TrimPrefix(k, p.loc.Prefix)
				for _, root := range roots {
					if HiveFileOf(rel, root, stem) {
						if err := p.loc.Remove(ctx, k); err != nil {
							return fmt.Errorf("cleaning up after an interrupted run: %w", err)
						}
					}
				}
			}
		}
		stem := filepath.ToSlash(s.Stem)
		rels := []string{"_dead_letters/" + stem + ".jsonl"}
		for _, suf := range OutputSuffixes {
			rels = append(rels, stem+suf)
			if s.Routed {
				for _, d := range TableDirs {
					rels = append(rels, d+"/"+filepath.ToSlash(RoutedStem(s.Stem))+suf)
				}
			}
		}
		for _, rel := range rels {
			if err := p.loc.Remove(ctx, p.loc.Key(rel)); err != nil {
				return fmt.Errorf("cleaning up after an interrupted run: %w", err)
			}
		}
	}
	if err := p.loc.Remove(ctx, p.loc.Key(name)); err != nil {
		return err
	}
	return os.Remove(filepath.Join(p.staging, name))
}

// listAll lists every key below the prefix.
func (p *Bucket) listAll(ctx context.Context) ([]string, error) {
	keys := []string{}
	it := p.loc.Bucket.List(&blob.ListOptions{Prefix: p.loc.Prefix})
	for {
		o, err := it.Next(ctx)
		if err == io.EOF {
			return keys, nil
		}
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", p.loc.URL, objstore.Explain(err))
		}
		if !o.IsDir {
			keys = append(keys, o.Key)
		}
	}
}

// HiveFileOf reports whether rel (below the output) is one of stem's
// partition files below table directory root: root/k=v/.../<stem>.parquet
// or a roll, <stem>~N.parquet.
func HiveFileOf(rel, root, stem string) bool {
	if root != "" {
		var ok bool
		if rel, ok = strings.CutPrefix(rel, root+"/"); !ok {
			return false
		}
	}
	segs := strings.Split(rel, "/")
	if len(segs) < 2 {
		return false
	}
	for _, d := range segs[:len(segs)-1] {
		if !IsPartitionDir(d) {
			return false
		}
	}
	rest, ok := strings.CutPrefix(segs[len(segs)-1], HiveStem(stem))
	if !ok || !strings.HasSuffix(rest, ".parquet") {
		return false
	}
	if rest = strings.TrimSuffix(rest, ".parquet"); rest == "" {
		return true
	}
	n, ok := strings.CutPrefix(rest, "~")
	_, err := strconv.Atoi(n)
	return ok && err == nil
}

// Removed deletes from the bucket outputs an input's new conversion no
// longer has (its rows moved to other partitions).
func (p *Bucket) Removed(ctx context.Context, rels []string) error {
	for _, o := range rels {
		if err := p.loc.Remove(ctx, p.loc.Key(filepath.ToSlash(o))); err != nil {
			return err
		}
	}
	return nil
}

// Upload puts the staging file rel into the bucket.
func (p *Bucket) Upload(ctx context.Context, rel string) error {
	f, err := os.Open(filepath.Join(p.staging, filepath.FromSlash(rel)))
	if err != nil {
		return err
	}
	defer f.Close()
	key := p.loc.Key(rel)
	// One PUT (or one multipart upload, completed at Close): the object
	// appears whole when it appears. A failed or cancelled upload leaves
	// no object.
	// 5 MiB parts (S3's least), two in flight: bounded memory per upload.
	w, err := p.loc.Bucket.NewWriter(ctx, key, &blob.WriterOptions{ContentType: contentType(rel), BufferSize: 5 << 20, MaxConcurrency: 2})
	if err != nil {
		return fmt.Errorf("uploading %s: %w", p.loc.Name(key), objstore.Explain(err))
	}
	if _, err := io.Copy(w, f); err != nil {
		w.Close()
		return fmt.Errorf("uploading %s: %w", p.loc.Name(key), objstore.Explain(err))
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("uploading %s: %w", p.loc.Name(key), objstore.Explain(err))
	}
	return nil
}

func contentType(rel string) string {
	switch {
	case strings.HasSuffix(rel, ".parquet"):
		return "application/vnd.apache.parquet"
	case strings.HasSuffix(rel, ".gz"):
		return "application/gzip"
	case strings.HasSuffix(rel, ".zst"):
		return "application/zstd"
	case strings.HasSuffix(rel, ".sql"):
		return "application/sql"
	}
	return "application/x-ndjson"
}

// Started uploads the run's pending file, before any output.
func (p *Bucket) Started(ctx context.Context) error {
	return p.Upload(ctx, p.pending)
}

// Publish puts an input's outputs into the bucket (changed schema files
// first) and removes their staging copies; the input is journaled after.
func (p *Bucket) Publish(ctx context.Context, e Entry) error {
	if err := p.uploadSchemas(ctx); err != nil {
		return err
	}
	for _, o := range e.Outputs {
		if filepath.IsAbs(o) {
			continue
		}
		rel := filepath.ToSlash(o)
		if _, err := os.Stat(filepath.Join(p.staging, o)); errors.Is(err, os.ErrNotExist) {
			// An entry journaled again (a move or delete of an input a
			// killed run converted): its outputs went up then.
			if ok, err := p.loc.Bucket.Exists(ctx, p.loc.Key(rel)); err == nil && ok {
				continue
			}
		}
		if !p.lake || strings.HasPrefix(rel, "_dead_letters/") {
			if err := p.Upload(ctx, rel); err != nil {
				return err
			}
		}
		os.Remove(filepath.Join(p.staging, o))
	}
	return nil
}

// uploadSchemas uploads the schema files that changed in staging.
func (p *Bucket) uploadSchemas(ctx context.Context) error {
	var found []string
	for _, pat := range [][]string{{"*", "*", SchemaFile}, {"*", "*", "v*", SchemaFile}} {
		m, err := filepath.Glob(filepath.Join(append([]string{p.staging}, pat...)...))
		if err != nil {
			return err
		}
		found = append(found, m...)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range found {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(p.staging, f)
		rel = filepath.ToSlash(rel)
		if old, ok := p.schemas[rel]; ok && bytes.Equal(old, b) {
			continue
		}
		if err := p.Upload(ctx, rel); err != nil {
			return err
		}
		p.schemas[rel] = b
	}
	return nil
}

// Journaled uploads the journal file when journalFlush has passed (or
// always, with force).
func (p *Bucket) Journaled(ctx context.Context, force bool) error {
	journal := p.journal
	p.mu.Lock()
	defer p.mu.Unlock()
	if !force && time.Since(p.lastFlush) < journalFlush {
		return nil
	}
	if _, err := os.Stat(filepath.Join(p.staging, journal)); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err := p.Upload(ctx, journal); err != nil {
		return err
	}
	p.lastFlush = time.Now()
	return nil
}

// Path is the staging directory the run writes in.
func (p *Bucket) Path() string { return p.staging }

// Remote is the bucket location's URL.
func (p *Bucket) Remote() string { return p.loc.URL }

// Context is the one the run goes on with: cancelled if the bucket's
// lock is lost.
func (p *Bucket) Context() context.Context { return p.ctx }

// Lost is the error of a lock lost to another process (nil while held).
func (p *Bucket) Lost() error { return p.lease.Err() }

// Abandon gives up a run whose lock was lost: nothing more is written
// to the bucket, and the staging directory goes.
func (p *Bucket) Abandon(ctx context.Context) {
	os.RemoveAll(p.staging)
	p.lease.Release(ctx)
}

// Close uploads the journal (even after a failure: its entries' outputs
// are in the bucket already) and, when the run left nothing unsettled
// (its pending file is gone from staging), removes the bucket's pending
// file; then the staging directory goes and the lock is released.
func (p *Bucket) Close(ctx context.Context) error {
	_, perr := os.Stat(filepath.Join(p.staging, p.pending))
	err := p.uploadSchemas(ctx)
	if err == nil {
		err = p.Journaled(ctx, true)
	}
	if err == nil && errors.Is(perr, os.ErrNotExist) {
		err = p.loc.Remove(ctx, p.loc.Key(p.pending))
	}
	os.RemoveAll(p.staging)
	if rerr := p.lease.Release(ctx); err == nil {
		err = rerr
	}
	return err
}

// Current-state snapshots in a bucket (--materialize): the snapshot of a
// table is its _current/ prefix, one Parquet file and the state file
// listing the changes it holds. The fold runs in staging on the snapshot
// and change files fetched from the bucket; the new snapshot's data file
// is uploaded over the old (one PUT: a reader sees the old or the new),
// then its state file. A kill between the two leaves the new data with
// the old state: the next run folds those changes again, which gives the
// same last image per key.

// FetchSnapshot brings a table's snapshot (rel: _current/<table dir>)
// into staging, replacing what staging has.
func (p *Bucket) FetchSnapshot(ctx context.Context, rel string) error {
	local := filepath.Join(p.staging, filepath.FromSlash(rel))
	if err := os.RemoveAll(local); err != nil {
		return err
	}
	it := p.loc.Bucket.List(&blob.ListOptions{Prefix: p.loc.Key(rel) + "/"})
	for {
		o, err := it.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("listing %s: %w", p.loc.Name(p.loc.Key(rel)), objstore.Explain(err))
		}
		if o.IsDir {
			continue
		}
		if err := p.download(ctx, strings.TrimPrefix(o.Key, p.loc.Prefix)); err != nil {
			return err
		}
	}
}

// Fetch brings the output at path (in staging) from the bucket, unless
// staging has it.
func (p *Bucket) Fetch(ctx context.Context, local string) error {
	if _, err := os.Stat(local); err == nil {
		return nil
	}
	rel, err := filepath.Rel(p.staging, local)
	if err != nil {
		return err
	}
	return p.download(ctx, filepath.ToSlash(rel))
}

// RemovePrefix removes every object below rel (a directory).
func (p *Bucket) RemovePrefix(ctx context.Context, rel string) error {
	it := p.loc.Bucket.List(&blob.ListOptions{Prefix: p.loc.Key(rel) + "/"})
	for {
		o, err := it.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("listing %s: %w", p.loc.Name(p.loc.Key(rel)), objstore.Explain(err))
		}
		if o.IsDir {
			continue
		}
		if err := p.loc.Remove(ctx, o.Key); err != nil {
			return err
		}
	}
}

// PutSnapshot uploads a table's new snapshot (rel: _current/<table dir>):
// data files first, the state file last, then removes the bucket's data
// files the new snapshot does not have.
func (p *Bucket) PutSnapshot(ctx context.Context, rel string) error {
	local := filepath.Join(p.staging, filepath.FromSlash(rel))
	names, err := os.ReadDir(local)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, n := range names {
		if n.IsDir() || n.Name() == StateFile {
			continue
		}
		have[n.Name()] = true
		if err := p.Upload(ctx, rel+"/"+n.Name()); err != nil {
			return err
		}
	}
	if err := p.Upload(ctx, rel+"/"+StateFile); err != nil {
		return err
	}
	it := p.loc.Bucket.List(&blob.ListOptions{Prefix: p.loc.Key(rel) + "/"})
	for {
		o, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("listing %s: %w", p.loc.Name(p.loc.Key(rel)), objstore.Explain(err))
		}
		name := strings.TrimPrefix(o.Key, p.loc.Key(rel)+"/")
		if o.IsDir || name == StateFile || have[name] {
			continue
		}
		if err := p.loc.Remove(ctx, o.Key); err != nil {
			return err
		}
	}
	return os.RemoveAll(local)
}
