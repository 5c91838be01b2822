package watch

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestWatchRealFiles uses the real file system: a file renamed into place
// is handed out at once (long before the quiet period), a file present at
// start and a file written in place after their quiet period, and
// temporary names never.
func TestWatchRealFiles(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "present.json"), []byte("x\n"), 0o644)
	var mu sync.Mutex
	got := map[string]time.Time{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		done <- Watch(ctx, dir, Options{Settle: 1500 * time.Millisecond}, func(_ context.Context, p string) error {
			mu.Lock()
			got[filepath.Base(p)] = time.Now()
			mu.Unlock()
			return nil
		})
	}()
	time.Sleep(200 * time.Millisecond)
	tmp := filepath.Join(dir, ".renamed.json.tmp")
	os.WriteFile(tmp, []byte("y\n"), 0o644)
	os.Rename(tmp, filepath.Join(dir, "renamed.json"))
	os.WriteFile(filepath.Join(dir, "written.json"), []byte("z\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "upload.part"), []byte("w\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	time.Sleep(100 * time.Millisecond)
	os.WriteFile(filepath.Join(dir, "sub", "nested.json"), []byte("v\n"), 0o644)

	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= 4 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, name := range []string{"present.json", "renamed.json", "written.json", "nested.json"} {
		if _, ok := got[name]; !ok {
			t.Errorf("%s was not handed out (got %v)", name, got)
		}
	}
	if _, ok := got["upload.part"]; ok {
		t.Error("a .part file was handed out")
	}
	if at := got["renamed.json"]; !at.IsZero() && at.Sub(start) > 1400*time.Millisecond {
		t.Errorf("renamed file waited %v, want no quiet period", at.Sub(start))
	}
	if at := got["written.json"]; !at.IsZero() && at.Sub(start) < 1500*time.Millisecond {
		t.Errorf("written file handed out after %v, before its quiet period", at.Sub(start))
	}
}
