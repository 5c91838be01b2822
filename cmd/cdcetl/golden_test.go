package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cdcetl/cdcetl/internal/testutil"
)

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
			schema, kv, err := testutil.ReadCase(c)
			if err != nil {
				t.Fatal(err)
			}
			var opts []string
			for _, k := range sortedKeys(kv) {
				if flag, ok := strings.CutPrefix(k, "cdcetl."); ok {
					opts = append(opts, "--"+flag, kv[k]) // cdcetl's own settings are flags
					continue
				}
				opts = append(opts, "--option", k+"="+kv[k])
			}
			input := strings.TrimSuffix(c, ".case") + ".jsonl"
			args := append([]string{"convert", "--format", format, "--schema", schema}, opts...)
			dead := t.TempDir()
			args = append(args, "--to", "print")
			if strings.Contains(strings.Join(opts, " "), "ignore-parse-errors=true") {
				args = append(args, "--dead-letter", dead)
			}
			report := filepath.Join(dead, "report.json")
			args = append(args, "--report", report, input)
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
				l = strings.ReplaceAll(l, dead, "DEAD")
				fmt.Fprintf(&got, "# stderr: %s\n", strings.ReplaceAll(l, root+string(filepath.Separator), "testdata/"))
			}
			// The dead-letter file: one JSON object per dropped message or
			// nulled value.
			if d, err := os.ReadFile(filepath.Join(dead, filepath.Base(input)+".jsonl")); err == nil && len(d) > 0 {
				for _, l := range strings.Split(strings.TrimSuffix(string(d), "\n"), "\n") {
					fmt.Fprintf(&got, "# dead: %s\n", strings.ReplaceAll(l, root+string(filepath.Separator), "testdata/"))
				}
			}
			// Truncates (producer semantics) are listed in the report.
			if data, err := os.ReadFile(report); err == nil {
				var rep struct {
					Truncates []json.RawMessage `json:"truncates"`
				}
				json.Unmarshal(data, &rep)
				for _, tr := range rep.Truncates {
					var c bytes.Buffer
					json.Compact(&c, tr)
					fmt.Fprintf(&got, "# truncate: %s\n", strings.ReplaceAll(c.String(), root+string(filepath.Separator), "testdata/"))
				}
			}
			testutil.Golden(t, strings.TrimSuffix(c, ".case")+".golden", got.Bytes())
		})
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
