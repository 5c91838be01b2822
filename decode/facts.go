package decode

import (
	"bytes"
	"encoding/json"

	"github.com/buger/jsonparser"
)

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

var (
	canalFacts    = [][]string{{"es"}, {"id"}, {"gtid"}}
	maxwellFacts  = [][]string{{"position"}, {"ts"}, {"xid"}, {"xoffset"}, {"commit"}, {"gtid"}, {"server_id"}}
	oggFacts      = [][]string{{"pos"}, {"csn"}}
	debeziumFacts = [][]string{{"source"}, {"transaction"}, {"status"}, {"id"}, {"event_count"}, {"data_collections"}}
	dbzTxn        = [][]string{{"id"}, {"total_order"}, {"data_collection_order"}}
)

// Facts reads msg's evidence of its place in its stream into x, as f
// places it (schemaInclude: Debezium's schema/payload envelope). One walk
// over the message both validates it and picks the fields. A byte-order
// mark is the caller's to remove, as for Observe.
func (f *Format) Facts(schemaInclude bool, msg []byte, x *Facts) {
	x.reset()
	switch f.Name {
	case "canal-json":
		p := x.fields[:len(canalFacts)]
		if x.Valid = pickValid(msg, p, canalFacts); x.Valid {
			x.Position = x.parts(p[0], p[1])
			x.GTID = p[2].str(&x.tmp[0])
		}
	case "maxwell-json":
		p := x.fields[:len(maxwellFacts)]
		if x.Valid = pickValid(msg, p, maxwellFacts); x.Valid {
			x.maxwell(p)
		}
	case "ogg-json":
		p := x.fields[:len(oggFacts)]
		if x.Valid = pickValid(msg, p, oggFacts); x.Valid {
			if p[0].ok && p[0].t != jsonparser.Null {
				x.Position = x.parts(p[0])
			} else {
				x.Position = x.parts(p[1])
			}
		}
	case "debezium-json":
		body := msg
		if schemaInclude {
			var pl [1]picked
			if x.Valid = pickValid(msg, pl[:], payloadPath); !x.Valid {
				return
			}
			if body = pl[0].of(jsonparser.Object); body == nil {
				return
			}
		}
		p := x.fields[:len(debeziumFacts)]
		if ok := pickValid(body, p, debeziumFacts); !schemaInclude {
			x.Valid = ok
		}
		if x.Valid {
			x.debezium(p)
		}
	default:
		x.Valid = Members(msg, func([]byte, []byte, jsonparser.ValueType) {}) || json.Valid(msg)
	}
}

var payloadPath = [][]string{{"payload"}}

// pickValid is pick that also tells whether msg is one JSON value: the
// fast walk validates what it walks; when it cannot read msg, the standard
// library judges before jsonparser picks.
func pickValid(msg []byte, out []picked, paths [][]string) bool {
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
	// Valid as the decoders' scanner reads JSON (slowObserve, the twin,
	// asks it too), or as the standard library does.
	clear(out)
	if !Members(msg, func([]byte, []byte, jsonparser.ValueType) {}) && !json.Valid(msg) {
		return false
	}
	jsonparser.EachKey(msg, func(i int, v []byte, t jsonparser.ValueType, err error) {
		if err == nil {
			out[i] = picked{v, t, true}
		}
	}, paths...)
	return true
}

// parts joins the values present as the source-position column does:
// each a padded number or its text, '/' between; nil when none is there.
func (x *Facts) parts(vs ...picked) []byte {
	b, any := x.pos[:0], false
	for i, v := range vs {
		if i > 0 {
			b = append(b, '/')
		}
		if v.ok && v.t != jsonparser.Null {
			b, any = appendPositionPart(b, v.v), true
		}
	}
	x.pos = b
	if !any {
		return nil
	}
	return b
}

func (x *Facts) maxwell(p []picked) {
	position, ts, xid, xoffset := p[0], p[1], p[2], p[3]
	present := func(v picked) bool { return v.ok && v.t != jsonparser.Null }
	b := x.pos[:0]
	switch {
	case present(position):
		// "mysql-bin.000003:4242": the file, then the offset as a number.
		pv := position.v
		cut := bytes.LastIndexByte(pv, ':')
		if cut < 0 {
			cut = len(pv)
		}
		b = append(append(b, pv[:cut]...), '/')
		if cut < len(pv) {
			b = appendPositionPart(b, pv[cut+1:])
			if n, err := jsonparser.ParseInt(pv[cut+1:]); err == nil && position.t == jsonparser.String {
				x.BinlogFile, x.BinlogPos = pv[:cut], n
			}
		}
	case present(ts) || present(xid):
		if present(ts) {
			b = appendPositionPart(b, ts.v)
		}
		b = append(b, '/')
		if present(xid) {
			b = appendPositionPart(b, xid.v)
		}
	default:
		b = nil
	}
	if b != nil {
		b = append(b, '/')
		if present(xoffset) {
			b = appendPositionPart(b, xoffset.v)
		}
		x.pos, x.Position = b, b
	}
	x.Xid, x.HasXid = xid.int(), xid.ok && xid.t == jsonparser.Number
	x.XOffset, x.HasXOffset = xoffset.int(), xoffset.ok && xoffset.t == jsonparser.Number
	x.Commit = string(p[4].of(jsonparser.Boolean)) == "true"
	x.GTID = p[5].str(&x.tmp[1])
	if v := p[6]; v.ok && v.t == jsonparser.Number {
		x.Stream = v.v
	}
}

func (x *Facts) debezium(p []picked) {
	if src := p[0].of(jsonparser.Object); src != nil {
		var v [len(dbzSourceAll)]picked
		pick(src, v[:], dbzSourcePaths)
		keys, ok := sortableIdx[string(v[0].of(jsonparser.String))]
		if !ok {
			keys = sortableIdx[""]
		}
		b, any := x.pos[:0], false
		for i, k := range keys {
			if i > 0 {
				b = append(b, '/')
			}
			if v[k].ok && v[k].t != jsonparser.Null {
				b, any = appendPositionPart(b, v[k].v), true
			}
		}
		x.pos = b
		if any {
			x.Position = b
		}
		if conn, name := v[0].of(jsonparser.String), v[1].of(jsonparser.String); len(conn) > 0 || len(name) > 0 {
			b := append(x.tmp[0][:0], conn...)
			if len(conn) > 0 && len(name) > 0 {
				b = append(b, '/')
			}
			x.Stream = append(b, name...)
			x.tmp[0] = x.Stream
		}
		x.GTID = v[2].of(jsonparser.String)
		if f := v[3].of(jsonparser.String); len(f) > 0 && v[4].ok && v[4].t == jsonparser.Number {
			x.BinlogFile, x.BinlogPos = f, v[4].int()
		}
	}
	if txn := p[1].of(jsonparser.Object); txn != nil {
		var t [3]picked
		pick(txn, t[:], dbzTxn)
		x.TxnID = t[0].str(&x.tmp[1])
		x.TxnTotal, x.TxnCollection = t[1].int(), t[2].int()
	}
	if p[0].ok || p[1].ok {
		return
	}
	// Transaction metadata: {"status":"BEGIN"|"END","id":...}.
	switch {
	case p[2].is("BEGIN"):
		x.Marker = 'B'
	case p[2].is("END"):
		x.Marker = 'E'
	default:
		return
	}
	x.MarkerID = p[3].str(&x.tmp[1])
	x.MarkerCount = p[4].int()
	x.MarkerCollections = p[5].of(jsonparser.Array)
}

// dbzSourceAll are the members of Debezium's source block Facts reads:
// the stream's name, GTID and binlog file first, then every connector's
// position fields.
var dbzSourceAll = [...]string{"connector", "name", "gtid", "file", "pos", "row", "lsn", "txId", "change_lsn",
	"commit_lsn", "event_serial_no", "scn", "commit_scn", "ts_ms", "ord"}

var dbzSourcePaths = func() [][]string {
	out := make([][]string, len(dbzSourceAll))
	for i, k := range dbzSourceAll {
		out[i] = []string{k}
	}
	return out
}()

// sortableIdx are, per connector, the indexes in dbzSourceAll of its
// position's fields in order, as the source-position column joins them;
// "" is every other connector's (ts_ms, then DebeziumSourcePos).
var sortableIdx = func() map[string][]int {
	idx := func(k string) int {
		for i, n := range dbzSourceAll {
			if n == k {
				return i
			}
		}
		panic("decode: no source member " + k)
	}
	m := map[string][]int{}
	for conn, keys := range debeziumPositions {
		for _, k := range keys {
			m[conn] = append(m[conn], idx(k))
		}
	}
	for _, k := range append([]string{"ts_ms"}, DebeziumSourcePos...) {
		m[""] = append(m[""], idx(k))
	}
	return m
}()
