package writer

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sync"
	"unicode/utf8"
)

// DeadLetter is one message (or one value) that could not be decoded while
// errors were being skipped.
type DeadLetter struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Offset int64  `json:"offset"`           // byte offset of the line
	Column int    `json:"column,omitempty"` // byte column of the problem, from 1
	// Kind is "message" (the message was dropped) or "value" (one value
	// became NULL; the rest of the message was decoded).
	Kind   string `json:"kind"`
	Reason string `json:"reason"`
	// RowsKept is, for a dropped multi-row canal message, the rows emitted
	// before the failure (Flink keeps them too).
	RowsKept int `json:"rows_kept,omitempty"`
	// Raw is the line as read; RawBase64 replaces it when the line is not
	// valid UTF-8, so no byte is lost.
	Raw       string `json:"raw,omitempty"`
	RawBase64 string `json:"raw_base64,omitempty"`
}

// NewDeadLetter builds an entry, keeping raw exactly.
func NewDeadLetter(file string, line int, offset int64, column int, kind, reason string, raw []byte) DeadLetter {
	d := DeadLetter{File: file, Line: line, Offset: offset, Column: column, Kind: kind, Reason: reason}
	if utf8.Valid(raw) {
		d.Raw = string(raw)
	} else {
		d.RawBase64 = base64.StdEncoding.EncodeToString(raw)
	}
	return d
}

// DeadLetters collects entries into one JSONL file, which appears
// (atomically) on Close. It is safe for concurrent use.
type DeadLetters struct {
	mu   sync.Mutex
	file *atomicFile
	n    int
}

// NewDeadLetters starts the dead-letter file at path.
func NewDeadLetters(path string) (*DeadLetters, error) {
	f, err := createAtomic(path, 1<<16)
	if err != nil {
		return nil, err
	}
	return &DeadLetters{file: f}, nil
}

// Add writes entries.
func (d *DeadLetters) Add(entries []DeadLetter) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, e := range entries {
		b, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("dead letter %s: %w", d.file.path, err)
		}
		if _, err := d.file.buf.Write(append(b, '\n')); err != nil {
			return fmt.Errorf("dead letter %s: %w", d.file.path, err)
		}
		d.n++
	}
	return nil
}

// Len is the number of entries written.
func (d *DeadLetters) Len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n
}

// Close makes the file appear under its name.
func (d *DeadLetters) Close() error { return d.file.commit() }

// Abort discards the file.
func (d *DeadLetters) Abort() error { return d.file.abort() }
