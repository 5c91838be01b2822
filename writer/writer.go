// Package writer emits record batches: printed rows (Flink's print
// connector), Parquet files, or re-encoded CDC JSON. Every file output is
// written to a temporary name in the target directory, synced and renamed
// into place only when complete, so a reader never sees a partial file.
package writer

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
)

// Writer consumes record batches for one output.
type Writer interface {
	// Write writes the rows of rec. The caller keeps ownership of rec.
	Write(ctx context.Context, rec arrow.RecordBatch) error
	// Close finishes the output: for files it makes them appear under their
	// final name. After an error from Write, call Abort instead.
	Close() error
	// Abort discards the output; for files no trace is left.
	Abort() error
}
