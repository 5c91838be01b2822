package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/pipeline"
	"github.com/cdcetl/cdcetl/reader"
)

var errHelp = errors.New("help shown")

// multiFlag collects a repeatable flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// convertOpts are the flags of 'cdcetl convert'.
type convertOpts struct {
	format, schema, ddl, to, out, compression string
	options                                   multiFlag
	workers, batchRows, maxLine, rowGroupRows int
	quiet                                     bool
}

func convertFlags(o *convertOpts) *flag.FlagSet {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	fs.StringVar(&o.format, "format", "", "input format: "+strings.Join(decode.FormatNames(), ", "))
	fs.StringVar(&o.schema, "schema", "", "Flink SQL column list, e.g. \"id BIGINT, name STRING\"")
	fs.StringVar(&o.ddl, "ddl", "", "file holding a Flink CREATE TABLE statement (instead of --schema)")
	fs.Var(&o.options, "option", "format option KEY=VALUE, keys as in Flink DDL (repeatable); --KEY=VALUE works too")
	fs.StringVar(&o.to, "to", "", "output: print (default without -o), parquet (default with -o)")
	fs.StringVar(&o.out, "o", "", "output directory (one output file per input file)")
	fs.StringVar(&o.compression, "compression", "snappy", "Parquet compression: snappy, zstd, gzip, none")
	fs.IntVar(&o.workers, "workers", runtime.NumCPU(), "files converted in parallel")
	fs.IntVar(&o.batchRows, "batch-rows", 16384, "rows per Arrow record batch")
	fs.IntVar(&o.rowGroupRows, "row-group-rows", 128<<10, "rows per Parquet row group")
	fs.IntVar(&o.maxLine, "max-line-size", reader.DefaultMaxLine, "longest message accepted, in bytes")
	fs.BoolVar(&o.quiet, "quiet", false, "no summary on stderr")
	return fs
}

func convertHelp() string {
	var b strings.Builder
	b.WriteString(`Usage: cdcetl convert --format FORMAT (--schema COLUMNS | --ddl FILE) [flags] PATH...

Reads every file under PATH (directories recursively, in name order; names
starting with '.' or '_' skipped; .gz and .zst decompressed), decodes one
message per line exactly as Flink's format does, and writes the changelog:
  --to print     rows as Flink's print connector shows them, on stdout
  --to parquet   one Parquet file per input under -o DIR (<input>.parquet)

Flags:
`)
	var o convertOpts
	fs := convertFlags(&o)
	fs.SetOutput(&b)
	fs.PrintDefaults()
	b.WriteString("\nFormats, their options (--option FORMAT.KEY=VALUE) and metadata keys\n(COLUMN TYPE METADATA FROM 'key' VIRTUAL):\n")
	for _, f := range decode.Formats() {
		fmt.Fprintf(&b, "  %s\n", f.Name)
		for _, d := range decode.OptionDocs(f) {
			def := d.Default
			if def == "" {
				def = "none"
			}
			fmt.Fprintf(&b, "    %s.%s (default %s): %s\n", f.Name, d.Key, def, d.Doc)
		}
		var keys []string
		for _, m := range f.Metadata {
			keys = append(keys, fmt.Sprintf("%s %s", m.Key, m.Type))
		}
		if len(keys) > 0 {
			fmt.Fprintf(&b, "    metadata: %s\n", strings.Join(keys, "; "))
		}
	}
	var fk []string
	for _, m := range decode.FileMetadata {
		fk = append(fk, fmt.Sprintf("%s %s", m.Key, m.Type))
	}
	fmt.Fprintf(&b, "  every format, metadata: %s\n", strings.Join(fk, "; "))
	b.WriteString(`
Exit status:
  0    every message converted (or skipped as Flink skips it)
  1    a message could not be decoded (FILE:LINE: reason), or an I/O error;
       no partial output file is left
  2    usage error: bad flag, schema, option or metadata key
  130  interrupted
`)
	return b.String()
}

// formatOptionFlags rewrites --canal-json.table.include=x (or with the
// value as the next argument) into --option canal-json.table.include=x.
func formatOptionFlags(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		name := strings.TrimLeft(a, "-")
		if a == "--" {
			return append(out, args[i:]...)
		}
		if len(name) < len(a) && isFormatOption(name) {
			if !strings.Contains(name, "=") && i+1 < len(args) {
				i++
				name += "=" + args[i]
			}
			out = append(out, "--option", name)
			continue
		}
		out = append(out, a)
	}
	return out
}

func isFormatOption(name string) bool {
	for _, f := range decode.FormatNames() {
		if strings.HasPrefix(name, f+".") {
			return true
		}
	}
	return false
}

// parseInterleaved lets flags follow positional arguments.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	args = formatOptionFlags(args)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func runConvert(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o convertOpts
	fs := convertFlags(&o)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	paths, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, convertHelp())
		return errHelp
	}
	if err != nil {
		return usageError{err}
	}
	cfg, paths, err := buildConfig(&o, paths)
	if err != nil {
		return err
	}
	cfg.Stdout = stdout
	st, err := pipeline.Run(ctx, cfg, paths)
	if !o.quiet {
		fmt.Fprintf(stderr, "cdcetl: %d files, %d lines: %d messages, %d blank, %d DDL skipped, %d filtered, %d dropped; rows +I %d, -U %d, +U %d, -D %d\n",
			st.Files, st.Lines, st.Messages, st.Blank, st.DDL, st.Filtered, st.Dropped, st.Rows[0], st.Rows[1], st.Rows[2], st.Rows[3])
	}
	return err
}

// buildConfig turns flags (and a DDL file) into a pipeline configuration,
// checking everything that can be checked before any input is read.
func buildConfig(o *convertOpts, paths []string) (pipeline.Config, []string, error) {
	var cfg pipeline.Config
	var schema *arrowconv.Schema
	var err error
	kv := map[string]string{}
	switch {
	case o.ddl != "" && o.schema != "":
		return cfg, nil, usagef("give --schema or --ddl, not both")
	case o.ddl != "":
		text, rerr := os.ReadFile(o.ddl)
		if rerr != nil {
			return cfg, nil, usagef("--ddl: %w", rerr)
		}
		if schema, err = arrowconv.ParseDDL(string(text)); err != nil {
			return cfg, nil, err
		}
		for k, v := range schema.Options {
			switch k {
			case "connector":
			case "format":
				if o.format == "" {
					o.format = v
				}
			case "path":
				if len(paths) == 0 {
					paths = []string{v}
				}
			default:
				kv[k] = v
			}
		}
	case o.schema != "":
		if schema, err = arrowconv.ParseColumns(o.schema); err != nil {
			return cfg, nil, err
		}
	default:
		return cfg, nil, usagef("--schema or --ddl is required")
	}
	if o.format == "" {
		return cfg, nil, usagef("--format is required (%s)", strings.Join(decode.FormatNames(), ", "))
	}
	f, ok := decode.Lookup(o.format)
	if !ok {
		return cfg, nil, usagef("unknown format %q (%s)", o.format, strings.Join(decode.FormatNames(), ", "))
	}
	for _, opt := range o.options {
		k, v, ok := strings.Cut(opt, "=")
		if !ok {
			return cfg, nil, usagef("--option %q: want KEY=VALUE", opt)
		}
		kv[k] = v
	}
	var foreign []string
	for k := range kv {
		if !strings.HasPrefix(k, f.Name+".") && k != "format" {
			foreign = append(foreign, k)
		}
	}
	if len(foreign) > 0 {
		sort.Strings(foreign)
		return cfg, nil, usagef("option %s does not belong to format %s (keys are written %s.KEY)", strings.Join(foreign, ", "), f.Name, f.Name)
	}
	to := o.to
	if to == "" {
		to = pipeline.ToPrint
		if o.out != "" {
			to = pipeline.ToParquet
		}
	}
	if to != pipeline.ToPrint && to != pipeline.ToParquet {
		return cfg, nil, usagef("unknown output %q (print, parquet)", to)
	}
	opts, err := decode.ParseOptions(f, kv, false)
	if err != nil {
		return cfg, nil, err
	}
	if err := f.CheckSchema(schema); err != nil {
		return cfg, nil, err
	}
	if to == pipeline.ToParquet && o.out == "" {
		return cfg, nil, usagef("--to parquet needs -o DIR")
	}
	if to == pipeline.ToPrint && o.out != "" {
		return cfg, nil, usagef("--to print writes to stdout; drop -o")
	}
	if _, err := writerCodec(o.compression); err != nil {
		return cfg, nil, usageError{err}
	}
	if len(paths) == 0 {
		return cfg, nil, usagef("no input PATH given")
	}
	cfg = pipeline.Config{
		Format: f, Schema: schema, Options: opts, To: to, OutDir: o.out,
		Workers: o.workers, BatchRows: o.batchRows, MaxLine: o.maxLine, Version: version,
	}
	cfg.Parquet.Compression = o.compression
	cfg.Parquet.RowGroupRows = o.rowGroupRows
	return cfg, paths, nil
}
