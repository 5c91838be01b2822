// Package cdcetl turns database change-data-capture messages (Canal,
// Maxwell, Oracle GoldenGate and Debezium JSON) into Apache Arrow record
// batches and analytics files, decoding each message exactly as Apache
// Flink's formats canal-json, maxwell-json, ogg-json and debezium-json do.
//
// Two entry points cover most programs:
//
//   - [NewReader] decodes a stream of messages (an [io.Reader], gzip or
//     zstd recognised) into an arrow-go [array.RecordReader]: one column
//     _rowkind (+I, -U, +U, -D) and one per declared column. Anything that
//     takes a RecordReader takes it (pqarrow, Arrow Flight, IPC writers).
//   - [Convert] runs a whole job as the cdcetl command does: files,
//     directories or buckets in; Parquet files, Iceberg tables, printed rows
//     or re-encoded CDC JSON out; with the journal that makes reruns
//     incremental and outputs that appear atomically.
//
// A [Decoding] says how messages are read: a format and a schema (a Flink
// SQL column list or a CREATE TABLE statement) decode exactly as Flink;
// Semantics "producer" decodes each value as its producer meant it.
// [Convert] with no schema detects each input's format, routes every
// source table to outputs of its own and infers their types.
//
// The packages under this module hold the parts (decode, arrowconv,
// writer, lake, pipeline); [Job.Config] gives the pipeline.Config of a job
// for settings a Job does not name.
package cdcetl
