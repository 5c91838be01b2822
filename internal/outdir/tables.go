package outdir

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/cdcetl/cdcetl/infer"
	"github.com/cdcetl/cdcetl/objstore"
)

// TableDirs decides each table's directory below an output directory: its
// names as the source wrote them (TableDir), unless
//   - an earlier version of cdcetl wrote the table there under its old
//     escaping (LegacyDir): the table stays where its outputs are;
//   - another table has that directory, which happens where the file
//     system ignores case (shop/Orders is shop/orders): the second table
//     gets "~2" (then "~3", ...), decided when it happens, in this run or
//     an earlier one (the directory's schema file names its table).
//
// Without an output directory, a table's directory is TableDir.
type TableDirs struct {
	out  string
	fold bool // the output directory's file system ignores case

	mu    sync.Mutex
	base  map[infer.Key]string
	owner map[string]infer.Key // by directory, folded as the file system folds
}

func NewTableDirs(out string) *TableDirs {
	d := ReadTableDirs(out)
	if out != "" && !objstore.IsURL(out) {
		d.fold = foldsCase(out)
	}
	return d
}

// ReadTableDirs is NewTableDirs for finding tables (show), which writes
// nothing to probe the file system.
func ReadTableDirs(out string) *TableDirs {
	return &TableDirs{out: out, base: map[infer.Key]string{}, owner: map[string]infer.Key{}}
}

// foldsCase reports whether the file system of dir ignores case: a name
// made there is found under its upper-case spelling.
func foldsCase(dir string) bool {
	var b [6]byte
	rand.Read(b[:])
	name := filepath.Join(dir, ".cdcetl-case-"+hex.EncodeToString(b[:])+".tmp")
	if err := os.WriteFile(name, nil, 0o644); err != nil {
		return false
	}
	defer os.Remove(name)
	_, err := os.Stat(filepath.Join(dir, strings.ToUpper(filepath.Base(name))))
	return err == nil
}

// Dir is the directory of table k's schema version v (v > 1: "v<n>" below
// the table's).
func (d *TableDirs) Dir(k infer.Key, v int) string {
	b := d.Base(k)
	if v > 1 {
		b = filepath.Join(b, "v"+strconv.Itoa(v))
	}
	return b
}

func (d *TableDirs) Base(k infer.Key) string {
	if d == nil || d.out == "" {
		return TableDir(k.Namespace, k.Name)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if b, ok := d.base[k]; ok {
		return b
	}
	name := TableDir(k.Namespace, k.Name)
	if legacy := LegacyDir(k.Namespace, k.Name); legacy != name {
		if owner, ok := schemaOwner(filepath.Join(d.out, legacy)); ok && owner == k {
			d.claim(k, legacy)
			return legacy
		}
	}
	for n := 1; ; n++ {
		c := name
		if n > 1 {
			c += "~" + strconv.Itoa(n)
		}
		if o, ok := d.owner[d.folded(c)]; ok && o != k {
			continue // another table of this run has it
		}
		if owner, ok := schemaOwner(filepath.Join(d.out, d.existing(c))); ok && owner != k {
			continue // another table's, from an earlier run
		}
		d.claim(k, c)
		return c
	}
}

// existing is dir as the output directory has it: where the file system
// ignores case, the entries whose folded names match (so a table that
// would meet another's directory finds it, whatever case each has).
func (d *TableDirs) existing(dir string) string {
	if !d.fold {
		return dir
	}
	parent, out := d.out, []string{}
	for _, seg := range strings.Split(dir, string(filepath.Separator)) {
		name := seg
		if entries, err := os.ReadDir(parent); err == nil {
			for _, e := range entries {
				if foldName(e.Name()) == foldName(seg) {
					name = e.Name()
					break
				}
			}
		}
		out = append(out, name)
		parent = filepath.Join(parent, name)
	}
	return filepath.Join(out...)
}

func (d *TableDirs) claim(k infer.Key, dir string) {
	d.base[k] = dir
	d.owner[d.folded(dir)] = k
}

func (d *TableDirs) folded(dir string) string {
	if d.fold {
		return foldName(dir)
	}
	return dir
}

// foldName is name as a file system that ignores case and Unicode
// normalization sees it: NFC, each letter the least of its case orbit
// (so the Kelvin sign, 'k' and 'K' are one, as strings.EqualFold has it).
func foldName(name string) string {
	var b strings.Builder
	for _, r := range norm.NFC.String(name) {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}

// schemaOwner is the table whose schema file is in dir, if it has one.
func schemaOwner(dir string) (infer.Key, bool) {
	text, err := os.ReadFile(filepath.Join(dir, SchemaFile))
	if err != nil {
		return infer.Key{}, false
	}
	t, err := infer.LoadTable(string(text))
	if err != nil || t.Key == (infer.Key{}) {
		return infer.Key{}, false
	}
	return t.Key, true
}
