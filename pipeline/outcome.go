package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/internal/inuse"
	"github.com/cdcetl/cdcetl/internal/outdir"
	"github.com/cdcetl/cdcetl/internal/setting"
	"github.com/cdcetl/cdcetl/reader"
	"github.com/cdcetl/cdcetl/writer"
)

// What happens to a file once its chunks are through: dead letters, the
// journal, keep-going, and the input's own fate (--on-success, --failed).

// keepDead reports whether dead letters have somewhere to go.
func (r *run) keepDead() bool { return r.cfg.DeadLetterDir != "" }

// addDead writes dead letters to the input's own file, which appears with
// its outputs.
func (r *run) addDead(fr *fileRun, entries []writer.DeadLetter) error {
	if fr.dead == nil {
		var err error
		if fr.dead, err = writer.NewDeadLetters(r.deadLetterPath(fr)); err != nil {
			return err
		}
	}
	return fr.dead.Add(entries)
}

func (r *run) deadLetterPath(fr *fileRun) string {
	_, dead, _ := r.cfg.outputNames(fr.stem)
	return dead
}

// finish completes a file: on success its outputs and dead letters appear,
// then its journal entry, then the OnSuccess action; on failure nothing
// appears, and with KeepGoing the failure is journaled and the run goes on.
func (r *run) finish(fr *fileRun, st Stats, err error) error {
	if fr.strict && err != nil && isInputError(err, fr.file) {
		// The optimistic attempt stopped: nothing of it stays, and the
		// feeder reads the input again for its schemas.
		r.abortOutputs(fr)
		fr.verdict <- err
		return nil
	}
	if err != nil {
		err = changedWhileRead(fr.file, err)
	}
	settled, err := r.sink.finishing(fr, st, err)
	defer settled()
	committed, err := r.closeOutputs(fr, &st, err)
	if err != nil {
		r.abortOutputs(fr)
	}
	defer r.giveVerdict(fr)
	fs := FileStats{idx: fr.idx, Path: fr.file.Path, Outputs: fr.outputs, Stats: st}
	for _, tr := range fr.touched {
		fs.Tables = append(fs.Tables, *fr.tableStats[tr.id])
	}
	keepGoing := err != nil && r.cfg.KeepGoing && isInputError(err, fr.file)
	if err == nil {
		err = r.succeeded(fr, &st, &fs, &committed)
	}
	if err != nil && committed {
		// Not journaled (or journaled with its disposition unfinished): the
		// pending file stays, so the next start sorts it out.
		r.mu.Lock()
		r.unsettled = true
		r.mu.Unlock()
	}
	if keepGoing {
		if derr := r.failedInput(fr, st, &fs, err); derr != nil {
			return derr
		}
	} else if err == nil {
		fs.Status = outdir.StatusOK
	}
	r.mu.Lock()
	r.total.add(fs.Stats)
	r.total.PerFile = append(r.total.PerFile, fs)
	if keepGoing {
		r.failed = append(r.failed, err)
	}
	r.mu.Unlock()
	if keepGoing {
		return nil
	}
	return err
}

// closeOutputs puts an input's outputs in place, unless it failed (err):
// its writers close, then the sink settles it and its dead letters
// appear. committed: an output is in place, so from here an error leaves
// it unjournaled.
func (r *run) closeOutputs(fr *fileRun, st *Stats, err error) (committed bool, _ error) {
	cfg := r.cfg
	if err == nil && fr.w != nil {
		err = fr.w.Close()
		committed = err == nil
	}
	if err == nil && fr.writers != nil {
		// Routed: the tables' schema files first (the outputs' schemas are
		// never lost, and mark the directories outdir.RecoverPending cleans),
		// then every table's output, in the order they were made.
		err = r.router.persist(cfg, fr.touched)
		for _, tr := range fr.touched {
			if err != nil {
				break
			}
			if err = fr.writers[tr.id].Close(); err == nil {
				committed = true
			}
		}
	}
	if err == nil {
		err = r.sink.settle(r.ctx, fr, st, committed)
	}
	if err == nil && fr.dead != nil {
		err = fr.dead.Close()
		out := r.deadLetterPath(fr)
		if rel, rerr := filepath.Rel(cfg.OutDir, out); cfg.OutDir != "" && rerr == nil && within(cfg.OutDir, out) {
			out = rel
		}
		fr.outputs = append(fr.outputs, out)
	}
	if err == nil && fr.dead == nil && cfg.DeadLetterDir != "" {
		// A rerun without dead letters must not leave the last run's.
		os.Remove(r.deadLetterPath(fr))
	}
	if err == nil {
		st.Warnings = r.columnWarnings(fr, *st)
	}
	return committed, err
}

// succeeded journals a converted input, disposes of it (OnSuccess) and
// removes what its earlier conversion made that this one did not.
func (r *run) succeeded(fr *fileRun, st *Stats, fs *FileStats, committed *bool) error {
	cfg := r.cfg
	e := outdir.Entry{Path: fr.key.Path, Gen: fr.key.Gen, Stem: fr.stem, Size: fr.readSize, ModTime: fr.readMod, Hash: fr.sha,
		Outputs: fr.outputs, Status: outdir.StatusOK, Fingerprint: r.fingerprint, Stats: entryStats(*st), Time: time.Now().UTC()}
	var prev []string
	if r.journal != nil {
		if pe, ok := r.journal.Entry(fr.key); ok && pe.Status == outdir.StatusOK {
			prev = pe.Outputs
		}
		if d, ok := r.journal.SameContent(e.Size, e.Hash, fr.key); ok && !r.sink.replaces() { // a table holds one input's bytes once
			st.Warnings = append(st.Warnings, fmt.Sprintf("%s holds the same bytes as %s, converted before: their rows are in the outputs twice (%s skips such files)", fr.file.Path, d.Path, setting.DedupInputs))
		}
	}
	var err error
	fs.Disposed, fs.MovedTo, err = r.dispose(e, fr.file, cfg.OnSuccess)
	var de *dispositionError
	if reason, ok := deferred(err); ok {
		fs.Deferred, err = reason, nil
		st.Warnings = append(st.Warnings, fmt.Sprintf("%s: converted, but not %s: %s", fr.file.Path, actionWord(cfg.OnSuccess), reason))
	} else if errors.As(err, &de) {
		r.notDisposed(fs, fr.file.Path, de)
		err = nil
	}
	if err == nil && len(prev) > 0 && !r.sink.replaces() {
		// A reconverted input's outputs that this conversion did not
		// make again (tables or partitions it no longer has rows of)
		// go; a kill before they are gone leaves the pending file,
		// and the next start removes them (outdir.RecoverPending).
		if faultBeforeStale != nil {
			if err = faultBeforeStale(); err != nil {
				*committed = true
			}
		}
		if err == nil {
			err = r.removeStale(prev, e.Outputs)
		}
	}
	fs.Stats.Warnings = st.Warnings
	return err
}

// failedInput journals an input that failed (KeepGoing) and moves it to
// FailedDir; its error, cause, is the run's ErrPartial's.
func (r *run) failedInput(fr *fileRun, st Stats, fs *FileStats, cause error) error {
	cfg := r.cfg
	st.Failed = 1
	fs.Stats = st
	fs.Error, fs.Outputs = cause.Error(), nil
	fs.Status = outdir.StatusFailed
	if r.journal == nil && cfg.FailedDir == "" {
		return nil
	}
	e := outdir.Entry{Path: fr.key.Path, Gen: fr.key.Gen, Stem: fr.stem, Size: fr.file.Size, ModTime: fr.file.ModTime, Status: outdir.StatusFailed,
		Error: cause.Error(), Fingerprint: r.fingerprint, Stats: entryStats(st), Time: time.Now().UTC()}
	if r.journal != nil {
		// The outputs of an earlier conversion of this input stay,
		// and stay its own.
		if prev, ok := r.journal.Entry(fr.key); ok && prev.Status == outdir.StatusOK {
			e.Outputs = prev.Outputs
		}
	}
	action := "keep"
	if cfg.FailedDir != "" {
		action = "move=" + cfg.FailedDir
	}
	var err error
	fs.Disposed, fs.MovedTo, err = r.disposeFailed(e, fr.file, action, cause)
	var de *dispositionError
	if reason, ok := deferred(err); ok {
		fs.Deferred, err = reason, nil
		st.Warnings = append(st.Warnings, fmt.Sprintf("%s: failed, and not moved to %s: %s", fr.file.Path, cfg.FailedDir, reason))
		fs.Stats = st
	} else if errors.As(err, &de) {
		r.notDisposed(fs, fr.file.Path, de)
		err = nil
	}
	return err
}

// changedWhileRead says so when a local input that failed is no longer
// the file that was listed: a file truncated or rewritten while it was
// read fails on a line cut short, which is the change's doing, not a bad
// message's.
func changedWhileRead(f reader.File, err error) error {
	if f.Remote() || errors.Is(err, context.Canceled) {
		return err
	}
	fi, serr := os.Stat(f.Path)
	if serr != nil {
		return fmt.Errorf("%w (%s is gone: it was removed or moved while it was being read)", err, f.Path)
	}
	if fi.Size() == f.Size && fi.ModTime().UnixNano() == f.ModTime {
		return err
	}
	return fmt.Errorf("%w (%s changed while it was being read: %d bytes when listed, %d now; the error may be the change's doing: run again once the file is complete)", err, f.Path, f.Size, fi.Size())
}

// explainDiskFull says so when err comes from a full disk under dir:
// SQLite reports one as "disk I/O error" (extending its shared-memory
// file) or "database or disk is full", which does not say what to do.
func explainDiskFull(err error, dir string) error {
	if err == nil || dir == "" {
		return err
	}
	m := err.Error()
	if !errors.Is(err, syscall.ENOSPC) && !strings.Contains(m, "disk I/O error") && !strings.Contains(m, "database or disk is full") {
		return err
	}
	var fs syscall.Statfs_t
	if syscall.Statfs(dir, &fs) != nil {
		return err
	}
	free := int64(fs.Bavail) * int64(fs.Bsize)
	if free >= 1<<20 && !errors.Is(err, syscall.ENOSPC) {
		return err // a disk I/O error with room left: not this
	}
	return fmt.Errorf("%w (the disk holding %s is full: %d bytes free; free some space and run again: outputs and journal are as they were before the input that failed)", err, dir, free)
}

// runInput is an input a run converts, as DedupInputs compares it with
// the next ones of its size (hashed only when one comes).
type runInput struct {
	f    reader.File
	hash string
}

// dedupInput decides, for DedupInputs, whether the input f (key k, the
// idx-th given) holds exactly the bytes of an input converted into the
// output directory or of one this run converts before it (seen, by size).
// A duplicate is journaled as one, with no outputs of its own, disposed
// of as --on-success says, and reported skipped with a warning. Only
// inputs of a size another has are hashed.
func (r *run) dedupInput(f reader.File, k outdir.InputKey, idx int, seen map[int64][]*runInput) (FileStats, bool, error) {
	same := seen[f.Size]
	in := &runInput{f: f}
	seen[f.Size] = append(same, in)
	if !r.journal.HasSize(f.Size) && len(same) == 0 {
		return FileStats{}, false, nil
	}
	hash, err := outdir.FileHash(f)
	if err != nil {
		return FileStats{}, false, fmt.Errorf("%s: %w", f.Path, err)
	}
	in.hash = hash
	var of string
	if e, ok := r.journal.SameContent(f.Size, hash, k); ok {
		of = e.Path
	}
	for _, o := range same {
		if of != "" {
			break
		}
		if o.hash == "" {
			if o.hash, err = outdir.FileHash(o.f); err != nil {
				return FileStats{}, false, fmt.Errorf("%s: %w", o.f.Path, err)
			}
		}
		if o.hash == hash {
			of = o.f.Path
		}
	}
	if of == "" {
		return FileStats{}, false, nil
	}
	e := outdir.Entry{Path: k.Path, Gen: k.Gen, Size: f.Size, ModTime: f.ModTime, Hash: hash, Status: outdir.StatusOK,
		Fingerprint: r.fingerprint, DuplicateOf: of, Time: time.Now().UTC()}
	fs := FileStats{idx: idx, Path: f.Path, Status: "skipped"}
	fs.Warnings = []string{fmt.Sprintf("%s: the same bytes as %s: skipped (%s)", f.Path, of, setting.DedupInputs)}
	fs.Disposed, fs.MovedTo, err = r.dispose(e, f, r.cfg.OnSuccess)
	var de *dispositionError
	if reason, ok := deferred(err); ok {
		fs.Deferred, err = reason, nil
	} else if errors.As(err, &de) {
		r.notDisposed(&fs, f.Path, de)
		err = nil
	}
	r.total.Warnings = append(r.total.Warnings, fs.Warnings...)
	return fs, true, err
}

// faultBeforeStale, for tests, fails a run between an input's journal
// entry and the removal of its stale outputs, as a kill there would.
var faultBeforeStale func() error

// columnWarnings names the physical columns that were NULL in every row of
// a file whose first message has no such key: a schema that does not match
// the messages (ID vs id), not a column that happens to be empty.
func (r *run) columnWarnings(fr *fileRun, st Stats) []string {
	if fr.nonNull == nil || fr.first == nil {
		return nil
	}
	var keys []string
	var out []string
	for c, col := range r.cfg.Schema.Columns {
		if col.IsMetadata() || fr.nonNull[c] {
			continue
		}
		if keys == nil {
			keys = decode.RowKeys(r.cfg.Format, r.cfg.Options, fr.first)
			if keys == nil {
				return nil
			}
		}
		if slices.Contains(keys, col.Name) {
			continue
		}
		w := fmt.Sprintf("%s: column %s is NULL in all %d rows: the messages have no key %q", fr.file.Path, col.Name, st.TotalRows(), col.Name)
		if near := decode.Closest(col.Name, keys); near != "" {
			w += fmt.Sprintf(" (they have %q; names are case-sensitive: %s insensitive matches them)", near, setting.ColumnCase)
		}
		out = append(out, w)
	}
	return out
}

// abortOutputs removes what an input's attempt wrote.
func (r *run) abortOutputs(fr *fileRun) {
	if fr.w != nil {
		fr.w.Abort()
	}
	for _, w := range fr.writers {
		w.Abort()
	}
	if fr.dead != nil {
		fr.dead.Abort()
		fr.dead = nil
	}
}

// isInputError reports whether err is about the input itself (a message
// that cannot be decoded, an unreadable or corrupt file) rather than the
// system (a full disk, cancellation).
func isInputError(err error, f reader.File) bool {
	var de *decode.Error
	var le *reader.LineError
	var pe *os.PathError
	if errors.Is(err, context.Canceled) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.EROFS) {
		return false // the machine's, not the input's: it is tried again
	}
	var rpe *reader.PathError // about the input by construction (its format cannot be told)
	if errors.As(err, &de) || errors.As(err, &le) || errors.As(err, &rpe) {
		return true
	}
	// A file error is the input's when it is about the input (it cannot be
	// opened or read), not about an output.
	return errors.As(err, &pe) && (pe.Path == f.Path || pe.Path == outdir.InputPath(f))
}

// dispose journals a converted input's entry e with the disposition that
// action ("keep", "delete", "move=DIR") decides, then carries it out, and
// says what it did ("moved" to where, "deleted", or ""). The entry is
// synced first, so a crash in between leaves a file the next run
// recognises (same content) and disposes of again.
func (r *run) dispose(e outdir.Entry, f reader.File, action string) (how, to string, err error) {
	switch {
	case action == "" || action == "keep":
		return "", "", r.record(e)
	case action == "delete":
		release, err := r.holdInput(e, f)
		if err != nil {
			return "", "", r.recordDeferred(e, err)
		}
		defer release()
		e.Disposed, e.MovedTo = outdir.DisposedDeleted, ""
		if err := r.record(e); err != nil {
			return "", "", err
		}
		if err := outdir.RemoveInput(r.ctx, f); err != nil {
			return "", "", &dispositionError{fmt.Errorf("deleting %s: %w", f.Path, err)}
		}
		return outdir.DisposedDeleted, "", nil
	case strings.HasPrefix(action, "move="):
		to, err := r.move(e, f, strings.TrimPrefix(action, "move="), nil)
		if err != nil {
			return "", "", r.recordDeferred(e, err)
		}
		return outdir.DisposedMoved, to, nil
	}
	return "", "", fmt.Errorf("on-success %q: want keep, delete or move=DIR", action)
}

// disposeFailed journals a failed input and, with a failed directory,
// moves it there with "<name>.err" holding the error.
func (r *run) disposeFailed(e outdir.Entry, f reader.File, action string, cause error) (how, to string, err error) {
	if action == "keep" {
		return "", "", r.record(e)
	}
	if to, err = r.move(e, f, strings.TrimPrefix(action, "move="), cause); err != nil {
		return "", "", r.recordDeferred(e, err)
	}
	return outdir.DisposedMoved, to, nil
}

// dispositionError is a move or delete of an input that failed: the input
// stays where it is, converted (its entry names the pending move), and
// the run goes on with the others.
type dispositionError struct{ err error }

func (e *dispositionError) Error() string { return e.err.Error() }
func (e *dispositionError) Unwrap() error { return e.err }

// notDisposed notes a failed disposition of input path, for the run's
// end, and what the user can do about it.
func (r *run) notDisposed(fs *FileStats, path string, err error) {
	fs.Deferred = err.Error()
	w := fmt.Errorf("%s: converted, but %w. It stays where it is, journaled as converted with the move or delete pending: fix the cause and run again (pending moves are retried first), or run with %s keep to leave it there", path, err, setting.OnSuccess)
	r.mu.Lock()
	r.undisposed = append(r.undisposed, w)
	r.mu.Unlock()
}

// deferredError says why an input is not moved or deleted now: it is
// still being written, or is no longer what was read.
type deferredError struct{ reason string }

func (e *deferredError) Error() string { return e.reason }

// deferred reports whether err is a deferred disposition, and its reason.
func deferred(err error) (string, bool) {
	var de *deferredError
	if errors.As(err, &de) {
		return de.reason, true
	}
	return "", false
}

// actionWord names what --on-success does, for messages.
func actionWord(action string) string {
	if action == "delete" {
		return "deleted"
	}
	return "moved"
}

// recordDeferred journals e without a disposition when err defers it (the
// input stays, converted, until a later run or the watcher disposes of
// it), and returns err.
func (r *run) recordDeferred(e outdir.Entry, err error) error {
	if _, ok := deferred(err); ok {
		e.Disposed, e.MovedTo = "", ""
		if rerr := r.record(e); rerr != nil {
			return rerr
		}
	}
	return err
}

// holdInput checks, before input f is moved or deleted, that it is still
// exactly what e says was read, and keeps new writers out of it until
// release (where the system can: see package inuse). A file another
// process still has open for writing, or one that changed since it was
// read, gives a deferredError: moving it would take away lines nobody
// converted (a writer holding the file open writes on into the moved
// file).
func (r *run) holdInput(e outdir.Entry, f reader.File) (release func(), err error) {
	release = func() {}
	if f.Remote() {
		size, mod, err := outdir.ObjectState(r.ctx, f)
		if err != nil {
			return release, err
		}
		return release, changedSince(e, f, size, mod)
	}
	release, _, err = inuse.Hold(f.Path)
	if errors.Is(err, inuse.ErrBusy) {
		return release, &deferredError{inuse.ErrBusy.Error()}
	}
	if err != nil {
		return release, err
	}
	fi, err := os.Stat(f.Path)
	if err != nil {
		release()
		return func() {}, err
	}
	if err := changedSince(e, f, fi.Size(), fi.ModTime().UnixNano()); err != nil {
		release()
		return func() {}, err
	}
	return release, nil
}

// changedSince returns a deferredError when the input now of size and
// modification time mod is not the one e describes (by size, then time,
// then content).
func changedSince(e outdir.Entry, f reader.File, size, mod int64) error {
	if size != e.Size {
		return &deferredError{fmt.Sprintf("it changed after it was read (%d bytes read, %d now)", e.Size, size)}
	}
	if mod == e.ModTime || e.Hash == "" {
		return nil
	}
	same, err := outdir.SameInput(outdir.Entry{Size: e.Size, Hash: e.Hash}, reader.File{Path: f.Path, Store: f.Store, Key: f.Key, Size: size, ModTime: mod})
	if err != nil {
		return err
	}
	if !same {
		return &deferredError{"it changed after it was read (same size, other content)"}
	}
	return nil
}

// record journals e when there is a journal.
func (r *run) record(e outdir.Entry) error {
	if r.journal == nil {
		return nil
	}
	// Outputs in place (a bucket's) before the entry that lists them.
	if e.Status == outdir.StatusOK {
		if err := r.out.Publish(r.ctx, e); err != nil {
			return err
		}
	}
	if err := r.journal.Record(e); err != nil {
		return err
	}
	// An input is moved or deleted only once the journal where it is
	// read (a bucket's) says so.
	return r.out.Journaled(r.ctx, e.Disposed != "")
}

// move moves input f under dir (keeping its relative path) to a name no
// file has: dir/rel, or dir/rel~2, ... The chosen name is journaled with
// e before the move; with cause, "<name>.err" is written beside it. It
// returns where the file went.
func (r *run) move(e outdir.Entry, f reader.File, dir string, cause error) (string, error) {
	release, err := r.holdInput(e, f)
	if err != nil {
		return "", err
	}
	defer release()
	prefer := e.MovedTo // a move journaled by a run that did not finish it
	for {
		dst := prefer
		prefer = ""
		if dst == "" {
			var err error
			if dst, err = outdir.FreeInputName(r.ctx, dir, f); err != nil {
				// Journaled as it is, so a later run knows it converted and
				// tries the move again.
				e.Disposed, e.MovedTo = "", ""
				if rerr := r.record(e); rerr != nil {
					return "", rerr
				}
				return "", &dispositionError{fmt.Errorf("moving %s to %s: %w", f.Path, dir, err)}
			}
		}
		e.Disposed, e.MovedTo = outdir.DisposedMoved, dst
		if err := r.record(e); err != nil {
			return "", err
		}
		err := outdir.MoveInput(r.ctx, f, dir, dst)
		if errors.Is(err, outdir.ErrExists) {
			continue // taken meanwhile: journal another name
		}
		if err != nil {
			return "", &dispositionError{fmt.Errorf("moving %s to %s: %w", f.Path, dst, err)}
		}
		if cause != nil {
			if err := outdir.WriteBeside(r.ctx, f, dir, dst, []byte(cause.Error()+"\n")); err != nil {
				return "", fmt.Errorf("writing %s.err: %w", dst, err)
			}
		}
		return dst, nil
	}
}

// disposeConverted applies --on-success to an input the journal says is
// converted (entry e), and says what it did. The very file of an entry
// whose move or delete is journaled (same size and time) is one a killed
// run did not finish with: that move or delete is completed. Anything else
// (a file converted with --on-success keep, now run with move or delete; a
// copy of a converted file delivered again) gets the current action.
func (r *run) disposeConverted(e outdir.Entry, f reader.File) (how, to string, err error) {
	if a := r.cfg.OnSuccess; e.Disposed != "" && (a == "" || a == "keep") {
		// A move or delete left pending (it failed, or a run was killed
		// before it) and the user now says keep: the input stays.
		e.Disposed, e.MovedTo = "", ""
		return "", "", r.record(e)
	}
	if e.Disposed != "" && e.Size == f.Size && e.ModTime == f.ModTime {
		if e.Disposed == outdir.DisposedDeleted {
			release, err := r.holdInput(e, f)
			if err != nil {
				return "", "", err
			}
			defer release()
			if err := outdir.RemoveInput(r.ctx, f); err != nil {
				return "", "", &dispositionError{fmt.Errorf("deleting %s: %w", f.Path, err)}
			}
			return outdir.DisposedDeleted, "", nil
		}
		dir := filepath.Dir(e.MovedTo)
		if f.Remote() {
			// The journal names the object without the URL's settings: the
			// current destination has them (without one, the input stays).
			dir, _ = strings.CutPrefix(r.cfg.OnSuccess, "move=")
		}
		if e.MovedTo != "" && dir != "" {
			to, err := r.move(e, f, dir, nil)
			if err != nil {
				return "", "", err
			}
			return outdir.DisposedMoved, to, nil
		}
	}
	if a := r.cfg.OnSuccess; a == "" || a == "keep" {
		return "", "", nil // nothing to do, and nothing new to journal
	}
	e.MovedTo = ""
	return r.dispose(e, f, r.cfg.OnSuccess)
}

// deadLetter describes a dropped message or nulled value at pos.
func deadLetter(err error, pos reader.Pos, kind string, raw []byte) writer.DeadLetter {
	e := decode.Locate(err, pos.File, pos.Line, pos.Offset)
	reason := e.Err.Error()
	if e.Path != "" {
		reason = e.Path + ": " + reason
	}
	return writer.NewDeadLetter(pos.File, pos.Line, pos.Offset, e.Column, kind, reason, raw)
}

// giveVerdict tells the feeder that an optimistic attempt stands (or
// fails as it is): it is not read again. An input waiting for its commit
// group gives it before waiting, for the group waits for the inputs fed
// after it.
func (r *run) giveVerdict(fr *fileRun) {
	if fr.verdict != nil && !fr.verdictGiven {
		fr.verdictGiven = true
		fr.verdict <- nil
	}
}

// entryStats encodes an input's counts for its journal entry.
func entryStats(st Stats) json.RawMessage {
	b, _ := json.Marshal(st)
	return b
}

// truncatesOf are the truncates an input's journal entry records.
func truncatesOf(e outdir.Entry) []Truncate {
	var st struct {
		Truncates []Truncate `json:"truncates"`
	}
	json.Unmarshal(e.Stats, &st) // entries without stats have none
	return st.Truncates
}

// removeStale removes the outputs an input's previous conversion had and
// this one does not: a changed input whose rows moved to other partitions,
// or (without a schema) to other tables. Dead letters are the caller's.
func (r *run) removeStale(prev, now []string) error {
	var gone []string
	for _, o := range prev {
		if filepath.IsAbs(o) || slices.Contains(now, o) || !outdir.IsOutput(o) {
			continue
		}
		if err := os.Remove(filepath.Join(r.cfg.OutDir, o)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("removing %s, an output of the input's earlier conversion: %w", o, err)
		}
		gone = append(gone, o)
	}
	if len(gone) > 0 {
		return r.out.Removed(r.ctx, gone)
	}
	return nil
}
