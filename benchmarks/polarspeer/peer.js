// The Polars peer of benchmarks/run.sh: the conversion cdcetl does (typed
// columns, _rowkind, both images of updates, the shape's metadata columns,
// snappy Parquet), written with nodejs-polars' lazy NDJSON scan.
//
//   POLARS_MAX_THREADS=N node peer.js FORMAT IN.jsonl OUT.parquet SHAPE
//
// Images are read as strings (Polars coerces JSON numbers and booleans)
// and cast once, so one code path serves every format. For canal and
// maxwell the -U image is old over data (coalesce): right for the
// generated data, whose "old" never holds a JSON null.
"use strict";
const pl = require("nodejs-polars");

const [format, input, output, shape = "products"] = process.argv.slice(2);

const products = [
  ["id", "BIGINT"], ["name", "VARCHAR"], ["description", "VARCHAR"], ["category", "VARCHAR"],
  ["weight", "DECIMAL(10,2)"], ["quantity", "INTEGER"], ["in_stock", "BOOLEAN"], ["rating", "DOUBLE"],
  ["created", "TIMESTAMP"], ["release_date", "DATE"],
];

function columns() {
  if (shape === "envelope") return products.map(([n, t]) => [n, n === "in_stock" ? "TINYINT" : t]);
  if (shape === "wide") {
    const types = ["BIGINT", "INTEGER", "VARCHAR", "DOUBLE", "DECIMAL(12,3)", "BOOLEAN", "TIMESTAMP", "DATE", "SMALLINT", "VARCHAR"];
    const out = [["id", "BIGINT"]];
    for (let c = 1; c < 60; c++) out.push([`c${String(c).padStart(2, "0")}`, types[(c - 1) % types.length]]);
    return out;
  }
  return products;
}
const cols = columns();

// typed is a string expression cast to the column's type.
function typed(e, t) {
  switch (true) {
    case t === "BIGINT": return e.cast(pl.Int64);
    case t === "INTEGER": return e.cast(pl.Int32);
    case t === "SMALLINT": return e.cast(pl.Int16);
    case t === "TINYINT": return e.cast(pl.Int8);
    case t === "DOUBLE": return e.cast(pl.Float64);
    case t.startsWith("DECIMAL"): {
      const [p, s] = t.match(/\d+/g).map(Number);
      return e.cast(pl.Decimal(p, s));
    }
    case t === "BOOLEAN": return pl.when(e.isNull()).then(pl.lit(null)).otherwise(e.eq(pl.lit("true")));
    case t === "TIMESTAMP": return e.str.strptime(pl.Datetime("ms"), "%Y-%m-%d %H:%M:%S%.f");
    case t === "DATE": return e.str.strptime(pl.Date, "%Y-%m-%d");
  }
  return e;
}

const imageStruct = () => pl.Struct(cols.map(([n]) => new pl.Field(n, pl.Utf8)));

// image selects the columns of struct column row (old: prefer old's
// value; this nodejs-polars has no coalesce).
function image(row, old) {
  return cols.map(([n, t]) => {
    let v = pl.col(row).struct.field(n);
    if (old) {
      const o = pl.col(old).struct.field(n);
      v = pl.when(o.isNotNull()).then(o).otherwise(v);
    }
    return typed(v, t).alias(n);
  });
}

const ms = (e) => e.cast(pl.Int64).cast(pl.Datetime("ms", "UTC"));
const ts = (e) => e.str.strptime(pl.Datetime("ms"), "%Y-%m-%d %H:%M:%S%.f");
const tsT = (e) => e.str.strptime(pl.Datetime("ms"), "%Y-%m-%dT%H:%M:%S%.f");

// Per format: the envelope's schema, the row kinds' filters and images,
// and the metadata columns (lean: table and a timestamp; envelope: all).
function plan() {
  const env = shape === "envelope";
  const strs = pl.List(pl.Utf8);
  switch (format) {
    case "debezium-json": {
      const schema = { before: imageStruct(), after: imageStruct(), op: pl.Utf8, ts_ms: pl.Int64 };
      // Polars has no map type: source.properties is the source struct
      // (every field, as strings).
      const sourceFields = ["version", "connector", "name", "ts_ms", "snapshot", "db", "sequence", "schema", "table", "server_id", "gtid", "file", "pos", "row", "thread", "query"];
      schema.source = env
        ? pl.Struct(sourceFields.map((f) => new pl.Field(f, pl.Utf8)))
        : pl.Struct([new pl.Field("table", pl.Utf8)]);
      const meta = env
        ? [ms(pl.col("ts_ms")).alias("ingested"), ms(pl.col("source").struct.field("ts_ms")).alias("source_ts"),
          pl.col("source").struct.field("db").alias("source_db"), pl.col("source").struct.field("schema").alias("source_schema"),
          pl.col("source").struct.field("table").alias("source_table"), pl.col("source").alias("source_props")]
        : [pl.col("source").struct.field("table").alias("table"), ms(pl.col("ts_ms")).alias("ts")];
      return { schema, meta, kinds: [["+I", pl.col("op").isIn(["c", "r"]), "after"], ["-U", pl.col("op").eq(pl.lit("u")), "before"],
        ["+U", pl.col("op").eq(pl.lit("u")), "after"], ["-D", pl.col("op").eq(pl.lit("d")), "before"]] };
    }
    case "ogg-json": {
      const schema = { before: imageStruct(), after: imageStruct(), op_type: pl.Utf8, table: pl.Utf8, op_ts: pl.Utf8 };
      if (env) Object.assign(schema, { primary_keys: strs, current_ts: pl.Utf8 });
      const meta = env
        ? [pl.col("table"), pl.col("primary_keys").alias("pk_columns"), tsT(pl.col("current_ts")).alias("ingested"), ts(pl.col("op_ts")).alias("event_ts")]
        : [pl.col("table"), ts(pl.col("op_ts")).alias("ts")];
      return { schema, meta, kinds: [["+I", pl.col("op_type").eq(pl.lit("I")), "after"], ["-U", pl.col("op_type").eq(pl.lit("U")), "before"],
        ["+U", pl.col("op_type").eq(pl.lit("U")), "after"], ["-D", pl.col("op_type").eq(pl.lit("D")), "before"]] };
    }
    case "maxwell-json": {
      const schema = { data: imageStruct(), old: imageStruct(), type: pl.Utf8, table: pl.Utf8, ts: pl.Int64 };
      if (env) Object.assign(schema, { database: pl.Utf8, primary_key_columns: strs });
      const sec = ms(pl.col("ts").mul(1000));
      const meta = env
        ? [pl.col("database"), pl.col("table"), pl.col("primary_key_columns").alias("pk_columns"), sec.alias("ingested")]
        : [pl.col("table"), sec.alias("ts")];
      return { schema, meta, kinds: [["+I", pl.col("type").eq(pl.lit("insert")), "data"], ["-U", pl.col("type").eq(pl.lit("update")), "data", "old"],
        ["+U", pl.col("type").eq(pl.lit("update")), "data"], ["-D", pl.col("type").eq(pl.lit("delete")), "data"]] };
    }
    case "canal-json": {
      const schema = { data: pl.List(imageStruct()), old: pl.List(imageStruct()), type: pl.Utf8, table: pl.Utf8, ts: pl.Int64 };
      // sqlType, a map in cdcetl and DuckDB, is a struct here (no maps).
      if (env) Object.assign(schema, { database: pl.Utf8, es: pl.Int64, pkNames: strs, sqlType: pl.Struct(cols.map(([n]) => new pl.Field(n, pl.Int32))) });
      const meta = env
        ? [pl.col("database"), pl.col("table"), pl.col("sqlType").alias("sql_type"), pl.col("pkNames").alias("pk_names"), ms(pl.col("ts")).alias("ingested"), ms(pl.col("es")).alias("event_ts")]
        : [pl.col("table"), ms(pl.col("ts")).alias("ts")];
      return { schema, meta, canal: true, kinds: [["+I", pl.col("type").eq(pl.lit("INSERT")), "data"], ["-U", pl.col("type").eq(pl.lit("UPDATE")), "data", "old"],
        ["+U", pl.col("type").eq(pl.lit("UPDATE")), "data"], ["-D", pl.col("type").eq(pl.lit("DELETE")), "data"]] };
    }
  }
  throw new Error(`unknown format ${format}`);
}

const p = plan();
// One parse of the input (the four row kinds' plans would each scan it
// again), then the images of every kind from the frame in memory.
const src = pl.scanJson(input, { schema: p.schema }).collectSync().lazy();
const parts = p.kinds.map(([kind, filter, row, old]) => {
  let lf = src.filter(filter);
  if (p.canal) lf = old ? lf.explode(["data", "old"]) : lf.explode("data");
  return lf.select(pl.lit(kind).alias("_rowkind"), ...image(row, old), ...p.meta);
});
pl.concat(parts, { how: "vertical" }).collectSync().writeParquet(output, { compression: "snappy" });
