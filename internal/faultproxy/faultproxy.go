// Package faultproxy is an HTTP proxy for tests that stands between a
// client and a server (an S3 server on loopback) and makes requests fail
// the ways networks and object stores do: 500 and 503 answers, resets
// before or after the server acted, answers whose body is cut short, and
// stalls that answer nothing. Which request meets which fault is drawn
// from a seeded generator at the given rates.
package faultproxy

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Fault is what the proxy does to one request.
type Fault int

const (
	Pass          Fault = iota
	Error500            // 500, the request not sent on
	Error503            // 503 SlowDown, the request not sent on
	ErrorAfter          // sent on, then 500 in place of the answer
	ResetBefore         // the connection reset, the request not sent on
	ResetAfter          // sent on, then the connection reset
	TruncatedBody       // sent on, the answer's body cut in half
	Stall               // no answer until the stall time has passed, then a reset
	numFaults
)

var names = [...]string{"pass", "500", "503", "500 after", "reset before", "reset after", "truncated body", "stall"}

func (f Fault) String() string { return names[f] }

// Config sets the rates. Rate is the share of requests that meet a fault,
// each fault as likely as the others unless Only names some; Stall is how
// long a stalled request waits (it should pass the client's timeout).
type Config struct {
	Seed  uint64
	Rate  float64
	Only  []Fault
	Stall time.Duration
}

// Proxy is a running fault-injecting proxy.
type Proxy struct {
	URL    string // http://127.0.0.1:PORT
	srv    *http.Server
	ln     net.Listener
	target string
	cfg    Config
	mu     sync.Mutex
	rng    *rand.Rand
	counts [numFaults]atomic.Int64
	client *http.Client
	off    atomic.Bool
}

// Start starts a proxy to the server at target (http://HOST:PORT).
func Start(target string, cfg Config) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	if len(cfg.Only) == 0 {
		for f := Error500; f < numFaults; f++ {
			cfg.Only = append(cfg.Only, f)
		}
	}
	if cfg.Stall <= 0 {
		cfg.Stall = 5 * time.Second
	}
	p := &Proxy{URL: "http://" + ln.Addr().String(), ln: ln, target: target, cfg: cfg,
		rng:    rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		client: &http.Client{Transport: &http.Transport{DisableCompression: true}}}
	p.srv = &http.Server{Handler: p}
	go p.srv.Serve(ln)
	return p, nil
}

// Close stops the proxy.
func (p *Proxy) Close() error { return p.srv.Close() }

// SetFaults turns the faults on or off (off: every request passes).
func (p *Proxy) SetFaults(on bool) { p.off.Store(!on) }

// Counts reports how many requests met each fault.
func (p *Proxy) Counts() map[string]int64 {
	m := map[string]int64{}
	for f := Pass; f < numFaults; f++ {
		m[f.String()] = p.counts[f].Load()
	}
	return m
}

func (p *Proxy) draw() Fault {
	if p.off.Load() {
		return Pass
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rng.Float64() >= p.cfg.Rate {
		return Pass
	}
	return p.cfg.Only[p.rng.IntN(len(p.cfg.Only))]
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f := p.draw()
	p.counts[f].Add(1)
	switch f {
	case Error500:
		s3Error(w, 500, "InternalError", "We encountered an internal error. Please try again.")
		return
	case Error503:
		s3Error(w, 503, "SlowDown", "Please reduce your request rate.")
		return
	case ResetBefore:
		reset(w)
		return
	case Stall:
		select {
		case <-time.After(p.cfg.Stall):
		case <-r.Context().Done():
		}
		reset(w)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		reset(w)
		return
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, p.target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		s3Error(w, 500, "InternalError", err.Error())
		return
	}
	out.Header = r.Header.Clone()
	out.Host = r.Host // the signature covers it
	out.ContentLength = r.ContentLength
	resp, err := p.client.Do(out)
	if err != nil {
		reset(w)
		return
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		reset(w)
		return
	}
	switch f {
	case ErrorAfter:
		s3Error(w, 500, "InternalError", "We encountered an internal error. Please try again.")
		return
	case ResetAfter:
		reset(w)
		return
	}
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if f == TruncatedBody && len(data) > 1 {
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.WriteHeader(resp.StatusCode)
		w.Write(data[:len(data)/2])
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
		reset(w)
		return
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(data)
}

// s3Error answers as S3 does when it fails.
func s3Error(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>%s</Message></Error>`, code, msg)
}

// reset closes the client's connection abruptly (an RST: lingering off).
func reset(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("faultproxy: the response cannot be hijacked")
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}
