package main

import (
	"bytes"
	"compress/gzip"
	"path/filepath"
	"strings"
	"testing"
)

// TestHints: the common mistakes get one line after the error that says
// what to change; the ones that do not stop a run are warnings.
func TestHints(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name, format, schema, input string
		options                     []string
		hint                        string // in the "  hint:" line (or a warning)
	}{
		{"debezium envelope without schema-include", "debezium-json", "id INT",
			`{"schema":{"type":"struct"},"payload":{"before":null,"after":{"id":1},"op":"c"}}`, nil,
			"hint: the message is a Debezium schema/payload envelope: add --option debezium-json.schema-include=true"},
		{"ISO text under the SQL standard", "debezium-json", "id INT, ts TIMESTAMP(3)",
			`{"before":null,"after":{"id":1,"ts":"2020-01-01T10:00:00"},"op":"c"}`, nil,
			"hint: the value is ISO-8601 text (a T before the time): add --option debezium-json.timestamp-format.standard=ISO-8601"},
		{"SQL text under ISO-8601", "canal-json", "id INT, ts TIMESTAMP(3)",
			`{"data":[{"id":"1","ts":"2020-01-01 10:00:00"}],"type":"INSERT"}`, []string{"canal-json.timestamp-format.standard=ISO-8601"},
			"hint: the value is SQL text"},
		{"epoch number into TIMESTAMP", "debezium-json", "id INT, ts TIMESTAMP(3)",
			`{"before":null,"after":{"id":1,"ts":1577872800000},"op":"c"}`, nil,
			"an epoch number needs a BIGINT column"},
		{"epoch days into DATE", "debezium-json", "id INT, d DATE",
			`{"before":null,"after":{"id":1,"d":18262},"op":"c"}`, nil,
			"--semantics producer reads epoch days (Debezium's Date) into DATE, or declare the column INT"},
		{"base64 decimal", "debezium-json", "id INT, p DECIMAL(10, 2)",
			`{"before":null,"after":{"id":1,"p":"AfE="},"op":"c"}`, nil,
			"Debezium's base64-encoded decimal"},
		{"wrong --format", "canal-json", "id INT",
			`{"database":"d","table":"t","type":"insert","ts":1,"data":{"id":1}}`, nil,
			`hint: the message looks like maxwell-json (it has "database", "table", "type", "data"): use --format maxwell-json`},
		{"canal DDL other than CREATE", "canal-json", "id INT",
			`{"data":null,"database":"d","table":"t","type":"ALTER","isDdl":true,"sql":"ALTER TABLE t ADD c INT"}`, nil,
			"Flink's canal-json skips only CREATE among Canal's DDL and control messages: --semantics producer"},
		{"column matching no key", "ogg-json", "id INT",
			`{"table":"S.T","op_type":"I","op_ts":"2020-01-01 00:00:00","after":{"ID":1}}`, nil,
			`warning: ` + filepath.Join(dir, "column matching no key.json") + `: column id is NULL in all 1 rows: the messages have no key "id" (they have "ID"; names are case-sensitive: --column-case insensitive matches them)`},
		{"several canal tables", "canal-json", "id INT",
			`{"data":[{"id":"1"}],"database":"d","table":"t1","type":"INSERT"}` + "\n" + `{"data":[{"id":"2"}],"database":"d","table":"t2","type":"INSERT"}`, nil,
			"warning: canal-json messages of 2 tables (d.t1, d.t2) were all decoded with one schema: pick one with --option canal-json.table.include=REGEX"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := filepath.Join(dir, tt.name+".json")
			writeFile(t, in, []byte(tt.input+"\n"))
			args := []string{"convert", "--format", tt.format, "--schema", tt.schema}
			for _, o := range tt.options {
				args = append(args, "--option", o)
			}
			var stdout, stderr bytes.Buffer
			run(append(args, in), &stdout, &stderr)
			if !strings.Contains(stderr.String(), tt.hint) {
				t.Errorf("stderr:\n%s\nwant it to contain:\n%s", stderr.String(), tt.hint)
			}
		})
	}
	// A gzip file cut short says so.
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for i := 0; i < 3000; i++ {
		zw.Write([]byte(`{"before":null,"after":{"id":1,"name":"some text to compress"},"op":"c"}` + "\n"))
	}
	zw.Close()
	in := filepath.Join(dir, "cut.json.gz")
	writeFile(t, in, buf.Bytes()[:buf.Len()/2])
	var stdout, stderr bytes.Buffer
	code := run([]string{"convert", "--format", "debezium-json", "--schema", "id INT", "-o", filepath.Join(dir, "o"), in}, &stdout, &stderr)
	if code != exitFailed || !strings.Contains(stderr.String(), "gzip stream truncated after") || strings.Contains(stderr.String(), "unexpected EOF") {
		t.Errorf("truncated gzip: exit %d:\n%s", code, stderr.String())
	}
}
