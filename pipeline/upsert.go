package pipeline

import (
	"context"
	"path/filepath"
	"slices"
	"sync"

	"github.com/cdcetl/cdcetl/lake"
)

// Upsert tables are loaded in commit groups: the inputs of a run, in
// their order, wait for one commit per table (lake.CommitUpserts) rather
// than committing one by one. A group's commit makes a table snapshot
// that lists its inputs, and its deletes go by position. Each input
// finishes (journal, disposition) once its group is committed; the next
// input may go on meanwhile. A group is committed when the run's last
// input joins it, when it holds upsertGroupMax inputs or
// upsertGroupKeys keys (its memory), before an input that needs the
// table as committed (a truncate, or images completed from the table's
// rows), and before an input that failed (the inputs before it stand, as
// they do when each commits on its own).
const (
	upsertGroupMax  = 1024
	upsertGroupKeys = 4 << 20
)

type upsertGroup struct {
	mu    sync.Mutex // held while a group commits: flushes go one at a time
	qmu   sync.Mutex
	items []*upsertItem
	keys  int
}

// upsertItem is an input waiting for its group's commit.
type upsertItem struct {
	fr   *fileRun
	in   lake.Input
	ids  []int
	rows map[int]string
	done chan struct{}
	// set by the commit: per table id, whether the table took the input
	// now (false: it held it already); err fails the input.
	committed map[int]bool
	files     map[int][]string
	err       error
}

// giveTurn lets the input after fr finish.
func (r *run) giveTurn(fr *fileRun) {
	if r.turns != nil && !fr.turnGiven {
		fr.turnGiven = true
		if r.ups != nil && fr.turn == len(r.turns)-1 {
			r.flushUpserts() // the last input had nothing to stage
		}
		close(r.turns[fr.turn])
	}
}

// upsertNeedsTable reports whether fr must see the table as the inputs
// before it leave it: the group must be committed first.
func upsertNeedsTable(fr *fileRun, st Stats) bool {
	if len(st.Truncates) > 0 {
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

// stageUpsert puts fr's closed deltas in the group, passes the turn on,
// and waits for the group's commit; then records what the tables took.
func (r *run) stageUpsert(ctx context.Context, fr *fileRun, st *Stats) error {
	in := lake.Input{Path: fr.key.path, Size: fr.readSize, Hash: fr.sha, Stem: fr.stem}
	if err := r.commitTruncates(ctx, fr, st, in); err != nil {
		return err
	}
	it := &upsertItem{fr: fr, in: in, rows: map[int]string{}, done: make(chan struct{})}
	keys := 0
	add := func(id int, rows RowCounts) {
		o := fr.lakeOuts[id]
		if o == nil {
			return
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
	if len(it.ids) == 0 {
		return nil
	}
	g := r.ups
	g.qmu.Lock()
	g.items = append(g.items, it)
	g.keys += keys
	full := len(g.items) >= upsertGroupMax || g.keys >= upsertGroupKeys || fr.turn == len(r.turns)-1
	g.qmu.Unlock()
	if full {
		r.flushUpserts()
	} else {
		r.giveTurn(fr)
		select {
		case <-it.done:
		case <-ctx.Done():
			// No later input will commit the group: the inputs in it are
			// whole, and go in.
			r.flushUpserts()
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
			r.dropOutput(fr, id, o) // the table held the input: the files are gone
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

// flushUpserts commits the group waiting, table by table, and tells its
// inputs. It runs to its end even when the run is cancelled: a commit
// cut short would leave the inputs neither in nor out.
func (r *run) flushUpserts() {
	g := r.ups
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
		ins    []lake.UpsertInput
		owners []*upsertItem
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
			tg.ins = append(tg.ins, lake.UpsertInput{In: it.in, Rows: it.rows[id], Deltas: o.deltas()})
			tg.owners = append(tg.owners, it)
			tg.ids = append(tg.ids, id)
		}
	}
	var failed error
	for _, tg := range order {
		if failed != nil {
			// Not committed: nobody's files.
			for _, u := range tg.ins {
				for _, d := range u.Deltas {
					removeFiles(d.Files())
				}
			}
			continue
		}
		done, err := tg.t.CommitUpserts(ctx, tg.ins, r.runID)
		if err != nil {
			failed = err
			for _, u := range tg.ins {
				for _, d := range u.Deltas {
					removeFiles(d.Files())
				}
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
