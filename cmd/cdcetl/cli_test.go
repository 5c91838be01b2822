package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExitCodesAndReport: usage errors exit 2 before reading input; a bad
// file stops a run with 1; with --keep-going the others are converted, the
// run exits 3 and the report accounts for every line.
func TestExitCodesAndReport(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	os.MkdirAll(in, 0o755)
	os.WriteFile(filepath.Join(in, "a.json"), []byte(`{"data":[{"id":"1"}],"type":"INSERT"}`+"\n\n"), 0o644)
	os.WriteFile(filepath.Join(in, "b.json"), []byte(`{"data":[{"id":"x"}],"type":"INSERT"}`+"\n"), 0o644)
	base := []string{"convert", "--quiet", "--format", "canal-json", "--schema", "id INT"}
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"convert", "--format", "canal-json", "--schema", "id INTEGR", in}, exitUsage},
		{append(append([]string{}, base...), "--option", "canal-json.ignore-parse-errors=maybe", in), exitUsage},
		{append(append([]string{}, base...), "--option", "maxwell-json.ignore-parse-errors=true", in), exitUsage},
		{append(append([]string{}, base...), "--schema", "id INT, t STRING METADATA FROM 'nope' VIRTUAL", in), exitUsage},
		{append(append([]string{}, base...), "-o", filepath.Join(dir, "o1"), in), exitFailed},
		{append(append([]string{}, base...), "--keep-going", "-o", filepath.Join(dir, "o2"), "--report", filepath.Join(dir, "r.json"), in), exitPartial},
		{[]string{"frobnicate"}, exitUsage},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(tt.args, &stdout, &stderr); code != tt.code {
			t.Errorf("%v: exit %d, want %d (%s)", tt.args, code, tt.code, stderr.String())
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "r.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		OK       bool   `json:"ok"`
		Error    string `json:"error"`
		Lines    int    `json:"lines"`
		Messages int    `json:"messages"`
		Blank    int    `json:"blank"`
		Failed   int    `json:"failed_inputs"`
		PerFile  []struct {
			Path  string `json:"path"`
			Error string `json:"error"`
		} `json:"per_file"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.OK || rep.Failed != 1 || len(rep.PerFile) != 2 || !strings.Contains(rep.PerFile[1].Error, "b.json:1:") {
		t.Errorf("report: %s", data)
	}
	if _, err := os.Stat(filepath.Join(dir, "o2", "a.json.parquet")); err != nil {
		t.Errorf("the good file was not converted: %v", err)
	}
}
