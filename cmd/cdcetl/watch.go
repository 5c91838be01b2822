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

	"github.com/cdcetl/cdcetl/internal/outdir"
	"github.com/cdcetl/cdcetl/pipeline"
	"github.com/cdcetl/cdcetl/reader"
	"github.com/cdcetl/cdcetl/watch"
)

// maxReportFiles bounds the per_file list of a watcher's report (the
// session's last files): a watcher runs for months.
const maxReportFiles = 1000

func watchFlags(o *convertOpts) *flag.FlagSet {
	fs := convertFlags(o)
	fs.Init("watch", flag.ContinueOnError)
	o.settle = 5 * time.Second
	fs.Var(durationFlag{&o.settle}, "settle", "quiet period after which an unchanged file is complete: 5s, 500ms, 2m")
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
		fmt.Fprint(stdout, watchUsage)
		return errHelp
	}
	if err != nil {
		return flagError(fs, err)
	}
	if len(paths) != 1 {
		return usagef("watch takes one LANDING_DIR")
	}
	if o.out == "" {
		return usagef("watch needs -o OUT")
	}
	if outdir.IsRemote(o.out) || outdir.IsRemote(paths[0]) {
		return usagef("watch works on a local or mounted landing directory and -o directory; for buckets, run 'cdcetl convert' on a schedule (its journal makes each run convert only what is new)")
	}
	if o.shard != "" || os.Getenv("CDCETL_SHARD") != "" {
		return usagef("watch does not take --shard (or CDCETL_SHARD): run one watcher per landing directory, and shard nightly backfills with 'cdcetl convert --shard i/n'")
	}
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
	if cfg.TableMode == "upsert" {
		return usagef("watch goes on past a file that fails, and an upsert table applies inputs in order: load upsert tables with convert on a schedule (or watch into a changelog table)")
	}
	cfg.KeepGoing = true // one bad file must not stop the watcher
	if o.report != "" {
		if err := checkWritable(o.report); err != nil {
			return usagef("--report %s: %v", o.report, err)
		}
	}
	// Before watching: the output directory's journal must take this
	// conversion (or --force adopts it), so a mismatch is a usage error
	// now, not one per file later.
	if _, err := pipeline.RunFiles(ctx, cfg, nil); err != nil {
		return err
	}
	cfg.Force = false // adopted: from here the journal decides, per file
	var total pipeline.Stats
	var recent []pipeline.FileStats // the report's per_file: the session's last files
	started := time.Now()
	report := func(status string) {
		if o.report == "" {
			return
		}
		st := total
		st.PerFile = recent
		rep := newReport(st, nil, started, cfg)
		rep.Status = status
		if err := writeReport(o.report, rep); err != nil {
			log.Error("writing the report", "path", o.report, "error", err.Error())
		}
	}
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
		total.Add(st)
		if recent = append(recent, st.PerFile...); len(recent) > maxReportFiles {
			recent = recent[len(recent)-maxReportFiles:]
		}
		defer report("running")
		if err != nil && ctx.Err() == nil && !errors.Is(err, pipeline.ErrPartial) && !errors.Is(err, pipeline.ErrNotDisposed) {
			// Not the file's fault (a full disk, an unreachable catalog):
			// nothing of it was kept; it is tried again after a backoff.
			err = fmt.Errorf("%w: %w", watch.ErrTemporary, err)
		}
		for _, f := range st.PerFile {
			if f.Deferred != "" && err == nil {
				// Still being written, or changed while converted: the
				// watcher hands it out again after --settle.
				err = fmt.Errorf("%w: %s", watch.ErrNotDone, f.Deferred)
			}
		}
		for _, w := range st.Warnings {
			log.Warn(w)
		}
		for _, f := range st.PerFile {
			attrs := []any{"path", path, "status", f.Status}
			if len(f.Outputs) > 0 {
				attrs = append(attrs, "outputs", strings.Join(f.Outputs, ","))
			}
			if f.Disposed != "" {
				attrs = append(attrs, f.Disposed, f.MovedTo)
			}
			switch f.Status {
			case "skipped":
				log.Info("already converted (journal)", attrs...)
			case "ok":
				log.Info("converted", append(attrs, "lines", f.Lines, "insert", f.Rows[0], "update_before", f.Rows[1],
					"update_after", f.Rows[2], "delete", f.Rows[3], "dropped", f.Dropped, "dead_letters", f.DeadLetters)...)
			}
		}
		return err
	}
	report("running")
	defer func() {
		report("stopped")
		log.Info("stopped", "files", total.Files, "lines", total.Lines, "messages", total.Messages, "skipped", total.Skipped,
			"failed", total.Failed, "dropped", total.Dropped, "nulled", total.Nulled,
			"insert", total.Rows[0], "update_before", total.Rows[1], "update_after", total.Rows[2], "delete", total.Rows[3])
	}()
	// A file is moved or deleted only once no process has it open for
	// writing; with --on-success keep it is converted when it settles,
	// and again whenever it changes.
	waitClosed := cfg.OnSuccess == "delete" || strings.HasPrefix(cfg.OnSuccess, "move=")
	err = watch.Watch(ctx, landing, watch.Options{Settle: o.settle, Log: log, Exclude: cfg.OwnDirs(), WaitClosed: waitClosed}, handle)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
