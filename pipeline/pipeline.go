// Package pipeline is cdcetl's library façade: it expands the inputs, cuts
// them into chunks of whole lines, decodes the chunks on a pool of workers
// into Arrow record batches, and hands the batches, back in input order, to
// writers — one output file per input file, or one ordered stream (stdout)
// for all of them. With an output directory it keeps a journal, so reruns
// are incremental, and writes dead letters next to the outputs.
//
// Data errors (a message that cannot be decoded) are the file's result:
// with ignore-parse-errors they are counted and dead-lettered; otherwise the
// run stops with a *decode.Error naming file and line (or, with KeepGoing,
// the file is journaled as failed). System errors always stop the run.
package pipeline

import (
	"context"

	"github.com/cdcetl/cdcetl/internal/outdir"
	"github.com/cdcetl/cdcetl/reader"
)

// Run converts every file under paths.
//
// Files are cut into chunks of whole lines (reader.Chunks); a pool of
// Workers goroutines decodes chunks from all files into record batches; for
// each file one goroutine puts the batches back in input order and writes
// them, so writing overlaps decoding. A bounded number of chunks is in
// flight, which keeps memory flat whatever the input size.
//
// The output, dead-letter, failed and done directories are never read as
// inputs, even when they lie inside an input directory.
func Run(ctx context.Context, cfg Config, paths []string) (Stats, error) {
	if err := cfg.Validate(); err != nil {
		return Stats{}, setup(err)
	}
	cfg.OutDir = outdir.LocalPath(cfg.OutDir)
	files, err := outdir.Find(ctx, paths, cfg.OwnDirs())
	if err != nil {
		return Stats{}, setup(err)
	}
	if outdir.IsRemote(cfg.OutDir) {
		return runToBucket(ctx, cfg, files)
	}
	return RunFiles(ctx, cfg, files)
}

// RunFiles is Run for inputs already found (a watcher's, say). With an
// output directory, inputs the journal there says are converted are
// skipped (unless Force), and each converted input is journaled once its
// outputs are in place.
func RunFiles(ctx context.Context, cfg Config, files []reader.File) (_ Stats, err error) {
	if err := cfg.Validate(); err != nil {
		return Stats{}, setup(err)
	}
	if outdir.IsRemote(cfg.OutDir) {
		return Stats{}, setup(&ConfigError{Field: "OutDir", Reason: "an output in a bucket is written by Run (RunFiles works in a directory): call Run, or give a local OutDir"})
	}
	return runFiles(ctx, cfg, files, outdir.Local(cfg.OutDir))
}
