package reader

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"sync/atomic"

	"github.com/zeebo/xxh3"
)

// DefaultChunkSize is the size of the blocks a file is cut into for
// parallel decoding. A block's rows go to the writer as one batch, and a
// smaller batch is likelier still in the core's 1 MiB L2 when the writer
// reads it (a 4 MiB block's is 2-3 MiB of columns): against 4 MiB, 1 MiB
// ran 5-14% faster on 256 MiB inputs, 0-8% on 1 GiB ones.
const DefaultChunkSize = 1 << 20

// Chunk is a block of whole lines of one file.
type Chunk struct {
	File      string
	Data      []byte // ends at a '\n', except the file's last chunk
	FirstLine int    // 1-based line number of the first line in Data
	Offset    int64  // byte offset of Data in the (decompressed) file
}

// Lines calls yield for each line of the chunk (terminator and one trailing
// '\r' removed) with its position; it stops when yield returns false.
// A final empty piece after the last '\n' is not a line.
func (c Chunk) Lines(yield func(line []byte, pos Pos) bool) {
	data := c.Data
	line := c.FirstLine
	off := c.Offset
	for len(data) > 0 {
		n := bytes.IndexByte(data, '\n')
		var l []byte
		adv := n + 1
		if n < 0 {
			l, adv = data, len(data)
		} else {
			l = data[:n]
		}
		if k := len(l); k > 0 && l[k-1] == '\r' {
			l = l[:k-1]
		}
		if !yield(l, Pos{File: c.File, Line: line, Offset: off}) {
			return
		}
		data = data[adv:]
		line++
		off += int64(adv)
	}
}

// Chunks cuts one file into blocks of whole lines. It is not safe for
// concurrent use; the chunks it returns belong to the caller.
type Chunks struct {
	lines   *Lines // for opening and decompression
	r       io.Reader
	size    int
	maxLine int
	carry   []byte // the start of a line cut by the previous block
	line    int
	off     int64
	err     error
	done    bool
	// Free, when set, supplies buffers to reuse (they are returned by the
	// caller through Recycle).
	free    chan []byte
	closed  atomic.Bool
	sum     hash.Hash    // of the raw (possibly compressed) file bytes
	raw     *countReader // the raw bytes read so far
	rawSize int64
	ctx     context.Context
	endMod  int64 // the file's modification time when its end was read (-1: unknown)
	// scanned counts the bytes examined for line ends (tests check that a
	// long line is searched once).
	scanned int64
}

// OpenChunks opens path (decompressing gzip/zstd) for chunked reading.
// name is used in positions; size <= 0 means DefaultChunkSize.
func OpenChunks(path, name string, size, maxLine int) (*Chunks, error) {
	return OpenFileChunks(File{Path: path}, name, size, maxLine)
}

// OpenFileChunks is OpenChunks for an input found by Walk or listed in a
// bucket (streamed: an object is never downloaded whole).
func OpenFileChunks(in File, name string, size, maxLine int) (*Chunks, error) {
	f, err := in.Open()
	if err != nil {
		return nil, err
	}
	c, err := NewChunks(f, name, size, maxLine)
	if err != nil {
		return nil, err
	}
	if c.rawSize < 0 {
		c.rawSize = in.Size
	}
	return c, nil
}

// NewChunks cuts the stream f (closed by Close, or here on an error) into
// blocks of whole lines.
func NewChunks(f io.ReadCloser, name string, size, maxLine int) (*Chunks, error) {
	h := xxh3.New128()
	cr := &countReader{r: f}
	l, err := NewLines(io.TeeReader(cr, h), name, maxLine)
	if err != nil {
		f.Close()
		return nil, err
	}
	l.f = f
	if size <= 0 {
		size = DefaultChunkSize
	}
	c := &Chunks{lines: l, r: l.r, size: size, maxLine: l.maxLine, line: 1, free: make(chan []byte, 8), sum: h, raw: cr, rawSize: -1, ctx: context.Background(), endMod: -1}
	if st, ok := f.(interface{ Stat() (os.FileInfo, error) }); ok {
		if fi, err := st.Stat(); err == nil {
			c.rawSize = fi.Size()
		}
	}
	return c, nil
}

// SetContext makes Next stop, with the context's error, at the first read
// after ctx is done: a long line is many reads, and an interrupted run
// must not wait for its end.
func (c *Chunks) SetContext(ctx context.Context) { c.ctx = ctx }

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// readErr explains a read error: a compressed stream that ends early is a
// file cut short (copied while still being written, or a broken upload),
// which "unexpected EOF" does not say.
func (c *Chunks) readErr(err error, decompressed int64) error {
	if c.lines.codec != "" && errors.Is(err, io.ErrUnexpectedEOF) {
		return &truncatedError{fmt.Sprintf("%s stream truncated after %d of %d bytes (%d bytes decompressed): the file ends before the %s trailer; was it copied while still being written?",
			c.lines.codec, c.raw.n, c.rawSize, decompressed, c.lines.codec)}
	}
	if c.lines.codec != "" {
		return fmt.Errorf("%s stream corrupt after %d of %d bytes (%d bytes decompressed): %w", c.lines.codec, c.raw.n, c.rawSize, decompressed, err)
	}
	return err
}

// ErrTruncated is returned (in a *LineError) for a gzip or zstd file that
// ends before its stream does.
var ErrTruncated = errors.New("compressed input truncated")

type truncatedError struct{ msg string }

func (e *truncatedError) Error() string        { return e.msg }
func (e *truncatedError) Is(target error) bool { return target == ErrTruncated }

// Hash is the hex XXH3-128 of the file's bytes as stored (compressed or
// not), for change detection; it is complete once Next has returned false
// without an error.
func (c *Chunks) Hash() string { return hex.EncodeToString(c.sum.Sum(nil)) }

// noteEnd records the file's modification time at the end of the read,
// when the file is still the size read: then it and the size say which
// content was read (a file appended to meanwhile is another).
func (c *Chunks) noteEnd() {
	st, ok := c.lines.f.(interface{ Stat() (os.FileInfo, error) })
	if !ok {
		return
	}
	if fi, err := st.Stat(); err == nil && fi.Size() == c.raw.n {
		c.endMod = fi.ModTime().UnixNano()
	}
}

// Extent is what a complete read covered: the bytes read as stored, and
// the file's modification time at the end of the read (-1 when unknown:
// an object, or a file that grew meanwhile). Valid once Next has returned
// false without an error.
func (c *Chunks) Extent() (size, modTime int64) { return c.raw.n, c.endMod }

// Recycle gives a chunk's buffer back for reuse (after Close, to the
// collector).
func (c *Chunks) Recycle(b []byte) {
	if c.closed.Load() {
		return
	}
	select {
	case c.free <- b[:0]:
	default:
	}
}

// Next returns the next chunk; ok is false at the end of the file or on an
// error (see Err).
func (c *Chunks) Next() (Chunk, bool) {
	if c.done {
		return Chunk{}, false
	}
	var buf []byte
	select {
	case buf = <-c.free:
	default:
		buf = make([]byte, 0, c.size+c.size/4)
	}
	buf = append(buf, c.carry...)
	c.carry = c.carry[:0]
	minFree := max(c.size/4, 512)
	// Line ends are searched for in what each read adds, never again in
	// what was searched before (the carry holds none): a line many
	// chunks long costs one pass, however small the reads.
	scanned := len(buf)
	for {
		if err := c.ctx.Err(); err != nil {
			c.done = true
			c.err = &LineError{Pos: Pos{File: c.lines.name, Line: c.line, Offset: c.off}, Err: context.Cause(c.ctx)}
			return Chunk{}, false
		}
		if cap(buf)-len(buf) < minFree {
			nb := make([]byte, len(buf), 2*cap(buf)+c.size+minFree)
			copy(nb, buf)
			buf = nb
		}
		n, err := c.r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			c.done = true
			// Hash what a decompressor left unread, so the hash covers the file.
			rest, _ := io.Copy(c.sum, c.lines.f)
			c.raw.n += rest
			c.noteEnd()
			break
		}
		if err != nil {
			c.done = true
			c.err = &LineError{Pos: Pos{File: c.lines.name, Line: c.line + bytes.Count(buf, []byte{'\n'}), Offset: c.off + int64(len(buf))}, Err: c.readErr(err, c.off+int64(len(buf)))}
			return Chunk{}, false
		}
		if len(buf) >= c.size {
			c.scanned += int64(len(buf) - scanned)
			if cut := bytes.LastIndexByte(buf[scanned:], '\n'); cut >= 0 {
				cut += scanned
				c.carry = append(c.carry, buf[cut+1:]...)
				buf = buf[:cut+1]
				break
			}
			scanned = len(buf)
			if len(buf) > c.maxLine {
				c.done = true
				c.err = &LineError{Pos: Pos{File: c.lines.name, Line: c.line, Offset: c.off}, Err: ErrLineTooLong}
				return Chunk{}, false
			}
		}
	}
	if len(buf) == 0 {
		return Chunk{}, false
	}
	// A line longer than the maximum fails, as Lines does.
	if err := c.checkLines(buf); err != nil {
		c.done = true
		c.err = err
		return Chunk{}, false
	}
	ch := Chunk{File: c.lines.name, Data: buf, FirstLine: c.line, Offset: c.off}
	c.line += bytes.Count(buf, []byte{'\n'})
	c.off += int64(len(buf))
	return ch, true
}

func (c *Chunks) checkLines(buf []byte) error {
	if len(buf) <= c.maxLine {
		return nil
	}
	line, start := c.line, 0
	for start < len(buf) {
		n := bytes.IndexByte(buf[start:], '\n')
		end := len(buf)
		if n >= 0 {
			end = start + n
		}
		if end-start > c.maxLine {
			return &LineError{Pos: Pos{File: c.lines.name, Line: line, Offset: c.off + int64(start)}, Err: ErrLineTooLong}
		}
		start = end + 1
		line++
	}
	return nil
}

// Err returns the first error met, or nil at a clean end of file.
func (c *Chunks) Err() error { return c.err }

// Close releases the file and the buffers kept for reuse (a reader that
// lingers, as one whose input is read again does, keeps no memory); a
// second Close does nothing.
func (c *Chunks) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
drain:
	for {
		select {
		case <-c.free:
		default:
			break drain
		}
	}
	c.carry = nil
	return c.lines.Close()
}
