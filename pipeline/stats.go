package pipeline

import (
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/cdcetl/cdcetl/lake"
	"github.com/cdcetl/cdcetl/materialize"
)

// Stats counts what a run did. Lines = Messages + Blank + DDL + Filtered +
// Dropped + Control, where Messages are the lines that produced their rows.
type Stats struct {
	Files    int   `json:"files"`
	Lines    int64 `json:"lines"`
	Messages int64 `json:"messages"`
	Blank    int64 `json:"blank"`
	DDL      int64 `json:"ddl_skipped"`
	Filtered int64 `json:"filtered"`
	// AfterAsOf counts the filtered messages that are after --as-of;
	// UnplacedAsOf the messages kept because they say nothing of when
	// they happened.
	AfterAsOf    int64 `json:"after_as_of,omitempty"`
	UnplacedAsOf int64 `json:"unplaced_as_of,omitempty"`
	Dropped      int64 `json:"dropped"`
	// Control counts, under producer semantics, the messages that carry no
	// rows (DDL, transaction markers, heartbeats, truncates).
	Control int64 `json:"control"`
	// ZeroDates counts MySQL zero dates made NULL (producer semantics).
	ZeroDates int64 `json:"zero_dates,omitempty"`
	// Truncates lists the truncates met (producer semantics), in input
	// order: a lake loader must empty the table at that point.
	Truncates []Truncate `json:"truncates,omitempty"`
	// Rows counts rows by kind (index = arrowconv.RowKind).
	Rows  RowCounts `json:"rows"`
	Bytes int64     `json:"bytes"`
	// Nulled counts values that became NULL under ignore-parse-errors (in
	// messages that were otherwise decoded).
	Nulled int64 `json:"values_nulled"`
	// DeadLetters counts the dead-letter entries written.
	DeadLetters int64 `json:"dead_letters"`
	// Skipped counts inputs the journal says are already converted;
	// Failed counts inputs that failed (KeepGoing).
	Skipped int `json:"skipped_inputs"`
	Failed  int `json:"failed_inputs"`
	// OtherShards counts the inputs found that belong to other shards
	// (--shard): Files + Skipped + Failed + OtherShards are the inputs
	// found.
	OtherShards int `json:"other_shard_inputs,omitempty"`
	// Warnings are things that look wrong but did not stop the run (a
	// column no message has, canal messages of several tables).
	Warnings []string `json:"warnings,omitempty"`
	// Committed counts, for Iceberg output, an input's rows of a table
	// that became part of the table; Held those a table held already (a
	// rerun commits nothing twice).
	Committed int `json:"iceberg_committed,omitempty"`
	Held      int `json:"iceberg_already_held,omitempty"`
	// Maintained are the tables the run maintained after its commits
	// (their files passed the thresholds).
	Maintained []lake.MaintainResult `json:"maintained,omitempty"`
	// Materialized are the current-state snapshots made (--materialize).
	Materialized []MaterializedTable `json:"materialized,omitempty"`
	// SchemaChanges are the drifts of inferred schemas (routed): added
	// columns, widened types, and incompatible changes with the schema
	// version they started.
	SchemaChanges []SchemaChange `json:"schema_changes,omitempty"`
	// PerFile holds each input's own counts, in input order.
	PerFile []FileStats `json:"per_file,omitempty"`
}

// SchemaChange is one drift of an inferred schema, and where it was seen.
type SchemaChange struct {
	Table   string `json:"table"`
	File    string `json:"file"`
	Line    int    `json:"line"`
	Change  string `json:"change"`
	Version int    `json:"version"`
}

// TableStats is what one input gave one source table (routed).
type TableStats struct {
	Table   string    `json:"table"`
	Dir     string    `json:"dir"` // below the output directory
	Outputs []string  `json:"outputs,omitempty"`
	Rows    RowCounts `json:"rows"`
}

// Truncate is a truncate message: the table it empties, and where it is.
type Truncate struct {
	Table    string `json:"table"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Position string `json:"source_position,omitempty"`
}

// RowCounts counts rows by kind; it marshals as {"+I": n, "-U": n, ...}.
type RowCounts [4]int64

// MarshalJSON implements json.Marshaler.
func (c RowCounts) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, `{"+I":%d,"-U":%d,"+U":%d,"-D":%d}`, c[0], c[1], c[2], c[3]), nil
}

// UnmarshalJSON implements json.Unmarshaler (the journal reads it back).
func (c *RowCounts) UnmarshalJSON(b []byte) error {
	var m map[string]int64
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*c = RowCounts{m["+I"], m["-U"], m["+U"], m["-D"]}
	return nil
}

// FileStats is one input's result.
type FileStats struct {
	idx  int
	Path string `json:"path"`
	// Status is "ok", "failed" (with Error), or "skipped": the journal
	// says the input was already converted (its Outputs are that
	// conversion's).
	Status string `json:"status"`
	// Outputs are the input's files, relative to the output directory.
	Outputs []string `json:"outputs,omitempty"`
	Error   string   `json:"error,omitempty"`
	// Disposed says what became of the input ("moved" to MovedTo, or
	// "deleted"); empty when it stays where it was.
	Disposed string `json:"disposed,omitempty"`
	MovedTo  string `json:"moved_to,omitempty"`
	// Deferred says why --on-success (or --failed) left the input where
	// it is for now: it is still open for writing, or changed after it
	// was read. A later run (or the watcher, after its quiet period)
	// converts it again if it changed, and disposes of it.
	Deferred string `json:"disposition_deferred,omitempty"`
	// Tables, in a routed conversion, is what each source table got.
	Tables []TableStats `json:"tables,omitempty"`
	Stats
}

// Progress counts work done, for a progress display; safe to read while
// Run works.
type Progress struct {
	Bytes atomic.Int64 // input bytes decoded (decompressed)
	Rows  atomic.Int64
	Total atomic.Int64 // input bytes to do (file sizes, known at start)
}

// Add adds o's counts (not its PerFile) to s.
func (s *Stats) Add(o Stats) { s.add(o) }

func (s *Stats) add(o Stats) {
	s.Files += o.Files
	s.Lines += o.Lines
	s.Messages += o.Messages
	s.Blank += o.Blank
	s.DDL += o.DDL
	s.Filtered += o.Filtered
	s.AfterAsOf += o.AfterAsOf
	s.UnplacedAsOf += o.UnplacedAsOf
	s.Dropped += o.Dropped
	s.Control += o.Control
	s.ZeroDates += o.ZeroDates
	s.Truncates = append(s.Truncates, o.Truncates...)
	s.Bytes += o.Bytes
	s.Nulled += o.Nulled
	s.DeadLetters += o.DeadLetters
	s.Skipped += o.Skipped
	s.Failed += o.Failed
	s.OtherShards += o.OtherShards
	s.Committed += o.Committed
	s.Held += o.Held
	s.Warnings = append(s.Warnings, o.Warnings...)
	s.SchemaChanges = append(s.SchemaChanges, o.SchemaChanges...)
	for i := range s.Rows {
		s.Rows[i] += o.Rows[i]
	}
}

// TotalRows is the number of rows of all kinds.
func (s Stats) TotalRows() int64 { return s.Rows[0] + s.Rows[1] + s.Rows[2] + s.Rows[3] }

// MaterializedTable is what one snapshot got.
type MaterializedTable struct {
	Table string `json:"table"`
	Dir   string `json:"dir"`
	// Order is how changes were ordered: by input path (file name), then
	// line.
	Order string `json:"order"`
	materialize.Result
}
