package watch

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func TestSettler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewSettler(5 * time.Second)
		s.Observe("a", 10, 1, time.Now())
		s.Observe("b", 10, 1, time.Now())
		time.Sleep(3 * time.Second)
		s.Observe("a", 20, 2, time.Now()) // a is still being written
		s.Renamed("c", 5, 1, time.Now())  // c was renamed into place
		if got := strings.Join(s.Ready(time.Now()), ","); got != "c" {
			t.Fatalf("at 3s ready = %q, want c", got)
		}
		time.Sleep(2 * time.Second)
		if got := strings.Join(s.Ready(time.Now()), ","); got != "b" {
			t.Fatalf("at 5s ready = %q, want b", got)
		}
		time.Sleep(3 * time.Second)
		if got := strings.Join(s.Ready(time.Now()), ","); got != "a" {
			t.Fatalf("at 8s ready = %q, want a", got)
		}
		// Handed out files come back only after a new change.
		s.Observe("a", 20, 2, time.Now())
		time.Sleep(10 * time.Second)
		if got := s.Ready(time.Now()); len(got) != 0 {
			t.Fatalf("unchanged file handed out again: %v", got)
		}
		s.Observe("a", 30, 3, time.Now())
		time.Sleep(5 * time.Second)
		if got := strings.Join(s.Ready(time.Now()), ","); got != "a" {
			t.Fatalf("changed file not handed out again: %q", got)
		}
		s.Forget("a")
		s.Observe("d", 1, 1, time.Now())
		if s.Pending() != 1 {
			t.Errorf("pending %d, want 1", s.Pending())
		}
	})
}
