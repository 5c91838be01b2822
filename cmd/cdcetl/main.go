// Command cdcetl converts archives of CDC JSON messages (canal-json,
// maxwell-json, ogg-json, debezium-json, json) into Parquet or printed rows,
// decoding exactly as Apache Flink's formats do.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/internal/hugeheap/early"
	"github.com/cdcetl/cdcetl/pipeline"
	"github.com/cdcetl/cdcetl/reader"
)

// version is the tool version recorded in outputs.
const version = "0.2.0"

// commit is the revision the binary was built from: set with
// -ldflags "-X main.commit=...", else read from the build's VCS stamp.
var commit = ""

// buildCommit returns commit, or the VCS revision Go stamped into the
// binary (absent with -buildvcs=false or outside a checkout).
func buildCommit() string {
	if commit != "" {
		return commit
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return s.Value[:12]
			}
		}
	}
	return ""
}

// Exit codes, decided only here.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitPartial     = 3
	exitGaps        = 4 // cdcetl audit found gaps
	exitInterrupted = 130
)

// usageError marks errors in what the user asked for (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

const mainHelp = `cdcetl converts CDC JSON archives (Canal, Maxwell, Oracle GoldenGate,
Debezium) into Parquet, printed changelog rows, or CDC JSON, decoding every
message exactly as Apache Flink's formats do.

Usage:
  cdcetl convert [flags] PATH...           convert files and directories
  cdcetl inspect [flags] PATH...           formats, tables, inferred schemas
  cdcetl audit [flags] PATH...             prove an archive complete: gaps,
                                           duplicates, order, coverage
  cdcetl watch [flags] LANDING_DIR -o OUT  convert files as they land
  cdcetl show [flags] OUT TABLE            print a loaded table's rows
  cdcetl maintain -o WAREHOUSE [flags]     compact Iceberg tables, expire
                                           snapshots, remove orphan files
  cdcetl help [TOPIC]                      convert, watch, flags, options, metadata
  cdcetl version

Formats: canal-json, maxwell-json, ogg-json, debezium-json, json. Options are
given as in Flink DDL (--option canal-json.ignore-parse-errors=true).

Exit status: 0 ok, 1 failed, 2 usage, 3 some inputs failed (--keep-going)
or were not moved (--on-success), 4 audit found gaps, 130 interrupted (a watcher exits 0 when stopped by SIGINT or SIGTERM).
`

// Every imported package is initialized: collections may run again.
func init() { early.Resume() }

func main() {
	if os.Getenv("GOMEMLIMIT") == "" && debug.SetMemoryLimit(-1) == math.MaxInt64 {
		debug.SetMemoryLimit(memoryLimit)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// memoryLimit is the Go heap's soft limit unless GOMEMLIMIT says
// otherwise: the collector works harder near it instead of letting the
// heap double past what is live (many open table writers), so peak RSS
// stays near 256 MiB whatever the input.
const memoryLimit = 192 << 20

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, mainHelp)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch args[0] {
	case "convert":
		err = runConvert(ctx, args[1:], stdout, stderr)
	case "watch":
		err = runWatch(ctx, args[1:], stdout, stderr)
	case "inspect":
		err = runInspect(ctx, args[1:], stdout, stderr)
	case "audit":
		err = runAudit(ctx, args[1:], stdout, stderr)
	case "show":
		err = runShow(ctx, args[1:], stdout, stderr)
	case "maintain":
		err = runMaintain(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help", "-help":
		topic := ""
		if len(args) > 1 {
			topic = args[1]
		}
		if topic == "flags" && len(args) > 2 && args[2] == "--markdown" {
			fmt.Fprint(stdout, cliReference()) // docs/cli.md
			return exitOK
		}
		text, err := helpText(topic)
		if err != nil {
			return exitCode(err, stderr)
		}
		fmt.Fprint(stdout, text)
		return exitOK
	case "version", "--version":
		if c := buildCommit(); c != "" {
			fmt.Fprintf(stdout, "cdcetl %s (build %s)\n", version, c)
		} else {
			fmt.Fprintln(stdout, "cdcetl", version)
		}
		return exitOK
	default:
		err = usagef("unknown command %q%s; commands: convert, inspect, audit, watch, show, maintain, help, version", args[0], didYouMean(args[0], []string{"convert", "inspect", "audit", "watch", "show", "maintain", "help", "version"}))
	}
	return exitCode(err, stderr)
}

// exitCode prints err and maps it to the exit status.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	if errors.Is(err, errHelp) {
		return exitOK
	}
	fmt.Fprintln(stderr, "cdcetl:", err)
	var de *decode.Error
	if errors.As(err, &de) && de.Hint != "" {
		fmt.Fprintln(stderr, "  hint:", de.Hint)
	}
	var ue usageError
	var se *arrowconv.SchemaError
	switch {
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.Is(err, errGaps):
		return exitGaps
	case errors.Is(err, pipeline.ErrPartial), errors.Is(err, pipeline.ErrNotDisposed):
		return exitPartial
	case errors.As(err, &ue), errors.As(err, &se), errors.Is(err, decode.ErrOption),
		errors.Is(err, pipeline.ErrConversionChanged), errors.Is(err, reader.ErrOwnOutput):
		return exitUsage
	}
	return exitFailed
}
