package decode

import (
	"errors"
	"strconv"
	"strings"

	"github.com/cdcetl/cdcetl/internal/nearest"
)

var (
	// ErrMalformed is returned for a message that is not valid JSON, or whose
	// root is not an object.
	ErrMalformed = errors.New("malformed JSON")
	// ErrUnknownOp is returned for an operation (canal "type", maxwell
	// "type", ogg "op_type", debezium "op") the format does not know,
	// including DDL and bootstrap records that Flink does not skip.
	ErrUnknownOp = errors.New("unknown operation")
	// ErrMissingField is returned when a field the operation needs is
	// missing or null: "data", "old", "before", "after", the operation itself,
	// or a field a filter needs.
	ErrMissingField = errors.New("missing field")
	// ErrType is returned when a value cannot be converted to its column's
	// type and ignore-parse-errors is off.
	ErrType = errors.New("cannot convert value")
	// ErrOption is returned by option validation, before any input is read.
	ErrOption = errors.New("invalid option")
	// ErrUnknownKey is returned, with Options.RejectUnknownKeys, for a row
	// key that is no column.
	ErrUnknownKey = errors.New("key is not a column")
)

// Error is a message that could not be decoded. Its position is the one the
// reader gave the message; Column and Offset point into the line where the
// problem was found (Column counts bytes from 1; 0 means unknown).
type Error struct {
	File   string
	Line   int
	Column int
	Offset int64 // byte offset of the line in the file
	Path   string
	Err    error
	// Hint, when set, says what the user most likely has to change (see
	// [Hint]); it is not part of Error().
	Hint string
}

// Error prints file:line:col: path: reason, the form editors can jump to.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	b.WriteByte(':')
	b.WriteString(strconv.Itoa(e.Line))
	if e.Column > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Column))
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// msgError is an error found inside a message, before the position of the
// message is known. off is the byte offset within the message, or -1.
type msgError struct {
	path string
	off  int
	err  error
	hint string
}

func (e *msgError) Error() string {
	if e.path != "" {
		return e.path + ": " + e.err.Error()
	}
	return e.err.Error()
}
func (e *msgError) Unwrap() error { return e.err }

// reasonError attaches a reason text to a sentinel.
type reasonError struct {
	sentinel error
	msg      string
}

func (e *reasonError) Error() string { return e.msg }
func (e *reasonError) Unwrap() error { return e.sentinel }

func errorf(sentinel error, msg string) error { return &reasonError{sentinel, msg} }

// withOffset places a msgError without an offset at off.
func withOffset(err error, off int) error {
	if me, ok := err.(*msgError); ok && me.off < 0 {
		return &msgError{path: me.path, off: off, err: me.err, hint: me.hint}
	}
	return err
}

// withPath prefixes the path of a value error with name (a field name or
// "[i]"), keeping the innermost offset.
func withPath(err error, name string) error {
	if name == "" {
		return err
	}
	var me *msgError
	if errors.As(err, &me) {
		p := name
		if me.path != "" {
			if me.path[0] == '[' {
				p = name + me.path
			} else {
				p = name + "." + me.path
			}
		}
		return &msgError{path: p, off: me.off, err: me.err, hint: me.hint}
	}
	return &msgError{path: name, off: -1, err: err}
}

// Closest returns the candidate nearest to name (equal ignoring case, else
// within two edits), or "".
func Closest(name string, candidates []string) string { return nearest.Closest(name, candidates) }
