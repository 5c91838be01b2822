package outdir

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/cdcetl/cdcetl/internal/setting"
	"github.com/cdcetl/cdcetl/objstore"
	"github.com/cdcetl/cdcetl/reader"
)

// InputPath is an input's identity in the journal: a local file's
// absolute path, an object's scheme://bucket/key.
func InputPath(f reader.File) string {
	if f.Remote() {
		return f.Path
	}
	abs, err := filepath.Abs(f.Path)
	if err != nil {
		return f.Path
	}
	return abs
}

// InputName is the input's base name (the file.name metadata).
func InputName(f reader.File) string {
	if f.Remote() {
		return path.Base(f.Key)
	}
	return filepath.Base(f.Path)
}

// Find expands the inputs: local files and directories (reader.Walk), and
// bucket URLs (every object below the prefix, by the same rules: a path
// element starting with '.' or '_' is skipped). Arguments keep their
// order. The run's own directories (own) are never inputs.
func Find(ctx context.Context, paths []string, own []string) ([]reader.File, error) {
	var out []reader.File
	for _, p := range paths {
		if lp, ok := objstore.LocalPath(p); ok {
			p = lp
		}
		if !objstore.IsURL(p) {
			fs, err := reader.Walk([]string{p}, own...)
			if err != nil {
				return nil, err
			}
			out = append(out, fs...)
			continue
		}
		loc, err := objstore.Open(ctx, p)
		if err != nil {
			return nil, &reader.PathError{Path: p, Err: err}
		}
		if o, ok, err := loc.Single(ctx); err != nil {
			return nil, &reader.PathError{Path: p, Err: err}
		} else if ok {
			out = append(out, reader.File{Path: loc.Name(o.Key), Rel: o.Rel, Size: o.Size, ModTime: o.ModTime, Store: loc, Key: o.Key})
			continue
		}
		skip := ownPrefixes(loc, own)
		if skip("") {
			return nil, &reader.PathError{Path: p, Err: fmt.Errorf("%w: it is a location this run writes to", reader.ErrOwnOutput)}
		}
		objs, err := loc.List(ctx, skip)
		if err != nil {
			return nil, &reader.PathError{Path: p, Err: err}
		}
		if len(objs) == 0 {
			if err := loc.Check(ctx); err != nil {
				return nil, &reader.PathError{Path: p, Err: err}
			}
		}
		for _, o := range objs {
			out = append(out, reader.File{Path: loc.Name(o.Key), Rel: o.Rel, Size: o.Size, ModTime: o.ModTime, Store: loc, Key: o.Key})
		}
	}
	return out, nil
}

// ownPrefixes skips, below an input location, the run's own output
// locations in the same bucket.
func ownPrefixes(in *objstore.Location, own []string) func(rel string) bool {
	var under []string
	for _, d := range own {
		if !objstore.IsURL(d) {
			continue
		}
		bu, prefix, _, err := objstore.ParseURL(d)
		ibu, iprefix, _, _ := objstore.ParseURL(in.URL)
		if err != nil || bu != ibu {
			continue
		}
		if strings.HasPrefix(iprefix, prefix) {
			under = append(under, "") // the input is inside the output
			continue
		}
		if strings.HasPrefix(prefix, iprefix) {
			under = append(under, strings.TrimPrefix(prefix, iprefix))
		}
	}
	return func(rel string) bool {
		for _, u := range under {
			if u == "" || strings.HasPrefix(rel, u) {
				return true
			}
		}
		return false
	}
}

// CheckInputMoves refuses to move inputs across kinds of place: inputs in
// a bucket move to a bucket (dirs: --on-success move= and --failed), local
// ones to a directory.
func CheckInputMoves(files []reader.File, dirs []string) error {
	for _, f := range files {
		for _, d := range dirs {
			if f.Remote() != objstore.IsURL(d) {
				if f.Remote() {
					return fmt.Errorf("%s is in a bucket: %s move= and %s need a bucket URL for it too, not %s", f.Path, setting.OnSuccess, setting.FailedDir, d)
				}
				return fmt.Errorf("%s is a local file: %s move= and %s need a directory for it, not %s", f.Path, setting.OnSuccess, setting.FailedDir, d)
			}
		}
	}
	return nil
}

// Inputs in a bucket are moved and deleted there (--on-success, --failed):
// a move is a copy (server-side within one bucket) then the delete of the
// original, never over an object that exists. As on disk, the journal
// entry naming the move is written first.

// ObjectState is an input object's size and modification time now.
func ObjectState(ctx context.Context, f reader.File) (size, mod int64, err error) {
	loc := f.Store.(*objstore.Location)
	a, err := loc.Bucket.Attributes(ctx, f.Key)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", f.Path, objstore.Explain(err))
	}
	return a.Size, a.ModTime.UnixNano(), nil
}

// RemoveInput deletes a converted input.
func RemoveInput(ctx context.Context, f reader.File) error {
	if !f.Remote() {
		return RemoveSynced(f.Path)
	}
	return f.Store.(*objstore.Location).Remove(ctx, f.Key)
}

// FreeInputName is the first name under dir for input f that nothing has:
// dir/rel, dir/rel~2, ...
func FreeInputName(ctx context.Context, dir string, f reader.File) (string, error) {
	if !f.Remote() {
		return FreeName(dir, f.Rel)
	}
	loc, err := objstore.Open(ctx, dir)
	if err != nil {
		return "", err
	}
	for n := 1; ; n++ {
		key := loc.Key(filepath.ToSlash(StemName(f.Rel, n)))
		ok, err := loc.Bucket.Exists(ctx, key)
		if err != nil {
			return "", objstore.Explain(err)
		}
		if !ok {
			return loc.Name(key), nil
		}
	}
}

// MoveInput moves f to dst (a name FreeInputName gave, under dir).
func MoveInput(ctx context.Context, f reader.File, dir, dst string) error {
	if !f.Remote() {
		return MoveNoClobber(f.Path, dst)
	}
	src := f.Store.(*objstore.Location)
	to, err := objstore.Open(ctx, dir)
	if err != nil {
		return err
	}
	key, ok := to.KeyOf(dst)
	if !ok {
		return fmt.Errorf("%s is not below %s", dst, dir)
	}
	there, err := to.Bucket.Exists(ctx, key)
	if err != nil {
		return objstore.Explain(err)
	}
	here, err := src.Bucket.Exists(ctx, f.Key)
	if err != nil {
		return objstore.Explain(err)
	}
	switch {
	case there && !here:
		return nil // moved before a crash; only the journal did not know
	case there:
		// A copy a killed run made before deleting the original (the
		// journaled name is tried first) is this input: finish the move.
		same, err := sameObject(ctx, src, f.Key, to, key)
		if err != nil {
			return err
		}
		if !same {
			return ErrExists
		}
		return RemoveInput(ctx, f)
	}
	if src.Bucket == to.Bucket {
		err = src.Bucket.Copy(ctx, key, f.Key, nil)
	} else {
		err = copyObject(ctx, src, f.Key, to, key)
	}
	if err != nil {
		return fmt.Errorf("copying to %s: %w", dst, objstore.Explain(err))
	}
	return RemoveInput(ctx, f)
}

func copyObject(ctx context.Context, from *objstore.Location, fromKey string, to *objstore.Location, toKey string) error {
	r, err := from.Bucket.NewReader(ctx, fromKey, nil)
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := to.Bucket.NewWriter(ctx, toKey, nil)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// WriteBeside writes name+".err" beside a moved input.
func WriteBeside(ctx context.Context, f reader.File, dir, dst string, data []byte) error {
	if !f.Remote() {
		return os.WriteFile(dst+".err", data, 0o644)
	}
	to, err := objstore.Open(ctx, dir)
	if err != nil {
		return err
	}
	key, _ := to.KeyOf(dst)
	return to.Bucket.WriteAll(ctx, key+".err", data, nil)
}

// sameObject compares two objects' bytes (by size, then content hash).
func sameObject(ctx context.Context, a *objstore.Location, ak string, b *objstore.Location, bk string) (bool, error) {
	aa, err := a.Bucket.Attributes(ctx, ak)
	if err != nil {
		return false, objstore.Explain(err)
	}
	ba, err := b.Bucket.Attributes(ctx, bk)
	if err != nil {
		return false, objstore.Explain(err)
	}
	if aa.Size != ba.Size {
		return false, nil
	}
	// The journal's content hash, of each object as stored.
	ha, err := FileHash(reader.File{Store: a, Key: ak})
	if err != nil {
		return false, err
	}
	hb, err := FileHash(reader.File{Store: b, Key: bk})
	if err != nil {
		return false, err
	}
	return ha == hb, nil
}
