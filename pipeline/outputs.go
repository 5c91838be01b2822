package pipeline

import (
	"path/filepath"

	"github.com/cdcetl/cdcetl/writer"
)

// outputNames are the main output's and the dead-letter file's paths for a
// stem.
func (r *run) outputNames(stem string) (main, dead string, err error) {
	cfg := r.cfg
	switch {
	case cfg.To == ToParquet, cfg.To == ToIceberg:
		main = stem + ".parquet"
	case cfg.Target != nil:
		suffix, err := writer.JSONSuffix(cfg.JSONCompression)
		if err != nil {
			return "", "", err
		}
		main = stem + suffix
	}
	if cfg.DeadLetterDir != "" {
		dead = filepath.Join(cfg.DeadLetterDir, stem+".jsonl")
	}
	return main, dead, nil
}
