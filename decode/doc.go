// Package decode turns CDC JSON messages into changelog rows exactly as
// Apache Flink's formats canal-json, maxwell-json, ogg-json, debezium-json
// and json do, and encodes rows back into those formats.
//
// Data flow: [Decoder.Decode] takes one message (a line). One validating
// pass (Jackson's rules) captures the envelope fields and every row object
// of the message; the format's file (canal.go, maxwell.go, ogg.go,
// debezium.go, plainjson.go) dispatches on the operation and emits rows;
// each value goes through a converter built once per column type
// (convert.go) straight into the [arrowconv.Builder] columns. A message
// appends all its rows or none, except that under ignore-parse-errors the
// rows a multi-row canal message emitted before failing stay, as in Flink.
//
// Errors are [*Error] values carrying file, line, column and a path such as
// data[0].id, and unwrap to the sentinels [ErrMalformed], [ErrUnknownOp],
// [ErrMissingField], [ErrType] and [ErrOption].
//
// [Encoder] (encode.go, and the envelope half of each format's file) writes
// record batches back as messages: Flink's encoding by default, native
// update messages with [EncodeOptions.MergeUpdates], metadata in the
// envelope with [EncodeOptions.Envelope].
package decode
