package objstore

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestLease: a lease is one holder's at a time; a released or expired one
// can be taken; a holder whose lease was taken over learns it at its next
// renewal, and its context ends.
func TestLease(t *testing.T) {
	bg := context.Background()
	loc, err := Open(bg, "mem://lease-test/out/")
	if err != nil {
		t.Fatal(err)
	}
	const ttl = 300 * time.Millisecond
	a, actx, err := loc.TakeLease(bg, "_x.lock", ttl)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(bg, 2*ttl)
	defer cancel()
	// Held and renewed past its ttl: a second taker waits, then gives up.
	if _, _, err := loc.TakeLease(short, "_x.lock", ttl); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second taker: %v, want to wait until its deadline", err)
	}
	if actx.Err() != nil || a.Err() != nil {
		t.Fatalf("the holder lost its lease: %v", a.Err())
	}
	if err := a.Release(bg); err != nil {
		t.Fatal(err)
	}
	b, _, err := loc.TakeLease(bg, "_x.lock", ttl)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	// b dies without releasing (its renewals stop): the lease expires and
	// c takes it over; b, had it lived on, would have found out.
	close(b.stop)
	<-b.done
	start := time.Now()
	c, cctx, err := loc.TakeLease(bg, "_x.lock", ttl)
	if err != nil {
		t.Fatalf("after expiry: %v", err)
	}
	if time.Since(start) < ttl/2 {
		t.Errorf("taken over after %v: before the dead holder's lease expired", time.Since(start))
	}
	// Someone overwrites c's lease: c's next renewal sees it and stops.
	if err := loc.Bucket.WriteAll(bg, loc.Key("_x.lock"), []byte(`{"holder":"intruder","expires":"2099-01-01T00:00:00Z"}`), nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-cctx.Done():
	case <-time.After(2 * ttl):
		t.Fatal("the holder did not notice its lease was taken over")
	}
	if c.Err() == nil {
		t.Error("Err is nil after the lease was lost")
	}
	c.Release(bg)
	if holder, live, _ := loc.LeaseInfo(bg, "_x.lock"); holder != "intruder" || !live {
		t.Errorf("releasing a lost lease must not delete the new holder's: %q %v", holder, live)
	}
}
