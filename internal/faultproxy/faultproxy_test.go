package faultproxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestFaults: each fault does what it says to a plain HTTP exchange, and
// the same seed draws the same faults.
func TestFaults(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("x", 1000))
	}))
	defer backend.Close()
	get := func(p *Proxy) (int, int, error) {
		c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := c.Get(p.URL + "/k")
		if err != nil {
			return 0, 0, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, len(b), err
	}
	for _, tc := range []struct {
		f      Fault
		status int
		n      int
		err    bool
	}{
		{Error500, 500, -1, false},
		{Error503, 503, -1, false},
		{ErrorAfter, 500, -1, false},
		{ResetBefore, 0, 0, true},
		{ResetAfter, 0, 0, true},
		{TruncatedBody, 200, 500, true},
		{Stall, 0, 0, true},
	} {
		p, err := Start(backend.URL, Config{Seed: 1, Rate: 1, Only: []Fault{tc.f}, Stall: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		status, n, err := get(p)
		p.Close()
		if (err != nil) != tc.err || status != tc.status || tc.n >= 0 && n != tc.n {
			t.Errorf("%s: status %d, %d bytes, err %v", tc.f, status, n, err)
		}
	}
	p, _ := Start(backend.URL, Config{Seed: 1, Rate: 0})
	if status, n, err := get(p); err != nil || status != 200 || n != 1000 {
		t.Errorf("pass: %d %d %v", status, n, err)
	}
	p.Close()
	draws := func() []Fault {
		p, _ := Start(backend.URL, Config{Seed: 7, Rate: 0.5})
		defer p.Close()
		var out []Fault
		for range 50 {
			out = append(out, p.draw())
		}
		return out
	}
	a, b := draws(), draws()
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("draw %d: %s then %s with the same seed", i, a[i], b[i])
		}
	}
}
