package pipeline

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// FilesystemKeys are Flink's filesystem connector options that cdcetl's
// partitioned Parquet output takes (from a DDL's WITH or --option). Those that pace a
// streaming job (when to roll by time, when to commit a partition) have
// nothing to pace here: each input's files complete with the input, and
// partitions are committed when the run ends. They are checked as Flink
// checks them and otherwise change nothing.
var FilesystemKeys = []string{
	"sink.rolling-policy.file-size",
	"sink.rolling-policy.rollover-interval",
	"sink.rolling-policy.check-interval",
	"sink.rolling-policy.inactivity-interval",
	"partition.default-name",
	"sink.partition-commit.policy.kind",
	"sink.partition-commit.success-file.name",
	"sink.partition-commit.trigger",
	"sink.partition-commit.delay",
	"sink.partition-commit.watermark-time-zone",
	"partition.time-extractor.kind",
	"partition.time-extractor.class",
	"partition.time-extractor.timestamp-pattern",
	"partition.time-extractor.timestamp-formatter",
}

// ParseFilesystemOptions takes the filesystem keys out of kv (a DDL's
// WITH options, or the command line's), checked as Flink checks them;
// given says whether kv held any.
func ParseFilesystemOptions(kv map[string]string) (_ FilesystemOptions, given bool, _ error) {
	var o FilesystemOptions
	successName := ""
	bad := func(k, v, want string) error {
		return fmt.Errorf("option '%s' = '%s': %s", k, v, want)
	}
	for _, k := range FilesystemKeys {
		v, ok := kv[k]
		if !ok {
			continue
		}
		delete(kv, k)
		given = true
		switch k {
		case "sink.rolling-policy.file-size":
			n, err := parseMemorySize(v)
			if err != nil || n <= 0 {
				return o, given, bad(k, v, "want a size such as 128MB, 1 gb or 1048576 (bytes)")
			}
			o.RollBytes = n
		case "sink.rolling-policy.rollover-interval", "sink.rolling-policy.check-interval", "sink.rolling-policy.inactivity-interval", "sink.partition-commit.delay":
			if _, err := parseFlinkDuration(v); err != nil {
				return o, given, bad(k, v, "want a duration such as 30 min, 1 h or 10s")
			}
		case "partition.default-name":
			if v == "" {
				return o, given, bad(k, v, "want a non-empty name")
			}
			o.DefaultPartitionName = v
		case "sink.partition-commit.policy.kind":
			for _, p := range strings.Split(v, ",") {
				switch strings.TrimSpace(p) {
				case "success-file":
					if o.SuccessFile == "" {
						o.SuccessFile = "_SUCCESS"
					}
				case "metastore":
					return o, given, bad(k, v, "cdcetl writes no metastore: keep 'success-file' and register the partitions from the files (for example MSCK REPAIR TABLE, or DuckDB's hive_partitioning)")
				case "custom":
					return o, given, bad(k, v, "custom commit policies are Java classes: use 'success-file'")
				default:
					return o, given, bad(k, v, "want success-file (metastore and custom are Flink's, with a Hive metastore or a Java class)")
				}
			}
		case "sink.partition-commit.success-file.name":
			if v == "" || strings.ContainsAny(v, `/\`) {
				return o, given, bad(k, v, "want a file name")
			}
			successName = v
		case "sink.partition-commit.trigger":
			if v != "process-time" && v != "partition-time" {
				return o, given, bad(k, v, "want process-time or partition-time")
			}
		case "sink.partition-commit.watermark-time-zone":
			if _, err := time.LoadLocation(v); err != nil {
				return o, given, bad(k, v, "want a time zone such as UTC or Asia/Shanghai")
			}
		case "partition.time-extractor.kind":
			if v != "default" && v != "custom" {
				return o, given, bad(k, v, "want default or custom")
			}
			if v == "custom" {
				return o, given, bad(k, v, "custom time extractors are Java classes: use default with partition.time-extractor.timestamp-pattern")
			}
		case "partition.time-extractor.class":
			return o, given, bad(k, v, "custom time extractors are Java classes: use partition.time-extractor.timestamp-pattern")
		case "partition.time-extractor.timestamp-pattern", "partition.time-extractor.timestamp-formatter":
			if strings.TrimSpace(v) == "" {
				return o, given, bad(k, v, "want a pattern such as '$dt $hr:00:00'")
			}
		}
	}
	if o.SuccessFile != "" && successName != "" {
		o.SuccessFile = successName
	}
	return o, given, nil
}

// parseMemorySize reads a size as Flink's MemorySize does: a number and
// an optional unit (b, k/kb, m/mb, g/gb, t/tb, binary multiples).
func parseMemorySize(s string) (int64, error) {
	n, unit, err := numberAndUnit(s)
	if err != nil {
		return 0, err
	}
	shift := 0
	switch unit {
	case "", "b", "bytes":
	case "k", "kb", "kibibytes":
		shift = 10
	case "m", "mb", "mebibytes":
		shift = 20
	case "g", "gb", "gibibytes":
		shift = 30
	case "t", "tb", "tebibytes":
		shift = 40
	default:
		return 0, fmt.Errorf("unknown unit %q", unit)
	}
	if n > (1<<62)>>shift {
		return 0, fmt.Errorf("too large")
	}
	return n << shift, nil
}

// parseFlinkDuration reads a duration as Flink's TimeUtils does: a number
// and a unit (ms, s, min, h, d and their long names; none: ms).
func parseFlinkDuration(s string) (time.Duration, error) {
	n, unit, err := numberAndUnit(s)
	if err != nil {
		return 0, err
	}
	u, ok := durationUnits[unit]
	if !ok {
		return 0, fmt.Errorf("unknown unit %q", unit)
	}
	return time.Duration(n) * u, nil
}

var durationUnits = map[string]time.Duration{"": time.Millisecond, "ms": time.Millisecond, "milli": time.Millisecond, "millis": time.Millisecond, "millisecond": time.Millisecond, "milliseconds": time.Millisecond,
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hour": time.Hour, "hours": time.Hour, "d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour}

// numberAndUnit splits "128 MB" into 128 and "mb" (the unit lower-cased,
// "" when none).
func numberAndUnit(s string) (int64, string, error) {
	s = strings.TrimSpace(s)
	num, unit := s, ""
	if i := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsDigit(r) }); i >= 0 {
		num, unit = s[:i], strings.ToLower(strings.TrimSpace(s[i:]))
	}
	n, err := strconv.ParseInt(num, 10, 64)
	return n, unit, err
}

// FilesystemOptions are the options of Flink's filesystem connector that
// apply to cdcetl's Parquet output.
type FilesystemOptions struct {
	// RollBytes rolls a partition's file at this size (0: never).
	RollBytes int64
	// DefaultPartitionName is the directory value of NULL
	// (partition.default-name, default __DEFAULT_PARTITION__).
	DefaultPartitionName string
	// SuccessFile, when set, is the name of the file written into each
	// partition directory once its rows are converted (_SUCCESS).
	SuccessFile string
}

// DefaultPartitionName is Flink's partition.default-name.
const DefaultPartitionName = "__DEFAULT_PARTITION__"
