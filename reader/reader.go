// Package reader finds input files and frames them into messages the way
// Flink's filesystem source does: one message per line, split on '\n', one
// trailing '\r' removed, a last line without '\n' still read. Compressed
// inputs (gzip, zstd) are recognised by their magic bytes.
//
// The package knows nothing of JSON; every message comes with its [Pos].
package reader

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cdcetl/cdcetl/internal/setting"
	"github.com/klauspost/compress/zstd"
)

// ErrLineTooLong is returned (wrapped in a *LineError) when a line is longer
// than the configured maximum.
var ErrLineTooLong = setting.Error("line too long (raise %s if the message is real)", setting.MaxLine)

// DefaultMaxLine is the default longest line accepted: large enough for any
// real CDC message (a 50 MB row image works), small enough to stop a file
// without newlines from eating memory.
const DefaultMaxLine = 256 << 20

// Pos is where a message starts.
type Pos struct {
	File   string
	Line   int   // 1-based
	Offset int64 // byte offset of the line in the (decompressed) file
}

// LineError is a framing error at a position.
type LineError struct {
	Pos Pos
	Err error
}

func (e *LineError) Error() string {
	return fmt.Sprintf("%s:%d: %v", e.Pos.File, e.Pos.Line, e.Err)
}
func (e *LineError) Unwrap() error { return e.Err }

// File is an input file found by [Walk] (or an object listed in a bucket).
type File struct {
	Path    string // as opened (an object's scheme://bucket/key)
	Rel     string // path relative to the argument it was found under (its base name for a file argument)
	Size    int64
	ModTime int64 // nanoseconds since the epoch
	// Store, when set, holds the input (an object under Key) instead of
	// the local file system.
	Store Store
	Key   string
}

// Store holds inputs that are not local files: a bucket.
type Store interface {
	// Open streams the object at key.
	Open(ctx context.Context, key string) (io.ReadCloser, error)
}

// Remote reports whether f is an object rather than a local file.
func (f File) Remote() bool { return f.Store != nil }

// Open opens the input's stored bytes.
func (f File) Open() (io.ReadCloser, error) {
	if f.Store != nil {
		return f.Store.Open(context.Background(), f.Key)
	}
	return os.Open(f.Path)
}

// Walk expands the given files and directories into input files. Directories
// are walked recursively in lexical order; names starting with '.' or '_'
// are skipped below a directory argument, as Flink's file source does. A file
// given by name is always read.
//
// exclude lists directories that are never inputs (a run's own output
// directories): they are skipped where a walk meets them, and an argument
// that is one of them, or a file inside one, is an error.
func Walk(paths []string, exclude ...string) ([]File, error) {
	ex := map[string]bool{}
	for _, d := range exclude {
		if abs, err := filepath.Abs(d); err == nil {
			ex[abs] = true
		}
	}
	insideExcluded := func(p string) (string, bool) {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", false
		}
		for d := abs; ; d = filepath.Dir(d) {
			if ex[d] {
				return d, true
			}
			if filepath.Dir(d) == d {
				return "", false
			}
		}
	}
	var out []File
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err // the path is said once
			}
			return nil, &PathError{Path: p, Err: err}
		}
		if !st.IsDir() {
			if d, ok := insideExcluded(p); ok {
				return nil, &PathError{Path: p, Err: fmt.Errorf("%w: it is inside %s, where this run writes", ErrOwnOutput, d)}
			}
			out = append(out, File{Path: p, Rel: filepath.Base(p), Size: st.Size(), ModTime: st.ModTime().UnixNano()})
			continue
		}
		if abs, err := filepath.Abs(p); err == nil && ex[abs] {
			return nil, &PathError{Path: p, Err: fmt.Errorf("%w: it is a directory this run writes to", ErrOwnOutput)}
		}
		var found []File
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if path != p && hidden(d.Name()) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				if abs, err := filepath.Abs(path); err == nil && ex[abs] && path != p {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(p, path)
			if err != nil {
				return err
			}
			found = append(found, File{Path: path, Rel: rel, Size: info.Size(), ModTime: info.ModTime().UnixNano()})
			return nil
		})
		if err != nil {
			return nil, &PathError{Path: p, Err: err}
		}
		sort.Slice(found, func(i, j int) bool { return found[i].Path < found[j].Path })
		out = append(out, found...)
	}
	return out, nil
}

// ErrOwnOutput is returned (in a *PathError) for an input argument that is
// one of the run's own output directories, or inside one.
var ErrOwnOutput = errors.New("outputs are never read as inputs")

// PathError is an input argument that cannot be read.
type PathError struct {
	Path string
	Err  error
}

func (e *PathError) Error() string { return "input " + e.Path + ": " + e.Err.Error() }
func (e *PathError) Unwrap() error { return e.Err }

func hidden(name string) bool { return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") }

// Lines reads the messages of one file. It is not safe for concurrent use.
type Lines struct {
	name    string
	f       io.ReadCloser
	dec     io.Closer
	codec   string // "gzip", "zstd" or "" (plain)
	r       *bufio.Reader
	maxLine int
	buf     []byte
	line    []byte
	pos     Pos
	next    int64 // offset of the next line
	err     error
	done    bool
}

// Open opens path for reading lines; gzip and zstd content is decompressed.
// name is the file name used in positions (usually path). maxLine <= 0 means
// DefaultMaxLine.
func Open(path, name string, maxLine int) (*Lines, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	l, err := NewLines(f, name, maxLine)
	if err != nil {
		f.Close()
		return nil, err
	}
	l.f = f
	return l, nil
}

// NewLines frames messages from r, decompressing gzip or zstd content.
func NewLines(r io.Reader, name string, maxLine int) (*Lines, error) {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	br := bufio.NewReaderSize(r, 1<<20)
	l := &Lines{name: name, maxLine: maxLine}
	magic, _ := br.Peek(4)
	defer func() { l.r = br }()
	switch {
	case len(magic) >= 2 && magic[0] == 0x1f && magic[1] == 0x8b:
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		l.dec, l.codec = zr, "gzip"
		br = bufio.NewReaderSize(zr, 1<<20)
	case bytes.Equal(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(1<<30))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		l.dec, l.codec = zstdCloser{zr}, "zstd"
		br = bufio.NewReaderSize(zr, 1<<20)
	}
	return l, nil
}

type zstdCloser struct{ d *zstd.Decoder }

func (z zstdCloser) Close() error { z.d.Close(); return nil }

// Next advances to the next line. It returns false at the end of input or
// on an error; Err tells which.
func (l *Lines) Next() bool {
	if l.done {
		return false
	}
	l.pos = Pos{File: l.name, Line: l.pos.Line + 1, Offset: l.next}
	l.buf = l.buf[:0]
	var line []byte
	for {
		chunk, err := l.r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			l.buf = append(l.buf, chunk...)
			if len(l.buf) > l.maxLine {
				return l.fail(ErrLineTooLong)
			}
			continue
		}
		if len(l.buf) > 0 {
			l.buf = append(l.buf, chunk...)
			line = l.buf
		} else {
			line = chunk
		}
		if err != nil {
			if err != io.EOF {
				return l.fail(err)
			}
			l.done = true
			if len(line) == 0 {
				return false // no last line: the file ended with '\n'
			}
		}
		break
	}
	l.next += int64(len(line))
	if len(line) > l.maxLine+1 {
		return l.fail(ErrLineTooLong)
	}
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	l.line = line
	return true
}

func (l *Lines) fail(err error) bool {
	l.done = true
	l.err = &LineError{Pos: l.pos, Err: err}
	return false
}

// Bytes returns the current line without its terminator. It stays valid
// only until the next call to Next.
func (l *Lines) Bytes() []byte { return l.line }

// Pos returns the position of the current line.
func (l *Lines) Pos() Pos { return l.pos }

// Err returns the first error met, or nil at a clean end of input.
func (l *Lines) Err() error { return l.err }

// Close releases the file and any decompressor.
func (l *Lines) Close() error {
	if l.dec != nil {
		l.dec.Close()
	}
	if l.f != nil {
		return l.f.Close()
	}
	return nil
}
