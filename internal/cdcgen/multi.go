package cdcgen

import (
	"encoding/base64"
	"fmt"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// A multi-table archive, as one producer writes a whole database into one
// stream: Canal's flat messages (mysqlType, sqlType, DDL records with
// isDdl), Maxwell's rows, DDL records with "def" (output_ddl) and
// bootstrap records, GoldenGate's JSON formatter (SCHEMA.TABLE, op_type,
// before/after), and Debezium's MySQL connector through Kafka Connect's
// JsonConverter with schemas (logical types, heartbeats, transaction
// markers, schema change events, truncates). Shapes follow each producer's
// documentation; the values are deterministic.
//
// The archive has three files and seven tables, hostile names among them,
// and drifts: orders gains a column in file 2 (with the producer's DDL
// record), "Order Items".qty turns from INT into VARCHAR(16) in file 3 (an
// incompatible change), products is truncated in file 2.

// ArchiveFile is one input of an archive.
type ArchiveFile struct {
	Name string
	Data []byte
}

// ArchiveTables are the tables of Archive: namespace and name as MySQL
// (and Debezium, Canal, Maxwell) name them; GoldenGate's are upper-case.
var ArchiveTables = [][2]string{
	{"inventory", "products"},
	{"inventory", "orders"},
	{"inventory", "Order Items"},
	{"../etc", "passwd"},
	{"shop", "CON"},
	{"shop", "con"},
	{"商店", "客户"},
}

type vkind int

const (
	vBigInt vkind = iota
	vInt
	vDec
	vStr
	vBool // TINYINT(1)
	vDate
	vDatetime // DATETIME(3)
	vDouble
	vText
)

type mcol struct {
	name        string
	kind        vkind
	prec, scale int
	mysql       string // as Canal's mysqlType writes it
	sqlType     int    // java.sql.Types
	maxwellType string
	connectType string
	connectName string
	nullableMod int // every nullableMod-th row is NULL (0: never)
}

func col(name string, k vkind) mcol {
	c := mcol{name: name, kind: k}
	switch k {
	case vBigInt:
		c.mysql, c.sqlType, c.maxwellType, c.connectType = "bigint(20)", -5, "bigint", "int64"
	case vInt:
		c.mysql, c.sqlType, c.maxwellType, c.connectType = "int(11)", 4, "int", "int32"
	case vStr:
		c.mysql, c.sqlType, c.maxwellType, c.connectType = "varchar(255)", 12, "varchar", "string"
	case vText:
		c.mysql, c.sqlType, c.maxwellType, c.connectType = "text", 2005, "text", "string"
	case vBool:
		c.mysql, c.sqlType, c.maxwellType, c.connectType = "tinyint(1)", -6, "tinyint", "int16"
	case vDate:
		c.mysql, c.sqlType, c.maxwellType, c.connectType, c.connectName = "date", 91, "date", "int32", "io.debezium.time.Date"
	case vDatetime:
		c.mysql, c.sqlType, c.maxwellType, c.connectType, c.connectName = "datetime(3)", 93, "datetime", "int64", "io.debezium.time.Timestamp"
	case vDouble:
		c.mysql, c.sqlType, c.maxwellType, c.connectType = "double", 8, "double", "float64"
	}
	return c
}

func dec(name string, p, s int) mcol {
	return mcol{name: name, kind: vDec, prec: p, scale: s, mysql: fmt.Sprintf("decimal(%d,%d)", p, s), sqlType: 3, maxwellType: "decimal",
		connectType: "bytes", connectName: "org.apache.kafka.connect.data.Decimal"}
}

func (c mcol) nullable(every int) mcol { c.nullableMod = every; return c }

type mtable struct {
	ns, name string
	cols     []mcol
	pk       string
	live     []int64
	nextID   int64
	ver      int // bumps when cols change, for Canal's and Debezium's type maps
}

// oggName is the table as GoldenGate names it: SCHEMA.TABLE, upper-case
// unless quoted in Oracle (the lower-case "con").
func (t *mtable) oggName() string {
	name := strings.ToUpper(t.name)
	if t.name == "con" {
		name = t.name
	}
	return strings.ToUpper(t.ns) + "." + name
}

func archiveSchema() []*mtable {
	return []*mtable{
		{ns: "inventory", name: "products", pk: "id", cols: []mcol{col("id", vBigInt), col("name", vStr), dec("weight", 10, 3),
			col("in_stock", vBool), col("created", vDatetime), col("rating", vDouble).nullable(4)}},
		{ns: "inventory", name: "orders", pk: "order_id", cols: []mcol{col("order_id", vInt), col("customer", vStr), dec("total", 12, 2),
			col("placed", vDate)}},
		{ns: "inventory", name: "Order Items", pk: "item_id", cols: []mcol{col("item_id", vInt), col("order_id", vInt), col("qty", vInt)}},
		{ns: "../etc", name: "passwd", pk: "id", cols: []mcol{col("id", vBigInt), col("line", vStr)}},
		{ns: "shop", name: "CON", pk: "id", cols: []mcol{col("id", vInt), col("v", vDouble)}},
		{ns: "shop", name: "con", pk: "id", cols: []mcol{col("id", vInt), col("label", vStr).nullable(3)}},
		{ns: "商店", name: "客户", pk: "编号", cols: []mcol{col("编号", vBigInt), col("名字", vStr)}},
	}
}

// mval is one value: its text as MySQL prints it, and for Debezium its
// Connect form.
type mval struct {
	null    bool
	text    string // MySQL's text (Canal's strings)
	number  bool   // Maxwell, GoldenGate and Debezium write it unquoted
	connect string // Debezium's JSON value
	ogg     string // GoldenGate's JSON value
}

var base = time.Date(2020, 5, 13, 10, 0, 0, 0, time.UTC)

func value(c mcol, id int64, rev int, pk bool) mval {
	if pk {
		s := strconv.FormatInt(id, 10)
		return mval{text: s, number: true, connect: s, ogg: s}
	}
	if c.nullableMod > 0 && (id+int64(rev))%int64(c.nullableMod) == 0 {
		return mval{null: true}
	}
	n := id*7 + int64(rev)*13
	switch c.kind {
	case vBigInt, vInt:
		s := strconv.FormatInt(n%100000, 10)
		return mval{text: s, number: true, connect: s, ogg: s}
	case vDec:
		unscaled := n*1237%1000000 + 1
		digits := strconv.FormatInt(unscaled, 10)
		for len(digits) <= c.scale {
			digits = "0" + digits
		}
		text := digits[:len(digits)-c.scale] + "." + digits[len(digits)-c.scale:]
		return mval{text: text, number: true, connect: strconv.Quote(base64.StdEncoding.EncodeToString(twos(unscaled))), ogg: text}
	case vStr, vText:
		s := words[int(n)%len(words)] + " " + strconv.FormatInt(n%1000, 10)
		switch c.name {
		case "line":
			s = `root:x:0:0:"root",/root:/bin/sh ` + strconv.FormatInt(id, 10)
		case "名字":
			s = "客户 " + strconv.FormatInt(id, 10) + " ü"
		case "qty":
			s = strconv.FormatInt(n%100, 10) + " pcs"
		}
		return mval{text: s, connect: jsonString(s), ogg: jsonString(s)}
	case vBool:
		b := strconv.FormatInt(n%2, 10)
		return mval{text: b, number: true, connect: b, ogg: b}
	case vDate:
		d := base.AddDate(0, 0, int(n%400))
		days := d.Unix() / 86400
		return mval{text: d.Format("2006-01-02"), connect: strconv.FormatInt(days, 10), ogg: `"` + d.Format("2006-01-02") + `:00:00:00"`}
	case vDatetime:
		t := base.Add(time.Duration(n%100000)*time.Second + time.Duration(n%1000)*time.Millisecond)
		return mval{text: t.Format("2006-01-02 15:04:05.000"), connect: strconv.FormatInt(t.UnixMilli(), 10),
			ogg: `"` + t.Format("2006-01-02:15:04:05.000000") + `"`}
	case vDouble:
		f := float64(n%4000) / 8
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0" // as Java prints a double
		}
		return mval{text: s, number: true, connect: s, ogg: s}
	}
	panic("cdcgen: unknown kind")
}

// twos is the big-endian two's complement of n, as Connect's Decimal holds
// the unscaled value.
func twos(n int64) []byte {
	b := big.NewInt(n).Bytes()
	if len(b) == 0 || b[0]&0x80 != 0 {
		b = append([]byte{0}, b...)
	}
	return b
}

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// mgen writes one format's archive.
type mgen struct {
	format string
	r      *rand.Rand
	tables []*mtable
	ts     int64 // ms
	seq    int64
	out    []byte
}

// Archive returns the multi-table archive in format, with about rows
// change events per table per file.
func Archive(format string, rows int) []ArchiveFile {
	g := &mgen{format: format, r: rand.New(rand.NewPCG(7, uint64(len(format)))), tables: archiveSchema(), ts: base.UnixMilli()}
	for _, t := range g.tables {
		t.nextID = 1
		t.ver = 1
	}
	var files []ArchiveFile
	for f := 1; f <= 3; f++ {
		g.out = nil
		switch f {
		case 1:
			for _, t := range g.tables {
				g.ddl(t, "CREATE", "CREATE TABLE "+quoteID(t.name)+" (...)")
			}
			g.txBegin()
		case 2:
			g.bootstrap(g.tables[0])
		}
		total := rows * len(g.tables)
		for i := 0; i < total; i++ {
			if f == 2 && i == total/2 {
				orders := g.tables[1]
				orders.cols = append(orders.cols, col("note", vText).nullable(2))
				orders.ver++
				g.ddl(orders, "ALTER", "ALTER TABLE `orders` ADD COLUMN `note` TEXT")
				g.truncate(g.tables[0])
			}
			if f == 3 && i == total/3 {
				items := g.tables[2]
				items.cols[2] = mcol{name: "qty", kind: vStr, mysql: "varchar(16)", sqlType: 12, maxwellType: "varchar", connectType: "string"}
				items.ver++
				g.ddl(items, "ALTER", "ALTER TABLE `Order Items` MODIFY `qty` VARCHAR(16)")
			}
			if f == 3 && i%50 == 25 {
				g.heartbeat()
			}
			g.change(g.tables[g.r.IntN(len(g.tables))])
		}
		if f == 1 {
			g.txEnd()
		}
		files = append(files, ArchiveFile{Name: fmt.Sprintf("part-%d.json", f), Data: g.out})
	}
	return files
}

func quoteID(s string) string { return "`" + s + "`" }

func (g *mgen) line(s string) {
	g.out = append(g.out, s...)
	g.out = append(g.out, '\n')
}

func (g *mgen) tick() {
	g.ts += int64(1 + g.r.IntN(900))
	g.seq++
}

// change writes one insert, update or delete of t.
func (g *mgen) change(t *mtable) {
	g.tick()
	op := g.r.IntN(10)
	if len(t.live) < 3 {
		op = 0
	}
	switch {
	case op < 6:
		id := t.nextID
		t.nextID++
		t.live = append(t.live, id)
		g.row(t, "insert", id, 0, -1)
	case op < 9:
		i := g.r.IntN(len(t.live))
		g.row(t, "update", t.live[i], int(g.seq%5)+1, 0)
	default:
		i := g.r.IntN(len(t.live))
		id := t.live[i]
		t.live = append(t.live[:i], t.live[i+1:]...)
		g.row(t, "delete", id, 0, -1)
	}
}

// image renders a row image of t in the format's value style.
func (g *mgen) image(t *mtable, id int64, rev int, style string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, c := range t.cols {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(jsonString(c.name))
		b.WriteByte(':')
		v := value(c, id, rev, c.name == t.pk)
		switch {
		case v.null:
			b.WriteString("null")
		case style == "canal":
			b.WriteString(jsonString(v.text))
		case style == "connect":
			b.WriteString(v.connect)
		case style == "ogg":
			b.WriteString(v.ogg)
		case v.number:
			b.WriteString(v.text)
		default:
			b.WriteString(jsonString(v.text))
		}
	}
	b.WriteByte('}')
	return b.String()
}

func (g *mgen) row(t *mtable, op string, id int64, rev, _ int) {
	switch g.format {
	case "canal-json":
		typ := map[string]string{"insert": "INSERT", "update": "UPDATE", "delete": "DELETE"}[op]
		data := g.image(t, id, rev, "canal")
		old := "null"
		if op == "update" {
			// Canal's "old" holds the changed columns' previous values.
			prev := g.image(t, id, rev-1, "canal")
			old = "[" + changed(t, prev, data) + "]"
		}
		g.line(fmt.Sprintf(`{"data":[%s],"database":%s,"es":%d,"id":%d,"isDdl":false,"mysqlType":%s,"old":%s,"pkNames":[%s],"sql":"","sqlType":%s,"table":%s,"ts":%d,"type":%q}`,
			data, jsonString(t.ns), g.ts-g.ts%1000, g.seq, canalTypes(t), old, jsonString(t.pk), canalSQLTypes(t), jsonString(t.name), g.ts+120, typ))
	case "maxwell-json":
		data := g.image(t, id, rev, "maxwell")
		extra := ""
		if op == "update" {
			extra = `,"old":` + changed(t, g.image(t, id, rev-1, "maxwell"), data)
		}
		g.line(fmt.Sprintf(`{"database":%s,"table":%s,"type":%q,"ts":%d,"xid":%d,"commit":true,"data":%s%s,"primary_key_columns":[%s]}`,
			jsonString(t.ns), jsonString(t.name), op, g.ts/1000, 9000+g.seq, data, extra, jsonString(t.pk)))
	case "ogg-json":
		typ := map[string]string{"insert": "I", "update": "U", "delete": "D"}[op]
		img := ""
		switch op {
		case "insert":
			img = `"after":` + g.image(t, id, rev, "ogg")
		case "update":
			img = `"before":` + g.image(t, id, rev-1, "ogg") + `,"after":` + g.image(t, id, rev, "ogg")
		case "delete":
			img = `"before":` + g.image(t, id, rev, "ogg")
		}
		g.line(fmt.Sprintf(`{"table":%s,"op_type":%q,%s,"primary_keys":[%s],%s}`, jsonString(t.oggName()), typ, g.oggTimes(), jsonString(t.pk), img))
	case "debezium-json":
		o := map[string]string{"insert": "c", "update": "u", "delete": "d"}[op]
		before, after := "null", "null"
		switch op {
		case "insert":
			after = g.image(t, id, rev, "connect")
		case "update":
			before, after = g.image(t, id, rev-1, "connect"), g.image(t, id, rev, "connect")
		case "delete":
			before = g.image(t, id, rev, "connect")
		}
		payload := fmt.Sprintf(`{"before":%s,"after":%s,"source":%s,"op":%q,"ts_ms":%d,"transaction":null}`, before, after, g.source(t), o, g.ts+35)
		g.line(fmt.Sprintf(`{"schema":%s,"payload":%s}`, envelopeSchema(t), payload))
	}
}

// changed is the previous values of the columns whose value differs
// between two images (both rendered by image, same columns in order).
func changed(t *mtable, prev, cur string) string {
	p, c := splitImage(prev), splitImage(cur)
	var parts []string
	for i := range p {
		if i < len(c) && p[i] != c[i] {
			parts = append(parts, p[i])
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// splitImage cuts a flat image rendered by image into its "k":v members.
func splitImage(img string) []string {
	img = img[1 : len(img)-1]
	var out []string
	depth, inStr, start := 0, false, 0
	for i := 0; i < len(img); i++ {
		switch c := img[i]; {
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case !inStr && (c == '{' || c == '['):
			depth++
		case !inStr && (c == '}' || c == ']'):
			depth--
		case !inStr && depth == 0 && c == ',':
			out = append(out, img[start:i])
			start = i + 1
		}
	}
	return append(out, img[start:])
}

func canalTypes(t *mtable) string {
	var parts []string
	for _, c := range t.cols {
		parts = append(parts, jsonString(c.name)+":"+jsonString(c.mysql))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func canalSQLTypes(t *mtable) string {
	var parts []string
	for _, c := range t.cols {
		parts = append(parts, jsonString(c.name)+":"+strconv.Itoa(c.sqlType))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func (g *mgen) oggTimes() string {
	t := time.UnixMilli(g.ts).UTC()
	return fmt.Sprintf(`"op_ts":"%s","current_ts":"%s","pos":"%020d"`, t.Format("2006-01-02 15:04:05.000000"),
		t.Add(1500*time.Millisecond).Format("2006-01-02T15:04:05.000000"), g.seq*1024)
}

func (g *mgen) source(t *mtable) string {
	return fmt.Sprintf(`{"version":"2.7.3.Final","connector":"mysql","name":"dbserver1","ts_ms":%d,"snapshot":"false","db":%s,"sequence":null,"table":%s,"server_id":223344,"gtid":null,"file":"mysql-bin.000003","pos":%d,"row":0,"thread":7,"query":null}`,
		g.ts, jsonString(t.ns), jsonString(t.name), 154+g.seq*311)
}

// envelopeSchema is the JsonConverter schema of t's change events.
func envelopeSchema(t *mtable) string {
	topic := "dbserver1." + t.ns + "." + t.name
	var fields []string
	for _, c := range t.cols {
		f := fmt.Sprintf(`{"type":%q,"optional":%t`, c.connectType, c.name != t.pk)
		if c.connectName != "" {
			f += fmt.Sprintf(`,"name":%q,"version":1`, c.connectName)
		}
		if c.kind == vDec {
			f += fmt.Sprintf(`,"parameters":{"scale":"%d","connect.decimal.precision":"%d"}`, c.scale, c.prec)
		}
		fields = append(fields, f+`,"field":`+jsonString(c.name)+"}")
	}
	value := fmt.Sprintf(`{"type":"struct","fields":[%s],"optional":true,"name":%s`, strings.Join(fields, ","), jsonString(topic+".Value"))
	source := `{"type":"struct","fields":[{"type":"string","optional":false,"field":"version"},{"type":"string","optional":false,"field":"connector"},{"type":"string","optional":false,"field":"name"},{"type":"int64","optional":false,"field":"ts_ms"},{"type":"string","optional":true,"name":"io.debezium.data.Enum","version":1,"parameters":{"allowed":"true,last,false,incremental"},"default":"false","field":"snapshot"},{"type":"string","optional":false,"field":"db"},{"type":"string","optional":true,"field":"sequence"},{"type":"string","optional":true,"field":"table"},{"type":"int64","optional":false,"field":"server_id"},{"type":"string","optional":true,"field":"gtid"},{"type":"string","optional":false,"field":"file"},{"type":"int64","optional":false,"field":"pos"},{"type":"int32","optional":false,"field":"row"},{"type":"int64","optional":true,"field":"thread"},{"type":"string","optional":true,"field":"query"}],"optional":false,"name":"io.debezium.connector.mysql.Source","field":"source"}`
	return fmt.Sprintf(`{"type":"struct","fields":[%s,"field":"before"},%s,"field":"after"},%s,{"type":"string","optional":false,"field":"op"},{"type":"int64","optional":true,"field":"ts_ms"},{"type":"struct","fields":[{"type":"string","optional":false,"field":"id"},{"type":"int64","optional":false,"field":"total_order"},{"type":"int64","optional":false,"field":"data_collection_order"}],"optional":true,"name":"event.block","version":1,"field":"transaction"}],"optional":false,"name":%s,"version":1}`,
		value, value, source, jsonString(topic+".Envelope"))
}

// ddl writes t's DDL record (Canal isDdl, Maxwell table-create/-alter
// with def, Debezium's schema change event); GoldenGate's JSON has none.
func (g *mgen) ddl(t *mtable, kind, sql string) {
	g.tick()
	switch g.format {
	case "canal-json":
		g.line(fmt.Sprintf(`{"data":null,"database":%s,"es":%d,"id":%d,"isDdl":true,"mysqlType":null,"old":null,"pkNames":null,"sql":%s,"sqlType":null,"table":%s,"ts":%d,"type":%q}`,
			jsonString(t.ns), g.ts-g.ts%1000, g.seq, jsonString(sql), jsonString(t.name), g.ts+120, kind))
	case "maxwell-json":
		if t.name != "orders" && t.name != "Order Items" {
			return // the others' DDL predates the archive: their types come from values
		}
		typ := map[string]string{"CREATE": "table-create", "ALTER": "table-alter"}[kind]
		var cols []string
		for _, c := range t.cols {
			d := fmt.Sprintf(`{"type":%q,"name":%s`, c.maxwellType, jsonString(c.name))
			switch c.kind {
			case vInt, vBigInt, vBool, vDouble:
				d += `,"signed":true`
			case vDec:
				d += fmt.Sprintf(`,"precision":%d,"scale":%d,"signed":true`, c.prec, c.scale)
			case vStr, vText:
				d += `,"charset":"utf8mb4"`
			case vDatetime:
				d += `,"column-length":3`
			}
			cols = append(cols, d+"}")
		}
		def := fmt.Sprintf(`{"database":%s,"charset":"utf8mb4","table":%s,"columns":[%s],"primary-key":[%s]}`, jsonString(t.ns), jsonString(t.name), strings.Join(cols, ","), jsonString(t.pk))
		g.line(fmt.Sprintf(`{"type":%q,"database":%s,"table":%s,"def":%s,"ts":%d,"sql":%s}`, typ, jsonString(t.ns), jsonString(t.name), def, g.ts/1000, jsonString(sql)))
	case "debezium-json":
		payload := fmt.Sprintf(`{"source":%s,"ts_ms":%d,"databaseName":%s,"schemaName":null,"ddl":%s,"tableChanges":[{"type":%q,"id":%s}]}`,
			g.source(t), g.ts+35, jsonString(t.ns), jsonString(sql), kind, jsonString(`"`+t.ns+`"."`+t.name+`"`))
		g.line(`{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"databaseName"},{"type":"string","optional":false,"field":"ddl"}],"optional":false,"name":"io.debezium.connector.mysql.SchemaChangeValue"},"payload":` + payload + `}`)
	}
}

// truncate writes a TRUNCATE of t (Canal's DDL record, GoldenGate's op
// "T", Debezium's op "t"; Maxwell writes none).
func (g *mgen) truncate(t *mtable) {
	g.tick()
	switch g.format {
	case "canal-json":
		g.line(fmt.Sprintf(`{"data":null,"database":%s,"es":%d,"id":%d,"isDdl":true,"mysqlType":null,"old":null,"pkNames":null,"sql":"TRUNCATE TABLE %s","sqlType":null,"table":%s,"ts":%d,"type":"TRUNCATE"}`,
			jsonString(t.ns), g.ts-g.ts%1000, g.seq, t.name, jsonString(t.name), g.ts+120))
	case "ogg-json":
		g.line(fmt.Sprintf(`{"table":%s,"op_type":"T",%s}`, jsonString(t.oggName()), g.oggTimes()))
	case "debezium-json":
		payload := fmt.Sprintf(`{"before":null,"after":null,"source":%s,"op":"t","ts_ms":%d,"transaction":null}`, g.source(t), g.ts+35)
		g.line(fmt.Sprintf(`{"schema":%s,"payload":%s}`, envelopeSchema(t), payload))
	default:
		return
	}
	t.live = nil
}

// bootstrap re-reads t's live rows as Maxwell's bootstrap does
// (bootstrap-start, a bootstrap-insert per row, bootstrap-complete).
func (g *mgen) bootstrap(t *mtable) {
	if g.format != "maxwell-json" {
		return
	}
	g.tick()
	g.line(fmt.Sprintf(`{"database":%s,"table":%s,"type":"bootstrap-start","ts":%d,"data":{}}`, jsonString(t.ns), jsonString(t.name), g.ts/1000))
	for _, id := range t.live {
		g.line(fmt.Sprintf(`{"database":%s,"table":%s,"type":"bootstrap-insert","ts":%d,"data":%s}`, jsonString(t.ns), jsonString(t.name), g.ts/1000, g.image(t, id, 0, "maxwell")))
	}
	g.line(fmt.Sprintf(`{"database":%s,"table":%s,"type":"bootstrap-complete","ts":%d,"data":{}}`, jsonString(t.ns), jsonString(t.name), g.ts/1000))
}

// heartbeat writes Debezium's heartbeat record.
func (g *mgen) heartbeat() {
	if g.format != "debezium-json" {
		return
	}
	g.line(fmt.Sprintf(`{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"ts_ms"}],"optional":false,"name":"io.debezium.connector.common.Heartbeat"},"payload":{"ts_ms":%d}}`, g.ts))
}

const txSchema = `{"type":"struct","fields":[{"type":"string","optional":false,"field":"status"},{"type":"string","optional":false,"field":"id"},{"type":"int64","optional":true,"field":"event_count"},{"type":"int64","optional":false,"field":"ts_ms"}],"optional":false,"name":"io.debezium.connector.common.TransactionMetadataValue"}`

// txBegin and txEnd write Debezium's transaction markers.
func (g *mgen) txBegin() {
	if g.format == "debezium-json" {
		g.line(fmt.Sprintf(`{"schema":%s,"payload":{"status":"BEGIN","id":"file=mysql-bin.000003,pos=154","event_count":null,"data_collections":null,"ts_ms":%d}}`, txSchema, g.ts))
	}
}

func (g *mgen) txEnd() {
	if g.format == "debezium-json" {
		g.line(fmt.Sprintf(`{"schema":%s,"payload":{"status":"END","id":"file=mysql-bin.000003,pos=154","event_count":%d,"data_collections":[],"ts_ms":%d}}`, txSchema, g.seq, g.ts))
	}
}
