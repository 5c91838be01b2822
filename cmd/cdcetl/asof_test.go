package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/internal/cdcgen"
)

// asOfCase is a generated archive, a point in it (the event time of a
// message in its middle), and the archive cut there: every message up to
// the last one at that time.
type asOfCase struct {
	full, cut string
	at        string
	cutLines  int
}

func newAsOfCase(t *testing.T, format string) asOfCase {
	t.Helper()
	data, err := cdcgen.ShapeLines(format, "products", 21, 96<<10)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := decode.Lookup(format)
	lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	times := make([]int64, len(lines))
	var o decode.Observation
	for i, l := range lines {
		if !f.Observe(false, []byte(strings.TrimSpace(l)), &o) || o.Milli == 0 {
			t.Fatalf("%s line %d has no event time", format, i+1)
		}
		times[i] = o.Milli
		if i > 0 && times[i] < times[i-1] {
			t.Fatalf("%s: event times go back at line %d: the archive cannot be cut by time", format, i+1)
		}
	}
	at := times[len(times)/2]
	n := 0
	for n < len(lines) && times[n] <= at {
		n++
	}
	if n == len(lines) || n < 10 {
		t.Fatalf("%s: a cut at %d keeps %d of %d lines", format, at, n, len(lines))
	}
	dir := t.TempDir()
	c := asOfCase{full: filepath.Join(dir, "full", "in.json"), cut: filepath.Join(dir, "cut", "in.json"),
		at: time.UnixMilli(at).UTC().Format(time.RFC3339Nano), cutLines: n}
	for p, text := range map[string]string{c.full: strings.Join(lines, ""), c.cut: strings.Join(lines[:n], "")} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != exitOK {
		t.Fatalf("cdcetl %s: exit %d\n%s", strings.Join(args, " "), code, stderr.String())
	}
	return stdout.String() + stderr.String()
}

// TestAsOfEqualsCutArchive: for each format, the state --as-of T gives
// from the whole archive is the state of the archive cut at T, in a
// current-state snapshot and in an Iceberg upsert table; later messages
// are counted as left out.
func TestAsOfEqualsCutArchive(t *testing.T) {
	schema := cdcgen.Schema + ", PRIMARY KEY (id) NOT ENFORCED"
	for _, format := range []string{"canal-json", "maxwell-json", "ogg-json", "debezium-json"} {
		t.Run(format, func(t *testing.T) {
			c := newAsOfCase(t, format)
			dir := t.TempDir()
			base := []string{"convert", "--format", format, "--schema", schema, "--table", "shop.products"}
			cutSummary := mustRun(t, append(base, "--materialize", "-o", filepath.Join(dir, "cut"), c.cut)...)
			summary := mustRun(t, append(base, "--materialize", "--as-of", c.at, "-o", filepath.Join(dir, "asof"), c.full)...)
			want := mustRun(t, "show", "--current", filepath.Join(dir, "cut"), "shop.products")
			got := mustRun(t, "show", "--current", filepath.Join(dir, "asof"), "shop.products")
			if got != want || len(want) < 100 {
				t.Fatalf("--as-of %s:\n%.600s\nthe cut archive:\n%.600s", c.at, got, want)
			}
			var inserts, updates, deletes int
			if i := strings.Index(cutSummary, "rows +I "); i >= 0 {
				fmt.Sscanf(cutSummary[i:], "rows +I %d, -U %d, +U %d, -D %d", &inserts, &updates, &updates, &deletes)
			}
			if rows := strings.Count(want, "\n"); deletes == 0 || rows != inserts-deletes {
				t.Fatalf("the snapshot has %d rows; the cut archive %d inserts and %d deletes", rows, inserts, deletes)
			}
			if !strings.Contains(summary, "after --as-of "+c.at) {
				t.Errorf("summary: %s", summary)
			}

			// An Iceberg upsert table, the same.
			mustRun(t, append(base, "--to", "iceberg", "--table-mode", "upsert", "-o", filepath.Join(dir, "wh-cut"), c.cut)...)
			mustRun(t, append(base, "--to", "iceberg", "--table-mode", "upsert", "--as-of", c.at, "-o", filepath.Join(dir, "wh-asof"), c.full)...)
			want = mustRun(t, "show", filepath.Join(dir, "wh-cut"), "shop.products")
			got = mustRun(t, "show", filepath.Join(dir, "wh-asof"), "shop.products")
			if got != want || len(want) < 100 {
				t.Fatalf("upsert --as-of %s:\n%.600s\nthe cut archive:\n%.600s", c.at, got, want)
			}
		})
	}
}

// TestAsOfRoutedAndPosition: without a schema (routed, inferred) and by
// source position, the same equality; a position is given as the audit
// prints it, or without its zero padding.
func TestAsOfRoutedAndPosition(t *testing.T) {
	c := newAsOfCase(t, "debezium-json")
	dir := t.TempDir()
	table := "inventory.products"
	pk := []string{"--primary-key", table + "=id", "--no-lineage"}
	mustRun(t, append([]string{"convert", "--materialize", "-o", filepath.Join(dir, "cut"), c.cut}, pk...)...)
	mustRun(t, append([]string{"convert", "--materialize", "--as-of", c.at, "-o", filepath.Join(dir, "asof"), c.full}, pk...)...)
	if got, want := mustRun(t, "show", "--current", filepath.Join(dir, "asof"), table), mustRun(t, "show", "--current", filepath.Join(dir, "cut"), table); got != want || len(want) < 100 {
		t.Fatalf("routed --as-of:\n%.400s\ncut:\n%.400s", got, want)
	}

	// By position: the position of the cut archive's last message.
	data, _ := os.ReadFile(c.cut)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	f, _ := decode.Lookup("debezium-json")
	var x decode.Facts
	f.Facts(false, []byte(lines[len(lines)-1]), &x)
	pos := string(x.Position)
	if pos == "" {
		t.Fatal("no position")
	}
	unpadded := strings.Join(func() []string {
		var parts []string
		for _, p := range strings.Split(pos, "/") {
			if t := strings.TrimLeft(p, "0"); t != "" && strings.Trim(p, "0123456789") == "" {
				p = t
			}
			parts = append(parts, p)
		}
		return parts
	}(), "/")
	for i, at := range []string{pos, unpadded} {
		out := filepath.Join(dir, "pos"+string(rune('0'+i)))
		mustRun(t, append([]string{"convert", "--materialize", "--as-of", at, "-o", out, c.full}, pk...)...)
		if got, want := mustRun(t, "show", "--current", out, table), mustRun(t, "show", "--current", filepath.Join(dir, "cut"), table); got != want {
			t.Fatalf("--as-of %s:\n%.400s\ncut:\n%.400s", at, got, want)
		}
	}
}
