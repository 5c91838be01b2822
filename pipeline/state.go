package pipeline

// The state of a run and of each input on its way through it, and the
// types that state holds. The files that act on it (run.go, pool.go,
// outcome.go, routed.go, the sinks) all read it; it reads none of them.

import (
	"context"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/infer"
	"github.com/cdcetl/cdcetl/internal/outdir"
	"github.com/cdcetl/cdcetl/lake"
	"github.com/cdcetl/cdcetl/partition"
	"github.com/cdcetl/cdcetl/reader"
	"github.com/cdcetl/cdcetl/writer"
	"golang.org/x/sync/errgroup"
)

// run is the shared state of one Run.
type run struct {
	cfg     *Config
	out     outdir.Dir // where outputs go (cfg.OutDir is its Path)
	jobs    chan chunkJob
	tokens  chan struct{} // one per chunk in flight
	mu      sync.Mutex
	total   Stats
	journal *outdir.Journal
	// fingerprint is the run's Conversion fingerprint, recorded with every
	// journal entry.
	fingerprint string
	failed      []error
	undisposed  []error // inputs converted but not moved or deleted (notDisposed)
	// unsettled: an output was committed but not journaled; the pending
	// file must outlive the run.
	unsettled bool
	// tables holds the canal tables sampled, when no filter is set (else
	// nil).
	tables *decode.TableSet
	// router holds the source tables of a routed conversion (else nil); g
	// is the run's group, for the attempts a feeder starts again.
	router *router
	g      *errgroup.Group
	// sink is where the rows go; runID names the run's data files and
	// commits.
	sink  sink
	runID string
	ctx   context.Context
	// cleanups run when the run ends, last added first (run.go).
	cleanups []func()
}

func (r *run) addTable(name string) {
	r.mu.Lock()
	r.tables.Add(name)
	r.mu.Unlock()
}

// fileRun is one input file on its way through the pool.
type fileRun struct {
	inputRun
	feedRun
	routedRun
	// Iceberg: the input's data files, by table (0: the one table of a
	// conversion with a schema); turnGiven: its turn was passed on (the
	// next input may finish).
	lakeOuts  map[int]*lakeOut
	turnGiven bool
	// hive are the input's partitioned Parquet outputs, by the placeholder
	// in outputs that their files replace once closed.
	hive map[string]*hiveOut
}

// inputRun is what an input is and what it made.
type inputRun struct {
	idx     int
	turn    int // its place among the inputs converted: upsert commits go in this order
	file    reader.File
	key     outdir.InputKey // the input: absolute path and generation
	stem    string          // of its outputs
	outputs []string        // relative to OutDir
	dead    *writer.DeadLetters
	sha     string
	// readSize and readMod are what the read covered: the bytes as
	// stored, and the modification time that goes with them (0: unknown).
	readSize, readMod int64
	info              decode.FileInfo
	w                 writer.Writer // the output of a conversion with a Schema, or nil
	// nonNull[c] is set once physical column c (schema index) held a value;
	// first is the file's first message that gave rows.
	nonNull []bool
	first   []byte
}

// feedRun is an input's way through the pool: the feeder's chunks and
// the workers' results.
type feedRun struct {
	feedErr error
	results chan chunkResult // unordered; never blocks (one slot per token)
	fed     chan int         // the number of chunks, once all are fed
	sent    int              // chunks handed to the workers (the feeder's; read after fed)
	// stop is closed by the assembler when it gives the input up (it
	// failed): the feeder stops, and what is in flight is drained.
	stop    chan struct{}
	recycle func([]byte)
}

// routedRun is an input of a routed conversion: its format, its tables
// as this attempt sees them, whether the attempt is the strict optimistic
// one (its verdict then goes to the feeder), and its writers by table.
type routedRun struct {
	format        *decode.Format
	schemaInclude bool
	tables        map[infer.Key]*tableRun
	strict        bool
	sampled       bool // its tables' evidence has every table's first sampleBytes (sampleNewTables)
	verdict       chan error
	verdictGiven  bool
	// undo is the router as it was before the optimistic attempt's
	// merges, pending the changes they made: reported when the attempt
	// stands, undone when it stops.
	undo       *routerState
	pending    []infer.Change
	writers    map[int]writer.Writer
	loads      map[writer.Writer]writerLoad // the writers' last measures (boundWriters)
	touched    []*tableRun
	tableStats map[int]*TableStats
}

type chunkJob struct {
	f   *fileRun
	seq int
	ch  reader.Chunk
}

type chunkResult struct {
	seq    int
	recs   []arrow.RecordBatch
	tagged []taggedRec // routed: batches by table
	st     Stats
	err    error
	dead   []writer.DeadLetter
	// first is a copy of the file's first message that gave rows (chunk 0
	// only), for the warning about columns no message has.
	first []byte
}

// hiveOut is an input's partitioned output of one table; its files are
// known once it is closed.
type hiveOut struct {
	*partition.Writer
	dir string // the table's directory, relative to OutDir
}

// writerLoad is what a table writer holds: its row group under way
// (Buffered, of a rowGroupFlusher) and the room its buffers keep
// (Retained, of a roomKeeper).
type writerLoad struct {
	buffered, retained int
	flusher, keeper    bool
}

// lakeOut is one data file of an input, waiting for its commit.
type lakeOut struct {
	table *lake.Table
	delta *lake.Delta    // upsert: the data file's delete files
	part  partitionedOut // a partitioned table: a data file (or delta) per partition
	// prior are the earlier schema versions of the table: an input one of
	// them holds is not committed again (a rerun routes it to the latest).
	prior []*lake.Table
	path  string // absolute
	rel   string // below the output directory
	abs   string // the table's directory
	key   TableKey
	rows  RowCounts
	// schema and opts are the data files' (a packed file takes them).
	schema *arrowconv.Schema
	opts   writer.ParquetOptions
}

// tableRun is a source table as the conversion of one input sees it: a
// snapshot of its schema (later inputs may change the table), and where
// its outputs go.
type tableRun struct {
	id     int
	key    infer.Key
	schema *arrowconv.Schema
	dir    string // below OutDir: <namespace>/<table>[/v<n>]
	// semantics, from a pinned DDL's 'cdcetl.semantics', overrides the
	// run's; inferred tables always decode under producer semantics (their
	// types are the producer's).
	semantics string
	pinned    bool   // from --ddl-dir: never inferred, never changed
	prefix    string // print: "<namespace>.<table> "
	ddl       string
	// checks are the inferred columns' value checks, for the strict
	// attempt (decode.Options.ValueChecks).
	checks *infer.Checks
}

// router holds the run's source tables.
type router struct {
	mu      sync.Mutex
	tables  *infer.Tables
	pinned  map[infer.Key]*tableRun
	current map[infer.Key]*tableRun
	loaded  map[infer.Key]bool
	latest  map[string]string    // by table directory: its latest DDL
	owner   map[string]infer.Key // by table directory: its table
	nextID  int
	// none is the schema-less table of messages that name none (Debezium
	// heartbeats and transaction markers, TiCDC watermarks).
	none *tableRun
	// keys are the primary keys decided before an upsert load (decideKeys),
	// for tables whose own evidence does not show one.
	keys map[infer.Key][]string
}

// routerState is what merges change in a router, saved before an
// optimistic attempt's merges so that they can be undone when it stops:
// the full reading's evidence is then merged into the tables as they
// were, and a value the sample did not foresee gives the table the schema
// the whole input asks for, not a second version.
type routerState struct {
	tables  *infer.Tables
	current map[infer.Key]*tableRun
	loaded  map[infer.Key]bool
	latest  map[string]string
	owner   map[string]infer.Key
}

// taggedRec is a batch of one table's rows.
type taggedRec struct {
	tr  *tableRun
	rec arrow.RecordBatch
}

// sink is where the rows of a run go, one kind per implementation: files
// (Parquet, Hive-partitioned Parquet, re-encoded CDC JSON; fileSink),
// Iceberg tables (lakeSink), or, without an output directory, one ordered
// stream (printed rows, CDC JSON on stdout, Config.Batches; streamSink). A
// run picks its sink once, at start (newSink), and from then on never
// asks which kind it writes.
//
// The run calls, in this order: recover for each pending file a killed
// run left; prepare with the inputs to convert; for each input, writer
// for each of its tables, then finishing once its rows are written
// (before its writers close) and settle once they closed (before its
// journal entry); done after the last input; close at the end.
type sink interface {
	recover(ctx context.Context, pending string, j *outdir.Journal) error
	prepare(ctx context.Context, files []reader.File) error
	// writer makes the writer of an input's rows of one table (tr nil:
	// the one table of a conversion with a Schema) and returns its
	// output, relative to OutDir.
	writer(ctx context.Context, fr *fileRun, tr *tableRun) (writer.Writer, string, error)
	// finishing: the input's rows are written, or it failed (err); it
	// returns the input's error now. The returned func runs once the
	// input is finished, whatever happened.
	finishing(fr *fileRun, st Stats, err error) (func(), error)
	// settle: the input's writers closed (committed: an output of it is
	// in place).
	settle(ctx context.Context, fr *fileRun, st *Stats, committed bool) error
	// replaces reports whether the sink itself replaces the rows of an
	// input converted again (a table does); otherwise the run removes the
	// earlier outputs the new conversion did not make again.
	replaces() bool
	// ordered reports whether the sink is one ordered stream: rows it
	// took cannot be taken back (an input is never tried
	// optimistically), and an input's rows keep their order across its
	// tables.
	ordered() bool
	done(ctx context.Context) error
	close() error
}

// fileSink writes one file per input and table (files.go; hive.go: per
// partition), and the current-state snapshots (materialize.go); its
// methods of the sink interface are in sink.go.
type fileSink struct{ r *run }

// partitionedOut is an input's output of a partitioned table: a data
// file per partition (*partition.Writer), or an upsert delta per
// partition (*lake.PartitionedDelta).
type partitionedOut interface {
	writer.Writer
	Buffered() int
	FlushRowGroup() error
	Files() []string
}
