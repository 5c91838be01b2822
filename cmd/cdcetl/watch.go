package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cdcetl/cdcetl/pipeline"
	"github.com/cdcetl/cdcetl/reader"
	"github.com/cdcetl/cdcetl/watch"
)

func watchHelp() string {
	var b strings.Builder
	b.WriteString(`Usage: cdcetl watch --format FORMAT (--schema COLUMNS | --ddl FILE) [flags] LANDING_DIR -o OUT

Converts the files already in LANDING_DIR, then each new file once it is
complete: renamed into place, or unchanged for --settle. Names starting with
'.' or '_' and ending in .tmp or .part are ignored. Every converted input is
journaled in OUT, so a restart converts only what is new; a file that fails
is journaled as failed (and moved to --failed DIR) without stopping the
watcher. Runs until SIGINT or SIGTERM, then rolls back the file in flight and
exits 0.

Flags (those of convert, plus):
`)
	var o convertOpts
	fs := watchFlags(&o)
	fs.SetOutput(&b)
	fs.PrintDefaults()
	return b.String()
}

func watchFlags(o *convertOpts) *flag.FlagSet {
	fs := convertFlags(o)
	fs.Init("watch", flag.ContinueOnError)
	fs.DurationVar(&o.settle, "settle", 5*time.Second, "quiet period after which an unchanged file is complete")
	return fs
}

func newLogger(format string, w io.Writer) (*slog.Logger, error) {
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, nil)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, nil)), nil
	}
	return nil, usagef("--log-format %q: want text or json", format)
}

func runWatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o convertOpts
	fs := watchFlags(&o)
	fs.SetOutput(io.Discard)
	paths, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, watchHelp())
		return errHelp
	}
	if err != nil {
		return usageError{err}
	}
	if len(paths) != 1 {
		return usagef("watch takes one LANDING_DIR")
	}
	if o.out == "" {
		return usagef("watch needs -o OUT")
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "compression" {
			o.compressionSet = true
		}
	})
	log, err := newLogger(o.logFormat, stderr)
	if err != nil {
		return err
	}
	landing := paths[0]
	if st, err := os.Stat(landing); err != nil || !st.IsDir() {
		return usagef("%s is not a directory", landing)
	}
	cfg, _, err := buildConfig(&o, paths)
	if err != nil {
		return err
	}
	cfg.KeepGoing = true // one bad file must not stop the watcher
	handle := func(ctx context.Context, path string) error {
		info, err := os.Stat(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(landing, path)
		if err != nil {
			return err
		}
		st, err := pipeline.RunFiles(ctx, cfg, []reader.File{{Path: path, Rel: rel, Size: info.Size(), ModTime: info.ModTime().UnixNano()}})
		if st.Skipped > 0 {
			log.Info("already converted (journal)", "path", path)
		}
		if err == nil && st.Files > 0 {
			log.Info("rows", "path", path, "lines", st.Lines, "insert", st.Rows[0], "update_before", st.Rows[1],
				"update_after", st.Rows[2], "delete", st.Rows[3], "dropped", st.Dropped, "dead_letters", st.DeadLetters)
		}
		return err
	}
	err = watch.Watch(ctx, landing, watch.Options{Settle: o.settle, Log: log, Exclude: cfg.OwnDirs()}, handle)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
