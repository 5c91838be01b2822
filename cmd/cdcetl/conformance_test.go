package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/cdcetl/cdcetl/internal/testutil"
)

// The shared Flink conformance cases (../shared/conformance/flink), run
// through the CLI exactly as ../shared/conformance/run.py runs them. Skipped,
// with a message, when the shared folder is absent.

type flinkCase struct {
	schema string
	opts   map[string]string
	order  []string
}

func readFlinkCase(t *testing.T, path string) flinkCase {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	c := flinkCase{opts: map[string]string{}}
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if c.schema == "" {
			c.schema = line
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		c.opts[k] = v
		c.order = append(c.order, k)
	}
	return c
}

var harnessKeys = map[string]bool{"input": true, "lines": true, "mode": true, "expect-error": true, "expect-error-line": true, "format": true}

// normMaps sorts the entries of printed maps: Flink prints HashMap order.
var mapRe = regexp.MustCompile(`\{([^{}"]*=[^{}"]*)\}`)

func normMaps(s string) string {
	return mapRe.ReplaceAllStringFunc(s, func(m string) string {
		parts := strings.Split(m[1:len(m)-1], ", ")
		sort.Strings(parts)
		return "{" + strings.Join(parts, ", ") + "}"
	})
}

func TestFlinkConformance(t *testing.T) {
	dir := testutil.SharedConformance(t)
	cases, _ := filepath.Glob(filepath.Join(dir, "*.case"))
	for _, path := range cases {
		name := strings.TrimSuffix(filepath.Base(path), ".case")
		if strings.Contains(name, ".fs-roundtrip") {
			continue // needs SQL projection; not run by run.py either
		}
		t.Run(name, func(t *testing.T) {
			c := readFlinkCase(t, path)
			mode := c.opts["mode"]
			input := filepath.Join(dir, c.opts["input"])
			if c.opts["lines"] == "1" {
				data, _ := os.ReadFile(input)
				first, _, _ := bytes.Cut(data, []byte("\n"))
				input = filepath.Join(t.TempDir(), "first.jsonl")
				os.WriteFile(input, append(first, '\n'), 0o644)
			}
			format := c.opts["format"]
			args := []string{"convert", "--format", format, "--schema", c.schema}
			for _, k := range c.order {
				if !harnessKeys[k] {
					args = append(args, "--option", k+"="+c.opts[k])
				}
			}
			to := "print"
			if mode == "encode" {
				to = format
			}
			args = append(args, "--to", to, input)
			var stdout, stderr bytes.Buffer
			code := run(args, &stdout, &stderr)
			if want, ok := c.opts["expect-error"]; ok {
				if code != 1 {
					t.Fatalf("exit %d, want 1", code)
				}
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr %q does not contain %q", stderr.String(), want)
				}
				if l := c.opts["expect-error-line"]; l != "" && !strings.Contains(stderr.String(), ":"+l+":") {
					t.Errorf("stderr %q does not name line %s", stderr.String(), l)
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			expected, err := os.ReadFile(filepath.Join(dir, name+".expected"))
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
			if mode == "encode" {
				// Encoded lines are compared byte for byte.
				want, _ := os.ReadFile(filepath.Join(dir, name+".expected"))
				if stdout.String() != string(want) {
					t.Errorf("encoded output differs:\n%s", testutil.Diff(string(want), stdout.String()))
				}
				return
			}
			if strings.HasSuffix(name, ".metadata") {
				var want []string
				rows := -1
				for _, l := range strings.Split(string(expected), "\n") {
					if d, ok := strings.CutPrefix(l, "derived: "); ok {
						want = append(want, normMaps(d))
					}
					if n, ok := strings.CutPrefix(l, "rows="); ok {
						rows = atoi(n)
					}
				}
				if rows >= 0 && rows != len(got) {
					t.Errorf("%d rows, want %d", len(got), rows)
				}
				for i, w := range want {
					if i >= len(got) || normMaps(got[i]) != w {
						t.Errorf("row %d:\n got %q\nwant %q", i, got[min(i, len(got)-1)], w)
					}
				}
				return
			}
			want := strings.Split(strings.TrimSuffix(string(expected), "\n"), "\n")
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("output differs:\n%s", testutil.Diff(strings.Join(want, "\n"), strings.Join(got, "\n")))
			}
		})
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// TestFlinkFieldConversions runs json-field-conversions.tsv through the
// plain json format, lenient and (where Flink asserts an error) strict.
func TestFlinkFieldConversions(t *testing.T) {
	dir := testutil.SharedConformance(t)
	data, err := os.ReadFile(filepath.Join(dir, "json-field-conversions.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "json\t") {
			continue
		}
		cols := strings.Split(line, "\t")
		in, schema, tsf, lenient, strict := strings.ReplaceAll(cols[0], `\t`, "\t"), cols[1], cols[2], strings.ReplaceAll(cols[3], `\t`, "\t"), cols[4]
		f := filepath.Join(t.TempDir(), "v.jsonl")
		os.WriteFile(f, []byte(in+"\n"), 0o644)
		for _, mode := range []string{"true", "false"} {
			if mode == "false" && strict != "error" {
				continue
			}
			var stdout, stderr bytes.Buffer
			code := run([]string{"convert", "--format", "json", "--schema", schema, "--option", "json.timestamp-format.standard=" + tsf,
				"--option", "json.ignore-parse-errors=" + mode, "--to", "print", f}, &stdout, &stderr)
			got := strings.TrimSuffix(stdout.String(), "\n")
			switch {
			case mode == "true" && (code != 0 || got != lenient):
				t.Errorf("%s as %s (lenient): got %q exit %d, want %q", in, schema, got, code, lenient)
			case mode == "false" && code != 1:
				t.Errorf("%s as %s (strict): exit %d, want an error", in, schema, code)
			}
			n++
		}
	}
	if n < 30 {
		t.Errorf("only %d vectors run", n)
	}
}

// TestFlinkEncodeVectors runs json-encode-vectors.tsv (the rows not built in
// code) through --format json --to json.
func TestFlinkEncodeVectors(t *testing.T) {
	dir := testutil.SharedConformance(t)
	data, err := os.ReadFile(filepath.Join(dir, "json-encode-vectors.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "test\t") {
			continue
		}
		cols := strings.Split(line, "\t")
		schema, opts, in, want := cols[1], cols[2], cols[3], cols[4]
		if strings.HasPrefix(in, "(built in code)") {
			continue
		}
		f := filepath.Join(t.TempDir(), "v.jsonl")
		os.WriteFile(f, []byte(in+"\n"), 0o644)
		args := []string{"convert", "--format", "json", "--schema", schema, "--option", "json.ignore-parse-errors=true"}
		for _, o := range strings.Split(opts, ", ") {
			if o != "" {
				args = append(args, "--option", "json."+o)
			}
		}
		var stdout, stderr bytes.Buffer
		code := run(append(args, "--to", "json", f), &stdout, &stderr)
		if got := strings.TrimSuffix(stdout.String(), "\n"); code != 0 || got != want {
			t.Errorf("%s (%s): got %q exit %d %s, want %q", cols[0], opts, got, code, stderr.String(), want)
		}
		n++
	}
	if n < 8 {
		t.Errorf("only %d vectors run", n)
	}
}
