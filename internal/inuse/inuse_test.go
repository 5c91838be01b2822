package inuse

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestHold: a file open for writing is busy; once closed it can be held,
// and a writer opening it meanwhile waits for the release.
func TestHold(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("leases are Linux's")
	}
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	release, held, err := Hold(path)
	if err != nil {
		t.Fatal(err)
	}
	if !held {
		release()
		t.Skip("this file system takes no leases")
	}
	opened := make(chan time.Time, 1)
	go func() {
		w, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		at := time.Now()
		if err == nil {
			w.Close()
		}
		opened <- at
	}()
	select {
	case <-opened:
		t.Fatal("a writer opened a held file")
	case <-time.After(200 * time.Millisecond):
	}
	released := time.Now()
	release()
	if at := <-opened; at.Before(released) {
		t.Fatal("the writer opened the file before the release")
	}

	w, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if busy, err := Busy(path); err != nil || !busy {
		t.Errorf("open for writing: Busy = %v, %v; want true", busy, err)
	}
	if _, _, err := Hold(path); !errors.Is(err, ErrBusy) {
		t.Errorf("Hold of a file open for writing: %v, want ErrBusy", err)
	}
	w.Close()
	if busy, err := Busy(path); err != nil || busy {
		t.Errorf("closed: Busy = %v, %v; want false", busy, err)
	}
	r, _ := os.Open(path) // readers do not count
	defer r.Close()
	if busy, err := Busy(path); err != nil || busy {
		t.Errorf("open for reading: Busy = %v, %v; want false", busy, err)
	}
	if _, err := Busy(filepath.Join(filepath.Dir(path), "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
