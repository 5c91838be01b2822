// Package arrowconv holds cdcetl's table model and its Arrow side: the Flink
// SQL types a user declares (parsed from a column list or a CREATE TABLE
// statement), the row kinds of a changelog, and the column builders that
// decoders append to and that flush into Arrow record batches.
//
// Data flow: decode appends one message's rows to a [Builder] (all of them or
// none, thanks to [Builder.Mark] and [Builder.Rollback]); [Builder.Flush]
// turns what was appended into an arrow.RecordBatch for the writers.
//
// The package imports only arrow-go; it knows nothing of JSON or files.
package arrowconv
