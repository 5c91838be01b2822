package decode

import "github.com/cdcetl/cdcetl/arrowconv"

// unit is what one format knows, kept in the format's own file (canal.go,
// maxwell.go, ogg.go, debezium.go, plainjson.go) beside its decoder and
// encoder, and reached through the format table (Format.unit), never by
// comparing names: where a message's table and source position are, where
// its first row image is, what it shows inference, and what to tell a user whose message Flink's
// rules refuse. The JSON machinery the units share (the scanner, the
// value converters, the searches for keys) is in the files without a
// format's name.
type unit interface {
	// newDecoder is the format's part of decoding (opDecoder); newEncoder
	// writes an envelope of the format around encoded rows.
	newDecoder(*base) opDecoder
	newEncoder(*Encoder) envelopeEncoder
	// positionFields are the envelope fields the source position is read
	// from; bindPosition makes m's fill from them (field reads one).
	positionFields() []string
	bindPosition(d *base, m *metaCol, field func(string) func() ([]byte, bool)) error
	// route finds a message's table as the format places it (RouteRaw),
	// routeForward walking from the message's start, guess by a cheaper
	// rule a message can fool (g: the Guesser's memory, nil for GuessRaw),
	// and routed from what decoding captured (Decoder.Routed). ok is false
	// when the message names no table.
	route(schemaInclude bool, msg []byte) (ns, table []byte, esc, ok bool)
	routeForward(schemaInclude bool, msg []byte) (ns, table []byte, esc, ok bool)
	guess(g *Guesser, schemaInclude bool, msg []byte) (ns, table []byte, esc, ok bool)
	routed(d *base) (ns, table []byte, esc, ok bool)
	// rowPaths are where a message's first row image may be (RowKeys).
	rowPaths(opts Options) [][]string
	// unknownOpHint says what to do about an op Flink's format refuses;
	// hint, about a message it could not decode (err), knowing what the
	// message looks like (g): "" when the format has nothing to add to
	// Hint's general advice.
	unknownOpHint() string
	hint(err error, g Sniffed, opts Options, msg []byte) string
	// observe reads what a message shows about its table for inference
	// (Format.Observe), declared the column types it declares
	// (Format.Declared).
	observe(schemaInclude bool, msg []byte, o *Observation) bool
	declared(types []byte, yield func(col []byte, t arrowconv.Type, evidence string))
	// traits are the format's ways that shared code follows.
	traits() traits
}

// traits are a format's conventions that the shared machinery follows.
type traits struct {
	// plain: each message is a row itself (json), not an envelope.
	plain bool
	// connect: Debezium's Kafka Connect conventions under producer
	// semantics (MongoDB's extended JSON, the connector's value
	// encodings, the placeholder of unavailable values, the source block
	// that names a change's table).
	connect bool
	// latin1Binary: binary values are ISO-8859-1 text, a char a byte
	// (Canal).
	latin1Binary bool
	// wktGeometry: geometries may be WKT text (Maxwell).
	wktGeometry bool
}

// noRoute is the routing of a format whose messages name no table.
type noRoute struct{}

func (noRoute) route(bool, []byte) (ns, table []byte, esc, ok bool) { return nil, nil, false, false }
func (noRoute) routeForward(bool, []byte) (ns, table []byte, esc, ok bool) {
	return nil, nil, false, false
}
func (noRoute) guess(*Guesser, bool, []byte) (ns, table []byte, esc, ok bool) {
	return nil, nil, false, false
}
func (noRoute) routed(*base) (ns, table []byte, esc, ok bool) { return nil, nil, false, false }

// noHint is the hint of a format with nothing to add to Hint's.
type noHint struct{}

func (noHint) hint(error, Sniffed, Options, []byte) string { return "" }

// Sniffed is what a message's top-level keys say about its producer.
type Sniffed struct {
	// Format is the format whose envelope the keys match, or "".
	Format string
	// SchemaInclude: a Debezium schema/payload envelope.
	SchemaInclude bool
	// Keys are the top-level keys that decided it.
	Keys []string
	// Control: a record that carries no rows (a DDL record, a transaction
	// marker). It tells the format only when no row record does.
	Control bool
}

// Guesser is GuessRaw with a memory, for the messages of one input in
// order. Debezium's source block keeps its key order within a stream, and
// what precedes its "db", "schema" and "table" keys (version, connector,
// server name, a 13-digit ts_ms, the snapshot flag) rarely changes length,
// so the keys usually sit where they sat in the last message: checking
// there is a few comparisons instead of a walk over the block and a
// search of it per key. When they are not there, the guess is GuessRaw's.
// A key the last message lacked is taken as absent again, unlooked-for;
// like every guess, the router checks it against what decoding read.
//
// Canal's "database" sits after the "data" and "old" arrays, followed by
// members whose lengths rarely change within a table (es, id, isDdl,
// mysqlType, pkNames, sql, sqlType, table, ts, type): it is first looked
// for as far from the message's end as it was last time, instead of
// colon by colon from the end. Found there, a later `"database":` (a
// column of that name in mysqlType or sqlType) goes unlooked-for, where
// GuessRaw would take the later one.
type Guesser struct {
	Format        *Format
	SchemaInclude bool
	at            sourceKeys // where the last message's keys were
	known         bool
	dbFromEnd     int // Canal: len(msg) minus the offset of the last message's "database" key; 0: none
}

// opDecoder is the format-specific part: given the scanned top-level
// object, emit rows through the base.
type opDecoder interface {
	envelope() []string                  // top-level field names to capture
	bind()                               // resolve the fields it reads, once
	decode(root []byte) (Outcome, error) // rows go through base.emit
}

// metaCol is one declared METADATA column and how to fill it.
type metaCol struct {
	key  string
	typ  arrowconv.Type // as declared: a timestamp key's values go in its unit
	col  arrowconv.Column
	fill func(arrowconv.Column) error
}

// sourceKeys are offsets in a source object of its keys `"schema":`,
// `"db":`, `"table":` and `"collection":` (-1: absent or not looked for).
type sourceKeys [4]int
