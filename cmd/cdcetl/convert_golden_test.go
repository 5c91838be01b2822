package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/internal/testutil"
)

var cdcFormats = []string{"canal-json", "maxwell-json", "ogg-json", "debezium-json"}

// TestConvertGolden re-encodes each format's basic sample into each of the
// four formats — Flink's encoding, then --merge-updates — and the metadata
// sample with --merge-updates --envelope, and compares with
// testdata/convert/<from>-to-<to>.golden. Each output is also decoded again
// to show the rows a consumer gets back.
func TestConvertGolden(t *testing.T) {
	root := filepath.Join(testutil.Root(), "testdata")
	for _, from := range cdcFormats {
		for _, to := range cdcFormats {
			t.Run(from+"-to-"+to, func(t *testing.T) {
				var got bytes.Buffer
				for _, sample := range []string{"basic", "metadata"} {
					schema, kv, err := testutil.ReadCase(filepath.Join(root, from, sample+".case"))
					if err != nil {
						t.Fatal(err)
					}
					modes := [][]string{nil, {"--merge-updates"}}
					if sample == "metadata" {
						modes = [][]string{{"--merge-updates", "--envelope"}}
					}
					for _, mode := range modes {
						args := []string{"convert", "--quiet", "--format", from, "--schema", schema}
						for _, k := range sortedKeys(kv) {
							args = append(args, "--option", k+"="+kv[k])
						}
						args = append(append(args, mode...), "--to", to, filepath.Join(root, from, sample+".jsonl"))
						var stdout, stderr bytes.Buffer
						if code := run(args, &stdout, &stderr); code != 0 {
							t.Fatalf("%v: exit %d: %s", mode, code, stderr.String())
						}
						fmt.Fprintf(&got, "# %s.jsonl --to %s %s\n", sample, to, strings.Join(mode, " "))
						got.Write(stdout.Bytes())
						// Read the output back with the target format.
						back := filepath.Join(t.TempDir(), sample+".jsonl")
						writeFile(t, back, stdout.Bytes())
						var rows, errb bytes.Buffer
						readSchema := schema
						if from != to {
							readSchema = physicalColumns(t, schema)
						}
						if code := run([]string{"convert", "--quiet", "--format", to, "--schema", readSchema, "--to", "print", back}, &rows, &errb); code != 0 {
							t.Fatalf("reading back: exit %d: %s", code, errb.String())
						}
						for _, l := range strings.Split(strings.TrimSuffix(rows.String(), "\n"), "\n") {
							fmt.Fprintf(&got, "#   %s\n", l)
						}
					}
				}
				testutil.Golden(t, filepath.Join(root, "convert", from+"-to-"+to+".golden"), got.Bytes())
			})
		}
	}
}

// physicalColumns drops the METADATA columns of a column list.
func physicalColumns(t *testing.T, schema string) string {
	s, err := arrowconv.ParseColumns(schema)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range s.Physical() {
		cols = append(cols, "`"+c.Name+"` "+c.Type.String())
	}
	return strings.Join(cols, ", ")
}
