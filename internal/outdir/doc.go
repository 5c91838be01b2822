// Package outdir is a run's output directory and what makes a run
// exactly-once there: the journal of converted inputs (journal.go), the
// locks that let one run, or the n shards of one, write at a time
// (lock.go, shard.go), the stems that name each input's outputs and the
// pending file that lets a run killed at any moment be cleaned up by the
// next (stems.go), the table directories of a conversion without a schema
// (tables.go, segment.go), and the places inputs move to once converted
// (inputs.go).
//
// A run writes in a local directory; Dir says where the finished outputs
// go: the directory itself (Local), or a bucket staged through it
// (Bucket). No other package asks whether an output is local or in a
// bucket.
package outdir
