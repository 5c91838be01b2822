package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestWatchLandingDirectory drops 200 files into a watched landing
// directory — some written slowly, some renamed in from a temporary name,
// some with a malformed line — restarts the watcher halfway, and checks that
// every valid row is in the output exactly once and every bad line is in a
// dead-letter file.
func TestWatchLandingDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("real file-system watching")
	}
	dir := t.TempDir()
	landing, out := filepath.Join(dir, "landing"), filepath.Join(dir, "out")
	os.MkdirAll(landing, 0o755)
	args := []string{"--quiet", "--format", "debezium-json", "--schema", "id BIGINT, name STRING",
		"--option", "debezium-json.ignore-parse-errors=true", "--to", "json", "--settle", "300ms", landing, "-o", out}

	start := func() (context.CancelFunc, *sync.WaitGroup) {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			var stderr bytes.Buffer
			if err := runWatch(ctx, args, io.Discard, &stderr); err != nil {
				t.Errorf("watch: %v\n%s", err, stderr.String())
			}
		}()
		return cancel, &wg
	}
	cancel, wg := start()

	const files, rows = 200, 20
	bad := 0
	for f := 0; f < files; f++ {
		var b strings.Builder
		for r := 0; r < rows; r++ {
			id := f*rows + r
			fmt.Fprintf(&b, `{"before":null,"after":{"id":%d,"name":"n%d"},"op":"c"}`+"\n", id, id)
		}
		if f%4 == 3 {
			b.WriteString("{this line is broken\n")
			bad++
		}
		data := []byte(b.String())
		name := filepath.Join(landing, fmt.Sprintf("f%03d.json", f))
		switch f % 4 {
		case 1: // written slowly, in three parts
			fh, _ := os.Create(name)
			for k := 0; k < 3; k++ {
				fh.Write(data[k*len(data)/3 : (k+1)*len(data)/3])
				time.Sleep(20 * time.Millisecond)
			}
			fh.Close()
		case 2: // renamed into place
			tmp := filepath.Join(landing, fmt.Sprintf(".f%03d.json.tmp", f))
			os.WriteFile(tmp, data, 0o644)
			os.Rename(tmp, name)
		default:
			os.WriteFile(name, data, 0o644)
		}
		if f == files/2 {
			cancel() // restart the watcher halfway
			wg.Wait()
			cancel, wg = start()
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		outs, _ := filepath.Glob(filepath.Join(out, "f*.jsonl"))
		if len(outs) == files || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	wg.Wait()

	outs, _ := filepath.Glob(filepath.Join(out, "f*.jsonl"))
	if len(outs) != files {
		t.Fatalf("%d outputs, want %d", len(outs), files)
	}
	eachRowOnce(t, outs, files*rows)
	deads, _ := filepath.Glob(filepath.Join(out, "_dead_letters", "*.jsonl"))
	got := 0
	for _, p := range deads {
		data, _ := os.ReadFile(p)
		got += strings.Count(string(data), `"raw":"{this line is broken"`)
	}
	if got != bad {
		t.Errorf("%d bad lines in dead-letter files, want %d", got, bad)
	}
}
