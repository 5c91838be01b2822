package decode

// unit is what one format knows, kept in the format's own file (canal.go,
// maxwell.go, ogg.go, debezium.go, plainjson.go) beside its decoder and
// encoder, and reached through the format table (Format.unit), never by
// comparing names: where a message's table and source position are, where
// its first row image is, and what to tell a user whose message Flink's
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
