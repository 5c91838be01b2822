// Package watch hands each file that lands in a directory to a handler,
// once the file is complete. It is a leaf: it knows nothing of CDC or of the
// pipeline; cmd wires pipeline.RunFiles in as the handler.
//
// fsnotify has no portable close-write event, so a file is complete when it
// is renamed into place, or when its size and modification time have not
// changed for the quiet period ([Settler]). Files present at start are
// handled too (fsnotify only reports what happens later), and after an
// event-queue overflow the directory is scanned again.
package watch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/cdcetl/cdcetl/internal/inuse"
)

// Options configure a watch.
type Options struct {
	// Settle is the quiet period after which an unchanged file is complete
	// (default 5s).
	Settle time.Duration
	// Log receives what the watcher sees and does (default: discard).
	Log *slog.Logger
	// Exclude lists directories below dir that are never watched: the
	// outputs, dead letters and failed or done inputs of the handler, which
	// must not come back as inputs.
	Exclude []string
	// WaitClosed holds back a settled file that another process still has
	// open for writing (where the system can tell: package inuse) until it
	// is closed: a handler that moves or deletes its files must not take
	// one a writer will go on writing to after a pause.
	WaitClosed bool
}

// ErrNotDone, wrapped in a handler's error, says the file was not
// finished with (still being written, or changed while it was handled):
// it is handed out again after another quiet period, changed or not.
var ErrNotDone = errors.New("not done with yet")

// ErrTemporary, wrapped in a handler's error, says the file failed for a
// reason that is not the file's (a full disk, a catalog that did not
// answer): it is handed out again after a backoff that doubles from the
// quiet period up to maxRetryDelay, changed or not.
var ErrTemporary = errors.New("failed for now")

// maxRetryDelay caps the backoff of a file that keeps failing for a
// temporary reason.
const maxRetryDelay = 5 * time.Minute

// Ignored reports whether a name is a temporary or hidden file that is
// never handed out: ".*", "_*", "*.tmp", "*.part".
func Ignored(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
		strings.HasSuffix(name, ".tmp") || strings.HasSuffix(name, ".part")
}

// Handler converts one complete file. Returning an error does not stop the
// watch: the error is logged and the file is not retried until it changes.
type Handler func(ctx context.Context, path string) error

// Watch watches dir (and its subdirectories) until ctx is done, calling
// handle for each complete file, one at a time, in name order when several
// are ready. It returns nil when ctx is done, or an error when the
// directory cannot be watched.
func Watch(ctx context.Context, dir string, opts Options, handle Handler) error {
	if opts.Settle <= 0 {
		opts.Settle = 5 * time.Second
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watching %s: %w", dir, err)
	}
	defer w.Close()
	s := NewSettler(opts.Settle)
	excluded := map[string]bool{}
	for _, d := range opts.Exclude {
		if abs, err := filepath.Abs(d); err == nil {
			excluded[abs] = true
		}
	}
	// skip reports whether p is, or lies in, an excluded directory.
	skip := func(p string) bool {
		if len(excluded) == 0 {
			return false
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return false
		}
		for d := abs; ; d = filepath.Dir(d) {
			if excluded[d] {
				return true
			}
			if filepath.Dir(d) == d {
				return false
			}
		}
	}

	// scan adds dir and its subdirectories to the watcher and observes
	// every file already there.
	scan := func(root string) error {
		return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if p != root && (Ignored(d.Name()) || skip(p)) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				return w.Add(p)
			}
			if info, err := d.Info(); err == nil && info.Mode().IsRegular() {
				s.Observe(p, info.Size(), info.ModTime().UnixNano(), time.Now())
			}
			return nil
		})
	}
	if err := scan(dir); err != nil {
		return fmt.Errorf("watching %s: %w", dir, err)
	}
	log.Info("watching", "dir", dir, "settle", opts.Settle.String(), "present", s.Pending())

	tick := time.NewTicker(max(opts.Settle/5, 20*time.Millisecond))
	defer tick.Stop()
	// A writer that renames a finished temporary file into place makes
	// inotify report the temporary name's Rename and then, as the very next
	// event, the final name's Create: that pair means "complete now". Only
	// a temporary name (one Ignored, in the same directory) pairs: a file
	// the handler moved away must not make the next new file complete.
	renamedAway := ""
	waiting := map[string]bool{} // files reported as still open for writing
	failures := map[string]int{} // temporary failures in a row, by file
	for {
		select {
		case <-ctx.Done():
			log.Info("stopping", "reason", context.Cause(ctx).Error())
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			name := filepath.Base(ev.Name)
			pairedRename := renamedAway != "" && filepath.Dir(renamedAway) == filepath.Dir(ev.Name) && renamedAway != ev.Name
			renamedAway = ""
			switch {
			case skip(ev.Name):
			case ev.Has(fsnotify.Rename) || ev.Has(fsnotify.Remove):
				if ev.Has(fsnotify.Rename) && Ignored(name) {
					renamedAway = ev.Name
				}
				s.Forget(ev.Name)
			case Ignored(name):
			case ev.Has(fsnotify.Create) || ev.Has(fsnotify.Write) || ev.Has(fsnotify.Chmod):
				info, err := os.Stat(ev.Name)
				if err != nil {
					continue
				}
				if info.IsDir() {
					if ev.Has(fsnotify.Create) {
						if err := scan(ev.Name); err != nil {
							log.Warn("cannot watch new directory", "dir", ev.Name, "error", err)
						}
					}
					continue
				}
				if ev.Has(fsnotify.Create) && pairedRename {
					s.Renamed(ev.Name, info.Size(), info.ModTime().UnixNano(), time.Now())
				} else {
					s.Observe(ev.Name, info.Size(), info.ModTime().UnixNano(), time.Now())
				}
			}
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				log.Warn("event queue overflowed; scanning again")
				if err := scan(dir); err != nil {
					log.Error("rescan failed", "error", err)
				}
				continue
			}
			log.Warn("watcher error", "error", err)
		case <-tick.C:
			for _, p := range s.Ready(time.Now()) {
				if ctx.Err() != nil {
					return nil
				}
				// Confirm on disk: a file may have vanished or grown since.
				info, err := os.Stat(p)
				if err != nil {
					s.Forget(p)
					continue
				}
				s.Observe(p, info.Size(), info.ModTime().UnixNano(), time.Now())
				if opts.WaitClosed {
					if busy, _ := inuse.Busy(p); busy {
						if !waiting[p] {
							waiting[p] = true
							log.Info("waiting: still open for writing by another process", "path", p)
						}
						s.Retry(p, time.Now())
						continue
					}
					delete(waiting, p)
				}
				start := time.Now()
				if err := handle(ctx, p); err != nil {
					if ctx.Err() != nil {
						return nil // interrupted: the handler rolled back
					}
					if errors.Is(err, ErrNotDone) {
						log.Info("not done with yet: handled again after the quiet period", "path", p, "reason", err.Error())
						s.Retry(p, time.Now())
						continue
					}
					if errors.Is(err, ErrTemporary) {
						failures[p]++
						delay := min(opts.Settle<<min(failures[p]-1, 20), maxRetryDelay)
						log.Error("file failed; trying again later", "path", p, "error", err.Error(), "retry_in", delay.String(), "failures", failures[p])
						s.RetryAt(p, time.Now().Add(delay))
						continue
					}
					delete(failures, p)
					log.Error("file failed", "path", p, "error", err.Error(), "duration", time.Since(start).String())
				} else {
					delete(failures, p)
					log.Debug("file handled", "path", p, "duration", time.Since(start).String())
				}
				if _, err := os.Stat(p); err != nil {
					s.Forget(p) // deleted or moved by the handler
				}
			}
		}
	}
}
