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

// TestTimestampYearRange: Flink accepts years 0000 to 9999, so MySQL's
// 0001-01-01 defaults and 9999-12-31 sentinels must decode at every
// precision that can hold them (0 to 6, held in microseconds), through
// print and through Parquet read back by pqarrow; precisions 7 to 9 need
// nanoseconds, and a value they cannot hold is an error that names the
// range, not the text's shape.
func TestTimestampYearRange(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.json")
	writeFile(t, in, []byte(
		`{"data":[{"id":"1","ts":"0001-01-01 00:00:00","ltz":"0001-01-01 00:00:00Z"}],"type":"INSERT"}`+"\n"+
			`{"data":[{"id":"2","ts":"9999-12-31 23:59:59.999999","ltz":"9999-12-31 23:59:59.999999Z"}],"type":"INSERT"}`+"\n"+
			`{"data":[{"id":"3","ts":"0000-01-01 00:00:00","ltz":"1970-01-01 00:00:00Z"}],"type":"INSERT"}`+"\n"))
	for p := 0; p <= 9; p++ {
		schema := fmt.Sprintf("id INT, ts TIMESTAMP(%d), ltz TIMESTAMP_LTZ(%d)", p, p)
		var stdout, stderr bytes.Buffer
		code := run([]string{"convert", "--quiet", "--format", "canal-json", "--schema", schema, "--to", "print", in}, &stdout, &stderr)
		if p >= 7 {
			if code != exitFailed || !strings.Contains(stderr.String(), "in.json:1:") || !strings.Contains(stderr.String(), "outside the range TIMESTAMP(") {
				t.Errorf("p=%d: exit %d, stderr %q; want exit 1 naming line 1 and the range", p, code, stderr.String())
			}
			continue
		}
		if code != 0 {
			t.Fatalf("p=%d: exit %d: %s", p, code, stderr.String())
		}
		frac := ".999999" // digits past p are kept in memory (to µs), as Flink keeps them
		want := "+I[1, 0001-01-01T00:00, 0001-01-01T00:00:00Z]\n" +
			"+I[2, 9999-12-31T23:59:59" + frac + ", 9999-12-31T23:59:59" + frac + "Z]\n" +
			"+I[3, 0000-01-01T00:00, 1970-01-01T00:00:00Z]\n"
		if stdout.String() != want {
			t.Errorf("p=%d: printed\n%swant\n%s", p, stdout.String(), want)
		}
		out := filepath.Join(dir, fmt.Sprintf("out%d", p))
		stderr.Reset()
		if code := run([]string{"convert", "--quiet", "--format", "canal-json", "--schema", schema, "-o", out, in}, &stdout, &stderr); code != 0 {
			t.Fatalf("p=%d: parquet: exit %d: %s", p, code, stderr.String())
		}
		rows, _, err := testutil.ReadParquet(filepath.Join(out, "in.json.parquet"), testutil.ReadMem)
		if err != nil {
			t.Fatal(err)
		}
		// Parquet keeps the declared precision's unit: milliseconds up to 3.
		pfrac := ".999999"
		if p <= 3 {
			pfrac = ".999"
		}
		pwant := "+I[1, 0001-01-01T00:00, 0001-01-01T00:00:00Z]\n" +
			"+I[2, 9999-12-31T23:59:59" + pfrac + ", 9999-12-31T23:59:59" + pfrac + "Z]\n" +
			"+I[3, 0000-01-01T00:00, 1970-01-01T00:00:00Z]"
		if got := strings.Join(rows, "\n"); got != pwant {
			t.Errorf("p=%d: Parquet read back\n%s\nwant\n%s", p, got, pwant)
		}
	}
}

// TestTimestampOutOfRangeNulled: under ignore-parse-errors a timestamp the
// column cannot hold (a nanosecond TIMESTAMP(9) in year 9999; SQL Server's
// nanosecond ts_ms read as Debezium's milliseconds) is NULL, counted and
// dead-lettered with the range in its reason, and so is a metadata value
// that is not a number: the counts reconcile.
func TestTimestampOutOfRangeNulled(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.json")
	writeFile(t, in, []byte(
		`{"before":null,"after":{"id":1,"ts":"9999-12-31 23:59:59"},"op":"c","ts_ms":1700000000000000000}`+"\n"+
			`{"before":null,"after":{"id":2,"ts":"2020-01-01 00:00:00"},"op":"c","ts_ms":1700000000000}`+"\n"+
			`{"before":null,"after":{"id":3,"ts":"2020-01-01 00:00:00"},"op":"c","ts_ms":"soon"}`+"\n"))
	dead := filepath.Join(dir, "dead")
	report := filepath.Join(dir, "r.json")
	var stdout, stderr bytes.Buffer
	code := run([]string{"convert", "--quiet", "--format", "debezium-json",
		"--schema", "id INT, ts TIMESTAMP(9), ing TIMESTAMP_LTZ(3) METADATA FROM 'ingestion-timestamp' VIRTUAL",
		"--dead-letter", dead, "--report", report, "--to", "print", in}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	want := "+I[1, null, null]\n+I[2, 2020-01-01T00:00, 2023-11-14T22:13:20Z]\n+I[3, 2020-01-01T00:00, null]\n"
	if stdout.String() != want {
		t.Errorf("printed\n%swant\n%s", stdout.String(), want)
	}
	data, err := os.ReadFile(filepath.Join(dead, "in.json.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 3 || !strings.Contains(lines[2], `"line":3`) || !strings.Contains(string(data), "outside the range TIMESTAMP(9) can hold (1677-09-21") ||
		!strings.Contains(string(data), "ts_ms 1700000000000000000 (epoch milliseconds) is outside the range TIMESTAMP_LTZ(3)") {
		t.Errorf("dead letters:\n%s", data)
	}
	rep, _ := os.ReadFile(report)
	if !bytes.Contains(rep, []byte(`"values_nulled": 3`)) || !bytes.Contains(rep, []byte(`"dead_letters": 3`)) {
		t.Errorf("report does not count the three nulled values:\n%s", rep)
	}
}
