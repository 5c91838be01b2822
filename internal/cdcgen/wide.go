package cdcgen

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The wide shape: a table of 60 columns, id BIGINT then c01..c59 cycling
// through ten types, every column but id NULL half the time; lean
// envelopes as the products shape has them; 60% inserts, 30% updates of
// three columns, 10% deletes.

const wideCols = 60

var wideTypes = []struct{ flink, mysql string }{
	{"BIGINT", "bigint"}, {"INT", "int"}, {"STRING", "varchar(64)"}, {"DOUBLE", "double"},
	{"DECIMAL(12, 3)", "decimal(12,3)"}, {"BOOLEAN", "tinyint(1)"}, {"TIMESTAMP(3)", "datetime(3)"},
	{"DATE", "date"}, {"SMALLINT", "smallint"}, {"STRING", "text"},
}

func wideName(c int) string {
	if c == 0 {
		return "id"
	}
	return fmt.Sprintf("c%02d", c)
}

func wideType(c int) int { return (c - 1) % len(wideTypes) }

// wideSchema is the wide table's columns.
func wideSchema() string {
	parts := []string{"id BIGINT"}
	for c := 1; c < wideCols; c++ {
		parts = append(parts, wideName(c)+" "+wideTypes[wideType(c)].flink)
	}
	return strings.Join(parts, ", ")
}

// WideColumns are the wide table's columns as name and Flink type, for
// peers that build the same table.
func WideColumns() [][2]string {
	out := [][2]string{{"id", "BIGINT"}}
	for c := 1; c < wideCols; c++ {
		out = append(out, [2]string{wideName(c), wideTypes[wideType(c)].flink})
	}
	return out
}

// wideRow is a row's values as JSON: typed, and as Canal's strings.
type wideRow struct {
	typed, str [wideCols]string
}

type wideGen struct {
	format    string
	r         *rand.Rand
	live      []wideRow
	nextID    int64
	ts        int64
	mysqlType string
}

func newWide(format string, seed uint64) *wideGen {
	g := &wideGen{format: format, r: rand.New(rand.NewPCG(seed, 43)), nextID: 1, ts: 1589373515000}
	var b strings.Builder
	b.WriteString(`{"id":"bigint"`)
	for c := 1; c < wideCols; c++ {
		fmt.Fprintf(&b, `,"%s":"%s"`, wideName(c), wideTypes[wideType(c)].mysql)
	}
	b.WriteString("}")
	g.mysqlType = b.String()
	return g
}

func (g *wideGen) value(row *wideRow, c int) {
	if c > 0 && g.r.IntN(2) == 0 {
		row.typed[c], row.str[c] = "null", "null"
		return
	}
	var v string
	quote := false
	switch wideTypes[wideType(c)].flink {
	case "BIGINT":
		v = strconv.FormatInt(g.r.Int64N(1<<50)-1<<49, 10)
	case "INT":
		v = strconv.Itoa(g.r.IntN(2000000) - 1000000)
	case "SMALLINT":
		v = strconv.Itoa(g.r.IntN(60000) - 30000)
	case "DOUBLE":
		v = strconv.FormatFloat(float64(g.r.IntN(10000000))/1000, 'f', -1, 64)
	case "DECIMAL(12, 3)":
		n := g.r.Int64N(1e11)
		v = fmt.Sprintf("%d.%03d", n/1000, n%1000)
	case "BOOLEAN":
		v = strconv.FormatBool(g.r.IntN(2) == 0)
	case "TIMESTAMP(3)":
		v, quote = time.UnixMilli(g.ts-int64(g.r.IntN(1e9))).UTC().Format("2006-01-02 15:04:05.000"), true
	case "DATE":
		v, quote = time.Unix(int64(17000+g.r.IntN(3000))*86400, 0).UTC().Format("2006-01-02"), true
	default:
		n := 4 + g.r.IntN(24)
		if c%10 == 0 {
			n = 20 + g.r.IntN(120)
		}
		var b []byte
		for len(b) < n {
			b = append(b, words[g.r.IntN(len(words))]...)
			b = append(b, ' ')
		}
		v, quote = string(b[:n]), true
	}
	row.str[c] = `"` + v + `"`
	if quote {
		row.typed[c] = `"` + v + `"`
	} else {
		row.typed[c] = v
	}
}

func (g *wideGen) newRow() wideRow {
	var row wideRow
	row.typed[0] = strconv.FormatInt(g.nextID, 10)
	row.str[0] = `"` + row.typed[0] + `"`
	g.nextID++
	for c := 1; c < wideCols; c++ {
		g.value(&row, c)
	}
	return row
}

func (row *wideRow) json(dst []byte, strs bool) []byte {
	vals := &row.typed
	if strs {
		vals = &row.str
	}
	dst = append(dst, '{')
	for c := 0; c < wideCols; c++ {
		if c > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, wideName(c)...)
		dst = append(dst, `":`...)
		dst = append(dst, vals[c]...)
	}
	return append(dst, '}')
}

// Next appends one message (no newline) to dst.
func (g *wideGen) Next(dst []byte) []byte {
	g.ts += int64(g.r.IntN(1000))
	op := g.r.IntN(10)
	if len(g.live) < 10 {
		op = 0
	}
	switch {
	case op < 6:
		row := g.newRow()
		g.live = append(g.live, row)
		return g.message(dst, "c", nil, &row, nil)
	case op < 9:
		i := g.r.IntN(len(g.live))
		before := g.live[i]
		after := before
		var changed []int
		// Columns that had a value: an "old" never holds a JSON null, as
		// the peers' -U images (old over data) need.
		for tries := 0; len(changed) < 3 && tries < 100; tries++ {
			c := 1 + g.r.IntN(wideCols-1)
			if before.typed[c] == "null" || slices.Contains(changed, c) {
				continue
			}
			changed = append(changed, c)
			g.value(&after, c)
		}
		g.live[i] = after
		return g.message(dst, "u", &before, &after, changed)
	default:
		i := g.r.IntN(len(g.live))
		row := g.live[i]
		g.live[i] = g.live[len(g.live)-1]
		g.live = g.live[:len(g.live)-1]
		return g.message(dst, "d", &row, nil, nil)
	}
}

// old is the changed columns' before values, as an object.
func old(dst []byte, before *wideRow, changed []int, strs bool) []byte {
	vals := &before.typed
	if strs {
		vals = &before.str
	}
	dst = append(dst, '{')
	seen := map[int]bool{}
	for _, c := range changed {
		if seen[c] {
			continue
		}
		if len(seen) > 0 {
			dst = append(dst, ',')
		}
		seen[c] = true
		dst = append(dst, '"')
		dst = append(dst, wideName(c)...)
		dst = append(dst, `":`...)
		dst = append(dst, vals[c]...)
	}
	return append(dst, '}')
}

func (g *wideGen) message(dst []byte, op string, before, after *wideRow, changed []int) []byte {
	img := after
	if img == nil {
		img = before
	}
	switch g.format {
	case "canal-json":
		typ := map[string]string{"c": "INSERT", "u": "UPDATE", "d": "DELETE"}[op]
		dst = append(dst, `{"data":[`...)
		dst = img.json(dst, true)
		dst = append(dst, ']')
		if op == "u" {
			dst = append(dst, `,"old":[`...)
			dst = old(dst, before, changed, true)
			dst = append(dst, ']')
		}
		dst = append(dst, `,"database":"inventory","es":`...)
		dst = strconv.AppendInt(dst, g.ts-g.ts%1000, 10)
		dst = append(dst, `,"id":`...)
		dst = strconv.AppendInt(dst, g.ts%100000, 10)
		dst = append(dst, `,"isDdl":false,"mysqlType":`...)
		dst = append(dst, g.mysqlType...)
		dst = append(dst, `,"pkNames":["id"],"table":"products","ts":`...)
		dst = strconv.AppendInt(dst, g.ts, 10)
		dst = append(dst, `,"type":"`...)
		dst = append(dst, typ...)
		return append(dst, `"}`...)
	case "maxwell-json":
		typ := map[string]string{"c": "insert", "u": "update", "d": "delete"}[op]
		dst = append(dst, `{"database":"inventory","table":"products","type":"`...)
		dst = append(dst, typ...)
		dst = append(dst, `","ts":`...)
		dst = strconv.AppendInt(dst, g.ts/1000, 10)
		dst = append(dst, `,"data":`...)
		dst = img.json(dst, false)
		if op == "u" {
			dst = append(dst, `,"old":`...)
			dst = old(dst, before, changed, false)
		}
		return append(dst, `,"primary_key_columns":["id"]}`...)
	case "ogg-json":
		typ := map[string]string{"c": "I", "u": "U", "d": "D"}[op]
		dst = append(dst, `{"table":"INVENTORY.PRODUCTS","op_type":"`...)
		dst = append(dst, typ...)
		dst = append(dst, `",`...)
		t := time.UnixMilli(g.ts).UTC()
		dst = append(dst, `"op_ts":"`...)
		dst = append(dst, t.Format("2006-01-02 15:04:05.000000")...)
		dst = append(dst, `","current_ts":"`...)
		dst = append(dst, t.Add(1500*time.Millisecond).Format("2006-01-02T15:04:05.000000")...)
		dst = append(dst, `","pos":"`...)
		dst = strconv.AppendInt(dst, g.ts, 10)
		dst = append(dst, `"`...)
		if before != nil {
			dst = append(dst, `,"before":`...)
			dst = before.json(dst, false)
		}
		if after != nil {
			dst = append(dst, `,"after":`...)
			dst = after.json(dst, false)
		}
		return append(dst, '}')
	default:
		dst = append(dst, `{"before":`...)
		if before != nil {
			dst = before.json(dst, false)
		} else {
			dst = append(dst, "null"...)
		}
		dst = append(dst, `,"after":`...)
		if after != nil {
			dst = after.json(dst, false)
		} else {
			dst = append(dst, "null"...)
		}
		dst = append(dst, `,"source":{"version":"1.9.7.Final","connector":"mysql","name":"dbserver1","ts_ms":`...)
		dst = strconv.AppendInt(dst, g.ts-7, 10)
		dst = append(dst, `,"snapshot":"false","db":"inventory","sequence":null,"table":"products","server_id":223344,"gtid":null,"file":"mysql-bin.000003","pos":`...)
		dst = strconv.AppendInt(dst, g.ts%1000000, 10)
		dst = append(dst, `,"row":0,"thread":null,"query":null},"op":"`...)
		dst = append(dst, op...)
		dst = append(dst, `","ts_ms":`...)
		dst = strconv.AppendInt(dst, g.ts, 10)
		return append(dst, `,"transaction":null}`...)
	}
}
