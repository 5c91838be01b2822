package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/cdcetl/cdcetl/internal/outdir"
	"github.com/cdcetl/cdcetl/writer"
)

// TestPendingOutputsOfAKilledRun: a run killed after an output's rename
// and before its journal entry leaves an output no entry lists; the next
// start removes it (its input is converted again, perhaps under another
// name), and keeps every output an entry lists.
func TestPendingOutputsOfAKilledRun(t *testing.T) {
	dir := t.TempDir()
	in := writeInputs(t, dir, 2, 3)
	out := filepath.Join(dir, "out")
	cfg := canalConfig(t, 1)
	cfg.To, cfg.OutDir = ToParquet, out
	if _, err := Run(context.Background(), cfg, []string{in}); err != nil {
		t.Fatal(err)
	}
	// What a kill leaves: an output of a stem the journal does not know,
	// listed in the pending file, and its dead letters.
	orphan := filepath.Join(out, "sub9", "lost.json.parquet")
	os.MkdirAll(filepath.Dir(orphan), 0o755)
	os.WriteFile(orphan, []byte("PAR1"), 0o644)
	orphanDead := filepath.Join(out, "_dead_letters", "sub9", "lost.json.jsonl")
	os.MkdirAll(filepath.Dir(orphanDead), 0o755)
	os.WriteFile(orphanDead, []byte("{}\n"), 0o644)
	if err := outdir.WritePending(out, outdir.PendingName, []outdir.PendingStem{{Stem: filepath.Join("sub9", "lost.json")}, {Stem: filepath.Join("sub0", "f00.json")}}); err != nil {
		t.Fatal(err)
	}
	st, err := Run(context.Background(), cfg, []string{in})
	if err != nil || st.Skipped != 2 {
		t.Fatalf("rerun: %+v %v", st, err)
	}
	for _, p := range []string{orphan, orphanDead, filepath.Join(out, outdir.PendingName)} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still there", p)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "sub0", "f00.json.parquet")); err != nil {
		t.Errorf("a journaled output was removed: %v", err)
	}
}

// TestJournalKeepsEverygeneration: compacting the journal keeps the entry
// of every input seen at a path, so an old generation's outputs stay its
// own after a rewrite.
func TestJournalKeepsEveryGeneration(t *testing.T) {
	dir := t.TempDir()
	j, err := outdir.OpenJournal(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	for gen := 0; gen < 3; gen++ {
		stem := "x.json"
		if gen > 0 {
			stem = fmt.Sprintf("x.json~%d", gen+1)
		}
		for k := 0; k < 60; k++ { // superseded lines, so the next open compacts
			if err := j.Record(outdir.Entry{Path: "/in/x.json", Gen: gen, Size: int64(k), Status: outdir.StatusOK, Outputs: []string{stem + ".parquet"}, Disposed: DisposedMoved}); err != nil {
				t.Fatal(err)
			}
		}
	}
	j.Close()
	j, err = outdir.OpenJournal(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if n := len(j.Entries()); n != 3 {
		t.Fatalf("%d entries after compaction, want 3", n)
	}
	for gen, stem := range []string{"x.json", "x.json~2", "x.json~3"} {
		if k, ok := j.Owner(stem); !ok || k.Gen != gen {
			t.Errorf("stem %s owned by %+v, %v; want generation %d", stem, k, ok, gen)
		}
	}
	if e, _ := j.Lookup("/in/x.json"); e.Gen != 2 {
		t.Errorf("latest generation %d, want 2", e.Gen)
	}
}

// TestMoveNoClobber: a move never replaces a file; a move already done
// (the destination is the source's file, or the source is gone) succeeds.
func TestMoveNoClobber(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "a"), filepath.Join(dir, "done", "a")
	os.WriteFile(src, []byte("new"), 0o644)
	os.MkdirAll(filepath.Dir(dst), 0o755)
	os.WriteFile(dst, []byte("old"), 0o644)
	if err := outdir.MoveNoClobber(src, dst); !errors.Is(err, outdir.ErrExists) {
		t.Fatalf("onto an existing file: %v, want outdir.ErrExists", err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "old" {
		t.Fatalf("destination overwritten: %q", b)
	}
	free, err := outdir.FreeName(filepath.Join(dir, "done"), "a")
	if err != nil || free != dst+"~2" {
		t.Fatalf("outdir.FreeName = %q, %v", free, err)
	}
	os.Link(src, free) // a kill between the link and the removal
	if err := outdir.MoveNoClobber(src, free); err != nil {
		t.Fatalf("finishing a half-done move: %v", err)
	}
	if _, err := os.Stat(src); !errors.Is(err, os.ErrNotExist) {
		t.Error("source still there")
	}
	if err := outdir.MoveNoClobber(src, free); err != nil {
		t.Errorf("a move already done: %v", err)
	}
	if b, _ := os.ReadFile(free); string(b) != "new" {
		t.Errorf("moved file holds %q", b)
	}
}

// fakeTableWriter is a table writer holding buffered bytes.
type fakeTableWriter struct {
	buffered, flushes int
}

func (w *fakeTableWriter) Write(context.Context, arrow.RecordBatch) error { return nil }
func (w *fakeTableWriter) Close() error                                   { return nil }
func (w *fakeTableWriter) Abort() error                                   { return nil }
func (w *fakeTableWriter) Buffered() int                                  { return w.buffered }
func (w *fakeTableWriter) FlushRowGroup() error                           { w.flushes++; w.buffered = 0; return nil }

// TestBoundWriters: an input's table writers together hold at most
// routedBudget; the largest ends its row group first.
func TestBoundWriters(t *testing.T) {
	a, b, c := &fakeTableWriter{buffered: routedBudget / 2}, &fakeTableWriter{buffered: routedBudget / 3}, &fakeTableWriter{buffered: routedBudget / 4}
	fr := &fileRun{routedRun: routedRun{writers: map[int]writer.Writer{1: a, 2: b, 3: c}}}
	if err := fr.boundWriters(nil); err != nil {
		t.Fatal(err)
	}
	if a.flushes != 1 || b.flushes != 0 || c.flushes != 0 {
		t.Errorf("flushes %d %d %d, want the largest only", a.flushes, b.flushes, c.flushes)
	}
	if total := a.buffered + b.buffered + c.buffered; total > routedBudget {
		t.Errorf("%d bytes held, budget %d", total, routedBudget)
	}
}

// fakeRoomWriter is a table writer keeping room.
type fakeRoomWriter struct {
	fakeTableWriter
	room, shrinks int
}

func (w *fakeRoomWriter) Retained() int { return w.room }
func (w *fakeRoomWriter) Shrink() error { w.shrinks++; w.room = 0; return nil }

// TestBoundWritersRoom: past routedRoom kept by an input's table writers,
// the one keeping the most gives its room back -- but not the writer just
// written, which is about to need it.
func TestBoundWritersRoom(t *testing.T) {
	cur := &fakeRoomWriter{room: routedRoom}
	a, b := &fakeRoomWriter{room: routedRoom / 2}, &fakeRoomWriter{room: routedRoom / 4}
	fr := &fileRun{routedRun: routedRun{writers: map[int]writer.Writer{1: cur, 2: a, 3: b}}}
	if err := fr.boundWriters(cur); err != nil {
		t.Fatal(err)
	}
	if cur.shrinks != 0 || a.shrinks != 1 || b.shrinks != 0 {
		t.Errorf("shrinks %d %d %d, want the second only", cur.shrinks, a.shrinks, b.shrinks)
	}
	if err := fr.boundWriters(cur); err != nil {
		t.Fatal(err)
	}
	if a.shrinks != 1 || b.shrinks != 1 {
		t.Errorf("shrinks %d %d: still past the room, the third should give its room", a.shrinks, b.shrinks)
	}
	if err := fr.boundWriters(cur); err != nil {
		t.Fatal(err)
	}
	if cur.shrinks != 0 || a.shrinks+b.shrinks != 2 {
		t.Errorf("shrinks %d %d %d within the room", cur.shrinks, a.shrinks, b.shrinks)
	}
}

// countingWriter is a table writer that counts how often it is measured.
type countingWriter struct {
	fakeRoomWriter
	measured int
}

func (w *countingWriter) Buffered() int { w.measured++; return w.buffered }

// TestBoundWritersKeepsMeasures: boundWriters measures again only the
// writer just written and the ones it flushes or shrinks, and decides as
// measuring every writer after every batch does (the reference below),
// over thousands of batches of random sizes to eight writers.
func TestBoundWritersKeepsMeasures(t *testing.T) {
	const n = 8
	mk := func() ([]*countingWriter, map[int]writer.Writer) {
		ws, m := make([]*countingWriter, n), map[int]writer.Writer{}
		for i := range ws {
			ws[i] = &countingWriter{}
			m[i] = ws[i]
		}
		return ws, m
	}
	got, gotMap := mk()
	want, _ := mk()
	fr := &fileRun{routedRun: routedRun{writers: gotMap}}
	// The reference: every writer measured afresh.
	reference := func(cur *countingWriter) {
		for {
			total, most := 0, 0
			var largest *countingWriter
			for _, w := range want {
				total += w.buffered
				if w.buffered > most {
					most, largest = w.buffered, w
				}
			}
			if largest == nil || total <= routedBudget {
				break
			}
			largest.FlushRowGroup()
			if largest.buffered >= most {
				break
			}
		}
		total, most := 0, 0
		var largest *countingWriter
		for _, w := range want {
			total += w.room
			if w != cur && w.room > most {
				most, largest = w.room, w
			}
		}
		if largest != nil && total > routedRoom {
			largest.Shrink()
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	measured, given := 0, 0
	for step := range 5000 {
		i, grow, spare := rng.IntN(n), 1+rng.IntN(routedBudget/5), rng.IntN(routedRoom/10)
		for _, w := range []*countingWriter{got[i], want[i]} {
			w.buffered += grow
			w.room = max(w.room, w.buffered+spare)
		}
		if err := fr.boundWriters(got[i]); err != nil {
			t.Fatal(err)
		}
		reference(want[i])
		for k := range got {
			g, w := got[k], want[k]
			if g.buffered != w.buffered || g.room != w.room || g.flushes != w.flushes || g.shrinks != w.shrinks {
				t.Fatalf("step %d, writer %d: buffered %d room %d flushes %d shrinks %d; measuring all: %d %d %d %d",
					step, k, g.buffered, g.room, g.flushes, g.shrinks, w.buffered, w.room, w.flushes, w.shrinks)
			}
		}
		// Measured again: the writer written, and each one given back.
		m, g := 0, 0
		for _, w := range got {
			m, g = m+w.measured, g+w.flushes+w.shrinks
		}
		if step > 0 && m-measured > 1+g-given {
			t.Fatalf("step %d: %d measures for 1 batch and %d writers given back", step, m-measured, g-given)
		}
		measured, given = m, g
	}
	flushes, shrinks := 0, 0
	for _, w := range got {
		flushes, shrinks = flushes+w.flushes, shrinks+w.shrinks
	}
	if flushes == 0 || shrinks == 0 {
		t.Fatalf("%d flushes, %d shrinks: the test never reached a bound", flushes, shrinks)
	}
}
