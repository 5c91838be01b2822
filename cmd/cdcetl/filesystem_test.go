package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDDLPartitionedBy: a Flink filesystem DDL with PARTITIONED BY and the
// connector's options writes Hive-style directories, rolls and commits
// them, as Flink's filesystem sink lays them out.
func TestDDLPartitionedBy(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.json")
	var b strings.Builder
	for i := range 300 {
		b.WriteString(`{"data":[{"id":"` + itoa(i) + `","dt":"2024-10-0` + itoa(1+i%3) + `","name":"` + strings.Repeat("n", i%40) + `"}],"type":"INSERT"}` + "\n")
	}
	os.WriteFile(in, []byte(b.String()), 0o644)
	ddl := filepath.Join(dir, "t.sql")
	os.WriteFile(ddl, []byte(`CREATE TABLE t (id BIGINT, dt STRING, name STRING) PARTITIONED BY (dt) WITH (
  'connector' = 'filesystem', 'format' = 'canal-json',
  'sink.rolling-policy.file-size' = '2kb',
  'sink.partition-commit.policy.kind' = 'success-file',
  'partition.time-extractor.timestamp-pattern' = '$dt 00:00:00')`), 0o644)
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"convert", "--quiet", "--ddl", ddl, "--batch-rows", "20", "-o", out, in}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for d := 1; d <= 3; d++ {
		part := filepath.Join(out, "dt=2024-10-0"+itoa(d))
		files, _ := filepath.Glob(filepath.Join(part, "*.parquet"))
		if len(files) < 2 {
			t.Errorf("%s: %d files, want the 2 KiB roll to make several", part, len(files))
		}
		if _, err := os.Stat(filepath.Join(part, "_SUCCESS")); err != nil {
			t.Error(err)
		}
	}
	var printed bytes.Buffer
	run([]string{"convert", "--quiet", "--ddl", ddl, in}, &printed, &stderr)
	if n := strings.Count(printed.String(), "+I["); n != 300 {
		t.Fatalf("print: %d rows", n)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
