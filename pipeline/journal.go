package pipeline

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/zeebo/xxh3"
)

// JournalName is the journal's file name inside the output directory. The
// leading '_' keeps it out of what Flink, Spark and cdcetl read from there.
const JournalName = "_cdcetl_journal.jsonl"

// Entry is what the journal records about one converted (or failed) input.
type Entry struct {
	Path    string    `json:"path"` // absolute input path
	Size    int64     `json:"size"`
	ModTime int64     `json:"mtime_ns"`
	Hash    string    `json:"xxh3_128,omitempty"` // of the stored bytes
	Outputs []string  `json:"outputs,omitempty"`  // relative to the output directory
	Status  string    `json:"status"`             // "ok" or "failed"
	Error   string    `json:"error,omitempty"`
	Stats   Stats     `json:"stats"`
	Time    time.Time `json:"time"`
}

// Journal is an append-only record of converted inputs in the output
// directory. Each entry is written and synced after the input's outputs are
// in place, so after a crash an input is either journaled with all its
// outputs, or converted again (its outputs are replaced atomically). The
// last entry for a path wins; a torn last line from a crash is ignored.
type Journal struct {
	mu      sync.Mutex
	f       *os.File
	entries map[string]Entry
}

// OpenJournal reads (or starts) the journal of dir.
func OpenJournal(dir string) (*Journal, error) {
	path := filepath.Join(dir, JournalName)
	j := &Journal{entries: map[string]Entry{}}
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("pipeline: journal: %w", err)
	}
	lines, torn := 0, false
	for _, line := range bytes.Split(data, []byte("\n")) {
		var e Entry
		if len(line) == 0 {
			continue
		}
		lines++
		if json.Unmarshal(line, &e) != nil {
			torn = true // a line torn by a crash
			continue
		}
		j.entries[e.Path] = e
	}
	// Rewrite it compacted (one entry per input), atomically, when a torn
	// line must go or superseded entries dominate; otherwise just append.
	// (A watcher opens the journal for every file: no rewrite each time.)
	if torn || lines > 2*len(j.entries)+64 || (len(data) > 0 && data[len(data)-1] != '\n') {
		var buf bytes.Buffer
		for _, e := range j.entries {
			b, _ := json.Marshal(e)
			buf.Write(append(b, '\n'))
		}
		tmp := path + ".tmp"
		if err := writeSynced(tmp, buf.Bytes()); err != nil {
			return nil, err
		}
		if err := os.Rename(tmp, path); err != nil {
			return nil, fmt.Errorf("pipeline: journal: %w", err)
		}
	}
	if j.f, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err != nil {
		return nil, fmt.Errorf("pipeline: journal: %w", err)
	}
	return j, nil
}

func writeSynced(path string, data []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("pipeline: journal: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("pipeline: journal: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("pipeline: journal: %w", err)
	}
	return f.Close()
}

// Lookup returns the entry of an input path.
func (j *Journal) Lookup(path string) (Entry, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	e, ok := j.entries[path]
	return e, ok
}

// Record appends an entry and syncs it to disk.
func (j *Journal) Record(e Entry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("pipeline: journal: %w", err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("pipeline: journal: %w", err)
	}
	j.entries[e.Path] = e
	return nil
}

// Close closes the journal file.
func (j *Journal) Close() error { return j.f.Close() }

// Done reports whether the input at path (with its current size and
// modification time) was already converted: same size and time, or, when
// those changed, the same content.
func (j *Journal) Done(path string, size, mtime int64) (bool, error) {
	e, ok := j.Lookup(path)
	if !ok || e.Status != "ok" {
		return false, nil
	}
	if e.Size == size && e.ModTime == mtime {
		return true, nil
	}
	if e.Size != size || e.Hash == "" {
		return false, nil
	}
	sum, err := fileHash(path)
	if err != nil {
		return false, err
	}
	return sum == e.Hash, nil
}

func fileHash(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("pipeline: %w", err)
	}
	defer f.Close()
	h := xxh3.New128()
	if _, err := io.Copy(h, bufio.NewReaderSize(f, 1<<20)); err != nil {
		return "", fmt.Errorf("pipeline: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// CleanTemp removes temporary files a killed run left in dir: the
// ".<name>.<random>.tmp" files of atomic outputs.
func CleanTemp(dir string) error {
	return filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		name := d.Name()
		if !d.IsDir() && strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".tmp") {
			return os.Remove(path)
		}
		return nil
	})
}
