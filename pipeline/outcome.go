package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cdcetl/cdcetl/decode"
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
		if fr.dead, err = writer.NewDeadLetters(r.deadLetterPath(fr.file)); err != nil {
			return err
		}
	}
	return fr.dead.Add(entries)
}

func (r *run) deadLetterPath(f reader.File) string {
	return filepath.Join(r.cfg.DeadLetterDir, f.Rel+".jsonl")
}

// finish completes a file: on success its outputs and dead letters appear,
// then its journal entry, then the OnSuccess action; on failure nothing
// appears, and with KeepGoing the failure is journaled and the run goes on.
func (r *run) finish(fr *fileRun, st Stats, err error) error {
	cfg := r.cfg
	if fr.stream != nil {
		close(fr.stream)
	}
	if err == nil && fr.w != nil {
		err = fr.w.Close()
	}
	if err == nil && fr.dead != nil {
		err = fr.dead.Close()
		out := r.deadLetterPath(fr.file)
		if rel, rerr := filepath.Rel(cfg.OutDir, out); cfg.OutDir != "" && rerr == nil && !strings.HasPrefix(rel, "..") {
			out = rel
		}
		fr.outputs = append(fr.outputs, out)
	}
	if err == nil && fr.dead == nil && cfg.DeadLetterDir != "" {
		// A rerun without dead letters must not leave the last run's.
		os.Remove(r.deadLetterPath(fr.file))
	}
	if err != nil {
		if fr.w != nil {
			fr.w.Abort()
		}
		if fr.dead != nil {
			fr.dead.Abort()
		}
	}
	abs, _ := filepath.Abs(fr.file.Path)
	fs := FileStats{idx: fr.idx, Path: fr.file.Path, Outputs: fr.outputs, Stats: st}
	keepGoing := err != nil && cfg.KeepGoing && isInputError(err)
	if err == nil && r.journal != nil {
		err = r.journal.Record(Entry{Path: abs, Size: fr.file.Size, ModTime: fr.file.ModTime, Hash: fr.sha,
			Outputs: fr.outputs, Status: "ok", Stats: st, Time: time.Now().UTC()})
	}
	if err == nil {
		err = afterSuccess(cfg.OnSuccess, fr.file)
	}
	if keepGoing {
		fs.Error, fs.Outputs = err.Error(), nil
		st.Failed = 1
		if r.journal != nil {
			if jerr := r.journal.Record(Entry{Path: abs, Size: fr.file.Size, ModTime: fr.file.ModTime, Status: "failed",
				Error: err.Error(), Stats: st, Time: time.Now().UTC()}); jerr != nil {
				return jerr
			}
		}
		if cfg.FailedDir != "" {
			if merr := moveFailed(cfg.FailedDir, fr.file, err); merr != nil {
				return merr
			}
		}
	}
	r.mu.Lock()
	r.total.add(st)
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

// isInputError reports whether err is about the input itself (a message
// that cannot be decoded, an unreadable or corrupt file) rather than the
// system (a full disk, cancellation).
func isInputError(err error) bool {
	var de *decode.Error
	var le *reader.LineError
	var pe *os.PathError
	return errors.As(err, &de) || errors.As(err, &le) || (errors.As(err, &pe) && !errors.Is(err, context.Canceled))
}

// afterSuccess applies --on-success to a converted input.
func afterSuccess(action string, f reader.File) error {
	switch {
	case action == "" || action == "keep":
		return nil
	case action == "delete":
		if err := os.Remove(f.Path); err != nil {
			return fmt.Errorf("pipeline: on-success: %w", err)
		}
		return nil
	case strings.HasPrefix(action, "move="):
		return moveInto(strings.TrimPrefix(action, "move="), f)
	}
	return fmt.Errorf("pipeline: on-success %q: want keep, delete or move=DIR", action)
}

// moveInto moves an input under dir, keeping its relative path.
func moveInto(dir string, f reader.File) error {
	dst := filepath.Join(dir, f.Rel)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	if err := os.Rename(f.Path, dst); err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	return nil
}

// moveFailed moves a failed input into dir with a "<name>.err" beside it.
func moveFailed(dir string, f reader.File, cause error) error {
	if err := moveInto(dir, f); err != nil {
		return err
	}
	errPath := filepath.Join(dir, f.Rel+".err")
	if err := os.WriteFile(errPath, []byte(cause.Error()+"\n"), 0o644); err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	return nil
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
