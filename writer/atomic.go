package writer

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
)

// tempTag, when set, goes into temporary file names
// (".<name>.<tag>.<random>.tmp"), so a run that cleans up after killed
// runs can tell which shard's they are.
var tempTag atomic.Pointer[string]

// SetTempTag names the shard this process's temporary files belong to
// ("" for none). It is process-wide: one shard per process.
func SetTempTag(tag string) { tempTag.Store(&tag) }

// tempPattern is the os.CreateTemp pattern of path's temporary file.
func tempPattern(path string) string {
	if t := tempTag.Load(); t != nil && *t != "" {
		return "." + filepath.Base(path) + "." + *t + ".*.tmp"
	}
	return "." + filepath.Base(path) + ".*.tmp"
}

// atomicFile is an output written under a temporary name in its final
// directory and renamed into place by commit: a crash at any moment leaves
// either no file or the complete one (plus, at worst, a ".tmp" leftover that
// the next run of the same output replaces).
type atomicFile struct {
	path string
	f    *os.File
	buf  *bufio.Writer
	done bool
}

// createAtomic starts path's temporary file, writes buffered by bufSize
// bytes (Parquet writes whole column chunks: a small buffer for the
// footer; JSON lines: a large one).
func createAtomic(path string, bufSize int) (*atomicFile, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cannot write %s: %w", path, cause(err))
	}
	f, err := os.CreateTemp(dir, tempPattern(path))
	if err != nil {
		return nil, fmt.Errorf("cannot write %s: %w", path, cause(err))
	}
	return &atomicFile{path: path, f: f, buf: bufio.NewWriterSize(f, bufSize)}, nil
}

// commit flushes, syncs and closes the file, then renames it into place
// and syncs the directory so the rename itself is durable.
func (a *atomicFile) commit() (err error) {
	if a.done {
		return nil
	}
	a.done = true
	defer func() {
		if err != nil {
			os.Remove(a.f.Name())
		}
	}()
	if err := a.buf.Flush(); err != nil {
		a.f.Close()
		return fmt.Errorf("writing %s: %w", a.path, cause(err))
	}
	// CreateTemp makes the file 0600; outputs are ordinary files.
	if err := a.f.Chmod(0o644); err != nil {
		a.f.Close()
		return fmt.Errorf("writing %s: %w", a.path, cause(err))
	}
	if err := a.f.Sync(); err != nil {
		a.f.Close()
		return fmt.Errorf("writing %s: %w", a.path, cause(err))
	}
	// Close, then rename: some systems refuse to rename an open file.
	if err := a.f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", a.path, cause(err))
	}
	if err := os.Rename(a.f.Name(), a.path); err != nil {
		return fmt.Errorf("writing %s: %w", a.path, cause(err))
	}
	if d, err := os.Open(filepath.Dir(a.path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// abort closes and removes the temporary file.
func (a *atomicFile) abort() error {
	if a.done {
		return nil
	}
	a.done = true
	a.f.Close()
	if err := os.Remove(a.f.Name()); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// cause is an os error without its operation and path (the caller names
// the output itself, not its temporary name). The *fs.PathError stays
// reachable for errors.As through the returned error's Unwrap.
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &bareErr{pe}
	}
	return err
}

// bareErr prints only the reason of a path error.
type bareErr struct{ pe *fs.PathError }

func (e *bareErr) Error() string { return e.pe.Err.Error() }
func (e *bareErr) Unwrap() error { return e.pe }

// WriteAtomic writes data to path as every output is written: a temporary
// file in the same directory, synced, then renamed into place.
func WriteAtomic(path string, data []byte) error {
	f, err := createAtomic(path, 1<<16)
	if err != nil {
		return err
	}
	if _, err := f.buf.Write(data); err != nil {
		f.abort()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.commit()
}
