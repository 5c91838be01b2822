package outdir

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
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/cdcetl/cdcetl/internal/setting"
	"github.com/cdcetl/cdcetl/reader"
)

// JournalName is the journal's file name inside the output directory. The
// leading '_' keeps it out of what Flink, Spark and cdcetl read from there.
const JournalName = "_cdcetl_journal.jsonl"

// Statuses of a journal entry.
const (
	StatusOK     = "ok"
	StatusFailed = "failed"
)

// Dispositions: what --on-success did (or is about to do) with an input.
const (
	DisposedMoved   = "moved"
	DisposedDeleted = "deleted"
)

// Entry is what the journal records about one converted (or failed) input.
//
// An input is one version of the file at Path: Gen counts the distinct
// inputs seen there, because with --on-success move or delete a new file
// can land under a name that was converted before. Each generation has
// outputs of its own, so a new file never replaces an earlier one's.
type Entry struct {
	Path string `json:"path"` // absolute input path
	Gen  int    `json:"gen,omitempty"`
	// Stem is what the input's outputs are named after (in a routed
	// conversion, below each table's directory).
	Stem    string `json:"stem,omitempty"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtime_ns"`
	Hash    string `json:"xxh3_128,omitempty"` // of the stored bytes
	// Outputs are relative to the output directory (dead letters outside it
	// are absolute).
	Outputs []string `json:"outputs,omitempty"`
	Status  string   `json:"status"` // "ok" or "failed"
	Error   string   `json:"error,omitempty"`
	// Fingerprint identifies the conversion the outputs were made with
	// (see [Conversion]); empty in journals older than fingerprints.
	Fingerprint string `json:"fingerprint,omitempty"`
	// Disposed is "moved" or "deleted" once --on-success (or --failed) is
	// decided for the input; it is recorded before the file is touched, so
	// after a crash the file at Path may still be this input. MovedTo is
	// where it went.
	Disposed string `json:"disposed,omitempty"`
	MovedTo  string `json:"moved_to,omitempty"`
	// DuplicateOf is the input whose bytes this one holds, when it was
	// skipped for it (DedupInputs): it has no outputs of its own.
	DuplicateOf string `json:"duplicate_of,omitempty"`
	// Stats are the run's counts for the input, as its caller encoded
	// them.
	Stats json.RawMessage `json:"stats"`
	Time  time.Time       `json:"time"`
}

// OutputStem is the entry's output stem (read from its outputs in journals
// older than the field).
func (e Entry) OutputStem() string {
	if e.Stem != "" {
		return e.Stem
	}
	return stemOf(e.Outputs)
}

// Key is the input e is about.
func (e Entry) Key() InputKey { return InputKey{e.Path, e.Gen} }

// InputKey identifies one input: a path and its generation.
type InputKey struct {
	Path string
	Gen  int
}

// Conversion is what outputs are made with: the settings that decide their
// columns, values and encoding, and a fingerprint of them. A journal holds
// the conversion of the last run that wrote there; a run with another one
// stops before reading (ErrConversionChanged) unless forced.
type Conversion struct {
	Fingerprint string            `json:"fingerprint"`
	Settings    map[string]string `json:"settings"`
	Time        time.Time         `json:"time"`
}

// NewConversion fingerprints settings.
func NewConversion(settings map[string]string) Conversion {
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	h := xxh3.New128()
	for _, k := range keys {
		// Length-prefixed, so no two settings maps hash alike by accident.
		fmt.Fprintf(h, "%d:%s=%d:%s;", len(k), k, len(settings[k]), settings[k])
	}
	sum := h.Sum(nil)
	return Conversion{Fingerprint: hex.EncodeToString(sum[:8]), Settings: settings}
}

// ErrConversionChanged is returned, before any input is read, when the
// output directory's journal was written by a conversion with other
// settings: convert again with Force, or use another output directory.
var ErrConversionChanged = errors.New("the output directory holds outputs of another conversion")

// journalLine is one line of the journal file: an entry, or a conversion
// record.
type journalLine struct {
	Conversion *Conversion `json:"conversion,omitempty"`
	Entry
}

// Journal is an append-only record of converted inputs in the output
// directory. Each entry is written and synced after the input's outputs are
// in place, so after a crash an input is either journaled with all its
// outputs, or converted again (its outputs are replaced atomically). The
// last entry for an input wins; a torn last line from a crash is ignored.
type Journal struct {
	mu      sync.Mutex
	f       *os.File
	entries map[InputKey]Entry
	latest  map[string]int      // path → its highest generation
	owners  map[string]InputKey // output stem → the input whose entry lists it
	content map[string]InputKey // size and hash → an input converted with those bytes
	sizes   map[int64]bool      // the sizes in content (a file of another size needs no hash)
	conv    *Conversion
}

// JournalFile is the journal file a shard appends to (tag "" for a whole
// run: JournalName).
func JournalFile(sh Shard) string { return TaggedName(JournalName, sh.Tag()) }

// ReadEntries reads every journal of dir (whole runs' and shards')
// without taking the directory's lock or writing, for a reader of the
// outputs: each input's last entry, in path and generation order.
func ReadEntries(dir string) ([]Entry, error) {
	j := &Journal{entries: map[InputKey]Entry{}, latest: map[string]int{}, owners: map[string]InputKey{}, content: map[string]InputKey{}, sizes: map[int64]bool{}}
	names, err := filepath.Glob(filepath.Join(dir, "_cdcetl_journal*.jsonl"))
	if err != nil {
		return nil, err
	}
	for _, p := range names {
		if _, ok := TagOfName(filepath.Base(p), JournalName); !ok {
			continue
		}
		jf, _, err := readJournalFile(p)
		if err != nil {
			return nil, err
		}
		for _, k := range jf.order {
			if old, ok := j.entries[k]; !ok || jf.entries[k].Time.After(old.Time) {
				j.put(jf.entries[k])
			}
		}
	}
	return j.sorted(), nil
}

// journalFile is one journal file's content: its last entry per input and
// its last conversion record.
type journalFile struct {
	entries map[InputKey]Entry
	order   []InputKey // first appearance
	conv    *Conversion
	lines   int
	torn    bool
}

func readJournalFile(path string) (*journalFile, []byte, error) {
	jf := &journalFile{entries: map[InputKey]Entry{}}
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("journal %s: %w", path, err)
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		jf.lines++
		var l journalLine
		if json.Unmarshal(line, &l) != nil {
			jf.torn = true // a line torn by a crash
			continue
		}
		if l.Conversion != nil {
			jf.conv = l.Conversion
			continue
		}
		if l.Path != "" {
			k := l.Key()
			if _, ok := jf.entries[k]; !ok {
				jf.order = append(jf.order, k)
			}
			jf.entries[k] = l.Entry
		}
	}
	return jf, data, nil
}

// OpenJournal reads every journal file of dir — the whole runs' and each
// shard's — and opens the one of shard tag for appending. Where files
// disagree about an input (a rerun with another shard count converted it
// again), the entry written last wins; so does the conversion record.
func OpenJournal(dir, tag string) (*Journal, error) {
	name := TaggedName(JournalName, tag)
	path := filepath.Join(dir, name)
	j := &Journal{entries: map[InputKey]Entry{}, latest: map[string]int{}, owners: map[string]InputKey{}, content: map[string]InputKey{}, sizes: map[int64]bool{}}
	own, data, err := readJournalFile(path)
	if err != nil {
		return nil, err
	}
	files := []*journalFile{own}
	others, err := filepath.Glob(filepath.Join(dir, "_cdcetl_journal*.jsonl"))
	if err != nil {
		return nil, err
	}
	for _, p := range others {
		if t, ok := TagOfName(filepath.Base(p), JournalName); !ok || t == tag {
			continue
		}
		jf, _, err := readJournalFile(p)
		if err != nil {
			return nil, err
		}
		files = append(files, jf)
	}
	for _, jf := range files {
		if c := jf.conv; c != nil && (j.conv == nil || c.Time.After(j.conv.Time)) {
			j.conv = c
		}
		for _, k := range jf.order {
			e := jf.entries[k]
			if old, ok := j.entries[k]; ok && !e.Time.After(old.Time) {
				continue // the own file wins ties
			}
			j.put(e)
		}
	}
	// Rewrite the own file compacted (one entry per input), atomically,
	// when a torn line must go or superseded entries dominate; otherwise
	// just append. (A watcher opens the journal for every file: no rewrite
	// each time.)
	if own.torn || own.lines > 2*(len(own.entries)+1)+64 || (len(data) > 0 && data[len(data)-1] != '\n') {
		var buf bytes.Buffer
		if own.conv != nil {
			b, _ := json.Marshal(journalLine{Conversion: own.conv})
			buf.Write(append(b, '\n'))
		}
		ks := slices.Clone(own.order)
		slices.SortFunc(ks, CompareKeys)
		for _, k := range ks {
			b, _ := json.Marshal(own.entries[k])
			buf.Write(append(b, '\n'))
		}
		tmp := path + ".tmp"
		if err := WriteSynced(tmp, buf.Bytes()); err != nil {
			return nil, err
		}
		if err := os.Rename(tmp, path); err != nil {
			return nil, fmt.Errorf("journal %s: %w", path, err)
		}
	}
	if j.f, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err != nil {
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	return j, nil
}

// put takes an entry into the maps (j.mu held, or not yet shared).
func (j *Journal) put(e Entry) {
	k := e.Key()
	if old, ok := j.entries[k]; ok {
		if s := old.OutputStem(); j.owners[s] == k {
			delete(j.owners, s)
		}
	}
	j.entries[k] = e
	if g, ok := j.latest[e.Path]; !ok || e.Gen >= g {
		j.latest[e.Path] = e.Gen
	}
	// A failed entry lists outputs only when an earlier conversion of the
	// same input made them: they stay its own.
	if s := e.OutputStem(); s != "" {
		j.owners[s] = k
	}
	if e.Status == StatusOK && e.Hash != "" && e.DuplicateOf == "" {
		j.content[contentKey(e.Size, e.Hash)] = k
		j.sizes[e.Size] = true
	}
}

func contentKey(size int64, hash string) string { return strconv.FormatInt(size, 10) + ":" + hash }

// SameContent returns another input converted with exactly these bytes
// (size and XXH3-128), if the journal has one.
func (j *Journal) SameContent(size int64, hash string, not InputKey) (Entry, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	k, ok := j.content[contentKey(size, hash)]
	if !ok || k == not {
		return Entry{}, false
	}
	e, ok := j.entries[k]
	if !ok || e.Status != StatusOK || e.Hash != hash || e.Size != size {
		return Entry{}, false
	}
	return e, true
}

// HasSize reports whether an input of this size was converted (a cheap
// test before hashing a file for SameContent).
func (j *Journal) HasSize(size int64) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.sizes[size]
}

// sorted returns the entries in path and generation order.
func (j *Journal) sorted() []Entry {
	out := make([]Entry, 0, len(j.entries))
	for _, e := range j.entries {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Entry) int { return CompareKeys(a.Key(), b.Key()) })
	return out
}

// CompareKeys orders inputs by path, then generation.
func CompareKeys(a, b InputKey) int {
	if c := strings.Compare(a.Path, b.Path); c != 0 {
		return c
	}
	return a.Gen - b.Gen
}

func WriteSynced(path string, data []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("journal %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("journal %s: %w", path, err)
	}
	return f.Close()
}

// Lookup returns the latest entry of an input path (its highest
// generation).
func (j *Journal) Lookup(path string) (Entry, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	g, ok := j.latest[path]
	if !ok {
		return Entry{}, false
	}
	return j.entries[InputKey{path, g}], true
}

// Entry returns the entry of input k.
func (j *Journal) Entry(k InputKey) (Entry, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	e, ok := j.entries[k]
	return e, ok
}

// Entries returns every entry, in path and generation order.
func (j *Journal) Entries() []Entry {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.sorted()
}

// Owner returns the input whose outputs have the given stem, if any.
func (j *Journal) Owner(stem string) (InputKey, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	k, ok := j.owners[stem]
	return k, ok
}

// Record appends an entry and syncs it to disk.
func (j *Journal) Record(e Entry) error {
	return j.append(journalLine{Entry: e})
}

func (j *Journal) append(l journalLine) error {
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("journal %s: %w", j.f.Name(), err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("journal %s: %w", j.f.Name(), err)
	}
	if l.Conversion != nil {
		j.conv = l.Conversion
	} else {
		j.put(l.Entry)
	}
	return nil
}

// Conversion returns the conversion last recorded, if any.
func (j *Journal) Conversion() (Conversion, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.conv == nil {
		return Conversion{}, false
	}
	return *j.conv, true
}

// Adopt records c as the journal's conversion (when it is not already).
func (j *Journal) Adopt(c Conversion) error {
	if cur, ok := j.Conversion(); ok && cur.Fingerprint == c.Fingerprint {
		return nil
	}
	c.Time = time.Now().UTC()
	return j.append(journalLine{Conversion: &c})
}

// CheckConversion returns an error wrapping ErrConversionChanged when the
// journal's outputs were made with a conversion other than c. A journal
// without a conversion record (new, or older than fingerprints) accepts
// any.
func (j *Journal) CheckConversion(c Conversion) error {
	cur, ok := j.Conversion()
	if !ok || cur.Fingerprint == c.Fingerprint {
		return nil
	}
	var diffs []string
	keys := make([]string, 0, len(c.Settings))
	for k := range c.Settings {
		keys = append(keys, k)
	}
	for k := range cur.Settings {
		if _, ok := c.Settings[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	for _, k := range keys {
		was, now := cur.Settings[k], c.Settings[k]
		if was != now {
			diffs = append(diffs, fmt.Sprintf("%s was %s, now %s", k, quoteSetting(was), quoteSetting(now)))
		}
	}
	return fmt.Errorf("%w (%s; journal %s, written %s): %s. Convert every input again with %s, or write to a new %s",
		ErrConversionChanged, cur.Fingerprint, j.f.Name(), cur.Time.Format(time.RFC3339), strings.Join(diffs, "; "), setting.Force, setting.OutDir)
}

func quoteSetting(s string) string {
	if s == "" {
		return "unset"
	}
	return strconv.Quote(s)
}

// Close closes the journal file.
func (j *Journal) Close() error { return j.f.Close() }

// Done reports whether the file at path (with its current size and
// modification time) is an input already converted there with the
// conversion fingerprinted fp, and returns that input's entry: the latest
// entry's input (same size and time, or same content), or, for a file that
// lands again under a name whose earlier inputs were moved away, any
// earlier generation with the same content. An entry without a
// fingerprint counts as made by the journal's conversion.
func (j *Journal) Done(path string, f reader.File, fp string) (Entry, bool, error) {
	size := f.Size
	j.mu.Lock()
	g, ok := j.latest[path]
	var gens []Entry
	for n := g; ok && n >= 0; n-- {
		if e, ok := j.entries[InputKey{path, n}]; ok {
			gens = append(gens, e)
		}
	}
	j.mu.Unlock()
	for i, e := range gens {
		if e.Status != StatusOK || (e.Fingerprint != "" && e.Fingerprint != fp) {
			continue
		}
		if i > 0 && (e.Size != size || e.Hash == "") {
			continue // earlier generations match by content only
		}
		same, err := SameInput(e, f)
		if err != nil || same {
			return e, same, err
		}
	}
	return Entry{}, false, nil
}

// SameInput reports whether the file f is the input e describes.
func SameInput(e Entry, f reader.File) (bool, error) {
	if e.Size == f.Size && e.ModTime == f.ModTime {
		return true, nil
	}
	if e.Size != f.Size || e.Hash == "" {
		return false, nil
	}
	sum, err := FileHash(f)
	if err != nil {
		return false, err
	}
	return sum == e.Hash, nil
}

func FileHash(in reader.File) (string, error) {
	f, err := in.Open()
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := xxh3.New128()
	if _, err := io.Copy(h, bufio.NewReaderSize(f, 1<<20)); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// CleanTemp removes temporary files a killed run left in dir: the
// ".<name>.<random>.tmp" files of atomic outputs.
func CleanTemp(dir string) error { return CleanTempOf(dir, func(string) bool { return true }) }

// CleanTempOf removes the temporary files of the runs may allows (by the
// shard tag in their names, "" for whole runs).
func CleanTempOf(dir string, may func(tag string) bool) error {
	return filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		name := d.Name()
		if !d.IsDir() && strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".tmp") && may(tempTag(name)) {
			// Gone already: another run (a shard's) removed its own
			// file, or swept it too.
			if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
		return nil
	})
}
