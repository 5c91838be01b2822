package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/internal/setting"
	"github.com/cdcetl/cdcetl/pipeline"
	"github.com/cdcetl/cdcetl/reader"
)

// TestUsageErrors: every mistake on the command line exits 2 before any
// input is read, says what to do instead, prints no "0 files" summary,
// and no internal package name reaches the user.
func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.json")
	writeFile(t, in, []byte(`{"data":[{"id":"1"}],"type":"INSERT"}`+"\n"))
	base := []string{"convert", "--format", "canal-json", "--schema", "id INT"}
	with := func(extra ...string) []string { return append(append([]string{}, base...), extra...) }
	for _, tt := range []struct {
		args []string
		want string
	}{
		{with("--formt", "x", in), "unknown flag --formt (did you mean --format?)"},
		{[]string{"convert", "--format", "canal-jsn", "--schema", "id INT", in}, `unknown format "canal-jsn" (did you mean canal-json?)`},
		{with("--to", "parquett", "-o", dir, in), `unknown output --to "parquett" (did you mean parquet?)`},
		{with("--option", "canal-json.tabel.include=x", in), "(did you mean 'canal-json.table.include'?)"},
		{[]string{"convert", "--format", "canal-json", "--schema", "id INT, t STRING METADATA FROM 'tabel' VIRTUAL", in}, "(did you mean 'table'?)"},
		{with("--workers", "0", in), "--workers 0: want a number of at least 1"},
		{with("--batch-rows", "-1", in), "--batch-rows -1: want a number of at least 1"},
		{with("--row-group-rows", "0", "-o", dir, in), "--row-group-rows 0: want a number of at least 1"},
		{with("--workers", "two", in), "--workers two: want a whole number"},
		{with(filepath.Join(dir, "missing.json")), "input " + filepath.Join(dir, "missing.json") + ": no such file or directory"},
		{with("--compression", "lz5", "-o", dir, in), `--compression: compression "lz5" is not a Parquet codec`},
		{[]string{"watch", "--format", "canal-json", "--schema", "id INT", "--settle", "5", dir, "-o", filepath.Join(dir, "o")}, "--settle 5: a duration is a number with a unit: 5s, 500ms, 2m"},
		{[]string{"convert", "--primary-key", "shop.k", in}, `--primary-key "shop.k": want NS.TABLE=COL[,COL]`},
		{[]string{"convert", "--primary-key", "shop.(k=id", in}, `is not a Go RE2 expression`},
		{[]string{"convert", "--column-type", "shop.k.v=NUMBR", in}, `--column-type "shop.k.v=NUMBR"`},
		{[]string{"convert", "--column-type", "v=INT", in}, `want NS.TABLE.COL=TYPE`},
		{with("--primary-key", "shop.k=id", in), "--primary-key and --column-type: say what inference cannot know; with a schema, declare it there"},
		{[]string{"convert", "--dedup-inputs", in}, "--dedup-inputs: compares inputs with those converted into an output directory"},
		{[]string{"help", "foo"}, `no help topic "foo"`},
		{[]string{"convrt"}, `unknown command "convrt" (did you mean convert?)`},
	} {
		var stdout, stderr bytes.Buffer
		code := run(tt.args, &stdout, &stderr)
		msg := stderr.String()
		if code != exitUsage || !strings.Contains(msg, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 with %q", tt.args, code, msg, tt.want)
		}
		if strings.Contains(msg, " files, ") || regexp.MustCompile(`(pipeline|reader|writer|decode|arrowconv|watch): `).MatchString(msg) {
			t.Errorf("%v: stderr %q has a summary or an internal package name", tt.args, msg)
		}
	}
}

// TestHelpFitsAndAgrees: 'convert --help' fits a terminal; options and
// metadata keys are topics of their own, each option listed once; the
// README and docs/ say what the help says.
func TestHelpFitsAndAgrees(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"convert", "--help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n")
	if len(lines) > 40 {
		t.Errorf("convert --help has %d lines, want at most 40", len(lines))
	}
	for _, l := range lines {
		if len(l) > 90 {
			t.Errorf("convert --help line wider than 90 columns: %q", l)
		}
	}
	if strings.Count(stdout.String(), "Examples:") != 1 || strings.Count(stdout.String(), "  cdcetl convert ") < 3 {
		t.Errorf("convert --help lacks three examples:\n%s", stdout.String())
	}
	for _, topic := range []string{"flags", "options", "metadata", "watch", "convert"} {
		stdout.Reset()
		if code := run([]string{"help", topic}, &stdout, &stderr); code != 0 || stdout.Len() == 0 {
			t.Errorf("help %s: exit %d", topic, code)
		}
	}
	stdout.Reset()
	run([]string{"help", "options"}, &stdout, &stderr)
	// The README and the pages of docs/ (one text: a topic may move
	// between them).
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages, _ := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	for _, p := range pages {
		if filepath.Base(p) == "cli.md" {
			continue // generated from the help itself
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		readme = append(readme, data...)
	}
	docs, _ := decode.AllOptionDocs()
	for _, d := range docs {
		if n := strings.Count(stdout.String(), "  "+d.Key+" (default"); n != 1 {
			t.Errorf("help options lists %s %d times", d.Key, n)
		}
		if !bytes.Contains(readme, []byte("`"+d.Key+"`")) {
			t.Errorf("README does not document option %s", d.Key)
		}
	}
	for _, phrase := range []string{"Go RE2", "snappy (default)", "none (default)"} {
		if !strings.Contains(stdout.String()+strings.Join(lines, "\n"), phrase) || !bytes.Contains(readme, []byte(phrase)) {
			t.Errorf("help and README do not both say %q", phrase)
		}
	}
}

// TestReportIsTheTruth: the report has the run's status, version, times
// and every input's outcome (failed ones with their error and no
// outputs); per_file is a list even when empty; an empty input directory
// and an all-converted one say so.
func TestReportIsTheTruth(t *testing.T) {
	dir := t.TempDir()
	in, out, rep := filepath.Join(dir, "in"), filepath.Join(dir, "out"), filepath.Join(dir, "report.json")
	os.MkdirAll(in, 0o755)
	read := func() map[string]any {
		t.Helper()
		data, err := os.ReadFile(rep)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	args := []string{"convert", "--format", "canal-json", "--schema", "id INT", "--keep-going", "-o", out, "--report", rep, in}
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != 0 || !strings.Contains(stderr.String(), "no input files under "+in) {
		t.Errorf("empty directory: exit %d: %s", code, stderr.String())
	}
	if m := read(); m["status"] != "ok" || m["per_file"] == nil || len(m["per_file"].([]any)) != 0 {
		t.Errorf("empty run's report: %v", m)
	}
	writeFile(t, filepath.Join(in, "a.json"), []byte(`{"data":[{"id":"1"}],"type":"INSERT"}`+"\n"))
	writeFile(t, filepath.Join(in, "b.json"), []byte(`{"data":[{"id":"x"}],"type":"INSERT"}`+"\n"))
	stderr.Reset()
	if code := run(args, &stdout, &stderr); code != exitPartial {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	m := read()
	for _, k := range []string{"version", "started", "finished", "duration_seconds", "output_dir", "error"} {
		if _, ok := m[k]; !ok {
			t.Errorf("report has no %q: %v", k, m)
		}
	}
	if m["status"] != "partial" || m["version"] != version {
		t.Errorf("status %v version %v", m["status"], m["version"])
	}
	pf := m["per_file"].([]any)
	a, b := pf[0].(map[string]any), pf[1].(map[string]any)
	if a["status"] != "ok" || a["outputs"] == nil || b["status"] != "failed" || b["outputs"] != nil || !strings.Contains(b["error"].(string), "b.json:1:") {
		t.Errorf("per_file: %v", pf)
	}
	stderr.Reset()
	run(args, &stdout, &stderr) // b.json fails again; a.json is skipped
	if pf := read()["per_file"].([]any); pf[0].(map[string]any)["status"] != "skipped" {
		t.Errorf("rerun per_file: %v", pf)
	}
	os.Remove(filepath.Join(in, "b.json"))
	stderr.Reset()
	if code := run(args, &stdout, &stderr); code != 0 || !strings.Contains(stderr.String(), "nothing to do: all 1 inputs were already converted") {
		t.Errorf("all converted: exit %d: %s", code, stderr.String())
	}
}

// TestConfigErrorsNameFlags: a rule the library's Config.Validate
// enforces reaches the user as a usage error naming the flag.
func TestConfigErrorsNameFlags(t *testing.T) {
	fields := []string{"OutDir", "Format", "TableMode", "Materialize", "DDLDir", "OnSuccess", "DedupInputs", "DeadLetterDir", "Shard"}
	for field := range configFlags {
		fields = append(fields, field)
	}
	for _, field := range fields {
		flag, ok := fieldFlag(field)
		if !ok {
			t.Fatalf("%s has no flag", field)
		}
		err := configError(fmt.Errorf("run: %w", &pipeline.ConfigError{Field: field, Reason: "why"}))
		var ue usageError
		if !errors.As(err, &ue) || err.Error() != flag+": why" {
			t.Errorf("%s: %v (%T), want a usage error %q", field, err, err, flag+": why")
		}
	}
}

// TestSettingsNameFlags: every setting a library message advises
// changing reads as a flag the command line has.
func TestSettingsNameFlags(t *testing.T) {
	ref := cliReference()
	for _, n := range setting.All {
		flag := n.String()
		if !strings.HasPrefix(flag, "-") || !strings.Contains(ref, flag+" ") && !strings.Contains(ref, flag+"`") {
			t.Errorf("%s reads %q: not a flag of the reference", string(n), flag)
		}
	}
	if got := reader.ErrLineTooLong.Error(); !strings.Contains(got, "--max-line-size") {
		t.Errorf("a package-level error reads %q", got)
	}
}
