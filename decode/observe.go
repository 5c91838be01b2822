package decode

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/buger/jsonparser"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// Observation is what one message shows about its table, read by the
// message's format unit (Format.Observe) for type inference and inspect.
// The unit knows where its format keeps things; infer counts, types and
// keys what it finds the same way for every format. Slices point into the
// message or into the Observation's own buffers and hold until the next
// Observe.
type Observation struct {
	// NS and Table name the message's table, unescaped (nil: absent or
	// not a string).
	NS, Table []byte
	// Event: the message has an event time and source position (false for
	// a message that is not the format's envelope at all). Milli is the
	// event time in epoch milliseconds (0: none).
	Event    bool
	Milli    int64
	Position []byte
	// Op is a change's kind: 'I' (an insert, a snapshot read), 'U' or
	// 'D', and Changes the number of rows it changes. Op 0 is a message
	// that carries no rows, named by Control as conversion counts it.
	Op      byte
	Changes int
	Control string
	// PrimaryKey is the JSON array of key column names the message states
	// (nil: none).
	PrimaryKey []byte
	// Types is the block of column types the message declares (Canal's
	// mysqlType, Maxwell's DDL def, Debezium's Connect schema), read by
	// Format.Declared; nil: none.
	Types []byte
	// Images are the row images whose values are evidence, and KeyImage a
	// delete's before image, which may hold the key alone.
	Images   [][]byte
	KeyImage []byte

	fields             [16]picked
	pos, ns, name, tmp []byte // buffers of Position, NS, Table and a value
	// facts, when set (Format.ObserveFacts), receives the message's Facts
	// from the same walk.
	facts *Facts
}

// noTypes is the evidence of a format whose messages declare no types.
type noTypes struct{}

func (noTypes) declared([]byte, func([]byte, arrowconv.Type, string)) {}

// picked is one envelope value pick found.
type picked struct {
	v  []byte
	t  jsonparser.ValueType
	ok bool
}

// str is the string's content, unescaped into buf when it must be (the
// raw content when it cannot be); nil when absent or not a string.
func (f picked) str(buf *[]byte) []byte {
	if !f.ok || f.t != jsonparser.String {
		return nil
	}
	if bytes.IndexByte(f.v, '\\') < 0 {
		return f.v
	}
	u, err := jsonparser.Unescape(f.v, (*buf)[:0])
	if err != nil {
		return f.v
	}
	if cap(u) > cap(*buf) {
		*buf = u[:0]
	}
	return u
}

// text is str as a string.
func (f picked) text() string {
	var buf []byte
	return string(f.str(&buf))
}

// is reports whether the value is the string s.
func (f picked) is(s string) bool {
	if !f.ok || f.t != jsonparser.String {
		return false
	}
	if bytes.IndexByte(f.v, '\\') < 0 {
		return string(f.v) == s
	}
	return f.text() == s
}

// op is the change kind the value names: 'I' for insert (or insert2),
// 'U' for update, 'D' for delete, 0 for none of them.
func (f picked) op(insert, insert2, update, delete string) byte {
	switch {
	case f.is(insert), insert2 != "" && f.is(insert2):
		return 'I'
	case f.is(update):
		return 'U'
	case f.is(delete):
		return 'D'
	}
	return 0
}

func (f picked) int() int64 {
	if !f.ok || f.t != jsonparser.Number {
		return 0
	}
	n, _ := jsonparser.ParseInt(f.v)
	return n
}

// of is the value when it is of type t, else nil.
func (f picked) of(t jsonparser.ValueType) []byte {
	if !f.ok || f.t != t {
		return nil
	}
	return f.v
}

// slowObserve makes pick walk messages with jsonparser alone (the fuzz
// twin of the fast walk).
var slowObserve = false

// pick reads the top-level values named by paths (one name each) in one
// walk over msg, the first of each name, as jsonparser.EachKey finds
// them: a message's evidence is taken from one walk, not one per field.
//
// It returns true when the fast walk read msg whole (it is then valid
// JSON); false when jsonparser had to.
func pick(msg []byte, out []picked, paths [][]string) bool {
	clear(out)
	if !slowObserve && Members(msg, func(k, v []byte, t jsonparser.ValueType) {
		for i, p := range paths {
			if string(k) == p[0] {
				if !out[i].ok {
					out[i] = picked{v, t, true}
				}
				return
			}
		}
	}) {
		return true
	}
	clear(out)
	jsonparser.EachKey(msg, func(i int, v []byte, t jsonparser.ValueType, err error) {
		if err == nil {
			out[i] = picked{v, t, true}
		}
	}, paths...)
	return false
}

// validAfter tells whether msg is valid JSON once pick has walked it:
// read whole by the fast walk, or judged by the decoders' scanner and the
// standard library (as Facts does).
func validAfter(fast bool, msg []byte) bool {
	return fast || Members(msg, func([]byte, []byte, jsonparser.ValueType) {}) || json.Valid(msg)
}

// maxwellMilli reads Maxwell's ts: seconds in row records, milliseconds in
// DDL records (table-create, table-alter, ...). A count of seconds that
// large would be past the year 5000.
func maxwellMilli(ts int64) int64 {
	if ts >= 100_000_000_000 {
		return ts
	}
	return ts * 1000
}

// oggMilli reads op_ts's date and time (to the second) as epoch
// milliseconds, 0 when it cannot.
func oggMilli(s []byte) int64 {
	if len(s) < 19 {
		return 0
	}
	var b [19]byte
	copy(b[:], s)
	b[10] = ' ' // ' ', 'T' or GoldenGate's ':'
	t, err := time.Parse("2006-01-02 15:04:05", string(b[:]))
	if err != nil {
		return 0
	}
	return t.UnixMilli()
}

// unescapeDoc reads a JSON string's content as the JSON object it holds
// (MongoDB's documents), nil when it holds none.
func unescapeDoc(s []byte) []byte {
	u, err := jsonparser.Unescape(s, nil)
	if err != nil {
		return nil
	}
	u = bytes.TrimSpace(u)
	if len(u) > 0 && u[0] == '{' {
		return u
	}
	return nil
}

// Facts are what a message tells of its place in its producer's stream:
// the evidence an audit of an archive checks for gaps, duplicates and
// order (Format.Facts). Slices point into the message or into the Facts'
// own buffers and hold until the next Facts call.
type Facts struct {
	// Valid is false when the message is not one JSON value: nothing else
	// is set then.
	Valid bool
	// Position is the source position as the source-position metadata
	// column has it (position.go: text whose order is log order), nil
	// when the message has none.
	Position []byte
	// Stream names the producer's stream when the message says which:
	// Debezium's "connector/name" (the logical server), Maxwell's
	// server_id. Nil otherwise.
	Stream []byte
	// GTID is the transaction's global id as the producer wrote it
	// (MySQL "uuid:n", MariaDB "domain-server-seq").
	GTID []byte
	// Maxwell's transaction fields: xid, xoffset (a transaction's rows
	// are numbered from 0; a one-row transaction has none) and commit
	// (true on its last row).
	Xid, XOffset       int64
	HasXid, HasXOffset bool
	Commit             bool
	// BinlogFile and BinlogPos: the MySQL binlog coordinates (Maxwell's
	// "position" FILE:OFFSET, Debezium MySQL's source.file and pos).
	BinlogFile []byte
	BinlogPos  int64
	// Debezium's transaction block: its id, the event's order among all
	// the transaction's events and among those of its table (from 1).
	TxnID                   []byte
	TxnTotal, TxnCollection int64
	// Marker is a Debezium transaction metadata record: 'B' (BEGIN) or 'E'
	// (END) of transaction MarkerID; an END's MarkerCount events in all,
	// and per table MarkerCollections, the JSON array of
	// {"data_collection","event_count"} objects.
	Marker            byte
	MarkerID          []byte
	MarkerCount       int64
	MarkerCollections []byte

	fields [8]picked
	pos    []byte
	tmp    [2][]byte
	filled bool // by an observe walk (ObserveFacts)
}

// reset empties x for the next message, keeping its buffers.
func (x *Facts) reset() {
	*x = Facts{fields: x.fields, pos: x.pos[:0], tmp: [2][]byte{x.tmp[0][:0], x.tmp[1][:0]}}
}
