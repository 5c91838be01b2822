-- The sample job of the README: Canal change messages of a MySQL products
-- table, as a Flink filesystem table. Run from the repository root:
--   go run ./cmd/cdcetl convert --ddl testdata/samples/canal-products.sql -o out
CREATE TABLE products (
  id BIGINT,
  name STRING,
  description STRING,
  weight DECIMAL(10, 3),
  `database` STRING METADATA FROM 'database' VIRTUAL,
  `table` STRING METADATA FROM 'table' VIRTUAL,
  changed_at TIMESTAMP_LTZ(3) METADATA FROM 'event-timestamp' VIRTUAL,
  source_file STRING METADATA FROM 'file.name' VIRTUAL,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = 'canal',
  'format' = 'canal-json',
  'canal-json.database.include' = 'inventory',
  'canal-json.table.include' = 'products'
);
