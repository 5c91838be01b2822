package outdir

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/cdcetl/cdcetl/objstore"
)

// Dir is where a run's outputs go. The run writes every output, its
// journal and its pending file in Path, a local directory; the Dir puts
// what is finished where readers find it. For a local output directory
// that is Path itself and every method but Path does nothing; for a
// bucket, Path is a staging directory and the methods upload (bucket.go).
//
// The calls come in the order that keeps a run exactly-once: Started
// after the pending file is written and before any output; for each
// input, Publish before its journal entry is appended, then Journaled;
// Close at the end.
type Dir interface {
	// Path is the local directory the run writes in.
	Path() string
	// Remote is the bucket URL of the outputs ("" for a local directory).
	Remote() string
	// Started: the run's pending file is in Path.
	Started(ctx context.Context) error
	// Publish puts an input's outputs (e.Outputs, relative to Path) in
	// place; the input is journaled after.
	Publish(ctx context.Context, e Entry) error
	// Journaled: an entry was appended to the journal (force: the
	// entry must be visible before the run goes on, as before an
	// input is moved or deleted).
	Journaled(ctx context.Context, force bool) error
	// Upload puts one more file below Path in place (a success file).
	Upload(ctx context.Context, rel string) error
	// Removed: outputs an input's new conversion no longer has were
	// removed from Path.
	Removed(ctx context.Context, rels []string) error
	// FetchSnapshot brings a current-state snapshot (rel: a directory
	// below Path) into Path; Fetch one output file (local: its path in
	// Path) unless Path has it.
	FetchSnapshot(ctx context.Context, rel string) error
	Fetch(ctx context.Context, local string) error
	// PutSnapshot puts the snapshot written in Path at rel in place;
	// RemovePrefix removes a snapshot directory that is no longer used.
	PutSnapshot(ctx context.Context, rel string) error
	RemovePrefix(ctx context.Context, rel string) error
	// Close ends the run's use of the Dir.
	Close(ctx context.Context) error
}

// Local is a local output directory.
type Local string

var (
	_ Dir = Local("")
	_ Dir = (*Bucket)(nil)
)

func (d Local) Path() string                              { return string(d) }
func (Local) Remote() string                              { return "" }
func (Local) Started(context.Context) error               { return nil }
func (Local) Publish(context.Context, Entry) error        { return nil }
func (Local) Journaled(context.Context, bool) error       { return nil }
func (Local) Upload(context.Context, string) error        { return nil }
func (Local) Removed(context.Context, []string) error     { return nil }
func (Local) FetchSnapshot(context.Context, string) error { return nil }
func (Local) Fetch(context.Context, string) error         { return nil }
func (Local) PutSnapshot(context.Context, string) error   { return nil }
func (Local) RemovePrefix(context.Context, string) error  { return nil }
func (Local) Close(context.Context) error                 { return nil }

// IsRemote reports whether a location (an output directory, a directory
// inputs move to) is a bucket URL rather than a local path.
func IsRemote(location string) bool { return objstore.IsURL(location) }

// LocalPath is location as a local path: file:// URLs become paths, and
// every other location is returned as it is.
func LocalPath(location string) string {
	if p, ok := objstore.LocalPath(location); ok {
		return p
	}
	return location
}

// CheckLocation finds what is wrong with a location before a run uses
// it: for a bucket URL, a cloud this build leaves out or credentials in
// the URL; a local path is not looked at.
func CheckLocation(location string) error {
	if !objstore.IsURL(location) {
		return nil
	}
	_, _, _, err := objstore.ParseURL(location)
	return err
}

// DeadLetterDir is where the dead letters of a run into out go when the
// run names no directory for them: _dead_letters below out, in a bucket
// or a directory alike.
func DeadLetterDir(out string) string {
	if objstore.IsURL(out) {
		base, _, _ := strings.Cut(out, "?")
		return strings.TrimSuffix(base, "/") + "/_dead_letters/"
	}
	return filepath.Join(out, "_dead_letters")
}
