// Package objstore reads inputs from and writes outputs to object storage
// through gocloud.dev/blob: s3:// (and S3-compatible servers through
// ?endpoint=), gs://, azblob://, file:// and mem://.
//
// A location is a bucket URL with an optional key prefix:
// s3://bucket/archive/2026/?region=eu-west-1. Credentials come from each
// cloud SDK's standard chain (AWS_* variables, ~/.aws, instance and pod
// roles; GOOGLE_APPLICATION_CREDENTIALS; AZURE_* variables), never from
// the URL: a URL carrying a secret is refused.
package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cdcetl/cdcetl/internal/setting"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob" // file://
	_ "gocloud.dev/blob/memblob"  // mem://
	"gocloud.dev/gcerrors"
)

// Schemes are the URL schemes of object storage.
var Schemes = []string{"s3", "gs", "azblob", "file", "mem"}

// IsURL reports whether s names object storage rather than a local path.
func IsURL(s string) bool {
	scheme, _, ok := strings.Cut(s, "://")
	if !ok {
		return false
	}
	for _, k := range Schemes {
		if scheme == k {
			return true
		}
	}
	return false
}

// Location is a bucket and a key prefix in it ("" or ending in "/").
type Location struct {
	URL    string // as given
	Bucket *blob.Bucket
	Prefix string
	// display is scheme://bucket/ for names in messages and journals.
	display string
	// exact is the key the URL names when it does not end in '/': it may
	// be one object rather than a prefix.
	exact string
}

// secretParams are query parameters that would put a credential in a
// command line (and so in shell history and process listings).
var secretParams = []string{"access_key_id", "secret_access_key", "secret", "session_token", "token", "password", "sig", "credentials", "account_key"}

// ParseURL splits a location URL into the URL gocloud opens the bucket
// with and the key prefix.
func ParseURL(raw string) (bucketURL, prefix, display string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", "", fmt.Errorf("%s: %w", raw, err)
	}
	if !IsURL(raw) {
		return "", "", "", fmt.Errorf("%s: want a bucket URL (%s)", raw, strings.Join(Schemes, "://, ")+"://")
	}
	if err := checkScheme(raw); err != nil {
		return "", "", "", err
	}
	if u.User != nil {
		return "", "", "", fmt.Errorf("%s: credentials never go in the URL (they would end in shell history): use the cloud SDK's environment (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, GOOGLE_APPLICATION_CREDENTIALS, AZURE_STORAGE_KEY, ...)", redact(u))
	}
	for k := range u.Query() {
		lk := strings.ToLower(k)
		for _, s := range secretParams {
			if lk == s {
				return "", "", "", fmt.Errorf("%s: query parameter %q looks like a credential; credentials come from the cloud SDK's environment, never from the URL", redact(u), k)
			}
		}
	}
	if u.Scheme == "file" {
		// fileblob's bucket is a directory: the whole path.
		if u.Host != "" || u.Path == "" || !strings.HasPrefix(u.Path, "/") {
			return "", "", "", fmt.Errorf("%s: want file:///ABSOLUTE/DIR", raw)
		}
		b := *u
		b.Path = strings.TrimSuffix(u.Path, "/")
		if b.Path == "" {
			b.Path = "/"
		}
		q := b.Query()
		if q.Get("create_dir") == "" {
			q.Set("create_dir", "true")
		}
		if q.Get("metadata") == "" {
			q.Set("metadata", "skip") // no .attrs file beside each output
		}
		b.RawQuery = q.Encode()
		return b.String(), "", "file://" + b.Path + "/", nil
	}
	if u.Host == "" {
		return "", "", "", fmt.Errorf("%s: no bucket name (want %s://BUCKET/PREFIX)", raw, u.Scheme)
	}
	prefix = strings.TrimPrefix(u.Path, "/")
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	b := *u
	b.Path = ""
	return b.String(), prefix, u.Scheme + "://" + u.Host + "/", nil
}

func redact(u *url.URL) string {
	c := *u
	c.User = nil
	c.RawQuery = ""
	return c.String()
}

// buckets keeps one open bucket per URL, so mem:// buckets live for the
// process and every location shares connections.
var buckets struct {
	sync.Mutex
	open map[string]*blob.Bucket
}

// Open opens a location.
func Open(ctx context.Context, raw string) (*Location, error) {
	bu, prefix, display, err := ParseURL(raw)
	if err != nil {
		return nil, err
	}
	buckets.Lock()
	defer buckets.Unlock()
	if buckets.open == nil {
		buckets.open = map[string]*blob.Bucket{}
	}
	b, ok := buckets.open[bu]
	if !ok {
		if strings.HasPrefix(bu, "s3://") {
			u, _ := url.Parse(bu)
			b, err = openS3(ctx, u)
		} else {
			b, err = blob.OpenBucket(ctx, bu)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", raw, err)
		}
		buckets.open[bu] = b
	}
	loc := &Location{URL: raw, Bucket: b, Prefix: prefix, display: display}
	if u, err := url.Parse(raw); err == nil && u.Scheme != "file" && u.Path != "" && !strings.HasSuffix(u.Path, "/") {
		loc.exact = strings.TrimSuffix(prefix, "/")
	}
	return loc, nil
}

// Single returns the object the location's URL names, when it names one
// (s3://bucket/dir/file.json, not .../dir/): an input given by name, as
// a file argument is.
func (l *Location) Single(ctx context.Context) (Object, bool, error) {
	if l.exact == "" {
		return Object{}, false, nil
	}
	a, err := l.Bucket.Attributes(ctx, l.exact)
	if IsNotFound(err) {
		return Object{}, false, nil
	}
	if err != nil {
		return Object{}, false, fmt.Errorf("%s: %w", l.Name(l.exact), Explain(err))
	}
	return Object{Key: l.exact, Rel: path.Base(l.exact), Size: a.Size, ModTime: a.ModTime.UnixNano(), ETag: a.ETag}, true, nil
}

// Name is how an object is named in messages, journals and lineage:
// scheme://bucket/key.
func (l *Location) Name(key string) string { return l.display + key }

// Key is the full key of rel (a path below the prefix, '/'-separated).
func (l *Location) Key(rel string) string {
	return l.Prefix + strings.TrimPrefix(path.Clean("/"+rel), "/")
}

// Object is one listed object.
type Object struct {
	Key     string // full key
	Rel     string // below the prefix
	Size    int64
	ModTime int64 // nanoseconds since the epoch
	ETag    string
}

// hidden is the rule of directory inputs: a path element starting with
// '.' or '_' is not an input (Flink's file source, and reader.Walk).
func hidden(rel string) bool {
	for _, el := range strings.Split(rel, "/") {
		if strings.HasPrefix(el, ".") || strings.HasPrefix(el, "_") {
			return true
		}
	}
	return false
}

// List lists the inputs below the prefix, in key order, leaving out keys
// with a hidden path element and "directory" placeholders; skip, when
// set, leaves out more (a run's own outputs).
func (l *Location) List(ctx context.Context, skip func(rel string) bool) ([]Object, error) {
	var out []Object
	it := l.Bucket.List(&blob.ListOptions{Prefix: l.Prefix})
	for {
		o, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", l.URL, Explain(err))
		}
		rel := strings.TrimPrefix(o.Key, l.Prefix)
		if o.IsDir || strings.HasSuffix(o.Key, "/") || rel == "" || hidden(rel) || (skip != nil && skip(rel)) {
			continue
		}
		ob := Object{Key: o.Key, Rel: rel, Size: o.Size, ModTime: o.ModTime.UnixNano()}
		if len(o.MD5) > 0 {
			ob.ETag = fmt.Sprintf("%x", o.MD5)
		}
		out = append(out, ob)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// Open streams the object at key (no full download: memory stays
// bounded whatever its size). A read that fails mid-way (a reset, a body
// cut short, a stall) goes on from where it was, for as many tries as the
// policy allows, as long as the object is the one it started reading.
func (l *Location) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	r, err := l.Bucket.NewReader(ctx, key, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.Name(key), Explain(err))
	}
	return &resumable{ctx: ctx, loc: l, key: key, r: r, size: r.Size(), mod: r.ModTime(), attempts: CurrentPolicy().Attempts}, nil
}

// resumable is an object's stream that reopens itself at the offset it
// reached when a read fails for a reason that may pass.
type resumable struct {
	ctx      context.Context
	loc      *Location
	key      string
	r        *blob.Reader
	off      int64
	size     int64
	mod      time.Time
	attempts int
	failed   int   // failures since the last byte read
	err      error // met with bytes, returned by the next Read
}

func (r *resumable) Read(p []byte) (int, error) {
	for {
		err := r.err
		r.err = nil
		if err == nil && r.r != nil {
			n, rerr := r.r.Read(p)
			r.off += int64(n)
			if rerr == io.EOF && r.off < r.size {
				rerr = io.ErrUnexpectedEOF // the server closed early
			}
			if n > 0 {
				r.failed = 0
				if rerr != nil && rerr != io.EOF {
					r.err, rerr = rerr, nil // for the next Read
				}
				return n, rerr
			}
			if rerr == nil {
				continue
			}
			if rerr == io.EOF {
				return 0, io.EOF
			}
			err = rerr
		}
		if !transient(r.ctx, err) || r.off >= r.size {
			return 0, fmt.Errorf("%s: reading at byte %d: %w", r.loc.Name(r.key), r.off, Explain(err))
		}
		r.failed++
		if r.failed >= r.attempts {
			return 0, fmt.Errorf("%s: reading at byte %d failed %d times in a row (last: %w): the server or the network is failing; check them and run again (inputs already converted are journaled and not read again)", r.loc.Name(r.key), r.off, r.failed, err)
		}
		select {
		case <-r.ctx.Done():
			return 0, r.ctx.Err()
		case <-time.After(backoff(r.failed)):
		}
		if r.r != nil {
			r.r.Close()
			r.r = nil
		}
		nr, err := r.loc.Bucket.NewRangeReader(r.ctx, r.key, r.off, -1, nil)
		if err != nil {
			if transient(r.ctx, err) {
				r.err = err
				continue
			}
			return 0, fmt.Errorf("%s: reopening at byte %d: %w", r.loc.Name(r.key), r.off, Explain(err))
		}
		if !nr.ModTime().Equal(r.mod) || nr.Size() != r.size {
			nr.Close()
			return 0, fmt.Errorf("%s changed while it was read (%d bytes, modified %s; now %d bytes, modified %s): run again to read the new version", r.loc.Name(r.key), r.size, r.mod.Format(time.RFC3339), nr.Size(), nr.ModTime().Format(time.RFC3339))
		}
		r.r = nr
	}
}

func (r *resumable) Close() error {
	if r.r == nil {
		return nil
	}
	return r.r.Close()
}

// transient reports whether a failed read may succeed when tried again:
// anything but cancellation, a missing object and refused permission.
func transient(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return false
	}
	switch gcerrors.Code(err) {
	case gcerrors.NotFound, gcerrors.PermissionDenied, gcerrors.InvalidArgument, gcerrors.Unimplemented:
		return false
	}
	return true
}

// backoff is the wait before the n-th retry of a read (n ≥ 1): doubling
// from 100 ms, capped at maxBackoff.
func backoff(n int) time.Duration {
	d := 100 * time.Millisecond << min(n-1, 10)
	return min(d, maxBackoff)
}

// Explain adds what to do next to the errors a user can fix.
func Explain(err error) error {
	switch gcerrors.Code(err) {
	case gcerrors.PermissionDenied:
		return fmt.Errorf("%w (permission denied: check the credentials in the environment and the bucket's policy)", err)
	case gcerrors.NotFound:
		return fmt.Errorf("%w (not found: check the bucket name and the region or ?endpoint=)", err)
	}
	if gaveUp(err) {
		p := CurrentPolicy()
		return fmt.Errorf("%w (gave up after %d tries, each failing or silent for %[4]s %[3]s: check the endpoint and the network, or raise %[4]s or %[5]s for a slow store; inputs already converted are journaled, so a rerun does only what is left)", err, p.Attempts, p.Timeout, setting.BucketTimeout, setting.BucketTries)
	}
	if m := err.Error(); strings.Contains(m, "get credentials") || strings.Contains(m, "could not find default credentials") {
		return fmt.Errorf("%w (no credentials found: set them in the environment, e.g. AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or AWS_PROFILE, GOOGLE_APPLICATION_CREDENTIALS, AZURE_STORAGE_ACCOUNT and AZURE_STORAGE_KEY; or run where a role is attached)", err)
	}
	return err
}

// IsNotFound reports whether err says an object does not exist.
func IsNotFound(err error) bool { return gcerrors.Code(err) == gcerrors.NotFound }

// ErrNoBucket is returned for a location whose bucket cannot be reached.
var ErrNoBucket = errors.New("bucket not accessible")

// Check verifies that the bucket can be reached.
func (l *Location) Check(ctx context.Context) error {
	ok, err := l.Bucket.IsAccessible(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", l.URL, Explain(err))
	}
	if !ok {
		return fmt.Errorf("%s: %w (does it exist? is ?endpoint= or the region right?)", l.URL, ErrNoBucket)
	}
	return nil
}

// Warehouse is a location as iceberg-go names it: the URL without its
// query (scheme://bucket/prefix, no trailing '/'), and the properties of
// iceberg-go's IO that the query's settings map to (s3.endpoint,
// s3.region, path-style addressing). Credentials stay with the SDK's
// environment here too.
func Warehouse(raw string) (base string, props map[string]string, err error) {
	if _, _, _, err := ParseURL(raw); err != nil {
		return "", nil, err
	}
	u, _ := url.Parse(raw)
	props = map[string]string{}
	q := u.Query()
	if u.Scheme == "s3" {
		if v := q.Get("endpoint"); v != "" {
			props["s3.endpoint"] = v
		}
		if v := q.Get("region"); v != "" {
			props["s3.region"] = v
		}
		if v := q.Get("use_path_style"); v == "true" {
			props["s3.force-virtual-addressing"] = "false"
		}
	}
	b := *u
	b.RawQuery = ""
	return strings.TrimSuffix(b.String(), "/"), props, nil
}

// KeyOf is the key of an object named as Name names it, if it lies in
// this location's bucket.
func (l *Location) KeyOf(name string) (string, bool) {
	return strings.CutPrefix(name, l.display)
}

// LocalPath is the directory or file a file:// URL names: cdcetl reads
// and writes those as the local paths they are (with the journal's
// locks and atomic renames), and one input has one identity whichever
// way it was named.
func LocalPath(raw string) (string, bool) {
	if !strings.HasPrefix(raw, "file://") {
		return "", false
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host != "" || !strings.HasPrefix(u.Path, "/") {
		return "", false
	}
	return u.Path, true
}

// Remove deletes the object at key; one that is already gone is no error.
func (l *Location) Remove(ctx context.Context, key string) error {
	if err := l.Bucket.Delete(ctx, key); err != nil && !IsNotFound(err) {
		return fmt.Errorf("removing %s: %w", l.Name(key), Explain(err))
	}
	return nil
}
