package watch

import (
	"sort"
	"time"
)

// Settler decides when a file in the landing directory is complete: when
// its size and modification time have not changed for the quiet period, or
// at once when it was renamed into place. It knows nothing of fsnotify, so
// tests drive it with their own clock. It is not safe for concurrent use.
type Settler struct {
	quiet time.Duration
	files map[string]*fileState
}

type fileState struct {
	size, mtime int64
	changed     time.Time // last time size or mtime moved
	ready       bool      // renamed in: ready now
	done        bool      // handed out; wait for a new change
}

// NewSettler returns a settler with the given quiet period.
func NewSettler(quiet time.Duration) *Settler {
	return &Settler{quiet: quiet, files: map[string]*fileState{}}
}

// Observe records the current size and modification time of path.
func (s *Settler) Observe(path string, size, mtime int64, now time.Time) {
	f, ok := s.files[path]
	if !ok {
		s.files[path] = &fileState{size: size, mtime: mtime, changed: now}
		return
	}
	if f.size != size || f.mtime != mtime {
		f.size, f.mtime, f.changed, f.done = size, mtime, now, false
	}
}

// Renamed marks path as complete now: writers that rename a finished
// temporary file into place need no quiet period.
func (s *Settler) Renamed(path string, size, mtime int64, now time.Time) {
	s.Observe(path, size, mtime, now)
	f := s.files[path]
	f.ready, f.done = true, false
}

// Forget drops path (removed, or renamed away).
func (s *Settler) Forget(path string) { delete(s.files, path) }

// Ready returns, sorted, the paths that are complete at now and were not
// handed out since their last change; they are marked handed out.
func (s *Settler) Ready(now time.Time) []string {
	var out []string
	for p, f := range s.files {
		if f.done {
			continue
		}
		if f.ready || now.Sub(f.changed) >= s.quiet {
			f.done, f.ready = true, false
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// Retry makes path eligible again after its quiet period (a handler that
// found it still changing, or failed for a reason worth retrying).
func (s *Settler) Retry(path string, now time.Time) {
	if f, ok := s.files[path]; ok {
		f.done, f.changed = false, now
	}
}

// RetryAt makes path eligible again at the time at (a failure that may
// pass, tried again after a backoff).
func (s *Settler) RetryAt(path string, at time.Time) {
	if f, ok := s.files[path]; ok {
		f.done, f.changed = false, at.Add(-s.quiet)
	}
}

// Pending is the number of paths not yet handed out.
func (s *Settler) Pending() int {
	n := 0
	for _, f := range s.files {
		if !f.done {
			n++
		}
	}
	return n
}
