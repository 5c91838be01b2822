package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdcetl/cdcetl/internal/testutil"
)

// readCase reads a testdata .case file: comments (#), the schema line, then
// "option KEY=VALUE" lines.
func readCase(t *testing.T, path string) (schema string, args []string) {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(text), "\n") {
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case schema == "":
			schema = line
		case strings.HasPrefix(line, "option "):
			args = append(args, "--option", strings.TrimPrefix(line, "option "))
		default:
			t.Fatalf("%s: unexpected line %q", path, line)
		}
	}
	return schema, args
}

// TestGolden runs every testdata/<format>/<case>.case through the CLI with
// --to print and compares stdout, the exit code and stderr with
// <case>.golden. Regenerate with: go test ./cmd/cdcetl -run Golden -update
func TestGolden(t *testing.T) {
	root := filepath.Join(testutil.Root(), "testdata")
	cases, _ := filepath.Glob(filepath.Join(root, "*", "*.case"))
	if len(cases) == 0 {
		t.Fatal("no golden cases found")
	}
	for _, c := range cases {
		format := filepath.Base(filepath.Dir(c))
		name := strings.TrimSuffix(filepath.Base(c), ".case")
		t.Run(format+"/"+name, func(t *testing.T) {
			schema, opts := readCase(t, c)
			input := strings.TrimSuffix(c, ".case") + ".jsonl"
			args := append([]string{"convert", "--format", format, "--schema", schema}, opts...)
			args = append(args, "--to", "print", input)
			var stdout, stderr bytes.Buffer
			code := run(args, &stdout, &stderr)
			var got bytes.Buffer
			fmt.Fprintf(&got, "# schema: %s\n", schema)
			if len(opts) > 0 {
				fmt.Fprintf(&got, "# options: %s\n", strings.Join(opts, " "))
			}
			got.Write(stdout.Bytes())
			fmt.Fprintf(&got, "# exit %d\n", code)
			for _, l := range strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n") {
				fmt.Fprintf(&got, "# stderr: %s\n", strings.ReplaceAll(l, root+string(filepath.Separator), "testdata/"))
			}
			testutil.Golden(t, strings.TrimSuffix(c, ".case")+".golden", got.Bytes())
		})
	}
}
