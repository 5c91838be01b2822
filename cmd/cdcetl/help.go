package main

import (
	"errors"
	"flag"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/cdcetl/cdcetl/decode"
)

// Help texts: 'convert --help' fits a terminal; the full flag list, the
// option table and the metadata keys are topics of 'cdcetl help'.

const convertUsage = `Usage: cdcetl convert [flags] PATH...

Decodes CDC JSON messages, one per line (directories recursively; .gz and
.zst read as such), exactly as Flink's formats do, and writes the changelog.

Common flags:
  --format FORMAT    canal-json, maxwell-json, ogg-json, debezium-json, json
  --schema COLUMNS   Flink SQL columns: "id BIGINT, name STRING, PRIMARY KEY (id) ..."
  --ddl FILE         a Flink CREATE TABLE: columns, 'format', 'path' and options from WITH
  --option K=V       a format option keyed as in Flink DDL (cdcetl help options)
  --to OUTPUT        print (default without -o), parquet (default with -o), iceberg,
                     or a format to re-encode to
  -o DIR             one output per input under DIR, journaled: reruns are incremental
                     (iceberg: the warehouse; --table-mode)
  --partition-by P   "day(ts), bucket(16, id)": Iceberg partitions, or Hive-style dirs
  --materialize      parquet: also keep tables' current state in OUT/_current/
  --compression C    Parquet: snappy (default), zstd, gzip, none;
                     re-encoded JSON: none (default), gzip, zstd
  --dead-letter DIR  keep what cannot be decoded (turns on ignore-parse-errors)
  --keep-going       a bad input is journaled as failed and the others go on (exit 3)
  --force            convert every input again, whatever the journal in -o DIR says
  --report FILE      the run as JSON: status, times, counts and outcome per input
  --workers N        cores to use (default: all)

More flags: --shard i/n (scale out), --catalog, --table, --dedup, --no-lineage,
--failed, --on-success, --merge-updates, --envelope, --batch-rows,
--row-group-rows, --parquet-dictionary, --parquet-delta, --max-line-size,
--log-format, --cpuprofile, --memprofile, --quiet: 'cdcetl help flags'. Metadata columns
(name TYPE METADATA FROM 'key' VIRTUAL): 'cdcetl help metadata'.

Examples:
  cdcetl convert --format canal-json --schema "id BIGINT, name STRING" --to print in.json
  cdcetl convert --ddl products.sql -o lake/ archive/
  cdcetl convert archive/ --to iceberg --table-mode upsert -o warehouse/
  cdcetl convert --format debezium-json --schema "id BIGINT, name STRING" \
      --option debezium-json.ignore-parse-errors=true --keep-going -o out/ in/

Exit status: 0 ok; 1 a message could not be decoded (FILE:LINE:COL: reason)
or an I/O error, no partial output left; 2 usage, nothing read; 3 some
inputs failed (--keep-going, --failed, watch); 130 interrupted.
`

const watchUsage = `Usage: cdcetl watch [flags] LANDING_DIR -o OUT

Converts the files already in LANDING_DIR, then each new file once it is
complete: renamed into place (from a hidden or .tmp name), or unchanged for
--settle. Names starting with '.' or '_' and ending in .tmp or .part are
ignored. Every input is journaled in OUT, so a restart converts only what is
new; a file that fails is journaled as failed (and moved to --failed DIR)
and the watcher goes on. SIGINT or SIGTERM rolls back the file in flight and
exits 0.

Flags: those of 'cdcetl convert' ('cdcetl help flags'), plus
  --settle DURATION  quiet period after which an unchanged file is complete (default 5s)

Example:
  cdcetl watch --format debezium-json --schema "id BIGINT, name STRING" \
      --settle 10s --on-success move=/data/done --failed /data/failed /data/landing -o /data/lake
`

// helpTopics are the topics of 'cdcetl help'.
var helpTopics = []string{"convert", "watch", "flags", "options", "metadata"}

// helpText returns the text of a help topic.
func helpText(topic string) (string, error) {
	switch topic {
	case "", "cdcetl":
		return mainHelp, nil
	case "convert":
		return convertUsage, nil
	case "watch":
		return watchUsage, nil
	case "flags":
		return flagsHelp(), nil
	case "options":
		return optionsHelp(), nil
	case "metadata":
		return metadataHelp(), nil
	}
	return "", usagef("no help topic %q%s (topics: %s)", topic, didYouMean(topic, helpTopics), strings.Join(helpTopics, ", "))
}

// flagsHelp lists every flag of convert and watch.
func flagsHelp() string {
	var b strings.Builder
	b.WriteString("Flags of 'cdcetl convert' and 'cdcetl watch' (watch adds --settle):\n\n")
	var o convertOpts
	fs := watchFlags(&o)
	fs.SetOutput(&b)
	fs.PrintDefaults()
	// Long flags are written --name; a one-letter flag keeps its one dash.
	return regexp.MustCompile(`\n  -(\w\w)`).ReplaceAllString(b.String(), "\n  --$1")
}

// optionsHelp is the table of format options: each once, with the formats
// that take it.
func optionsHelp() string {
	var b strings.Builder
	b.WriteString("Format options, written with the format's prefix as in Flink DDL\n(--option canal-json.ignore-parse-errors=true, or 'canal-json.ignore-parse-errors' = 'true' in WITH):\n\n")
	for _, o := range formatOptions() {
		fmt.Fprintf(&b, "  %s (default %s; %s)\n      %s\n", o.key, o.def, o.formats, o.doc)
	}
	return b.String()
}

// formatOption is a format option as the help and the reference list it.
type formatOption struct{ key, def, formats, doc string }

// formatOptions lists every format option once, with its default
// ("none") and the formats that take it.
func formatOptions() []formatOption {
	docs, takenBy := decode.AllOptionDocs()
	out := make([]formatOption, len(docs))
	for i, d := range docs {
		o := formatOption{key: d.Key, def: d.Default, formats: "every format", doc: d.Doc}
		if o.def == "" {
			o.def = "none"
		}
		if len(takenBy[i]) < len(decode.Formats()) {
			o.formats = strings.Join(takenBy[i], ", ")
		}
		out[i] = o
	}
	return out
}

// metadataHelp lists the metadata keys of each format.
func metadataHelp() string {
	var b strings.Builder
	b.WriteString("Metadata columns: name TYPE METADATA FROM 'key' VIRTUAL, the type as listed\n(timestamps may be declared at any precision).\n\n")
	for _, f := range decode.Formats() {
		if len(f.Metadata) == 0 {
			continue
		}
		fmt.Fprintf(&b, "  %s\n", f.Name)
		for _, m := range f.Metadata {
			fmt.Fprintf(&b, "    %-22s %-22s %s\n", m.Key, m.Type, m.Doc)
		}
	}
	b.WriteString("  every format (Flink's filesystem connector keys)\n")
	for _, m := range decode.FileMetadata {
		fmt.Fprintf(&b, "    %-22s %-22s %s\n", m.Key, m.Type, m.Doc)
	}
	return b.String()
}

// didYouMean is " (did you mean X?)" for the candidate nearest to s, or "".
func didYouMean(s string, candidates []string) string {
	for _, c := range candidates {
		if strings.EqualFold(s+"-json", c) || strings.EqualFold(s+"json", c) {
			return fmt.Sprintf(" (did you mean %s?)", c) // --format debezium: the format is debezium-json
		}
	}
	if near := decode.Closest(s, candidates); near != "" {
		return fmt.Sprintf(" (did you mean %s?)", near)
	}
	return ""
}

var (
	undefinedFlag = regexp.MustCompile(`^flag provided but not defined: -+(.*)$`)
	invalidValue  = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-+([^:]*): (.*)$`)
)

// flagError makes a flag parse error say what to do: the flag meant, or
// how the value is written.
func flagError(fs *flag.FlagSet, err error) error {
	if m := undefinedFlag.FindStringSubmatch(err.Error()); m != nil {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		mean := ""
		if near := decode.Closest(m[1], names); near != "" {
			mean = fmt.Sprintf(" (did you mean --%s?)", near)
		}
		return usagef("unknown flag --%s%s; 'cdcetl help flags' lists them all", m[1], mean)
	}
	if m := invalidValue.FindStringSubmatch(err.Error()); m != nil {
		why := m[3]
		if why == "parse error" || why == "value out of range" {
			why = "want a whole number"
			if f := fs.Lookup(m[2]); f != nil {
				if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
					why = "want true or false"
				}
			}
		}
		return usagef("--%s %s: %s", m[2], m[1], why)
	}
	return usageError{err}
}

// durationFlag is a time.Duration flag whose error says how a duration is
// written.
type durationFlag struct{ d *time.Duration }

func (f durationFlag) String() string {
	if f.d == nil {
		return ""
	}
	return f.d.String()
}

func (f durationFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("a duration is a number with a unit: 5s, 500ms, 2m, 1h30m")
	}
	if d <= 0 {
		return errors.New("want a duration above zero, e.g. 5s")
	}
	*f.d = d
	return nil
}
