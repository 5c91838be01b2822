package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestFilesystemOptions(t *testing.T) {
	for _, c := range []struct {
		kv      map[string]string
		roll    int64
		success string
		err     string
	}{
		{kv: map[string]string{"sink.rolling-policy.file-size": "128MB"}, roll: 128 << 20},
		{kv: map[string]string{"sink.rolling-policy.file-size": "1 gb"}, roll: 1 << 30},
		{kv: map[string]string{"sink.rolling-policy.file-size": "4096"}, roll: 4096},
		{kv: map[string]string{"sink.rolling-policy.file-size": "12 apples"}, err: "want a size"},
		{kv: map[string]string{"sink.partition-commit.policy.kind": "success-file"}, success: "_SUCCESS"},
		{kv: map[string]string{"sink.partition-commit.policy.kind": "success-file", "sink.partition-commit.success-file.name": "_DONE"}, success: "_DONE"},
		{kv: map[string]string{"sink.partition-commit.success-file.name": "_DONE"}}, // no policy: no file
		{kv: map[string]string{"sink.partition-commit.policy.kind": "metastore,success-file"}, err: "no metastore"},
		{kv: map[string]string{"sink.partition-commit.trigger": "partition-time", "sink.partition-commit.delay": "1 h", "partition.time-extractor.timestamp-pattern": "$dt $hr:00:00"}},
		{kv: map[string]string{"sink.partition-commit.delay": "soon"}, err: "want a duration"},
		{kv: map[string]string{"partition.time-extractor.kind": "custom"}, err: "Java classes"},
	} {
		o, given, err := filesystemOptions(c.kv)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: err = %v, want %q", c.kv, err, c.err)
			}
			continue
		}
		if err != nil || !given || o.RollBytes != c.roll || o.SuccessFile != c.success {
			t.Errorf("%v: %+v given=%v err=%v", c.kv, o, given, err)
		}
		if len(c.kv) != 0 {
			t.Errorf("keys left for the formats: %v", c.kv)
		}
	}
}

func FuzzFilesystemOptions(f *testing.F) {
	f.Add("sink.rolling-policy.file-size", "128 mb")
	f.Add("sink.partition-commit.delay", "10 min")
	f.Add("sink.partition-commit.policy.kind", "success-file,metastore")
	f.Fuzz(func(t *testing.T, k, v string) {
		kv := map[string]string{k: v}
		o, _, err := filesystemOptions(kv)
		if err == nil && o.RollBytes < 0 {
			t.Fatalf("%q=%q: negative size %d", k, v, o.RollBytes)
		}
		parseMemorySize(v)
		parseFlinkDuration(v)
	})
}

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
