package pipeline

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/cdcetl/cdcetl/lake"
	"github.com/cdcetl/cdcetl/reader"
)

// Iceberg tables are loaded in commit groups: the inputs of a run, in
// their order, wait for one commit per table (lake.CommitUpserts,
// lake.CommitChangelog) rather than committing one by one. A group's
// commit makes a table snapshot that lists its inputs, with their small
// data files packed together (and, in upsert tables, deletes by
// position). Each input finishes (journal, disposition) once its group
// is committed; the next input may go on meanwhile. A group is committed
// when the run's last input joins it, when it holds groupMax inputs or
// groupKeys upsert keys (its memory), before an input that needs the
// table as committed (a truncate of an upsert table, or images completed
// from the table's rows), and before an input that failed (the inputs
// before it stand, as they do when each commits on its own).
const (
	groupMax  = 1024
	groupKeys = 1 << 20
)

// giveTurn lets the input after fr finish.
func (s *lakeSink) giveTurn(fr *fileRun) {
	if s.turns != nil && !fr.turnGiven {
		fr.turnGiven = true
		if s.group != nil && fr.turn == len(s.turns)-1 {
			s.flushLake() // the last input had nothing to stage
		}
		close(s.turns[fr.turn])
	}
}

// needsTable reports whether fr must see the table as the inputs
// before it leave it: the group must be committed first.
func (s *lakeSink) needsTable(fr *fileRun, st Stats) bool {
	r := s.r
	if len(st.Truncates) > 0 && r.cfg.TableMode == lake.ModeUpsert {
		return true
	}
	for _, o := range fr.lakeOuts {
		for _, d := range o.deltas() {
			if d.NeedsTable() {
				return true
			}
		}
	}
	return false
}

// deltas are an out's upsert deltas.
func (o *lakeOut) deltas() []*lake.Delta {
	if o.delta != nil {
		return []*lake.Delta{o.delta}
	}
	if pd, ok := o.part.(*lake.PartitionedDelta); ok {
		return pd.Deltas()
	}
	return nil
}

// stageLake puts fr's closed deltas in the group, passes the turn on,
// and waits for the group's commit; then records what the tables took.
func (s *lakeSink) stageLake(ctx context.Context, fr *fileRun, st *Stats) error {
	r := s.r
	in := lake.Input{Path: fr.key.Path, Size: fr.readSize, Hash: fr.sha, Stem: fr.stem}
	if err := s.commitTruncates(ctx, fr, st, in); err != nil {
		return err
	}
	it := &groupItem{fr: fr, in: in, rows: map[int]string{}, done: make(chan struct{})}
	keys := 0
	var err error
	add := func(id int, rows RowCounts) {
		o := fr.lakeOuts[id]
		if o == nil || err != nil {
			return
		}
		// An earlier schema version's table that holds the input keeps
		// it (a rerun routes it to the latest version).
		for _, p := range o.prior {
			var held bool
			if held, err = p.Committed(ctx, in); err != nil {
				return
			}
			if held {
				removeFiles(o.files())
				s.dropOutput(fr, id, o)
				st.Held++
				return
			}
		}
		raw, _ := rows.MarshalJSON()
		it.ids = append(it.ids, id)
		it.rows[id] = string(raw)
		o.rows = rows
		for _, d := range o.deltas() {
			keys += d.Keys()
		}
	}
	if fr.w != nil {
		add(0, st.Rows)
	}
	for _, tr := range fr.touched {
		add(tr.id, fr.tableStats[tr.id].Rows)
	}
	if err != nil {
		return err
	}
	if len(it.ids) == 0 {
		return nil
	}
	g := s.group
	g.qmu.Lock()
	g.items = append(g.items, it)
	g.keys += keys
	full := len(g.items) >= groupMax || g.keys >= groupKeys || fr.turn == len(s.turns)-1
	g.qmu.Unlock()
	r.giveVerdict(fr)
	if full {
		s.flushLake()
	} else {
		s.giveTurn(fr)
		select {
		case <-it.done:
		case <-ctx.Done():
			// No later input will commit the group: the inputs in it are
			// whole, and go in.
			s.flushLake()
			<-it.done
		}
	}
	if it.err != nil {
		return it.err
	}
	for _, id := range it.ids {
		o := fr.lakeOuts[id]
		if !it.committed[id] {
			st.Held++
			s.dropOutput(fr, id, o) // the table held the input: the files are gone
			continue
		}
		st.Committed++
		// The outputs are the packed files that hold its rows (its
		// group's, shared).
		fr.outputs = slices.DeleteFunc(fr.outputs, func(s string) bool { return s == o.rel })
		ts := fr.tableStats[id]
		if ts != nil {
			ts.Outputs = slices.DeleteFunc(ts.Outputs, func(s string) bool { return s == o.rel })
		}
		for _, f := range it.files[id] {
			if rel, err := filepath.Rel(r.cfg.OutDir, f); err == nil {
				fr.outputs = append(fr.outputs, rel)
				if ts != nil {
					ts.Outputs = append(ts.Outputs, rel)
				}
			}
		}
	}
	return nil
}

// flushLake commits the group waiting, table by table, and tells its
// inputs. It runs to its end even when the run is cancelled: a commit
// cut short would leave the inputs neither in nor out.
func (s *lakeSink) flushLake() {
	r := s.r
	g := s.group
	g.mu.Lock()
	defer g.mu.Unlock()
	g.qmu.Lock()
	items := g.items
	g.items, g.keys = nil, 0
	g.qmu.Unlock()
	if len(items) == 0 {
		return
	}
	ctx := context.WithoutCancel(r.ctx)
	type tableGroup struct {
		t      *lake.Table
		ups    []lake.UpsertInput
		logs   []lake.ChangelogInput
		owners []*groupItem
		ids    []int
	}
	var order []*tableGroup
	by := map[*lake.Table]*tableGroup{}
	for _, it := range items {
		it.committed, it.files = map[int]bool{}, map[int][]string{}
		for _, id := range it.ids {
			o := it.fr.lakeOuts[id]
			tg := by[o.table]
			if tg == nil {
				tg = &tableGroup{t: o.table}
				by[o.table] = tg
				order = append(order, tg)
			}
			if ds := o.deltas(); len(ds) > 0 || o.delta != nil || isDelta(o.part) {
				tg.ups = append(tg.ups, lake.UpsertInput{In: it.in, Rows: it.rows[id], Deltas: ds})
			} else {
				tg.logs = append(tg.logs, lake.ChangelogInput{In: it.in, Rows: it.rows[id], Files: o.files(), Schema: o.schema, Opts: o.opts})
			}
			tg.owners = append(tg.owners, it)
			tg.ids = append(tg.ids, id)
		}
	}
	var failed error
	for _, tg := range order {
		if len(tg.ups) > 0 && len(tg.logs) > 0 {
			failed = fmt.Errorf("iceberg table %s: loaded as a changelog and as an upsert table in one run", tg.t.Name())
		}
		var done []lake.GroupResult
		err := failed
		if err == nil && len(tg.ups) > 0 {
			done, err = tg.t.CommitUpserts(ctx, tg.ups, r.runID)
		} else if err == nil {
			done, err = tg.t.CommitChangelog(ctx, tg.logs, r.runID)
		}
		if err != nil {
			// Not committed: nobody's files.
			failed = err
			for _, u := range tg.ups {
				for _, d := range u.Deltas {
					removeFiles(d.Files())
				}
			}
			for _, c := range tg.logs {
				removeFiles(c.Files)
			}
			continue
		}
		any := false
		for k, it := range tg.owners {
			it.committed[tg.ids[k]] = done[k].Committed
			it.files[tg.ids[k]] = done[k].Files
			any = any || done[k].Committed
		}
		if any {
			afterCommit()
		}
	}
	for _, it := range items {
		it.err = failed // every input of the group fails with it
		close(it.done)
	}
}

func (*lakeSink) ordered() bool { return false }

func (s *lakeSink) prepare(ctx context.Context, files []reader.File) error {
	r := s.r
	if r.cfg.TableMode == lake.ModeUpsert && r.router != nil && len(files) > 0 {
		if err := s.decideKeys(ctx, files); err != nil {
			return err
		}
	}
	s.group = &lakeGroup{}
	s.turns = make([]chan struct{}, len(files))
	for i := range s.turns {
		s.turns[i] = make(chan struct{})
	}
	return nil
}

func (s *lakeSink) finishing(fr *fileRun, st Stats, err error) (func(), error) {
	r := s.r
	// Inputs finish in their order (a later input's commit would
	// otherwise apply before an earlier one's).
	if fr.turn > 0 {
		select {
		case <-s.turns[fr.turn-1]:
		case <-r.ctx.Done():
			if err == nil {
				err = r.ctx.Err()
			}
		}
	}
	if err != nil || s.needsTable(fr, st) {
		// The inputs before this one go in first: they stand whatever
		// becomes of it, and it may read what they leave.
		s.flushLake()
	}
	if err == nil {
		err = s.truncateDeltas(fr, st)
	}
	return func() { s.giveTurn(fr) }, err
}

func (s *lakeSink) settle(ctx context.Context, fr *fileRun, st *Stats, committed bool) error {
	if committed || len(st.Truncates) > 0 {
		return s.stageLake(ctx, fr, st)
	}
	return nil
}
