package pipeline

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/writer"
)

// routedPageBytes is the page size of a routed conversion's writers.
const routedPageBytes = 128 << 10

// routedHoldRows: the writers of an input of several tables hold batches
// of fewer rows and write them together (writer.ParquetOptions.HoldRows).
// A chunk gives each of 20 tables some 150 rows; held to 4096, 20 tables
// at 256 MiB went 0.45-0.49 -> 0.52-0.61 of one explicit schema's speed
// (paired rounds; 1024 and 2048 within the noise of 4096, 16384 no
// better). One table's batches (a chunk's rows) are not held.
const routedHoldRows = 4096

// positionColumns are the source-position columns of s: one distinct
// value per change, so they skip the dictionary.
func positionColumns(s *arrowconv.Schema) []string {
	var out []string
	for _, c := range s.Columns {
		if c.MetadataKey == decode.SourcePositionKey {
			out = append(out, c.Name)
		}
	}
	return out
}

// newFileWriter makes the output of one input under its stem in tableDir
// (both relative to OutDir); it also returns the output's path.
//
// Parquet outputs record their source, cdcetl's version, the format and,
// when the rows are one source table's, its namespace and name.
func (s *fileSink) newFileWriter(fr *fileRun, tableDir, stem string, schema *arrowconv.Schema, format *decode.Format, table *TableKey) (writer.Writer, string, error) {
	r := s.r
	cfg := r.cfg
	f := fr.file
	rel, _, err := r.cfg.outputNames(filepath.Join(tableDir, stem))
	if err != nil {
		return nil, "", err
	}
	switch {
	case cfg.To == ToParquet:
		opts := cfg.Parquet
		opts.Metadata = map[string]string{
			"cdcetl.source":  f.Path,
			"cdcetl.version": cfg.Version,
		}
		if format != nil {
			opts.Metadata["cdcetl.format"] = format.Name
		}
		if table != nil {
			opts.Metadata["cdcetl.namespace"], opts.Metadata["cdcetl.table"] = table.Namespace, table.Name
		}
		if cfg.Schema == nil && opts.PageBytes == 0 {
			// A writer per source table: each column buffers a page, so
			// pages are smaller than one writer would make them.
			opts.PageBytes = routedPageBytes
		}
		if table != nil && len(fr.tables) > 1 && opts.HoldRows == 0 {
			opts.HoldRows = routedHoldRows
		}
		opts.PlainColumns = positionColumns(schema)
		opts.CreatedBy = cfg.createdBy()
		if cfg.hive() {
			h, err := s.newHiveWriter(tableDir, stem, schema, opts)
			if err != nil {
				return nil, "", err
			}
			if fr.hive == nil {
				fr.hive = map[string]*hiveOut{}
			}
			fr.hive[rel] = h
			return h, rel, nil
		}
		w, err := writer.NewParquet(filepath.Join(cfg.OutDir, rel), schema, opts)
		return w, rel, err
	case cfg.To == ToPrint:
		return nil, "", errors.New("print output goes to stdout; drop -o")
	case cfg.Target != nil:
		enc, err := decode.NewEncoder(cfg.Target, schema, cfg.TargetOptions, cfg.Encode)
		if err != nil {
			return nil, "", err
		}
		w, err := writer.NewCDCJSONFile(filepath.Join(cfg.OutDir, rel), enc, cfg.JSONCompression)
		return w, rel, err
	}
	return nil, "", fmt.Errorf("unsupported output %q", cfg.To)
}

// within reports whether path lies inside dir.
func within(dir, path string) bool {
	if dir == "" {
		return false
	}
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
