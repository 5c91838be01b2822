// Package audit checks a CDC archive for completeness: from the evidence
// producers put in their messages (GTIDs, transaction numbering, binlog
// files, source positions) and in archive file names (Kafka Connect's
// offsets) it finds what is missing, what is there twice, and what is out
// of order, and tells per stream and table what the archive covers.
//
// An [Auditor] takes the archive's messages in archive order (files in
// order, lines in order), each as an [Event] read by decode's
// Format.Observe and Format.Facts, and gives a [Report]. The pipeline
// package reads archives into it (pipeline.Audit); 'cdcetl audit' prints
// the report.
package audit

import (
	"encoding/json"
	"fmt"
	"time"
)

// Report is what an audit found.
type Report struct {
	Coverage Coverage `json:"coverage"`
	// GapsFound counts every gap; Gaps lists them, the first of each kind
	// and stream when there are very many (Notes says how many more).
	GapsFound  int64      `json:"gaps_found"`
	Gaps       []Gap      `json:"gaps"`
	Duplicates Duplicates `json:"duplicates"`
	Order      []Order    `json:"order"`
	// Quiet are hours without events in a table whose neighbouring hours
	// are busy: a heuristic, not proof of a gap.
	Quiet []Quiet `json:"quiet_periods"`
	// Notes are what the audit could not check or judged not to be a gap
	// (a transaction cut by the archive's first or last file).
	Notes []string `json:"notes"`
}

// Coverage is what the archive holds: its files in order, and per
// producer stream and table the messages, rows and the span of event
// times and source positions.
type Coverage struct {
	Files    []File   `json:"files"`
	Streams  []Stream `json:"streams"`
	Messages int64    `json:"messages"`
	Rows     Rows     `json:"rows"`
	// AfterCut counts the messages left out for being after the point
	// audited to (--as-of).
	AfterCut int64 `json:"after_as_of,omitempty"`
}

// File is one input of the archive.
type File struct {
	Path       string `json:"path"`
	Format     string `json:"format"`
	Lines      int64  `json:"lines"`
	Messages   int64  `json:"messages"`
	Unreadable int64  `json:"unreadable,omitempty"`
	// Duplicates are its messages seen before in the archive; DuplicateOf
	// the file most of them were first seen in.
	Duplicates  int64  `json:"duplicates,omitempty"`
	DuplicateOf string `json:"duplicate_of,omitempty"`
	// Kafka is the topic, partition and first offset its name carries
	// (Kafka Connect's sinks).
	Kafka *KafkaName `json:"kafka,omitempty"`
}

// KafkaName is what a Kafka Connect sink file's name says.
type KafkaName struct {
	Topic       string `json:"topic"`
	Partition   int64  `json:"partition"`
	StartOffset int64  `json:"start_offset"`
}

// Rows counts change rows by kind, as conversion writes them.
type Rows [4]int64

// MarshalJSON implements json.Marshaler.
func (r Rows) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, `{"+I":%d,"-U":%d,"+U":%d,"-D":%d}`, r[0], r[1], r[2], r[3]), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (r *Rows) UnmarshalJSON(b []byte) error {
	var m map[string]int64
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*r = Rows{m["+I"], m["-U"], m["+U"], m["-D"]}
	return nil
}

// Span is what a stream or table covers.
type Span struct {
	Messages      int64            `json:"messages"`
	Rows          Rows             `json:"rows"`
	Control       map[string]int64 `json:"control,omitempty"`
	FirstEvent    *time.Time       `json:"first_event,omitempty"`
	LastEvent     *time.Time       `json:"last_event,omitempty"`
	FirstPosition string           `json:"first_position,omitempty"`
	LastPosition  string           `json:"last_position,omitempty"`
}

// Stream is one producer's stream: a format and, when the messages say,
// the producer's own name for it (Debezium's connector and server name,
// Maxwell's server_id).
type Stream struct {
	Name   string `json:"name"`
	Format string `json:"format"`
	ID     string `json:"id,omitempty"`
	Span
	Tables []Table `json:"tables"`
}

// Table is one source table of a stream.
type Table struct {
	Table     string `json:"table"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Span
	// Files are the inputs holding its messages, in archive order.
	Files []string `json:"files"`
	// Hours counts its events per hour of event time from HoursStart (UTC).
	HoursStart *time.Time `json:"hours_start,omitempty"`
	Hours      []int64    `json:"hours,omitempty"`
}

// Loc is a message's place: its file and line.
type Loc struct {
	File string `json:"file"`
	Line int64  `json:"line"`
}

func (l *Loc) String() string {
	if l == nil {
		return "-"
	}
	return fmt.Sprintf("%s:%d", l.File, l.Line)
}

// Gap kinds.
const (
	GapGTID        = "gtid"
	GapTransaction = "transaction"
	GapBinlogFile  = "binlog-file"
	GapKafkaOffset = "kafka-offset"
	GapUnreadable  = "unreadable"
)

// Gap is something missing from the archive, with where it is: the last
// message before it and the first after it.
type Gap struct {
	Kind   string `json:"kind"`
	Stream string `json:"stream,omitempty"`
	Table  string `json:"table,omitempty"`
	// What says what is missing, Missing how many of it (transactions,
	// rows, files, offsets).
	What    string `json:"what"`
	Missing int64  `json:"missing"`
	Before  *Loc   `json:"before,omitempty"`
	After   *Loc   `json:"after,omitempty"`
	// BeforeTime and AfterTime are the event times of those messages,
	// when they have one.
	BeforeTime *time.Time `json:"before_time,omitempty"`
	AfterTime  *time.Time `json:"after_time,omitempty"`
}

// Duplicates are events the archive holds more than once: the same
// stream, table, source position, kind and row images.
type Duplicates struct {
	Messages int64 `json:"messages"`
	Rows     int64 `json:"rows"`
	// Unchecked counts messages without a source position, which cannot be
	// told apart from a later change to the same values.
	Unchecked int64            `json:"unchecked"`
	Files     []DuplicateFile  `json:"files,omitempty"`
	Samples   []DuplicateEvent `json:"samples,omitempty"`
}

// DuplicateFile is a file holding events seen before.
type DuplicateFile struct {
	File     string `json:"file"`
	Messages int64  `json:"messages"`
	// Of is the file most of them were first seen in; Whole: every message
	// of the file was seen before.
	Of    string `json:"of"`
	Whole bool   `json:"whole"`
}

// DuplicateEvent is one repeated event.
type DuplicateEvent struct {
	Stream   string `json:"stream"`
	Table    string `json:"table"`
	Kind     string `json:"kind"`
	Position string `json:"position"`
	First    Loc    `json:"first"`
	Copy     Loc    `json:"copy"`
}

// Order is a table's source positions going backwards.
type Order struct {
	Stream  string      `json:"stream"`
	Table   string      `json:"table"`
	Count   int64       `json:"count"`
	Samples []OrderStep `json:"samples"`
}

// OrderStep is one step back: the position at At is before the one at
// Previous, read earlier.
type OrderStep struct {
	At               Loc    `json:"at"`
	Position         string `json:"position"`
	Previous         Loc    `json:"previous"`
	PreviousPosition string `json:"previous_position"`
}

// Quiet is a run of hours without events in a table between two busy
// hours.
type Quiet struct {
	Stream string    `json:"stream"`
	Table  string    `json:"table"`
	From   time.Time `json:"from"`
	To     time.Time `json:"to"` // exclusive
	Hours  int       `json:"hours"`
	// Before and After are the events of the hours either side.
	Before int64 `json:"events_before"`
	After  int64 `json:"events_after"`
}
