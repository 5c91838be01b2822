package outdir

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/cdcetl/cdcetl/internal/setting"
)

// LockName is the lock file of an output directory.
const LockName = "_cdcetl.lock"

// Lock is what a run holds on its output directory.
//
// A whole run takes LockName exclusively: one process at a time may clean
// temporary files, read and append the journal, and write outputs there.
// A shard takes LockName shared and its own lock (_cdcetl.<i>-of-<n>.lock)
// exclusively, so the n shards of a run work side by side while a whole
// run (a watcher, a final --materialize) waits for all of them. A shard
// also holds, while it cleans up at start, the locks of the other shards
// that are not running: it may then remove what they left behind when
// killed, and nothing of a shard that runs.
type Lock struct {
	tag   string
	files []*os.File
	idle  map[string]*os.File // other shards' locks, held during clean-up
}

// LockDir takes dir's locks for shard sh, waiting (while ctx allows)
// for a run that holds them.
func LockDir(ctx context.Context, dir string, sh Shard) (*Lock, error) {
	l := &Lock{tag: sh.Tag(), idle: map[string]*os.File{}}
	how := syscall.LOCK_EX
	if l.tag != "" {
		how = syscall.LOCK_SH
	}
	f, err := FlockWait(ctx, filepath.Join(dir, LockName), how)
	if err != nil {
		return nil, err
	}
	l.files = append(l.files, f)
	if l.tag == "" {
		return l, nil
	}
	own, err := FlockWait(ctx, filepath.Join(dir, TaggedName(LockName, l.tag)), syscall.LOCK_EX)
	if err != nil {
		l.Release()
		return nil, err
	}
	l.files = append(l.files, own)
	names, err := filepath.Glob(filepath.Join(dir, "_cdcetl.*-of-*.lock"))
	if err != nil {
		l.Release()
		return nil, err
	}
	for _, p := range names {
		tag, ok := TagOfName(filepath.Base(p), LockName)
		if !ok || tag == "" || tag == l.tag {
			continue
		}
		f, held, err := tryFlock(p)
		if err != nil {
			l.Release()
			return nil, err
		}
		if f != nil {
			l.idle[tag] = f
			continue
		}
		if other, _ := parseTag(tag); held && other.Count != sh.Count {
			l.Release()
			return nil, fmt.Errorf("output directory %s: shard %s of another sharding (n=%d) is running there; run one shard count at a time (wait for it, or use %s i/%d)", dir, other, other.Count, setting.Shard, other.Count)
		}
	}
	return l, nil
}

// Tag is the shard tag of the lock's run ("" for a whole run).
func (l *Lock) Tag() string { return l.tag }

// MayClean reports whether the leftovers of shard tag ("" for whole runs)
// are this run's to remove: its own, a whole run's, or an idle shard's.
func (l *Lock) MayClean(tag string) bool {
	if l.tag == "" || tag == "" || tag == l.tag {
		return true
	}
	_, ok := l.idle[tag]
	return ok
}

// ReleaseIdle lets the other shards' locks go once the clean-up is done.
func (l *Lock) ReleaseIdle() {
	for tag, f := range l.idle {
		Unflock(f)
		delete(l.idle, tag)
	}
}

// Release lets every lock go.
func (l *Lock) Release() {
	l.ReleaseIdle()
	for i := len(l.files) - 1; i >= 0; i-- {
		Unflock(l.files[i])
	}
	l.files = nil
}

func Unflock(f *os.File) {
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	f.Close()
}

// FlockWait takes lock how (LOCK_EX or LOCK_SH) on path, polling while
// another process holds it.
func FlockWait(ctx context.Context, path string, how int) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("output directory lock: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("output directory lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// tryFlock takes path's exclusive lock if it is free: the open file, or
// nil and held=true when another process holds it.
func tryFlock(path string) (f *os.File, held bool, err error) {
	f, err = os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("output directory lock: %w", err)
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil {
		return f, false, nil
	}
	f.Close()
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, true, nil
	}
	return nil, false, fmt.Errorf("output directory lock %s: %w", path, err)
}

// tempTag is the shard tag in a temporary file's name
// (".<name>.<tag>.<random>.tmp"; "" for a whole run's
// ".<name>.<random>.tmp").
func tempTag(name string) string {
	s := strings.TrimSuffix(name, ".tmp")
	if i := strings.LastIndexByte(s, '.'); i > 0 {
		s = s[:i] // the random part
	}
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		if _, ok := parseTag(s[i+1:]); ok {
			return s[i+1:]
		}
	}
	return ""
}
