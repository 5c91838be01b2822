// Command duckpeer is the peer cdcetl is measured against in run.sh: the
// same conversion (typed columns, _rowkind, before and after images of
// updates, two metadata columns, snappy Parquet) done by DuckDB in SQL.
//
//	duckpeer convert FORMAT IN.jsonl OUT.parquet THREADS [SHAPE]
//	duckpeer verify OUT.parquet   # counts and sums per row kind
//	duckpeer verify OUT.parquet SHAPE  # counts, column checksums per row kind
//	duckpeer query SQL            # any query, rows tab-separated
//
// The SQL is written for the generated products table of internal/cdcgen.
// For canal and maxwell the -U image is COALESCE(old.c, data.c): right for
// this data (its "old" never holds a JSON null), not for every input.
package main

import (
	"database/sql"
	"fmt"
	"os"
	"strings"

	_ "github.com/duckdb/duckdb-go/v2"
)

type column struct{ name, typ string }

var products = []column{
	{"id", "BIGINT"}, {"name", "VARCHAR"}, {"description", "VARCHAR"}, {"category", "VARCHAR"},
	{"weight", "DECIMAL(10,2)"}, {"quantity", "INTEGER"}, {"in_stock", "BOOLEAN"}, {"rating", "DOUBLE"},
	{"created", "TIMESTAMP"}, {"release_date", "DATE"},
}

// cols are the table's columns: the shape's (see internal/cdcgen).
var cols = products

// wideColumns mirrors cdcgen's wide table: id, then c01..c59 cycling
// through ten types.
func wideColumns() []column {
	types := []string{"BIGINT", "INTEGER", "VARCHAR", "DOUBLE", "DECIMAL(12,3)", "BOOLEAN", "TIMESTAMP", "DATE", "SMALLINT", "VARCHAR"}
	out := []column{{"id", "BIGINT"}}
	for c := 1; c < 60; c++ {
		out = append(out, column{fmt.Sprintf("c%02d", c), types[(c-1)%len(types)]})
	}
	return out
}

// envelopeMeta are, per format, the extra read_json columns and the
// SELECT of every metadata column the envelope shape declares.
var envelopeMeta = map[string][2]string{
	"canal-json": {`database: 'VARCHAR', es: 'BIGINT', sqlType: 'MAP(VARCHAR, INTEGER)', pkNames: 'VARCHAR[]'`,
		`database, "table", sqlType AS sql_type, pkNames AS pk_names, epoch_ms(ts) AS ingested, epoch_ms(es) AS event_ts`},
	"maxwell-json": {`database: 'VARCHAR', primary_key_columns: 'VARCHAR[]'`,
		`database, "table", primary_key_columns AS pk_columns, epoch_ms(ts * 1000) AS ingested`},
	"ogg-json": {`primary_keys: 'VARCHAR[]', current_ts: 'VARCHAR'`,
		`"table", primary_keys AS pk_columns, CAST(current_ts AS TIMESTAMP) AS ingested, CAST(op_ts AS TIMESTAMP) AS event_ts`},
	"debezium-json": {``,
		`epoch_ms(ts_ms) AS ingested, epoch_ms(CAST(source->>'ts_ms' AS BIGINT)) AS source_ts, source->>'db' AS source_db, source->>'schema' AS source_schema, source->>'table' AS source_table, json_transform(source, '"MAP(VARCHAR, VARCHAR)"') AS source_props`},
}

var shape = "products"

func rowType(allText bool) string {
	var parts []string
	for _, c := range cols {
		t := c.typ
		if allText {
			t = "VARCHAR"
		}
		parts = append(parts, fmt.Sprintf("%s %s", c.name, t))
	}
	return "STRUCT(" + strings.Join(parts, ", ") + ")"
}

// image selects the columns of a row struct, cast to their types; with
// old set, each column prefers the old value (canal/maxwell -U).
func image(row, old string) string {
	var parts []string
	for _, c := range cols {
		v := row + "." + c.name
		if old != "" {
			v = fmt.Sprintf("COALESCE(%s.%s, %s)", old, c.name, v)
		}
		parts = append(parts, fmt.Sprintf("CAST(%s AS %s) AS %s", v, c.typ, c.name))
	}
	return strings.Join(parts, ", ")
}

// extraOf is the shape's extra read_json columns for format.
func extraOf(format string) string {
	if shape != "envelope" || envelopeMeta[format][0] == "" {
		return ""
	}
	return ", " + envelopeMeta[format][0]
}

// metaOf is the metadata SELECT: the shape's, or lean (two columns).
func metaOf(format, lean string) string {
	if shape == "envelope" {
		return envelopeMeta[format][1]
	}
	return lean
}

func query(format, in string) string {
	switch format {
	case "debezium-json":
		src := `'STRUCT("table" VARCHAR)'`
		if shape == "envelope" {
			src = `'JSON'`
		}
		m := fmt.Sprintf(`read_json('%s', format='newline_delimited', columns={before: '%s', after: '%s', op: 'VARCHAR', ts_ms: 'BIGINT', source: %s})`, in, rowType(false), rowType(false), src)
		meta := metaOf(format, `source."table" AS "table", epoch_ms(ts_ms) AS ts`)
		return fmt.Sprintf(`WITH m AS (SELECT * FROM %s)
SELECT '+I' AS _rowkind, %s, %s FROM m WHERE op IN ('c', 'r')
UNION ALL SELECT '-U', %s, %s FROM m WHERE op = 'u'
UNION ALL SELECT '+U', %s, %s FROM m WHERE op = 'u'
UNION ALL SELECT '-D', %s, %s FROM m WHERE op = 'd'`, m, image("after", ""), meta, image("before", ""), meta, image("after", ""), meta, image("before", ""), meta)
	case "ogg-json":
		m := fmt.Sprintf(`read_json('%s', format='newline_delimited', columns={before: '%s', after: '%s', op_type: 'VARCHAR', "table": 'VARCHAR', op_ts: 'VARCHAR'%s})`, in, rowType(false), rowType(false), extraOf(format))
		meta := metaOf(format, `"table", CAST(op_ts AS TIMESTAMP) AS ts`)
		return fmt.Sprintf(`WITH m AS (SELECT * FROM %s)
SELECT '+I' AS _rowkind, %s, %s FROM m WHERE op_type = 'I'
UNION ALL SELECT '-U', %s, %s FROM m WHERE op_type = 'U'
UNION ALL SELECT '+U', %s, %s FROM m WHERE op_type = 'U'
UNION ALL SELECT '-D', %s, %s FROM m WHERE op_type = 'D'`, m, image("after", ""), meta, image("before", ""), meta, image("after", ""), meta, image("before", ""), meta)
	case "maxwell-json":
		m := fmt.Sprintf(`read_json('%s', format='newline_delimited', columns={data: '%s', old: '%s', type: 'VARCHAR', "table": 'VARCHAR', ts: 'BIGINT'%s})`, in, rowType(false), rowType(false), extraOf(format))
		meta := metaOf(format, `"table", epoch_ms(ts * 1000) AS ts`)
		return fmt.Sprintf(`WITH m AS (SELECT * FROM %s)
SELECT '+I' AS _rowkind, %s, %s FROM m WHERE type = 'insert'
UNION ALL SELECT '-U', %s, %s FROM m WHERE type = 'update'
UNION ALL SELECT '+U', %s, %s FROM m WHERE type = 'update'
UNION ALL SELECT '-D', %s, %s FROM m WHERE type = 'delete'`, m, image("data", ""), meta, image("data", "old"), meta, image("data", ""), meta, image("data", ""), meta)
	case "canal-json":
		m := fmt.Sprintf(`read_json('%s', format='newline_delimited', columns={data: '%s[]', old: '%s[]', type: 'VARCHAR', "table": 'VARCHAR', ts: 'BIGINT'%s})`, in, rowType(true), rowType(true), extraOf(format))
		meta := metaOf(format, `"table", epoch_ms(ts) AS ts`)
		// One row per element of "data"; old[i] pairs with data[i].
		keep := `type, "table", ts`
		if shape == "envelope" {
			keep += `, database, es, sqlType, pkNames`
		}
		r := `SELECT ` + keep + `, old, UNNEST(data) AS d, UNNEST(generate_series(1, len(data))) AS i FROM m`
		return fmt.Sprintf(`WITH m AS (SELECT * FROM %s), r AS (%s)
SELECT '+I' AS _rowkind, %s, %s FROM r WHERE type = 'INSERT'
UNION ALL SELECT '-U', %s, %s FROM r WHERE type = 'UPDATE'
UNION ALL SELECT '+U', %s, %s FROM r WHERE type = 'UPDATE'
UNION ALL SELECT '-D', %s, %s FROM r WHERE type = 'DELETE'`, m, r, image("d", ""), meta, image("d", "old[i]"), meta, image("d", ""), meta, image("d", ""), meta)
	}
	fmt.Fprintln(os.Stderr, "duckpeer: unknown format", format)
	os.Exit(2)
	return ""
}

func main() {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		fail(err)
	}
	defer db.Close()
	switch {
	case len(os.Args) == 7 && os.Args[1] == "convert":
		setShape(os.Args[6])
		os.Args = os.Args[:6]
		fallthrough
	case len(os.Args) == 6 && os.Args[1] == "convert":
		if _, err := db.Exec("SET threads TO " + os.Args[5]); err != nil {
			fail(err)
		}
		q := fmt.Sprintf("COPY (%s) TO '%s' (FORMAT parquet, COMPRESSION snappy)", query(os.Args[2], os.Args[3]), os.Args[4])
		if _, err := db.Exec(q); err != nil {
			fail(err)
		}
	case len(os.Args) == 4 && os.Args[1] == "verify":
		// Any shape: per row kind, the rows and a checksum of every
		// physical column's values as text.
		setShape(os.Args[3])
		sel := []string{"_rowkind", "CAST(count(*) AS VARCHAR)"}
		for _, c := range cols {
			sel = append(sel, fmt.Sprintf(`CAST(sum(hash(CAST("%s" AS VARCHAR))) AS VARCHAR)`, c.name))
		}
		rows, err := db.Query(fmt.Sprintf(`SELECT %s FROM read_parquet('%s') GROUP BY 1 ORDER BY 1`, strings.Join(sel, ", "), os.Args[2]))
		if err != nil {
			fail(err)
		}
		defer rows.Close()
		vals := make([]sql.NullString, len(sel))
		ptrs := make([]any, len(sel))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				fail(err)
			}
			fmt.Printf("%s rows=%s", vals[0].String, vals[1].String)
			h := uint64(0)
			for _, v := range vals[2:] {
				for _, b := range []byte(v.String) {
					h = h*131 + uint64(b)
				}
			}
			fmt.Printf(" columns=%x\n", h)
		}
		if err := rows.Err(); err != nil {
			fail(err)
		}
	case len(os.Args) == 3 && os.Args[1] == "verify":
		rows, err := db.Query(fmt.Sprintf(`SELECT _rowkind, count(*), sum(id), sum(quantity), sum(weight)::VARCHAR, sum(CASE WHEN in_stock THEN 1 ELSE 0 END)
FROM read_parquet('%s') GROUP BY 1 ORDER BY 1`, os.Args[2]))
		if err != nil {
			fail(err)
		}
		defer rows.Close()
		for rows.Next() {
			var kind, wsum string
			var n, ids, qty, stock int64
			if err := rows.Scan(&kind, &n, &ids, &qty, &wsum, &stock); err != nil {
				fail(err)
			}
			fmt.Printf("%s rows=%d sum(id)=%d sum(quantity)=%d sum(weight)=%s in_stock=%d\n", kind, n, ids, qty, wsum, stock)
		}
		if err := rows.Err(); err != nil {
			fail(err)
		}
	case len(os.Args) == 3 && os.Args[1] == "query":
		// Any query, its rows tab-separated (NULL as \N): for tests that
		// check what DuckDB reads of cdcetl's files.
		rows, err := db.Query(os.Args[2])
		if err != nil {
			fail(err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				fail(err)
			}
			out := make([]string, len(vals))
			for i, v := range vals {
				out[i] = `\N`
				if v.Valid {
					out[i] = v.String
				}
			}
			fmt.Println(strings.Join(out, "\t"))
		}
		if err := rows.Err(); err != nil {
			fail(err)
		}
	default:
		fmt.Fprintln(os.Stderr, "usage: duckpeer convert FORMAT IN OUT THREADS [SHAPE] | duckpeer verify PARQUET [SHAPE] | duckpeer query SQL")
		os.Exit(2)
	}
}

func setShape(name string) {
	shape = name
	switch name {
	case "products":
	case "envelope":
		cols = append([]column{}, products...)
		for i, c := range cols {
			if c.name == "in_stock" {
				cols[i].typ = "TINYINT"
			}
		}
	case "wide":
		cols = wideColumns()
	default:
		fail(fmt.Errorf("unknown shape %q (products, envelope, wide)", name))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "duckpeer:", err)
	os.Exit(1)
}
