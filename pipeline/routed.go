package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/buger/jsonparser"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/infer"
	"github.com/cdcetl/cdcetl/internal/outdir"
	"github.com/cdcetl/cdcetl/reader"
	"github.com/cdcetl/cdcetl/writer"
)

// Routed conversion: with no schema given, each source table's rows go to
// outputs of their own, OutDir/<namespace>/<table>/<input>.parquet, with a
// schema inferred from the archive (package infer) and kept, as a Flink
// CREATE TABLE, in OutDir/<namespace>/<table>/_schema.sql.
//
// Inference is optimistic: an input's schemas come from its first chunk
// (a small input is one chunk: then from all of it), merged with what the
// table had; its other chunks are decoded against them strictly (a key
// that is no column, a value its column cannot hold or that would have
// given it another type, a table the first chunk lacked all stop the
// attempt). An input that stops is read once more in full for its
// evidence, which replaces the sample's (undone), and decoded again, as
// the user asked (ignore-parse-errors and all). Inputs are merged into the tables in
// input order, so schemas and versions do not depend on timing.

func newRouter(cfg *Config) (*router, error) {
	rt := &router{tables: infer.NewTables(""), pinned: map[infer.Key]*tableRun{}, current: map[infer.Key]*tableRun{}, loaded: map[infer.Key]bool{}, latest: map[string]string{}, owner: map[string]infer.Key{}}
	rt.tables.Hints = cfg.Hints
	rt.none = &tableRun{id: -1, schema: &arrowconv.Schema{}}
	if cfg.DDLDir != "" {
		files, err := filepath.Glob(filepath.Join(cfg.DDLDir, "*.sql"))
		if err != nil {
			return nil, err
		}
		sort.Strings(files)
		for _, p := range files {
			text, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			t, err := infer.LoadTable(string(text))
			if err != nil {
				return nil, fmt.Errorf("DDL directory: %s: %w", p, err)
			}
			s, err := arrowconv.ParseDDL(string(text))
			if err != nil {
				return nil, fmt.Errorf("DDL directory: %w", arrowconv.InFile(p, err))
			}
			if t.Key == (infer.Key{}) {
				// A DDL written by hand: the table from the file name
				// "<namespace>.<table>.sql".
				// "<namespace>.<table>.sql" (DDLFileName), escaped or not.
				base := strings.TrimSuffix(filepath.Base(p), ".sql")
				if i := strings.IndexByte(base, '.'); i >= 0 {
					t.Key = infer.Key{Namespace: unescapeName(base[:i]), Name: unescapeName(base[i+1:])}
				}
			}
			sem := s.Options["cdcetl.semantics"]
			if sem != "" && sem != "flink" && sem != "producer" {
				return nil, fmt.Errorf("DDL directory: %s: 'cdcetl.semantics' = '%s': want flink or producer", p, sem)
			}
			s.Options = nil
			rt.nextID++
			rt.pinned[t.Key] = &tableRun{id: rt.nextID, key: t.Key, schema: s, dir: cfg.tableDir(t.Key, 1), semantics: sem, pinned: true,
				prefix: t.Key.String() + " ", ddl: string(text)}
		}
	}
	return rt, nil
}

// tableDir is the directory, below the output directory, of version v of
// table k's outputs: <namespace>/<table> for the first, then
// <namespace>/<table>/v<n> (outdir.RoutedStem keeps inputs' own directories
// named v<n> from meeting them).
func tableDir(k infer.Key, v int) string { return (*outdir.TableDirs)(nil).Dir(k, v) }

// tableDir is the directory of table k's version v in the output
// directory (see outdir.TableDirs).
func (c *Config) tableDir(k infer.Key, v int) string { return c.dirs.Dir(k, v) }

// unescapeName reads a file name part back as DDLFileName wrote it, or as
// it is when it is no escaped name (written by hand).
func unescapeName(s string) string {
	if n, err := outdir.Unsegment(s); err == nil {
		return n
	}
	return s
}

// load reads the schema a table kept from an earlier run (its latest
// version's), once.
func (rt *router) load(cfg *Config, k infer.Key) error {
	if rt.loaded[k] || cfg.OutDir == "" {
		return nil
	}
	rt.loaded[k] = true
	base := filepath.Join(cfg.OutDir, cfg.tableDir(k, 1))
	p := filepath.Join(base, outdir.SchemaFile)
	latest := 1
	versions, _ := filepath.Glob(filepath.Join(base, "v*"))
	for _, d := range versions {
		name := filepath.Base(d)
		n, err := strconv.Atoi(name[1:])
		if !outdir.IsVersionDir(name) || err != nil || n <= latest {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, outdir.SchemaFile)); err == nil {
			latest, p = n, filepath.Join(d, outdir.SchemaFile)
		}
	}
	text, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	t, err := infer.LoadTable(string(text))
	if err != nil {
		return fmt.Errorf("%s: %w (remove it to infer the table afresh)", p, err)
	}
	t.Key = k
	rt.tables.Put(t)
	return nil
}

// merge takes an input's evidence into the tables and returns the
// snapshot its conversion uses, and the changes it made.
func (rt *router) merge(cfg *Config, ev *infer.FileEvidence, path string) (map[infer.Key]*tableRun, []infer.Change, error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	var keys []infer.Key
	for _, k := range ev.Tables() {
		if _, ok := rt.pinned[k]; ok {
			continue
		}
		if err := rt.load(cfg, k); err != nil {
			return nil, nil, err
		}
		keys = append(keys, k)
	}
	if rt.tables.Format == "" {
		rt.tables.Format = ev.Format
	}
	changes := rt.tables.Merge(ev, path)
	for _, k := range keys {
		if t := rt.tables.Table(k); t != nil && len(t.PrimaryKey) == 0 && len(rt.keys[k]) > 0 {
			t.PrimaryKey = slices.Clone(rt.keys[k])
		}
	}
	snap := map[infer.Key]*tableRun{}
	for k, tr := range rt.pinned {
		snap[k] = tr
	}
	for _, k := range keys {
		t := rt.tables.Table(k)
		if t.Format == "" {
			t.Format = ev.Format
		}
		t.NoLineage = cfg.NoLineage
		ddl := t.DDL(nil)
		if cur := rt.current[k]; cur != nil && cur.ddl == ddl {
			snap[k] = cur
			continue
		}
		rt.nextID++
		dir := cfg.tableDir(k, t.Version)
		if o, ok := rt.owner[dir]; ok && o != k {
			// route's escaping makes this impossible; never write one
			// table's rows over another's.
			return nil, nil, fmt.Errorf("tables %s and %s both map to directory %s", o, k, dir)
		}
		rt.owner[dir] = k
		tr := &tableRun{id: rt.nextID, key: k, schema: t.DecodeSchema(), checks: t.ValueChecks(), dir: dir, prefix: k.String() + " ", ddl: ddl}
		rt.current[k] = tr
		rt.latest[dir] = ddl
		snap[k] = tr
	}
	return snap, changes, nil
}

func (rt *router) save() *routerState {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return &routerState{tables: rt.tables.Clone(), current: maps.Clone(rt.current), loaded: maps.Clone(rt.loaded), latest: maps.Clone(rt.latest), owner: maps.Clone(rt.owner)}
}

// restore goes back to a saved state (nextID goes on: a snapshot's id
// names its decoders).
func (rt *router) restore(s *routerState) {
	if s == nil {
		return
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.tables, rt.current, rt.loaded, rt.latest, rt.owner = s.tables, s.current, s.loaded, s.latest, s.owner
}

// observe takes into the tables what the checks of a strict attempt that
// stood saw of their values (infer.Checks.Apply).
func (rt *router) observe(trs map[infer.Key]*tableRun) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for k, tr := range trs {
		if t := rt.tables.Table(k); t != nil && tr.checks != nil && !tr.pinned {
			tr.checks.Apply(t)
		}
	}
}

// persist writes the schema files of the tables an input's outputs were
// made with: the table's current DDL in its directory (and in its version
// directory), atomically.
func (rt *router) persist(cfg *Config, trs []*tableRun) error {
	if cfg.OutDir == "" {
		return nil
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	done := map[infer.Key]bool{}
	for _, tr := range trs {
		if tr.id < 0 || done[tr.key] {
			continue
		}
		done[tr.key] = true
		// The directory's latest schema: a later input may have added
		// columns (an input's snapshot may be older), never fewer.
		ddl := []byte(rt.latest[tr.dir])
		if tr.pinned {
			ddl = []byte(tr.ddl) // as the user wrote it
		}
		p := filepath.Join(cfg.OutDir, tr.dir, outdir.SchemaFile)
		if cfg.Shard.Sharded() {
			if err := persistShared(cfg, p, ddl); err != nil {
				return err
			}
			continue
		}
		if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, ddl) {
			continue
		}
		if err := writer.WriteAtomic(p, ddl); err != nil {
			return err
		}
	}
	return nil
}

// persistShared writes a schema file that other shards write too: under a
// lock, and only when it adds columns to what the file holds (a shard
// that saw fewer columns never takes away another's).
func persistShared(cfg *Config, p string, ddl []byte) error {
	f, err := outdir.FlockWait(context.Background(), filepath.Join(cfg.OutDir, "_cdcetl.schema.lock"), syscall.LOCK_EX)
	if err != nil {
		return err
	}
	defer outdir.Unflock(f)
	old, err := os.ReadFile(p)
	if err == nil {
		if bytes.Equal(old, ddl) || !addsColumns(old, ddl) {
			return nil
		}
	}
	return writer.WriteAtomic(p, ddl)
}

// addsColumns reports whether schema text next has every column of cur
// and more (or cur cannot be read).
func addsColumns(cur, next []byte) bool {
	a, err := arrowconv.ParseDDL(string(cur))
	if err != nil {
		return true
	}
	b, err := arrowconv.ParseDDL(string(next))
	if err != nil {
		return false
	}
	have := map[string]bool{}
	for _, c := range b.Columns {
		have[c.Name] = true
	}
	for _, c := range a.Columns {
		if !have[c.Name] {
			return false
		}
	}
	return len(b.Columns) >= len(a.Columns)
}

// inferFile reads a whole input for its evidence.
func inferFile(ctx context.Context, cfg *Config, f reader.File, idx int, format *decode.Format, schemaInclude bool) (*infer.FileEvidence, error) {
	fullReadings.Add(1)
	ev, _, err := gatherEvidence(ctx, cfg, f, idx, format, schemaInclude, nil)
	return ev, err
}

// fullReadings counts inputs read in full for their evidence (for the
// tests: tables in runs must not need it).
var fullReadings atomic.Int64

// sampleNewTables reads fr's input in order, routing each message
// without decoding it, for the evidence of the tables fr's attempt did
// not have: the first sampleBytes of each one's messages, as the first
// chunk gave the others theirs. It returns nil when there is none (then
// only the full reading can tell why the attempt stopped).
func sampleNewTables(ctx context.Context, cfg *Config, fr *fileRun) (*infer.FileEvidence, error) {
	chunks, err := reader.OpenFileChunks(fr.file, fr.file.Path, cfg.ChunkSize, cfg.MaxLine)
	if err != nil {
		return nil, err
	}
	defer chunks.Close()
	chunks.SetContext(ctx)
	ev := infer.NewFileEvidence(fr.format.Name, fr.idx, infer.Options{SchemaInclude: fr.schemaInclude})
	taken := map[infer.Key]*int{} // bytes observed, by new table
	// The last message's table, looked up once per run of its messages;
	// taken is nil for a table not sampled.
	var last struct {
		ns, tbl []byte
		esc     bool
		taken   *int
		seen    bool
	}
	for {
		ch, ok := chunks.Next()
		if !ok {
			break
		}
		ch.Lines(func(l []byte, pos reader.Pos) bool {
			ns, tbl, esc, named := decode.RouteRaw(fr.format, fr.schemaInclude, l)
			if !named {
				ns, tbl, esc = nil, nil, false // names no table: infer.Unnamed's
			}
			if !last.seen || esc != last.esc || !bytes.Equal(ns, last.ns) || !bytes.Equal(tbl, last.tbl) {
				last.ns, last.tbl, last.esc, last.seen = append(last.ns[:0], ns...), append(last.tbl[:0], tbl...), esc, true
				last.taken = nil
				if k := routeKey(ns, tbl, esc); fr.tables[k] == nil && tableFilter(cfg, k.Namespace, k.Name) {
					if taken[k] == nil {
						taken[k] = new(int)
					}
					last.taken = taken[k]
				}
			}
			if last.taken != nil && *last.taken < sampleBytes {
				*last.taken += len(l) + 1
				ev.Observe(l, pos.Line)
			}
			return true
		})
		chunks.Recycle(ch.Data)
	}
	if err := chunks.Err(); err != nil {
		return nil, err
	}
	if len(taken) == 0 {
		return nil, nil
	}
	return ev, nil
}

// routeKey is the table a message names by its raw (ns, tbl), escaped
// or not.
func routeKey(ns, tbl []byte, esc bool) infer.Key {
	if len(tbl) == 0 {
		return infer.Unnamed // as infer keys a message that names no table
	}
	if esc {
		ns, tbl = unescapeJSON(ns), unescapeJSON(tbl)
	}
	return infer.Key{Namespace: string(ns), Name: string(tbl)}
}

// gatherEvidence reads a whole input for its evidence (of the lines keep
// passes, all when nil) and counts its lines. Its chunks are observed by
// cfg.Workers goroutines, each chunk on its own, and joined in order: the
// evidence is that of one reading in order (infer.FileEvidence.Join), in
// a fraction of the time (an input read twice, when the optimistic
// attempt stops, must not take twice as long).
func gatherEvidence(ctx context.Context, cfg *Config, f reader.File, idx int, format *decode.Format, schemaInclude bool, keep func([]byte) bool) (*infer.FileEvidence, int64, error) {
	chunks, err := reader.OpenFileChunks(f, f.Path, cfg.ChunkSize, cfg.MaxLine)
	if err != nil {
		return nil, 0, err
	}
	defer chunks.Close()
	chunks.SetContext(ctx)
	opts := infer.Options{SchemaInclude: schemaInclude}
	type job struct {
		seq int
		ch  reader.Chunk
	}
	type part struct {
		seq   int
		ev    *infer.FileEvidence
		lines int64
	}
	workers := max(1, cfg.Workers)
	jobs, parts := make(chan job), make(chan part, workers)
	// tokens bound the chunks read and not yet joined: memory stays that
	// of a few chunks, however slow one of them is.
	tokens := make(chan struct{}, 2*workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				ev, n := infer.NewFileEvidence(format.Name, idx, opts), int64(0)
				j.ch.Lines(func(l []byte, pos reader.Pos) bool {
					n++
					if keep == nil || keep(l) {
						ev.Observe(l, pos.Line)
					}
					return true
				})
				chunks.Recycle(j.ch.Data)
				parts <- part{j.seq, ev, n}
			}
		}()
	}
	go func() {
		for seq := 0; ; seq++ {
			tokens <- struct{}{}
			ch, ok := chunks.Next()
			if !ok {
				break
			}
			jobs <- job{seq, ch}
		}
		close(jobs)
		wg.Wait()
		close(parts)
	}()
	ev := infer.NewFileEvidence(format.Name, idx, opts)
	var lines int64
	pending := map[int]part{}
	next := 0
	for p := range parts {
		pending[p.seq] = p
		for q, ok := pending[next]; ok; q, ok = pending[next] {
			delete(pending, next)
			ev.Join(q.ev)
			lines += q.lines
			next++
			<-tokens
		}
	}
	if err := chunks.Err(); err != nil {
		return nil, 0, err
	}
	return ev, lines, nil
}

// detectLines is how many of an input's first lines detection looks at.
const detectLines = 64

// detect tells an input's format from its first lines: those of its first
// chunk, or when that holds fewer lines and none tells, the first lines
// read afresh (large messages, small chunks).
func detect(cfg *Config, f reader.File, ch reader.Chunk) (*decode.Format, bool, error) {
	if cfg.Format != nil {
		return cfg.Format, cfg.OptionsFor(cfg.Format).SchemaInclude, nil
	}
	var lines [][]byte
	ch.Lines(func(l []byte, _ reader.Pos) bool {
		if !blank(l) {
			lines = append(lines, l)
		}
		return len(lines) < detectLines
	})
	format, schemaInclude, _, err := decode.Detect(lines, ch.FirstLine)
	if err != nil && len(lines) < detectLines && ch.FirstLine == 1 {
		more, rerr := firstLines(cfg, f, detectLines)
		switch {
		case rerr == nil && len(more) == 0:
			// Blank lines only: no message, as an empty input.
			format, _ = decode.Lookup("json")
			return format, false, nil
		case rerr == nil && len(more) > len(lines):
			format, schemaInclude, _, err = decode.Detect(more, 1)
		}
	}
	if err != nil {
		return nil, false, &reader.PathError{Path: f.Path, Err: err}
	}
	return format, schemaInclude, nil
}

// blank reports whether a line holds no message (white space only).
func blank(l []byte) bool { return len(bytes.TrimSpace(l)) == 0 }

// firstLines reads up to n lines that are not blank from the start of an
// input: none, when it has no message.
func firstLines(cfg *Config, f reader.File, n int) ([][]byte, error) {
	chunks, err := reader.OpenFileChunks(f, f.Path, reader.DefaultChunkSize, cfg.MaxLine)
	if err != nil {
		return nil, err
	}
	defer chunks.Close()
	var lines [][]byte
	for len(lines) < n {
		ch, ok := chunks.Next()
		if !ok {
			break
		}
		ch.Lines(func(l []byte, _ reader.Pos) bool {
			if !blank(l) {
				lines = append(lines, bytes.Clone(l))
			}
			return len(lines) < n
		})
		chunks.Recycle(ch.Data)
	}
	return lines, chunks.Err()
}

// tableFilter reports whether a table passes --include-table and
// --exclude-table (full matches on "namespace.table").
func tableFilter(cfg *Config, ns, table string) bool {
	if cfg.OnlyTable != nil && (cfg.OnlyTable.Namespace != ns || cfg.OnlyTable.Name != table) {
		return false
	}
	name := ns + "." + table
	if cfg.IncludeTable != nil && !cfg.IncludeTable.MatchString(name) {
		return false
	}
	return cfg.ExcludeTable == nil || !cfg.ExcludeTable.MatchString(name)
}

// lastTable remembers the raw table bytes (escapes included) of the last
// message asked about: messages of one input mostly name one table, so a
// decision made from the table is made again only when they change.
type lastTable struct {
	ns, table []byte
	ok, has   bool
}

// same reports whether (ns, table, ok) are the last ones asked about, and
// remembers them when they are not.
func (l *lastTable) same(ns, table []byte, ok bool) bool {
	if l.has && ok == l.ok && string(ns) == string(l.ns) && string(table) == string(l.table) {
		return true
	}
	l.ns, l.table, l.ok, l.has = append(l.ns[:0], ns...), append(l.table[:0], table...), ok, true
	return false
}

// filterCache is tableFilter for the messages of one chunk: a message
// naming its table with the same raw bytes as the last one takes the same
// decision, without building the name and matching it again (each message
// cost two allocations and a regular expression match).
type filterCache struct {
	last lastTable
	keep bool
}

// take says whether msg passes cfg's table filters; a message that names
// no table passes.
func (c *filterCache) take(cfg *Config, msg []byte) bool {
	ns, tbl, _, ok := decode.RouteRaw(cfg.Format, cfg.Options.SchemaInclude, msg)
	if c.last.same(ns, tbl, ok) {
		return c.keep
	}
	c.keep = true
	if n, t, ok := decode.Route(cfg.Format, cfg.Options.SchemaInclude, msg); ok {
		c.keep = tableFilter(cfg, n, t)
	}
	return c.keep
}

// FullMatch compiles a table filter: a Go RE2 expression the whole
// "namespace.table" must match.
func FullMatch(expr string) (*regexp.Regexp, error) { return regexp.Compile(`^(?:` + expr + `)$`) }

// tableDecoder is a worker's decoder of one table snapshot.
type tableDecoder struct {
	b    *arrowconv.Builder
	dec  decode.Decoder
	opts decode.Options
}

// routedDecoders are a worker's decoders, by table snapshot and strictness.
type routedDecoders struct {
	byID map[[2]int]*tableDecoder
}

// minRoutedBatch is the fewest rows batchRows gives a table's batch.
const minRoutedBatch = 1024

// batchRows is how many rows a table's builder takes before its batch is
// written: the run's batch size (rows) shared among the tables the
// worker has met, at least minRoutedBatch (or rows, when smaller). Each builder keeps the room its largest
// batch took, so an input whose tables come in runs (a snapshot, an
// export sorted by table) would otherwise leave every table's builder
// holding a full batch: with 20 tables, 100 MiB more heap, the collector
// running at the memory limit and the run twice as slow.
func (rd *routedDecoders) batchRows(rows int) int {
	if n := len(rd.byID); n > 1 {
		return max(min(minRoutedBatch, rows), rows/n)
	}
	return rows
}

func (rd *routedDecoders) release() {
	for _, td := range rd.byID {
		td.b.Release()
	}
}

// get returns the decoder of snapshot tr, strict (the optimistic attempt:
// no ignore-parse-errors, unknown keys rejected) or as the user asked.
func (rd *routedDecoders) get(cfg *Config, tr *tableRun, format *decode.Format, schemaInclude, strict bool) (*tableDecoder, error) {
	k := [2]int{tr.id, map[bool]int{false: 0, true: 1}[strict]}
	if td := rd.byID[k]; td != nil {
		return td, nil
	}
	opts := cfg.OptionsFor(format)
	opts.SchemaInclude = schemaInclude
	opts.RouteKeys = true // the table decoding read checks the routing
	switch {
	case !tr.pinned && tr.id >= 0:
		opts.Producer = true
	case tr.semantics != "":
		opts.Producer = tr.semantics == "producer"
	}
	if err := opts.Check(format); err != nil {
		return nil, err
	}
	if strict {
		opts.IgnoreParseErrors = false
		opts.RejectUnknownKeys = !tr.pinned && tr.id >= 0
		if opts.RejectUnknownKeys && tr.checks != nil {
			opts.ValueChecks = tr.checks.ByColumn
		}
	}
	b := arrowconv.NewBuilder(cfg.Mem, tr.schema)
	dec, err := decode.New(format, tr.schema, opts, b)
	if err != nil {
		b.Release()
		return nil, err
	}
	td := &tableDecoder{b: b, dec: dec, opts: opts}
	if rd.byID == nil {
		rd.byID = map[[2]int]*tableDecoder{}
	}
	rd.byID[k] = td
	return td, nil
}

// sampleBytes is how much of an input's first chunk its optimistic
// schemas are inferred from, and of each table's messages when the first
// chunk lacked tables (a variable for the tests).
var sampleBytes = 1 << 20

// unescapeJSON resolves a JSON string's escapes (left as they are when
// malformed: decoding reports those).
func unescapeJSON(v []byte) []byte {
	out, err := jsonparser.Unescape(v, nil)
	if err != nil {
		return v
	}
	return out
}
