package pipeline

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go/table"
	"github.com/cdcetl/cdcetl/internal/outdir"
	"github.com/cdcetl/cdcetl/internal/setting"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/internal/lazysubstrait"
	"github.com/cdcetl/cdcetl/lake"
	"github.com/cdcetl/cdcetl/writer"
)

// ShowOptions say which rows Show prints.
type ShowOptions struct {
	// Dir is a Parquet output directory or an Iceberg warehouse.
	Dir string
	// Catalog is the warehouse's catalog URI ("" for its embedded one).
	Catalog string
	// Table is the source table, "namespace.name" as the source wrote it.
	Table string
	// Current prints the table's current state (a Parquet table's
	// --materialize snapshot) instead of its changelog; an Iceberg upsert
	// table is its current state either way.
	Current bool
	// Limit stops after that many rows (0: all).
	Limit int
	// Files prints, instead of rows, the Parquet files that hold the
	// table's rows, one path per line, for any Parquet reader: a Parquet
	// changelog's (or, with Current, its snapshot's), or the data files
	// of an Iceberg table's current snapshot (refused when the table has
	// delete files: its data files alone hold rows it removed). An
	// Iceberg table's directory can hold files no snapshot refers to any
	// more (an input converted again replaced its own), so globbing it is
	// not reading the table.
	Files bool
}

// Show prints a table's rows as --to print does (the row kind, then every
// column, lineage included), so a load can be checked without another
// tool: Parquet changelogs in input order, Iceberg tables as iceberg-go
// scans them (deletes applied). It returns the number of rows printed.
func Show(ctx context.Context, o ShowOptions, w io.Writer) (int, error) {
	ns, name, ok := strings.Cut(o.Table, ".")
	if !ok || ns == "" || name == "" {
		return 0, fmt.Errorf("table %q: want NAMESPACE.NAME, as the source names it (inventory.products)", o.Table)
	}
	key := TableKey{Namespace: ns, Name: name}
	bw := bufio.NewWriterSize(w, 1<<16)
	defer bw.Flush()
	p := &rowPrinter{w: bw, limit: o.Limit}
	if _, err := os.Stat(filepath.Join(o.Dir, lake.CatalogFile)); err == nil || o.Catalog != "" {
		return p.n, showIceberg(ctx, o, key, p)
	}
	dir, err := latestTableDir(o.Dir, key)
	if err != nil && o.Current {
		// A conversion with a schema writes its changelog one file per
		// input, not in a table directory; its snapshot is the table's.
		base := filepath.Join(o.Dir, outdir.ReadTableDirs(o.Dir).Dir(key, 1))
		if _, serr := os.Stat(filepath.Join(o.Dir, outdir.SnapshotDir(outdir.ReadTableDirs(o.Dir).Dir(key, 1)))); serr == nil {
			dir, err = base, nil
		}
	}
	if err != nil {
		return 0, err
	}
	var files []string
	if o.Current {
		rel, _ := filepath.Rel(o.Dir, dir)
		snap := filepath.Join(o.Dir, outdir.SnapshotDir(rel))
		if files, err = filepath.Glob(filepath.Join(snap, "*.parquet")); err != nil || len(files) == 0 {
			return 0, fmt.Errorf("%s has no current-state snapshot (%s): convert with %s to keep one", o.Table, snap, setting.Materialize)
		}
	} else if files, err = changelogFiles(o.Dir, dir); err != nil {
		return 0, err
	}
	if o.Files {
		for _, f := range files {
			fmt.Fprintln(bw, f)
		}
		return len(files), nil
	}
	for _, f := range files {
		if err := p.parquet(ctx, f); err != nil || p.done() {
			return p.n, err
		}
	}
	return p.n, nil
}

// latestTableDir is the directory of a table's latest schema version in
// a Parquet output directory.
func latestTableDir(out string, k TableKey) (string, error) {
	base := filepath.Join(out, outdir.ReadTableDirs(out).Dir(k, 1))
	if _, err := os.Stat(base); err != nil {
		return "", fmt.Errorf("no table %s in %s (%s): 'cdcetl inspect' lists an archive's tables", k, out, base)
	}
	dir, best := base, 1
	vs, _ := filepath.Glob(filepath.Join(base, "v*"))
	for _, v := range vs {
		if n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(v), "v")); err == nil && n > best {
			dir, best = v, n
		}
	}
	return dir, nil
}

// changelogFiles lists a table directory's change files in input order:
// the journal's, else the directory's in name order.
func changelogFiles(out, dir string) ([]string, error) {
	var files []string
	entries, err := outdir.ReadEntries(out)
	if err != nil {
		return nil, err
	}
	if len(entries) > 0 {
		for _, e := range entries {
			if e.Status != outdir.StatusOK {
				continue
			}
			for _, o := range e.Outputs {
				p := filepath.Join(out, o)
				if filepath.Dir(p) == dir && strings.HasSuffix(p, ".parquet") {
					files = append(files, p)
				}
			}
		}
		return files, nil
	}
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != dir {
			return filepath.SkipDir // _current, later versions, partitions of their own
		}
		if strings.HasSuffix(p, ".parquet") {
			files = append(files, p)
		}
		return nil
	})
	return files, err
}

func showIceberg(ctx context.Context, o ShowOptions, k TableKey, p *rowPrinter) error {
	l, err := lake.Open(ctx, o.Dir, o.Catalog)
	if err != nil {
		return err
	}
	defer l.Close()
	dir, err := latestTableDir(o.Dir, k)
	if err != nil {
		return err
	}
	rel, _ := filepath.Rel(o.Dir, dir)
	ns, name := lakeIdent(k, rel)
	tbl, err := l.Catalog().LoadTable(ctx, table.Identifier{ns, name})
	if err != nil {
		return fmt.Errorf("iceberg table %s.%s: %w", ns, name, err)
	}
	// An upsert table is a current state: its rows print as a snapshot's
	// (+I), whatever change last wrote them.
	p.state = tbl.Properties()[lake.PropMode] == lake.ModeUpsert
	if o.Current && !p.state {
		return fmt.Errorf("%s is a changelog table: its current state is an upsert load's (%s upsert into another warehouse) or %s's (Parquet)", k, setting.TableMode, setting.Materialize)
	}
	if o.Files {
		return icebergFiles(ctx, tbl, k, p)
	}
	// Equality deletes are applied with substrait's functions.
	if err := lazysubstrait.Ensure(); err != nil {
		return err
	}
	// Files in the order they were committed (a compaction keeps its
	// files' order): a changelog prints in its order.
	scan := tbl.Scan()
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		return err
	}
	slices.SortStableFunc(tasks, func(a, b table.FileScanTask) int {
		if a.DataSequenceNumber != nil && b.DataSequenceNumber != nil && *a.DataSequenceNumber != *b.DataSequenceNumber {
			return cmp.Compare(*a.DataSequenceNumber, *b.DataSequenceNumber)
		}
		return strings.Compare(a.File.FilePath(), b.File.FilePath())
	})
	_, it, err := scan.ReadTasks(ctx, tasks)
	if err != nil {
		return err
	}
	for rec, err := range it {
		if err != nil {
			return err
		}
		err = p.batch(rec)
		rec.Release()
		if err != nil || p.done() {
			return err
		}
	}
	return nil
}

// icebergFiles prints the data files of the table's current snapshot.
func icebergFiles(ctx context.Context, tbl *table.Table, k TableKey, p *rowPrinter) error {
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return fmt.Errorf("iceberg table %s: %w", k, err)
	}
	for _, t := range tasks {
		if len(t.DeleteFiles)+len(t.EqualityDeleteFiles)+len(t.DeletionVectorFiles) > 0 {
			return fmt.Errorf("%s has delete files: its data files alone hold rows the table removed; print its rows with show (without %s) or read it with an Iceberg reader", k, setting.ShowFiles)
		}
	}
	for _, t := range tasks {
		path := t.File.FilePath()
		if u, err := url.Parse(path); err == nil && u.Scheme == "file" {
			path = u.Path
		}
		fmt.Fprintln(p.w, path)
		p.n++
	}
	return nil
}

// rowPrinter prints batches' rows as the print sink does.
type rowPrinter struct {
	w     *bufio.Writer
	limit int
	n     int
	line  []byte
	state bool // rows of a current state: +I, without _rowkind
}

func (p *rowPrinter) done() bool { return p.limit > 0 && p.n >= p.limit }

func (p *rowPrinter) parquet(ctx context.Context, path string) error {
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 4096}, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer rr.Release()
	for rr.Next() {
		if err := p.batch(rr.RecordBatch()); err != nil || p.done() {
			return err
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// batch prints rec's rows: "<kind>[v, ...]", the kind from _rowkind when
// the batch has one (a snapshot's rows are +I).
func (p *rowPrinter) batch(rec arrow.RecordBatch) error {
	first := 0
	kind := func(int) string { return arrowconv.Insert.String() }
	if rec.NumCols() > 0 && rec.Schema().Field(0).Name == arrowconv.RowKindColumn {
		first = 1
		switch col := rec.Column(0).(type) {
		case *array.Dictionary:
			kinds := writer.RowKinds(rec)
			kind = func(i int) string { return arrowconv.RowKind(kinds[i]).String() }
		case *array.String:
			kind = col.Value
		}
		if p.state {
			kind = func(int) string { return arrowconv.Insert.String() }
		}
	}
	fmts := make([]func([]byte, arrow.Array, int) []byte, rec.NumCols())
	for c := first; c < len(fmts); c++ {
		fmts[c] = writer.ValueFormatter(rec.Schema().Field(c).Type)
	}
	for i := range int(rec.NumRows()) {
		if p.done() {
			return nil
		}
		line := append(p.line[:0], kind(i)...)
		line = append(line, '[')
		for c := first; c < len(fmts); c++ {
			if c > first {
				line = append(line, ", "...)
			}
			line = fmts[c](line, rec.Column(c), i)
		}
		line = append(line, "]\n"...)
		p.line = line
		if _, err := p.w.Write(line); err != nil {
			return err
		}
		p.n++
	}
	return nil
}
