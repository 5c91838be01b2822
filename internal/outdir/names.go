package outdir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cdcetl/cdcetl/partition"
)

// SchemaFile is the name of a table's schema file in its directory.
const SchemaFile = "_schema.sql"

// RoutedStem is stem as a path below a table directory: a first segment
// that looks like a version directory ("v2", or one with '~'s after it)
// gets one more '~' ("v2~"), so an input's own directory never meets a
// version directory and no two stems meet each other. (A leading '_'
// would do too, but readers take such paths for hidden.)
func RoutedStem(stem string) string {
	first, rest, ok := strings.Cut(filepath.ToSlash(stem), "/")
	if ok && IsVersionDir(strings.TrimRight(first, "~")) {
		return filepath.FromSlash(first + "~/" + rest)
	}
	return stem
}

func IsVersionDir(name string) bool {
	if len(name) < 2 || name[0] != 'v' {
		return false
	}
	for _, c := range name[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// CurrentDir is the directory of the current-state snapshots, below the
// output directory; each table's is SnapshotDir.
const CurrentDir = "_current"

// SnapshotDir is where the snapshot of the table (version) whose
// directory is dir (below the output directory) is, below it too.
func SnapshotDir(dir string) string { return filepath.Join(CurrentDir, dir) }

const StateFile = "_cdcetl_state.json"

// HiveStem is an output stem as one file-name segment.
func HiveStem(stem string) string {
	return strings.ReplaceAll(partition.EscapeHive(filepath.ToSlash(stem)), "~", "%7E")
}

// IsPartitionDir reports whether a directory name is a key=value segment.
func IsPartitionDir(name string) bool {
	k, _, ok := strings.Cut(name, "=")
	return ok && k != ""
}

// RemoveHiveOutputs removes what a killed run wrote for stem below root:
// in the partition directories, the stem's files and rolls.
func RemoveHiveOutputs(root, stem string) error {
	name := HiveStem(stem)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			if p != root && !IsPartitionDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		base := d.Name()
		rest, ok := strings.CutPrefix(base, name)
		if !ok || !strings.HasSuffix(rest, ".parquet") {
			return nil
		}
		rest = strings.TrimSuffix(rest, ".parquet")
		if rest != "" {
			n, ok := strings.CutPrefix(rest, "~")
			if _, err := strconv.Atoi(n); !ok || err != nil {
				return nil
			}
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	})
	return err
}

// BaseStem is an input's natural stem.
func BaseStem(rel string) string {
	for _, ext := range []string{".gz", ".zst"} {
		rel = strings.TrimSuffix(rel, ext)
	}
	return rel
}

// OutputSuffixes are the endings a stem's main output may have.
var OutputSuffixes = []string{".parquet", ".jsonl.gz", ".jsonl.zst", ".jsonl"}

// IsOutput reports whether rel (below the output directory) is an
// input's main output, not a dead-letter file.
func IsOutput(rel string) bool {
	if strings.HasPrefix(rel, "_dead_letters"+string(filepath.Separator)) {
		return false
	}
	for _, s := range OutputSuffixes {
		if strings.HasSuffix(rel, s) {
			return true
		}
	}
	return false
}

// StemName is the n-th candidate stem (n ≥ 1) for base.
func StemName(base string, n int) string {
	if n == 1 {
		return base
	}
	return base + "~" + strconv.Itoa(n)
}

// stemOf is the stem of an entry's outputs ("" when it has none).
func stemOf(outputs []string) string {
	for _, o := range outputs {
		if strings.HasPrefix(o, "_dead_letters"+string(filepath.Separator)) || filepath.IsAbs(o) {
			continue
		}
		for _, s := range OutputSuffixes {
			if strings.HasSuffix(o, s) {
				return strings.TrimSuffix(o, s)
			}
		}
	}
	return ""
}
