package outdir

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/cdcetl/cdcetl/reader"
)

// Where each input's outputs go, so that two inputs never share one, and
// what happens to an input afterwards, so that a move never overwrites.
//
// An input's outputs all share one stem: its path relative to its argument
// (compression suffixes dropped), then ".parquet" or ".jsonl[.gz|.zst]",
// and "_dead_letters/<stem>.jsonl". A stem belongs to the input (path and
// generation) whose journal entry lists it. When the natural stem belongs
// to another input (two arguments holding the same relative path; a new
// file under a name already converted and moved away), the input gets the
// first free of "<stem>~2", "<stem>~3", ... Names are decided in input
// order against the journal, so a rerun after a crash picks the same ones.

// Allocator hands out stems for one run.
type Allocator struct {
	j       *Journal // nil without an output directory
	claimed map[string]InputKey
}

func NewAllocator(j *Journal) *Allocator {
	return &Allocator{j: j, claimed: map[string]InputKey{}}
}

// free reports whether stem s can be k's.
func (a *Allocator) free(s string, k InputKey) bool {
	if c, ok := a.claimed[s]; ok && c != k {
		return false
	}
	if a.j != nil {
		if o, ok := a.j.Owner(s); ok && o != k {
			return false
		}
	}
	return true
}

// stem returns input k's stem: the one its journal entry already has, or
// the first free candidate for base.
func (a *Allocator) Stem(k InputKey, base string) string {
	if a.j != nil {
		a.j.mu.Lock()
		e, ok := a.j.entries[k]
		a.j.mu.Unlock()
		if s := e.OutputStem(); ok && s != "" && a.free(s, k) {
			a.claimed[s] = k
			return s
		}
	}
	for n := 1; ; n++ {
		if s := StemName(base, n); a.free(s, k) {
			a.claimed[s] = k
			return s
		}
	}
}

// Generation decides which input the file f at abs is: the latest journal
// entry's, unless that input was moved or deleted and f differs from it.
// Then f is an earlier generation delivered again (same content), or a new
// input, one generation on.
func Generation(j *Journal, abs string, f reader.File) (int, error) {
	if j == nil {
		return 0, nil
	}
	e, ok := j.Lookup(abs)
	if !ok {
		return 0, nil
	}
	if e.Disposed == "" {
		return e.Gen, nil
	}
	for g := e.Gen; g >= 0; g-- {
		prev, ok := j.Entry(InputKey{abs, g})
		if !ok || (g < e.Gen && (prev.Size != f.Size || prev.Hash == "")) {
			continue
		}
		same, err := SameInput(prev, f)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", f.Path, err)
		}
		if same {
			return g, nil
		}
	}
	return e.Gen + 1, nil
}

// The pending file lists the stems a run is about to write, synced before
// any output is: a run killed between an output's rename and its journal
// entry leaves an output no entry lists, which the next start removes (its
// input is converted again, perhaps under another name), so no row is ever
// in two outputs.
const PendingName = "_cdcetl_pending.jsonl"

type PendingStem struct {
	Stem string `json:"stem"`
	// Dead is the dead-letter file's path when it is outside the output
	// directory.
	Dead string `json:"dead,omitempty"`
	// Routed: the stem's outputs are in table directories.
	Routed bool `json:"routed,omitempty"`
	// Partitioned: they are in partition directories (below OutDir or
	// the table directories).
	Partitioned bool `json:"partitioned,omitempty"`
}

// WritePending records the stems of a run.
func WritePending(dir, name string, stems []PendingStem) error {
	var b []byte
	for _, s := range stems {
		line, _ := json.Marshal(s)
		b = append(append(b, line...), '\n')
	}
	path := filepath.Join(dir, name)
	if err := WriteSynced(path, b); err != nil {
		return err
	}
	SyncDir(dir)
	return nil
}

// ReadPending reads the stems of the pending file, if any.
func ReadPending(dir, name string) ([]PendingStem, error) {
	path := filepath.Join(dir, name)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []PendingStem
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		var p PendingStem
		if json.Unmarshal(line, &p) == nil && p.Stem != "" {
			out = append(out, p)
		}
	}
	return out, nil
}

// RecoverPending removes the outputs of a killed run that no journal entry
// lists, then the pending file.
func RecoverPending(dir, name string, j *Journal) error {
	path := filepath.Join(dir, name)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	// A routed run's outputs lie in table directories (<ns>/<table>, and
	// <ns>/<table>/v<n> for later schema versions), under the same stems;
	// a table directory has its schema file before it has outputs.
	var TableDirs []string
	tableDirsOnce := func() error {
		if TableDirs != nil {
			return nil
		}
		TableDirs = []string{}
		for _, pat := range [][]string{{"*", "*", SchemaFile}, {"*", "*", "v*", SchemaFile}} {
			m, err := filepath.Glob(filepath.Join(append([]string{dir}, pat...)...))
			if err != nil {
				return err
			}
			for _, p := range m {
				TableDirs = append(TableDirs, filepath.Dir(p))
			}
		}
		return nil
	}
	for sc.Scan() {
		var p PendingStem
		if json.Unmarshal(sc.Bytes(), &p) != nil || p.Stem == "" {
			continue // torn by the crash: nothing of it was written yet
		}
		if k, ok := j.Owner(p.Stem); ok {
			// Journaled: a run killed after the entry may have left the
			// outputs of the input's earlier conversion in tables it has
			// no rows of now.
			if p.Routed && !p.Partitioned {
				if err := tableDirsOnce(); err != nil {
					return err
				}
				if err := removeUnlisted(dir, TableDirs, RoutedStem(p.Stem), j, k); err != nil {
					return err
				}
			}
			continue
		}
		paths := []string{filepath.Join(dir, "_dead_letters", p.Stem+".jsonl")}
		if p.Routed {
			if err := tableDirsOnce(); err != nil {
				return err
			}
		}
		for _, s := range OutputSuffixes {
			paths = append(paths, filepath.Join(dir, p.Stem+s))
			if p.Routed {
				for _, d := range TableDirs {
					paths = append(paths, filepath.Join(d, RoutedStem(p.Stem)+s))
				}
			}
		}
		if p.Dead != "" {
			paths = append(paths, p.Dead)
		}
		if p.Partitioned {
			if err := tableDirsOnce(); err != nil {
				return err
			}
			roots, stem := []string{dir}, p.Stem
			if p.Routed {
				roots, stem = TableDirs, RoutedStem(p.Stem)
			}
			for _, root := range roots {
				if err := RemoveHiveOutputs(root, stem); err != nil {
					return fmt.Errorf("removing an output of an interrupted run: %w", err)
				}
			}
		}
		for _, o := range paths {
			if err := os.Remove(o); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("removing an output of an interrupted run: %w", err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.Remove(path)
}

// removeUnlisted removes the outputs named after stem in the table
// directories that input k's journal entry does not list.
func removeUnlisted(dir string, TableDirs []string, stem string, j *Journal, k InputKey) error {
	e, ok := j.Entry(k)
	if !ok || e.Status != StatusOK {
		return nil
	}
	for _, d := range TableDirs {
		for _, s := range OutputSuffixes {
			p := filepath.Join(d, stem+s)
			rel, err := filepath.Rel(dir, p)
			if err != nil || slices.Contains(e.Outputs, rel) {
				continue
			}
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("removing an output of an input's earlier conversion: %w", err)
			}
		}
	}
	return nil
}

func SyncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// FreeName is the first of dir/rel, dir/rel~2, ... that does not exist.
func FreeName(dir, rel string) (string, error) {
	for n := 1; ; n++ {
		p := filepath.Join(dir, StemName(rel, n))
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			return p, nil
		} else if err != nil {
			return "", err
		}
	}
}

// ErrExists marks a move whose destination appeared meanwhile.
var ErrExists = errors.New("destination exists")

// MoveNoClobber moves src to dst, failing with ErrExists rather than
// replacing a file already there: a hard link then the removal of src
// (same file system), else a copy to a new file, synced, then the removal.
// A move already done (dst is src's file, or src is gone and dst exists)
// is not an error.
func MoveNoClobber(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	si, err := os.Lstat(src)
	if err != nil {
		if _, derr := os.Lstat(dst); errors.Is(err, os.ErrNotExist) && derr == nil {
			return nil // moved before a crash; only the journal did not know
		}
		return err
	}
	if di, err := os.Lstat(dst); err == nil {
		if os.SameFile(si, di) {
			return RemoveSynced(src)
		}
		return ErrExists
	}
	err = os.Link(src, dst)
	switch {
	case err == nil:
	case errors.Is(err, os.ErrExist):
		return ErrExists
	case errors.Is(err, syscall.EXDEV) || errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EMLINK):
		if err := copyNew(src, dst); err != nil {
			return err
		}
	default:
		return err
	}
	SyncDir(filepath.Dir(dst))
	return RemoveSynced(src)
}

func RemoveSynced(p string) error {
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	SyncDir(filepath.Dir(p))
	return nil
}

// copyNew copies src to a new file dst (never an existing one), synced.
func copyNew(src, dst string) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return ErrExists
	}
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			out.Close()
			os.Remove(dst)
		}
	}()
	if _, err = io.Copy(out, in); err != nil {
		return err
	}
	if err = out.Sync(); err != nil {
		return err
	}
	return out.Close()
}
