package writer

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/klauspost/compress/zstd"
)

// Encoder turns batches into newline-terminated CDC JSON messages. The
// decode package's encoders implement it; writer only moves bytes.
type Encoder interface {
	// AppendBatch appends the messages for rec to dst.
	AppendBatch(dst []byte, rec arrow.RecordBatch) ([]byte, error)
	// Finish appends whatever the encoder still holds.
	Finish(dst []byte) []byte
}

// CDCJSON writes re-encoded messages to a stream or to an atomic file,
// optionally gzip or zstd compressed.
type CDCJSON struct {
	enc  Encoder
	w    io.Writer
	zw   io.WriteCloser
	file *atomicFile
	buf  []byte
}

// NewCDCJSONStream writes to w (stdout); nothing is compressed.
func NewCDCJSONStream(w io.Writer, enc Encoder) *CDCJSON {
	return &CDCJSON{enc: enc, w: w}
}

// JSONSuffix is the output file suffix for a --compression value.
func JSONSuffix(compression string) (string, error) {
	switch strings.ToLower(compression) {
	case "", "none", "uncompressed":
		return ".jsonl", nil
	case "gzip":
		return ".jsonl.gz", nil
	case "zstd":
		return ".jsonl.zst", nil
	}
	return "", fmt.Errorf("compression %q is not available for JSON output (none, gzip, zstd)", compression)
}

// NewCDCJSONFile writes to path through a temporary file.
func NewCDCJSONFile(path string, enc Encoder, compression string) (*CDCJSON, error) {
	if _, err := JSONSuffix(compression); err != nil {
		return nil, err
	}
	f, err := createAtomic(path, 1<<20)
	if err != nil {
		return nil, err
	}
	c := &CDCJSON{enc: enc, w: f.buf, file: f}
	switch strings.ToLower(compression) {
	case "gzip":
		c.zw = gzip.NewWriter(f.buf)
	case "zstd":
		zw, err := zstd.NewWriter(f.buf)
		if err != nil {
			f.abort()
			return nil, fmt.Errorf("zstd: %w", err)
		}
		c.zw = zw
	}
	if c.zw != nil {
		c.w = c.zw
	}
	return c, nil
}

// Write implements [Writer].
func (c *CDCJSON) Write(_ context.Context, rec arrow.RecordBatch) error {
	var err error
	c.buf, err = c.enc.AppendBatch(c.buf[:0], rec)
	if err != nil {
		return err
	}
	return c.flush()
}

func (c *CDCJSON) flush() error {
	if _, err := c.w.Write(c.buf); err != nil {
		return c.writeErr(err)
	}
	return nil
}

// writeErr names the output a write failed on.
func (c *CDCJSON) writeErr(err error) error {
	if c.file != nil {
		return fmt.Errorf("writing %s: %w", c.file.path, cause(err))
	}
	return fmt.Errorf("writing to stdout: %w", err)
}

// Close writes what the encoder holds and moves a file into place.
func (c *CDCJSON) Close() error {
	c.buf = c.enc.Finish(c.buf[:0])
	if err := c.flush(); err != nil {
		c.Abort()
		return err
	}
	if c.zw != nil {
		if err := c.zw.Close(); err != nil {
			c.Abort()
			return c.writeErr(err)
		}
	}
	if c.file != nil {
		return c.file.commit()
	}
	if f, ok := c.w.(interface{ Flush() error }); ok {
		return f.Flush()
	}
	return nil
}

// Abort drops a file output.
func (c *CDCJSON) Abort() error {
	if c.file != nil {
		return c.file.abort()
	}
	return nil
}
