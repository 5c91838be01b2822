package arrowconv

import (
	"bytes"
	"sync"
	"testing"
)

// The pool hands out zeroed buffers of the asked size, reuses freed ones
// (freed buffers are cleared), keeps contents across Reallocate, and is
// safe for concurrent use (run with -race).
func TestPool(t *testing.T) {
	p := NewPool()
	a := p.Allocate(100)
	if len(a) != 100 || cap(a) != 128 {
		t.Fatalf("Allocate(100): len %d cap %d", len(a), cap(a))
	}
	for i := range a {
		a[i] = 0xAA
	}
	p.Free(a)
	if a[0] != 0 || a[99] != 0 {
		t.Fatal("a freed buffer was not cleared")
	}
	b := p.Allocate(120)
	if &b[0] != &a[0] {
		t.Error("a freed buffer of the same class was not reused")
	}
	if !bytes.Equal(b, make([]byte, 120)) {
		t.Error("a reused buffer is not zero")
	}
	copy(b, "hello")
	b = p.Reallocate(1000, b)
	if len(b) != 1000 || string(b[:5]) != "hello" || !bytes.Equal(b[5:], make([]byte, 995)) {
		t.Errorf("Reallocate: len %d, %q...", len(b), b[:8])
	}
	for i := 5; i < len(b); i++ {
		b[i] = 0xBB
	}
	b = p.Reallocate(600, b) // shrinking within the class keeps the buffer
	if len(b) != 600 || string(b[:5]) != "hello" {
		t.Errorf("Reallocate down: len %d, %q", len(b), b[:5])
	}
	p.Free(b)
	if c := p.Allocate(1024); !bytes.Equal(c, make([]byte, 1024)) {
		t.Error("a buffer shrunk, then freed, came back with old bytes")
	} else {
		p.Free(c)
	}
	p.Free(make([]byte, 100)) // not the pool's: ignored
	if z := p.Allocate(0); len(z) != 0 {
		t.Errorf("Allocate(0): len %d", len(z))
	}

	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				n := 1 + (g*131+i*17)%5000
				buf := p.Allocate(n)
				for k := range buf {
					if buf[k] != 0 {
						t.Errorf("non-zero byte in a new buffer")
						return
					}
					buf[k] = byte(g + 1)
				}
				p.Free(buf)
			}
		}()
	}
	wg.Wait()
}
