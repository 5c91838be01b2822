package objstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// A lease is a bucket's lock: an object created only if absent (a
// conditional PUT, If-None-Match: *), naming its holder and when it
// expires. The holder renews it while it works; a holder killed without
// releasing it stops renewing, and once it has expired another process
// may take it over. Object stores have no conditional delete, so a
// takeover of an expired lease is check-then-act: of two processes that
// find it expired at once, the second one's delete can remove the lease
// the first has just created, so both believe they hold it. Each renewal
// reads the lease back first, so the one whose lease is gone stops within
// ttl/3. A lease that expires only after ttl without renewals keeps that
// window to processes that start while the holder is already dead.
type Lease struct {
	loc    *Location
	rel    string // below the location's prefix
	key    string
	holder string
	ttl    time.Duration

	mu     sync.Mutex
	lost   error
	stop   chan struct{}
	done   chan struct{}
	cancel context.CancelFunc
}

type leaseBody struct {
	Holder  string    `json:"holder"`
	Expires time.Time `json:"expires"`
}

// ErrLeaseHeld is returned by TryLease when another live holder has it.
var ErrLeaseHeld = errors.New("held by another process")

// LeaseInfo reads the lease at rel: its holder and whether it is live.
func (l *Location) LeaseInfo(ctx context.Context, rel string) (holder string, live bool, err error) {
	b, err := l.Bucket.ReadAll(ctx, l.Key(rel))
	if IsNotFound(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", l.Name(l.Key(rel)), Explain(err))
	}
	var lb leaseBody
	if json.Unmarshal(b, &lb) != nil {
		return "", false, nil // torn or foreign: not a live lease
	}
	return lb.Holder, time.Now().Before(lb.Expires), nil
}

// TakeLease takes the lease at rel, waiting (while ctx allows) for a live
// holder to release it or to expire. ttl is how long it lasts without a
// renewal; it is renewed every ttl/3. The returned context is cancelled
// if the lease is lost.
func (l *Location) TakeLease(ctx context.Context, rel string, ttl time.Duration) (*Lease, context.Context, error) {
	host, _ := os.Hostname()
	var r [6]byte
	rand.Read(r[:])
	ls := &Lease{loc: l, rel: rel, key: l.Key(rel), holder: fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(r[:])), ttl: ttl}
	for {
		err := ls.create(ctx)
		if err == nil {
			break
		}
		if gcerrors.Code(err) != gcerrors.FailedPrecondition {
			return nil, nil, fmt.Errorf("lock %s: %w", l.Name(ls.key), Explain(err))
		}
		holder, live, err := l.LeaseInfo(ctx, rel)
		if err != nil {
			return nil, nil, err
		}
		if holder == ls.holder {
			break // a retried create whose first try got through
		}
		if !live || deadHere(holder) {
			// Expired (or unreadable): its holder is gone.
			if err := l.Remove(ctx, ls.key); err != nil {
				return nil, nil, fmt.Errorf("lock: %w", err)
			}
			continue
		}
		select {
		case <-ctx.Done():
			return nil, nil, fmt.Errorf("lock %s: %w (another process holds it; it expires %s after its holder stops)", l.Name(ls.key), ctx.Err(), ttl)
		case <-time.After(ttl / 10):
		}
	}
	lctx, cancel := context.WithCancel(ctx)
	ls.cancel, ls.stop, ls.done = cancel, make(chan struct{}), make(chan struct{})
	go ls.renew()
	return ls, lctx, nil
}

// deadHere reports whether holder is a process of this host that no
// longer runs: its lease need not be waited out (a rerun on the machine
// where a run was killed starts at once).
func deadHere(holder string) bool {
	parts := strings.Split(holder, "/")
	host, _ := os.Hostname()
	if len(parts) != 3 || parts[0] != host || host == "" {
		return false
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil || pid <= 0 || pid == os.Getpid() {
		return false
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

func (ls *Lease) body() []byte {
	b, _ := json.Marshal(leaseBody{Holder: ls.holder, Expires: time.Now().Add(ls.ttl).UTC()})
	return b
}

func (ls *Lease) create(ctx context.Context) error {
	return ls.loc.Bucket.WriteAll(ctx, ls.key, ls.body(), &blob.WriterOptions{IfNotExist: true, ContentType: "application/json"})
}

// renew rewrites the lease every ttl/3 after checking it is still ours.
// A renewal that fails (the server erring or not answering) is tried
// again until two thirds of the lease's life have passed since the last
// one that succeeded: a flaky minute must not end a night's run, but a
// lease that may have expired is given up before another process could
// take it.
func (ls *Lease) renew() {
	defer close(ls.done)
	t := time.NewTicker(ls.ttl / 3)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-ls.stop:
			return
		case <-t.C:
		}
		var err error
		for {
			ctx, cancel := context.WithTimeout(context.Background(), ls.ttl/6)
			var holder string
			holder, _, err = ls.loc.LeaseInfo(ctx, ls.rel)
			if err == nil && holder != ls.holder {
				cancel()
				err = fmt.Errorf("lock %s was taken over by %s (this process did not renew it for %s)", ls.loc.Name(ls.key), holder, ls.ttl)
				break
			}
			if err == nil {
				err = ls.loc.Bucket.WriteAll(ctx, ls.key, ls.body(), &blob.WriterOptions{ContentType: "application/json"})
			}
			cancel()
			if err == nil {
				last = time.Now()
				break
			}
			if time.Since(last) > 2*ls.ttl/3 {
				err = fmt.Errorf("lock %s could not be renewed for %s (last: %w)", ls.loc.Name(ls.key), time.Since(last).Round(time.Millisecond), err)
				break
			}
			select {
			case <-ls.stop:
				return
			case <-time.After(ls.ttl / 15):
			}
		}
		if err != nil {
			ls.mu.Lock()
			ls.lost = err
			ls.mu.Unlock()
			ls.cancel()
			return
		}
	}
}

// Err is why the lease was lost (nil while it is held).
func (ls *Lease) Err() error {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.lost
}

// Release stops renewing and deletes the lease (if it is still ours).
func (ls *Lease) Release(ctx context.Context) error {
	close(ls.stop)
	<-ls.done
	defer ls.cancel()
	if ls.Err() != nil {
		return nil
	}
	return ls.loc.Remove(ctx, ls.key)
}
