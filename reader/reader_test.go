package reader

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func readAll(t *testing.T, data []byte, maxLine int) ([]string, []Pos, error) {
	t.Helper()
	l, err := NewLines(bytes.NewReader(data), "f", maxLine)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var lines []string
	var pos []Pos
	for l.Next() {
		lines = append(lines, string(l.Bytes()))
		pos = append(pos, l.Pos())
	}
	return lines, pos, l.Err()
}

func TestFraming(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"plain", "a\nb\n", []string{"a", "b"}},
		{"no final newline", "a\nb", []string{"a", "b"}},
		{"crlf", "a\r\nb\r\n", []string{"a", "b"}},
		{"only one cr removed", "a\r\r\n", []string{"a\r"}},
		{"blank lines kept", "a\n\n\nb", []string{"a", "", "", "b"}},
		{"empty", "", nil},
		{"just newline", "\n", []string{""}},
		{"bom passes through", "\xef\xbb\xbf{}\n", []string{"\xef\xbb\xbf{}"}},
	}
	for _, tt := range tests {
		got, _, err := readAll(t, []byte(tt.in), 0)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestPositions(t *testing.T) {
	_, pos, err := readAll(t, []byte("ab\r\ncde\n\nf"), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []Pos{{"f", 1, 0}, {"f", 2, 4}, {"f", 3, 8}, {"f", 4, 9}}
	for i := range want {
		if pos[i] != want[i] {
			t.Errorf("pos[%d] = %+v, want %+v", i, pos[i], want[i])
		}
	}
}

func TestLongLines(t *testing.T) {
	big := strings.Repeat("x", 3<<20+17) // longer than the 1 MiB read buffer
	got, _, err := readAll(t, []byte("a\n"+big+"\nb"), 0)
	if err != nil || len(got) != 3 || got[1] != big || got[2] != "b" {
		t.Fatalf("long line: err %v, %d lines", err, len(got))
	}
	_, pos, err := readAll(t, []byte("a\n"+big+"\nb"), 1<<20)
	var le *LineError
	if !errors.Is(err, ErrLineTooLong) || !errors.As(err, &le) || le.Pos.Line != 2 {
		t.Fatalf("err = %v, want ErrLineTooLong at line 2", err)
	}
	if len(pos) != 1 {
		t.Errorf("%d lines before the error, want 1", len(pos))
	}
}

func TestCompressed(t *testing.T) {
	text := "l1\nl2\r\nl3"
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(text))
	zw.Close()
	var zs bytes.Buffer
	zsw, _ := zstd.NewWriter(&zs)
	zsw.Write([]byte(text))
	zsw.Close()
	for name, data := range map[string][]byte{"gzip": gz.Bytes(), "zstd": zs.Bytes()} {
		got, _, err := readAll(t, data, 0)
		if err != nil || strings.Join(got, ",") != "l1,l2,l3" {
			t.Errorf("%s: %q %v", name, got, err)
		}
	}
	// A corrupt gzip stream is an error, not a silent short read.
	bad := append([]byte(nil), gz.Bytes()[:gz.Len()-6]...)
	if _, _, err := readAll(t, bad, 0); err == nil {
		t.Error("truncated gzip: no error")
	}
}

func TestWalk(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"b.json", "a/2.json", "a/1.json", ".hidden", "_tmp", ".dir/x.json", "_dir/y.json", "c/.x/z.json"} {
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte("{}\n"), 0o644)
	}
	files, err := Walk([]string{dir, filepath.Join(dir, ".hidden")})
	if err != nil {
		t.Fatal(err)
	}
	var rel []string
	for _, f := range files {
		rel = append(rel, f.Rel)
	}
	want := "a/1.json a/2.json b.json .hidden"
	if strings.Join(rel, " ") != want {
		t.Errorf("Walk = %q, want %q", strings.Join(rel, " "), want)
	}
	if _, err := Walk([]string{filepath.Join(dir, "missing")}); err == nil {
		t.Error("missing path: no error")
	}
}

// TestChunksMatchLines: cutting a file into chunks gives the same lines and
// positions as reading it line by line, whatever the chunk size.
func TestChunksMatchLines(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 500; i++ {
		b.WriteString(strings.Repeat("x", i%37))
		if i%7 == 0 {
			b.WriteString("\r")
		}
		b.WriteString("\n")
	}
	b.WriteString("last line without newline")
	data := b.String()
	want, wantPos, _ := readAll(t, []byte(data), 0)
	path := filepath.Join(t.TempDir(), "in")
	os.WriteFile(path, []byte(data), 0o644)
	for _, size := range []int{1, 7, 64, 1000, 1 << 20} {
		c, err := OpenChunks(path, "f", size, 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		var pos []Pos
		for {
			ch, ok := c.Next()
			if !ok {
				break
			}
			ch.Lines(func(l []byte, p Pos) bool {
				got = append(got, string(l))
				pos = append(pos, p)
				return true
			})
			c.Recycle(ch.Data)
		}
		if err := c.Err(); err != nil {
			t.Fatal(err)
		}
		c.Close()
		if strings.Join(got, "|") != strings.Join(want, "|") || len(pos) != len(wantPos) {
			t.Fatalf("size %d: %d lines, want %d", size, len(got), len(want))
		}
		for i := range pos {
			if pos[i] != wantPos[i] {
				t.Fatalf("size %d: pos[%d] = %+v, want %+v", size, i, pos[i], wantPos[i])
			}
		}
	}
	// Too long a line is an error with its line number.
	c, _ := OpenChunks(path, "f", 8, 30)
	for {
		if _, ok := c.Next(); !ok {
			break
		}
	}
	var le *LineError
	if !errors.As(c.Err(), &le) || !errors.Is(c.Err(), ErrLineTooLong) || le.Pos.Line != 32 {
		t.Errorf("err = %v, want ErrLineTooLong on line 32", c.Err())
	}
	c.Close()
}

// TestTruncatedGzip: a gzip file cut short says so, with the byte counts,
// instead of "unexpected EOF" at line 1.
func TestTruncatedGzip(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(zw, `{"id":%d,"name":"row %d"}`+"\n", i, i*7919)
	}
	zw.Close()
	cut := buf.Bytes()[:buf.Len()*2/3]
	path := filepath.Join(t.TempDir(), "x.json.gz")
	os.WriteFile(path, cut, 0o644)
	c, err := OpenChunks(path, path, 4096, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for {
		if _, ok := c.Next(); !ok {
			break
		}
	}
	var le *LineError
	if !errors.As(c.Err(), &le) || !errors.Is(c.Err(), ErrTruncated) || le.Pos.Line < 2 ||
		!strings.Contains(c.Err().Error(), fmt.Sprintf("gzip stream truncated after %d of %d bytes", len(cut), len(cut))) {
		t.Errorf("err = %v", c.Err())
	}
}

// TestChunksCloseReleases: a closed reader keeps no buffers (one whose
// input is read again lingers while the next attempt reads), and buffers
// given back after Close are not kept either; Close twice is harmless.
func TestChunksCloseReleases(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(path, bytes.Repeat([]byte(`{"a":1}`+"\n"), 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := OpenChunks(path, path, 64, 0)
	if err != nil {
		t.Fatal(err)
	}
	var held [][]byte
	for range 4 {
		ch, ok := c.Next()
		if !ok {
			t.Fatal("too few chunks")
		}
		held = append(held, ch.Data)
	}
	c.Recycle(held[0])
	c.Recycle(held[1])
	if len(c.free) != 2 {
		t.Fatalf("%d buffers kept before Close, want 2", len(c.free))
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c.Recycle(held[2])
	if len(c.free) != 0 {
		t.Fatalf("%d buffers kept after Close", len(c.free))
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// gzipOf compresses data.
func gzipOf(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	return b.Bytes()
}

// TestChunksLongLineLinear: a line many chunks long, read from a gzip
// stream (whose reads are small), is searched for its end once: the bytes
// examined stay within twice the bytes read. Searching the whole growing
// buffer after every read made a 50 MB gzipped line take 20 s, and 300 MB
// of zero bytes minutes before "line too long".
func TestChunksLongLineLinear(t *testing.T) {
	line := append(bytes.Repeat([]byte{'x'}, 24<<20), '\n')
	data := append(append(line, "{}\n"...), line...)
	path := filepath.Join(t.TempDir(), "long.json.gz")
	if err := os.WriteFile(path, gzipOf(t, data), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := OpenChunks(path, "long", 64<<10, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got int
	for {
		ch, ok := c.Next()
		if !ok {
			break
		}
		got += len(ch.Data)
	}
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	if got != len(data) {
		t.Fatalf("read %d bytes, want %d", got, len(data))
	}
	if c.scanned > 2*int64(len(data)) {
		t.Errorf("examined %d bytes for line ends in %d bytes read: the search is not linear", c.scanned, len(data))
	}
}

// TestChunksLineTooLongStopsAtOnce: 64 MiB of zero bytes (no line end)
// fail as soon as more than the maximum has been read, not after reading
// on.
func TestChunksLineTooLongStopsAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zeros.gz")
	if err := os.WriteFile(path, gzipOf(t, make([]byte, 64<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	const maxLine = 1 << 20
	c, err := OpenChunks(path, "zeros", 64<<10, maxLine)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.Next(); ok {
		t.Fatal("a chunk of a file with no line end")
	}
	if !errors.Is(c.Err(), ErrLineTooLong) {
		t.Fatalf("err = %v, want ErrLineTooLong", c.Err())
	}
	if c.scanned > 4*maxLine {
		t.Errorf("examined %d bytes before failing a line longer than %d", c.scanned, maxLine)
	}
}

// endless is an unending stream of zero bytes, handed out in small reads.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	p = p[:min(len(p), 4096)]
	clear(p)
	e.n += int64(len(p))
	return len(p), nil
}

// TestChunksCancel: a cancelled read of a line with no end stops at the
// next read, not at the maximum line size.
func TestChunksCancel(t *testing.T) {
	src := &endless{}
	c, err := NewChunks(io.NopCloser(src), "endless", 64<<10, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	c.SetContext(ctx)
	cancel()
	if _, ok := c.Next(); ok {
		t.Fatal("a chunk after cancellation")
	}
	if !errors.Is(c.Err(), context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", c.Err())
	}
	if src.n > 1<<20 {
		t.Errorf("read %d bytes after cancellation", src.n)
	}
}
