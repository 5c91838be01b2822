package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKillAndRestart kills a conversion of many files with SIGKILL at
// random moments, 50 times, restarting it each time, then lets it finish,
// and checks that every input row is in the output exactly once and that
// no temporary file is left.
func TestKillAndRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := buildCLI(t, dir)
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	const files, rows = 40, 3000
	for f := 0; f < files; f++ {
		var b strings.Builder
		for r := 0; r < rows; r++ {
			id := f*rows + r
			fmt.Fprintf(&b, `{"before":null,"after":{"id":%d,"name":"n%d","pad":"%s"},"op":"c"}`+"\n", id, id, strings.Repeat("p", r%50))
		}
		p := filepath.Join(in, fmt.Sprintf("d%d", f%4), fmt.Sprintf("f%02d.json", f))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(b.String()), 0o644)
	}
	args := []string{"convert", "--quiet", "--format", "debezium-json", "--schema", "id BIGINT, name STRING, pad STRING",
		"--to", "json", "-o", out, "--workers", "2", in}
	rng := rand.New(rand.NewPCG(7, 7))
	finished := 0
	for k := 0; k < 50; k++ {
		cmd := exec.Command(bin, args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.IntN(60)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		if err := cmd.Wait(); err == nil {
			finished++
		}
	}
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("final run: %v\n%s", err, out)
	}
	t.Logf("%d of 50 runs finished before their kill", finished)
	outs, _ := filepath.Glob(filepath.Join(out, "*", "*.jsonl"))
	if len(outs) != files {
		t.Fatalf("%d outputs, want %d", len(outs), files)
	}
	eachRowOnce(t, outs, files*rows)
	filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".tmp") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

// buildCLI builds the binary into dir, for tests that kill it.
func buildCLI(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "cdcetl")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// eachRowOnce checks that the JSON rows in files have the ids 0..n-1, each
// exactly once.
func eachRowOnce(t *testing.T, files []string, n int) {
	t.Helper()
	seen := make([]int, n)
	for _, p := range files {
		fh, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			var row struct{ ID int }
			if err := json.Unmarshal(sc.Bytes(), &row); err != nil || row.ID < 0 || row.ID >= n {
				t.Fatalf("%s: %q: %v", p, sc.Bytes(), err)
			}
			seen[row.ID]++
		}
		fh.Close()
	}
	for id, c := range seen {
		if c != 1 {
			t.Fatalf("row %d is in the output %d times", id, c)
		}
	}
}

// TestKillWithCollisionsAndMoves: 50 rounds, each landing new inputs and
// starting a conversion that is killed with SIGKILL at a random moment.
// The two arguments hold the same relative paths (so half the inputs get
// "~2" outputs), converted inputs are moved away, and new files keep
// landing under names converted and moved before. After a last full run
// every row is in the outputs exactly once, every input is in done/
// exactly once and nowhere else, and no temporary or pending file is left.
func TestKillWithCollisionsAndMoves(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := buildCLI(t, dir)
	d1, d2, out, done := filepath.Join(dir, "d1"), filepath.Join(dir, "d2"), filepath.Join(dir, "out"), filepath.Join(dir, "done")
	const rows = 4000
	id := 0
	land := func(d, name string) {
		var b strings.Builder
		for r := 0; r < rows; r++ {
			fmt.Fprintf(&b, `{"before":null,"after":{"id":%d,"name":"n%d"},"op":"c"}`+"\n", id, id)
			id++
		}
		p := filepath.Join(d, "s", name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p+".tmp", []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Rename(p+".tmp", p) // complete files only, as a landing directory gets them
	}
	args := []string{"convert", "--quiet", "--format", "debezium-json", "--schema", "id BIGINT, name STRING",
		"--to", "json", "-o", out, "--on-success", "move=" + done, "--workers", "2", d1, d2}
	rng := rand.New(rand.NewPCG(3, 9))
	killed := 0
	for k := 0; k < 50; k++ {
		for _, d := range []string{d1, d2} {
			land(d, fmt.Sprintf("r%02d.json", k))
			// A name converted (and moved away) before lands again, unless
			// the last one is still waiting.
			if _, err := os.Stat(filepath.Join(d, "s", "again.json")); err != nil {
				land(d, "again.json")
			}
		}
		cmd := exec.Command(bin, args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.IntN(60)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		if cmd.Wait() != nil {
			killed++
		}
	}
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("final run: %v\n%s", err, out)
	}
	t.Logf("%d of 50 runs were killed before they finished; %d rows", killed, id)
	if killed < 15 {
		t.Errorf("only %d runs were killed mid-way: the test did not test much", killed)
	}
	var outs []string
	filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") && !strings.HasPrefix(d.Name(), "_") && !strings.Contains(p, "_dead_letters") {
			outs = append(outs, p)
		}
		if err == nil && (strings.HasSuffix(p, ".tmp") || d.Name() == "_cdcetl_pending.jsonl") {
			t.Errorf("left behind: %s", p)
		}
		return nil
	})
	eachRowOnce(t, outs, id)
	moved := jsonIDs(t, done)
	if len(moved) != id {
		t.Fatalf("%d rows in done/, want %d", len(moved), id)
	}
	for i, v := range moved {
		if v != i {
			t.Fatalf("done/ holds row %d where %d was expected (a lost or doubled input)", v, i)
		}
	}
	for _, d := range []string{d1, d2} {
		filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				t.Errorf("input left: %s", p)
			}
			return nil
		})
	}
}
