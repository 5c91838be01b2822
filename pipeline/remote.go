package pipeline

import (
	"context"
	"errors"
	"path"
	"path/filepath"
	"strings"

	"github.com/cdcetl/cdcetl/objstore"
	"github.com/cdcetl/cdcetl/reader"
)

// inputPath is an input's identity in the journal: a local file's
// absolute path, an object's scheme://bucket/key.
func inputPath(f reader.File) string {
	if f.Remote() {
		return f.Path
	}
	abs, err := filepath.Abs(f.Path)
	if err != nil {
		return f.Path
	}
	return abs
}

// inputName is the input's base name (the file.name metadata).
func inputName(f reader.File) string {
	if f.Remote() {
		return path.Base(f.Key)
	}
	return filepath.Base(f.Path)
}

// Find expands the inputs: local files and directories (reader.Walk), and
// bucket URLs (every object below the prefix, by the same rules: a path
// element starting with '.' or '_' is skipped). Arguments keep their
// order. The run's own directories are never inputs.
func Find(ctx context.Context, cfg *Config, paths []string) ([]reader.File, error) {
	var out []reader.File
	own := cfg.OwnDirs()
	for _, p := range paths {
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
		skip := ownPrefixes(loc, own)
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
		if err != nil || bu != ibu || !strings.HasPrefix(prefix, iprefix) {
			continue
		}
		under = append(under, strings.TrimPrefix(prefix, iprefix))
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

// checkRemoteInputs refuses what bucket inputs cannot do yet.
func checkRemoteInputs(cfg *Config, files []reader.File) error {
	for _, f := range files {
		if !f.Remote() {
			continue
		}
		if cfg.OnSuccess != "" && cfg.OnSuccess != "keep" || cfg.FailedDir != "" {
			return errors.New("--on-success and --failed move or delete local inputs only: keep bucket inputs where they are (a bucket lifecycle rule can expire them once the journal lists them)")
		}
		return nil
	}
	return nil
}
