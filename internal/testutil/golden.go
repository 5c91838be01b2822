// Package testutil holds helpers shared by cdcetl's tests: golden files with
// an -update flag, the shared conformance directory lookup, and rows printed
// as --to print prints them, from batches or read back from Parquet.
package testutil

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Update rewrites golden files with what the code produces now:
// go test ./... -run Golden -update, then review the diff.
var Update = flag.Bool("update", false, "rewrite golden files")

// Golden compares got with the golden file at path (or writes it with
// -update) and reports the first differing lines.
func Golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *Update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != string(got) {
		t.Errorf("%s differs (run with -update to accept):\n%s", path, Diff(string(want), string(got)))
	}
}

// Diff shows the lines that differ between want and got.
func Diff(want, got string) string {
	w := strings.Split(want, "\n")
	g := strings.Split(got, "\n")
	var b strings.Builder
	n := max(len(w), len(g))
	shown := 0
	for i := 0; i < n && shown < 20; i++ {
		var a, c string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			c = g[i]
		}
		if a != c {
			fmt.Fprintf(&b, "line %d\n  want: %q\n  got:  %q\n", i+1, a, c)
			shown++
		}
	}
	return b.String()
}

// Root returns the repository root (where go.mod is).
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// SharedConformance returns ../shared/conformance/flink next to the
// repository, or skips the test when it is absent.
func SharedConformance(t testing.TB) string {
	dir := filepath.Join(Root(), "..", "shared", "conformance", "flink")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared conformance cases not found at %s: skipped", dir)
	}
	return dir
}

// ReadCase reads a testdata .case file: comments (#), the schema line, then
// "option KEY=VALUE" lines.
func ReadCase(path string) (schema string, options map[string]string, err error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return "", nil, err
	}
	options = map[string]string{}
	for _, line := range strings.Split(string(text), "\n") {
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case schema == "":
			schema = line
		case strings.HasPrefix(line, "option "):
			k, v, _ := strings.Cut(strings.TrimPrefix(line, "option "), "=")
			options[k] = v
		default:
			return "", nil, fmt.Errorf("%s: unexpected line %q", path, line)
		}
	}
	return schema, options, nil
}
