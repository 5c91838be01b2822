package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/internal/outdir"
	"github.com/cdcetl/cdcetl/lake"
	"github.com/cdcetl/cdcetl/partition"
	"github.com/cdcetl/cdcetl/writer"
)

// Hive-style partitions for Parquet (--partition-by, or a DDL's
// PARTITIONED BY): an input's rows of a table go to one file per
// partition, <table dir>/<field>=<value>/.../<stem>.parquet, the stem
// escaped into one path segment (a reader that discovers partitions from
// key=value directories must see nothing else between them). With
// sink.rolling-policy.file-size a partition's file rolls to
// <stem>~1.parquet, <stem>~2.parquet, ... (an escaped stem holds no ~).
// After a run, every partition directory holding converted rows gets the
// success file (sink.partition-commit.policy.kind = success-file).

// newHiveWriter makes an input's partitioned Parquet output of a table in
// tableDir (relative to OutDir).
func (s *fileSink) newHiveWriter(tableDir, stem string, schema *arrowconv.Schema, opts writer.ParquetOptions) (*hiveOut, error) {
	r := s.r
	cfg := r.cfg
	cols, err := bindPartitions(cfg.PartitionBy, schema)
	if err != nil {
		return nil, err
	}
	if cfg.Materialize {
		for _, f := range cfg.PartitionBy {
			if !slices.Contains(schema.PrimaryKey, f.Column) {
				return nil, fmt.Errorf("partition field %s with a current-state snapshot: a key's changes must stay in one partition, so partition by primary key columns (%s) only", f, strings.Join(schema.PrimaryKey, ", "))
			}
		}
	}
	name := outdir.HiveStem(stem)
	abs := filepath.Join(cfg.OutDir, tableDir)
	dflt := cfg.Filesystem.DefaultPartitionName
	if dflt == "" {
		dflt = DefaultPartitionName
	}
	pw := partition.New(cols, partition.Options{Hive: true, DefaultName: dflt, RollBytes: cfg.Filesystem.RollBytes,
		Open: func(dir string, seq int) (partition.File, string, error) {
			file := name + ".parquet"
			if seq > 0 {
				file = name + "~" + strconv.Itoa(seq) + ".parquet"
			}
			p := filepath.Join(abs, dir, file)
			w, err := writer.NewParquet(p, schema, opts)
			return w, p, err
		}})
	return &hiveOut{Writer: pw, dir: tableDir}, nil
}

// bindPartitions binds the partition fields to schema's record columns
// (_rowkind is column 0).
func bindPartitions(fields []partition.Field, schema *arrowconv.Schema) ([]partition.Column, error) {
	sc, err := lake.Schema(schema, nil)
	if err != nil {
		return nil, err
	}
	spec, err := partition.Spec(fields, sc)
	if err != nil {
		return nil, err
	}
	return partition.Bind(spec, sc, func(name string) int {
		return slices.IndexFunc(schema.Columns, func(c arrowconv.Field) bool { return c.Name == name }) + 1
	})
}

// resolveHive replaces, in an input's outputs, each partitioned output's
// placeholder with the files it wrote.
func (s *fileSink) resolveHive(fr *fileRun) {
	r := s.r
	if len(fr.hive) == 0 {
		return
	}
	var out []string
	for _, o := range fr.outputs {
		h, ok := fr.hive[o]
		if !ok {
			out = append(out, o)
			continue
		}
		files := h.relFiles(r.cfg.OutDir)
		out = append(out, files...)
		for _, ts := range fr.tableStats {
			if slices.Equal(ts.Outputs, []string{o}) {
				ts.Outputs = files
			}
		}
	}
	fr.outputs = out
}

func (h *hiveOut) relFiles(outDir string) []string {
	var rels []string
	for _, f := range h.Files() {
		if rel, err := filepath.Rel(outDir, f); err == nil {
			rels = append(rels, rel)
		}
	}
	slices.Sort(rels)
	return rels
}

// writeSuccessFiles puts the success file into every partition directory
// that holds a converted input's rows.
func (s *fileSink) writeSuccessFiles(ctx context.Context) error {
	r := s.r
	name := r.cfg.Filesystem.SuccessFile
	if name == "" || r.journal == nil || !r.cfg.hive() {
		return nil
	}
	done := map[string]bool{}
	for _, e := range r.journal.Entries() {
		if e.Status != outdir.StatusOK {
			continue
		}
		for _, o := range e.Outputs {
			dir := filepath.Dir(o)
			if done[dir] || !outdir.IsPartitionDir(filepath.Base(dir)) || filepath.IsAbs(o) {
				continue
			}
			done[dir] = true
			p := filepath.Join(r.cfg.OutDir, dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return fmt.Errorf("writing the success file %s: %w", p, err)
			}
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				return fmt.Errorf("writing the success file %s: %w", p, err)
			}
			if err := r.out.Upload(ctx, filepath.ToSlash(filepath.Join(dir, name))); err != nil {
				return err
			}
		}
	}
	return nil
}
