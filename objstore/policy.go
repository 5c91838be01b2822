package objstore

import (
	"sync"
	"time"
)

// Policy bounds every request to object storage: one that makes no
// progress for Timeout (no answer, no byte of its body either way) fails
// and is tried again, with backoff, up to Attempts tries in all, as are
// 500, 502, 503 and 504 answers, throttling, resets and bodies cut short.
// A streamed read that fails mid-way goes on from where it was (the same
// object version), within the same attempts.
type Policy struct {
	Timeout  time.Duration
	Attempts int
}

// DefaultPolicy: a minute without progress, ten tries (about two minutes
// of backoff between them at most).
var DefaultPolicy = Policy{Timeout: 60 * time.Second, Attempts: 10}

var policy = struct {
	sync.Mutex
	p Policy
}{p: DefaultPolicy}

// SetPolicy sets the policy of buckets opened from now on (the command
// line's --bucket-timeout and --bucket-attempts).
func SetPolicy(p Policy) {
	if p.Timeout <= 0 {
		p.Timeout = DefaultPolicy.Timeout
	}
	if p.Attempts <= 0 {
		p.Attempts = DefaultPolicy.Attempts
	}
	policy.Lock()
	policy.p = p
	policy.Unlock()
}

// CurrentPolicy is the policy buckets are opened with.
func CurrentPolicy() Policy {
	policy.Lock()
	defer policy.Unlock()
	return policy.p
}

// maxBackoff caps the wait between two tries of a request.
const maxBackoff = 20 * time.Second
