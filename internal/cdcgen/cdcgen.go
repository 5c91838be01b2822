// Package cdcgen generates deterministic CDC JSON for benchmarks: a
// products table (BIGINT id, STRING name, description, category,
// DECIMAL(10,2) weight, INT quantity, BOOLEAN in_stock, DOUBLE rating with
// nulls, TIMESTAMP(3) created, DATE release_date) changed by 60% inserts,
// 30% updates and 10% deletes, in each of the four formats.
package cdcgen

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Schema is the products table as a Flink column list, with metadata
// columns chosen per format by [SchemaFor].
const Schema = "id BIGINT, name STRING, description STRING, category STRING, weight DECIMAL(10, 2), quantity INT, " +
	"in_stock BOOLEAN, rating DOUBLE, created TIMESTAMP(3), release_date DATE"

// SchemaFor returns Schema plus two metadata columns of format.
func SchemaFor(format string) string {
	switch format {
	case "canal-json":
		return Schema + ", `table` STRING METADATA FROM 'table' VIRTUAL, ts TIMESTAMP_LTZ(3) METADATA FROM 'ingestion-timestamp' VIRTUAL"
	case "maxwell-json":
		return Schema + ", `table` STRING METADATA FROM 'table' VIRTUAL, ts TIMESTAMP_LTZ(3) METADATA FROM 'ingestion-timestamp' VIRTUAL"
	case "ogg-json":
		return Schema + ", `table` STRING METADATA FROM 'table' VIRTUAL, ts TIMESTAMP_LTZ(6) METADATA FROM 'event-timestamp' VIRTUAL"
	case "debezium-json":
		return Schema + ", `table` STRING METADATA FROM 'source.table' VIRTUAL, ts TIMESTAMP_LTZ(3) METADATA FROM 'ingestion-timestamp' VIRTUAL"
	}
	return Schema
}

// Shapes of generated data: "products" (the default: the products table,
// lean envelopes, two metadata columns), "envelope" (the same table as
// the producers write it in full, with every metadata column of the
// format declared), "wide" (60 columns of mixed types, half NULL).
var Shapes = []string{"products", "envelope", "wide"}

// SchemaForShape is the --schema of a shape's messages in format.
func SchemaForShape(format, shape string) string {
	switch shape {
	case "envelope":
		cols := strings.Replace(Schema, "in_stock BOOLEAN", "in_stock TINYINT", 1)
		switch format {
		case "canal-json":
			return cols + ", `database` STRING METADATA FROM 'database' VIRTUAL, `table` STRING METADATA FROM 'table' VIRTUAL, " +
				"sql_type MAP<STRING, INT> METADATA FROM 'sql-type' VIRTUAL, pk_names ARRAY<STRING> METADATA FROM 'pk-names' VIRTUAL, " +
				"ingested TIMESTAMP_LTZ(3) METADATA FROM 'ingestion-timestamp' VIRTUAL, event_ts TIMESTAMP_LTZ(3) METADATA FROM 'event-timestamp' VIRTUAL"
		case "maxwell-json":
			return cols + ", `database` STRING METADATA FROM 'database' VIRTUAL, `table` STRING METADATA FROM 'table' VIRTUAL, " +
				"pk_columns ARRAY<STRING> METADATA FROM 'primary-key-columns' VIRTUAL, ingested TIMESTAMP_LTZ(3) METADATA FROM 'ingestion-timestamp' VIRTUAL"
		case "ogg-json":
			return cols + ", `table` STRING METADATA FROM 'table' VIRTUAL, pk_columns ARRAY<STRING> METADATA FROM 'primary-keys' VIRTUAL, " +
				"ingested TIMESTAMP_LTZ(6) METADATA FROM 'ingestion-timestamp' VIRTUAL, event_ts TIMESTAMP_LTZ(6) METADATA FROM 'event-timestamp' VIRTUAL"
		case "debezium-json":
			return cols + ", ingested TIMESTAMP_LTZ(3) METADATA FROM 'ingestion-timestamp' VIRTUAL, source_ts TIMESTAMP_LTZ(3) METADATA FROM 'source.timestamp' VIRTUAL, " +
				"source_db STRING METADATA FROM 'source.database' VIRTUAL, source_schema STRING METADATA FROM 'source.schema' VIRTUAL, " +
				"source_table STRING METADATA FROM 'source.table' VIRTUAL, source_props MAP<STRING, STRING> METADATA FROM 'source.properties' VIRTUAL"
		}
	case "wide":
		return wideSchema() + strings.TrimPrefix(SchemaFor(format), Schema)
	}
	return SchemaFor(format)
}

// Formats are the formats the generators write.
var Formats = []string{"canal-json", "maxwell-json", "ogg-json", "debezium-json"}

// NewShape returns a generator of shape's messages in format.
func NewShape(format, shape string, seed uint64) (interface{ Next([]byte) []byte }, error) {
	if !slices.Contains(Formats, format) {
		// New writes Debezium for a name it does not know: a typo would
		// otherwise give a benchmark the wrong format under the right name.
		return nil, fmt.Errorf("unknown format %q (%s)", format, strings.Join(Formats, ", "))
	}
	switch shape {
	case "", "products":
		return New(format, seed), nil
	case "envelope":
		g := New(format, seed)
		g.Envelope = true
		return g, nil
	case "wide":
		return newWide(format, seed), nil
	}
	return nil, fmt.Errorf("unknown shape %q (%s)", shape, strings.Join(Shapes, ", "))
}

type product struct {
	id                   int64
	name, desc, category string
	weightCents          int64
	qty                  int
	inStock              bool
	rating               float64
	hasRating            bool
	created              int64 // ms
	release              int64 // days
}

var words = []string{"scooter", "battery", "drill", "hammer", "rocks", "jacket", "tire", "lamp", "chair", "desk", "cable", "phone"}
var categories = []string{"tools", "outdoor", "home", "auto", "electronics"}
var adjectives = []string{"durable", "lightweight", "waterproof", "compact", "ergonomic", "café-grade", "heavy-duty", "quiet"}

// Generator produces messages; it is deterministic for a seed.
type Generator struct {
	// Tables, when above 1, spreads the messages over that many tables
	// of the same shape (products_00, products_01, ...), as a database's
	// one stream holds them.
	Tables int
	// Run, when above 0, gives the Tables in turn, Run messages each (a
	// snapshot or an export sorted by table), instead of at random.
	Run int
	n   int // messages so far
	// Envelope writes the messages as the producers write them in full
	// (shape "envelope"): every envelope field (positions, server and
	// thread ids, xid/xoffset, tokens), MySQL booleans as 0/1, longer
	// descriptions with escaped newlines and quotes.
	Envelope     bool
	pos          int64 // binlog position
	table, upper string
	format       string
	r            *rand.Rand
	live         []product
	nextID       int64
	ts           int64
}

// New returns a generator for format with a fixed seed.
func New(format string, seed uint64) *Generator {
	return &Generator{format: format, r: rand.New(rand.NewPCG(seed, 42)), nextID: 1, ts: 1589373515000}
}

func (g *Generator) newProduct() product {
	desc := "A " + words[g.r.IntN(len(words))] + " with " + words[g.r.IntN(len(words))] + " and " + words[g.r.IntN(len(words))]
	if g.Envelope {
		// Product copy as shops write it: a few sentences, line breaks,
		// quotes, a non-ASCII word now and then.
		var b []byte
		for k := 3 + g.r.IntN(5); k > 0; k-- {
			b = append(b, "The "...)
			b = append(b, words[g.r.IntN(len(words))]...)
			b = append(b, " is "...)
			b = append(b, adjectives[g.r.IntN(len(adjectives))]...)
			b = append(b, ", rated for "...)
			b = strconv.AppendInt(b, int64(g.r.IntN(5000)), 10)
			b = append(b, " hours."...)
			switch g.r.IntN(4) {
			case 0:
				b = append(b, `\n`...)
			case 1:
				b = append(b, ` \"Pro\" edition.`...)
			default:
				b = append(b, ' ')
			}
		}
		desc = string(b)
	}
	p := product{
		id:          g.nextID,
		name:        words[g.r.IntN(len(words))] + " " + strconv.Itoa(g.r.IntN(1000)),
		desc:        desc,
		category:    categories[g.r.IntN(len(categories))],
		weightCents: int64(g.r.IntN(100000)),
		qty:         g.r.IntN(500),
		inStock:     g.r.IntN(2) == 0,
		rating:      float64(g.r.IntN(50)) / 10,
		hasRating:   g.r.IntN(5) != 0,
		created:     g.ts - int64(g.r.IntN(86400000)),
		release:     18000 + int64(g.r.IntN(1000)),
	}
	g.nextID++
	return p
}

// Next appends one message (no newline) to dst.
func (g *Generator) Next(dst []byte) []byte {
	g.ts += int64(g.r.IntN(1000))
	g.pos += 200 + int64(g.r.IntN(800))
	g.table, g.upper = "products", "PRODUCTS"
	if g.Tables > 1 {
		var n int
		if g.Run > 0 {
			n = g.n / g.Run % g.Tables
		} else {
			n = g.r.IntN(g.Tables)
		}
		g.table, g.upper = fmt.Sprintf("products_%02d", n), fmt.Sprintf("PRODUCTS_%02d", n)
	}
	g.n++
	op := g.r.IntN(10)
	if len(g.live) < 10 {
		op = 0
	}
	switch {
	case op < 6:
		p := g.newProduct()
		g.live = append(g.live, p)
		return g.insert(dst, p)
	case op < 9:
		i := g.r.IntN(len(g.live))
		before := g.live[i]
		after := before
		after.qty = g.r.IntN(500)
		after.weightCents += int64(g.r.IntN(100))
		after.inStock = !before.inStock
		g.live[i] = after
		return g.update(dst, before, after)
	default:
		i := g.r.IntN(len(g.live))
		p := g.live[i]
		g.live[i] = g.live[len(g.live)-1]
		g.live = g.live[:len(g.live)-1]
		return g.delete(dst, p)
	}
}

func (g *Generator) rowOf(dst []byte, p product, asStrings bool) []byte {
	return p.rowAs(dst, asStrings, g.Envelope)
}

// boolValue is an old image's in_stock: MySQL's 0/1 in envelopes.
func (g *Generator) boolValue(dst []byte, v bool) []byte {
	if !g.Envelope {
		return strconv.AppendBool(dst, v)
	}
	if v {
		return append(dst, '1')
	}
	return append(dst, '0')
}

// maxwellExtra writes the envelope fields Maxwell adds (shape envelope):
// xid with xoffset or commit, the binlog position, server and thread ids,
// and the primary key.
func (g *Generator) maxwellExtra(dst []byte, p product) []byte {
	if !g.Envelope {
		return dst
	}
	dst = append(dst, `,"xid":`...)
	dst = strconv.AppendInt(dst, 8000000+g.ts/50, 10)
	if g.r.IntN(3) == 0 {
		dst = append(dst, `,"commit":true`...)
	} else {
		dst = append(dst, `,"xoffset":`...)
		dst = strconv.AppendInt(dst, int64(g.r.IntN(20)), 10)
	}
	dst = append(dst, `,"position":"mysql-bin.000003:`...)
	dst = strconv.AppendInt(dst, g.pos, 10)
	dst = append(dst, `","server_id":223344,"thread_id":`...)
	dst = strconv.AppendInt(dst, int64(100+g.r.IntN(8)), 10)
	dst = append(dst, `,"primary_key":[`...)
	dst = strconv.AppendInt(dst, p.id, 10)
	return append(dst, `]`...)
}

// oggExtra writes the envelope fields GoldenGate adds (shape envelope).
func (g *Generator) oggExtra(dst []byte) []byte {
	if !g.Envelope {
		return dst
	}
	dst = append(dst, `,"primary_keys":["id"],"tokens":{"txid":"`...)
	dst = strconv.AppendInt(dst, 9000000+g.ts/50, 10)
	dst = append(dst, `","csn":"`...)
	dst = strconv.AppendInt(dst, 70000000+g.pos, 10)
	return append(dst, `"}`...)
}

func weight(c int64) string { return fmt.Sprintf("%d.%02d", c/100, c%100) }

func (p product) row(dst []byte, asStrings bool) []byte { return p.rowAs(dst, asStrings, false) }

func (p product) rowAs(dst []byte, asStrings, envelope bool) []byte {
	q := func(s string) []byte {
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	created := time.UnixMilli(p.created).UTC().Format("2006-01-02 15:04:05.000")
	release := time.Unix(p.release*86400, 0).UTC().Format("2006-01-02")
	dst = append(dst, `{"id":`...)
	if asStrings {
		dst = q(strconv.FormatInt(p.id, 10))
	} else {
		dst = strconv.AppendInt(dst, p.id, 10)
	}
	dst = append(dst, `,"name":`...)
	dst = q(p.name)
	dst = append(dst, `,"description":`...)
	dst = q(p.desc)
	dst = append(dst, `,"category":`...)
	dst = q(p.category)
	dst = append(dst, `,"weight":`...)
	if asStrings {
		dst = q(weight(p.weightCents))
	} else {
		dst = append(dst, weight(p.weightCents)...)
	}
	dst = append(dst, `,"quantity":`...)
	if asStrings {
		dst = q(strconv.Itoa(p.qty))
	} else {
		dst = strconv.AppendInt(dst, int64(p.qty), 10)
	}
	dst = append(dst, `,"in_stock":`...)
	switch {
	case envelope && asStrings && p.inStock:
		dst = q("1")
	case envelope && asStrings:
		dst = q("0")
	case envelope && p.inStock:
		dst = append(dst, '1')
	case envelope:
		dst = append(dst, '0')
	case asStrings && p.inStock:
		dst = q("true")
	case asStrings:
		dst = q("false")
	default:
		dst = strconv.AppendBool(dst, p.inStock)
	}
	dst = append(dst, `,"rating":`...)
	switch {
	case !p.hasRating:
		dst = append(dst, "null"...)
	case asStrings:
		dst = q(strconv.FormatFloat(p.rating, 'f', -1, 64))
	default:
		dst = strconv.AppendFloat(dst, p.rating, 'f', 1, 64)
	}
	dst = append(dst, `,"created":`...)
	dst = q(created)
	dst = append(dst, `,"release_date":`...)
	dst = q(release)
	return append(dst, '}')
}

func (g *Generator) insert(dst []byte, p product) []byte {
	switch g.format {
	case "canal-json":
		// Canal batches rows: insert this one and up to two more.
		dst = append(dst, `{"data":[`...)
		dst = g.rowOf(dst, p, true)
		for k := g.r.IntN(3); k > 0; k-- {
			q := g.newProduct()
			g.live = append(g.live, q)
			dst = append(dst, ',')
			dst = g.rowOf(dst, q, true)
		}
		return g.canalTail(dst, "INSERT", `null`)
	case "maxwell-json":
		dst = append(dst, `{"database":"inventory","table":"`...)
		dst = append(dst, g.table...)
		dst = append(dst, `","type":"insert","ts":`...)
		dst = strconv.AppendInt(dst, g.ts/1000, 10)
		if g.Envelope {
			dst = g.maxwellExtra(dst, p)
			dst = append(dst, `,"data":`...)
		} else {
			dst = append(dst, `,"xid":`...)
			dst = strconv.AppendInt(dst, g.ts%100000, 10)
			dst = append(dst, `,"commit":true,"data":`...)
		}
		dst = g.rowOf(dst, p, false)
		return append(dst, `,"primary_key_columns":["id"]}`...)
	case "ogg-json":
		dst = append(dst, `{"table":"INVENTORY.`...)
		dst = append(dst, g.upper...)
		dst = append(dst, `","op_type":"I",`...)
		dst = g.oggTimes(dst)
		if g.Envelope {
			dst = g.oggExtra(dst)
			dst = append(dst, `,"after":`...)
		} else {
			dst = append(dst, `,"primary_keys":["id"],"after":`...)
		}
		dst = g.rowOf(dst, p, false)
		return append(dst, '}')
	default:
		dst = append(dst, `{"before":null,"after":`...)
		dst = g.rowOf(dst, p, false)
		return g.debeziumTail(dst, "c")
	}
}

func (g *Generator) update(dst []byte, before, after product) []byte {
	switch g.format {
	case "canal-json":
		dst = append(dst, `{"data":[`...)
		dst = g.rowOf(dst, after, true)
		dst = append(dst, `],"old":[{"weight":"`...)
		dst = append(dst, weight(before.weightCents)...)
		dst = append(dst, `","quantity":"`...)
		dst = strconv.AppendInt(dst, int64(before.qty), 10)
		dst = append(dst, `","in_stock":"`...)
		dst = g.boolValue(dst, before.inStock)
		dst = append(dst, `"}`...)
		return g.canalTail(dst, "UPDATE", "")
	case "maxwell-json":
		dst = append(dst, `{"database":"inventory","table":"`...)
		dst = append(dst, g.table...)
		dst = append(dst, `","type":"update","ts":`...)
		dst = strconv.AppendInt(dst, g.ts/1000, 10)
		dst = g.maxwellExtra(dst, after)
		dst = append(dst, `,"data":`...)
		dst = g.rowOf(dst, after, false)
		dst = append(dst, `,"old":{"weight":`...)
		dst = append(dst, weight(before.weightCents)...)
		dst = append(dst, `,"quantity":`...)
		dst = strconv.AppendInt(dst, int64(before.qty), 10)
		dst = append(dst, `,"in_stock":`...)
		dst = g.boolValue(dst, before.inStock)
		return append(dst, `},"primary_key_columns":["id"]}`...)
	case "ogg-json":
		dst = append(dst, `{"table":"INVENTORY.`...)
		dst = append(dst, g.upper...)
		dst = append(dst, `","op_type":"U",`...)
		dst = g.oggTimes(dst)
		dst = g.oggExtra(dst)
		dst = append(dst, `,"before":`...)
		dst = g.rowOf(dst, before, false)
		dst = append(dst, `,"after":`...)
		dst = g.rowOf(dst, after, false)
		return append(dst, '}')
	default:
		dst = append(dst, `{"before":`...)
		dst = g.rowOf(dst, before, false)
		dst = append(dst, `,"after":`...)
		dst = g.rowOf(dst, after, false)
		return g.debeziumTail(dst, "u")
	}
}

func (g *Generator) delete(dst []byte, p product) []byte {
	switch g.format {
	case "canal-json":
		dst = append(dst, `{"data":[`...)
		dst = g.rowOf(dst, p, true)
		return g.canalTail(dst, "DELETE", "null")
	case "maxwell-json":
		dst = append(dst, `{"database":"inventory","table":"`...)
		dst = append(dst, g.table...)
		dst = append(dst, `","type":"delete","ts":`...)
		dst = strconv.AppendInt(dst, g.ts/1000, 10)
		dst = g.maxwellExtra(dst, p)
		dst = append(dst, `,"data":`...)
		dst = g.rowOf(dst, p, false)
		if g.Envelope {
			return append(dst, `,"primary_key_columns":["id"]}`...)
		}
		return append(dst, `}`...)
	case "ogg-json":
		dst = append(dst, `{"table":"INVENTORY.`...)
		dst = append(dst, g.upper...)
		dst = append(dst, `","op_type":"D",`...)
		dst = g.oggTimes(dst)
		dst = g.oggExtra(dst)
		dst = append(dst, `,"before":`...)
		dst = g.rowOf(dst, p, false)
		return append(dst, '}')
	default:
		dst = append(dst, `{"before":`...)
		dst = g.rowOf(dst, p, false)
		dst = append(dst, `,"after":null`...)
		return g.debeziumTail(dst, "d")
	}
}

// canalTail closes "data" (and writes "old" unless old is ""), then the
// envelope fields Canal sends.
func (g *Generator) canalTail(dst []byte, typ, old string) []byte {
	dst = append(dst, ']')
	if old != "" {
		dst = append(dst, `,"old":`...)
		dst = append(dst, old...)
	}
	dst = append(dst, `,"database":"inventory","es":`...)
	dst = strconv.AppendInt(dst, g.ts-g.ts%1000, 10)
	dst = append(dst, `,"id":`...)
	dst = strconv.AppendInt(dst, g.ts%100000, 10)
	dst = append(dst, `,"isDdl":false,"mysqlType":{"id":"BIGINT","name":"VARCHAR(255)","description":"VARCHAR(512)","category":"VARCHAR(64)","weight":"DECIMAL(10,2)","quantity":"INT","in_stock":"TINYINT(1)","rating":"DOUBLE","created":"DATETIME(3)","release_date":"DATE"},"pkNames":["id"],"sql":"","sqlType":{"id":-5,"name":12,"description":12,"category":12,"weight":3,"quantity":4,"in_stock":-6,"rating":8,"created":93,"release_date":91},"table":"`...)
	dst = append(dst, g.table...)
	dst = append(dst, `","ts":`...)
	dst = strconv.AppendInt(dst, g.ts, 10)
	dst = append(dst, `,"type":"`...)
	dst = append(dst, typ...)
	return append(dst, `"}`...)
}

func (g *Generator) oggTimes(dst []byte) []byte {
	t := time.UnixMilli(g.ts).UTC()
	dst = append(dst, `"op_ts":"`...)
	dst = append(dst, t.Format("2006-01-02 15:04:05.000000")...)
	dst = append(dst, `","current_ts":"`...)
	dst = append(dst, t.Add(1500*time.Millisecond).Format("2006-01-02T15:04:05.000000")...)
	dst = append(dst, `","pos":"`...)
	dst = strconv.AppendInt(dst, g.ts, 10)
	return append(dst, '"')
}

func (g *Generator) debeziumTail(dst []byte, op string) []byte {
	dst = append(dst, `,"source":{"version":"1.9.7.Final","connector":"mysql","name":"dbserver1","ts_ms":`...)
	dst = strconv.AppendInt(dst, g.ts-7, 10)
	dst = append(dst, `,"snapshot":"false","db":"inventory","sequence":null,"table":"`...)
	dst = append(dst, g.table...)
	dst = append(dst, `","server_id":223344,"gtid":null,"file":"mysql-bin.000003","pos":`...)
	dst = strconv.AppendInt(dst, g.ts%1000000, 10)
	dst = append(dst, `,"row":0,"thread":null,"query":null},"op":"`...)
	dst = append(dst, op...)
	dst = append(dst, `","ts_ms":`...)
	dst = strconv.AppendInt(dst, g.ts, 10)
	return append(dst, `,"transaction":null}`...)
}

// Lines returns about size bytes of newline-terminated messages.
func Lines(format string, seed uint64, size int) []byte {
	return linesOf(New(format, seed), size)
}

// ShapeLines is Lines for messages of shape.
func ShapeLines(format, shape string, seed uint64, size int) ([]byte, error) {
	g, err := NewShape(format, shape, seed)
	if err != nil {
		return nil, err
	}
	return linesOf(g, size), nil
}

func linesOf(g interface{ Next([]byte) []byte }, size int) []byte {
	out := make([]byte, 0, size+4096)
	for len(out) < size {
		out = append(g.Next(out), '\n')
	}
	return out
}
