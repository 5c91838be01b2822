package pipeline

import (
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
		o, given, err := ParseFilesystemOptions(c.kv)
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
		o, _, err := ParseFilesystemOptions(kv)
		if err == nil && o.RollBytes < 0 {
			t.Fatalf("%q=%q: negative size %d", k, v, o.RollBytes)
		}
		parseMemorySize(v)
		parseFlinkDuration(v)
	})
}
