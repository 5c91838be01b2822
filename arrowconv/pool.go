package arrowconv

import (
	"math/bits"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Pool is an Arrow allocator that keeps freed buffers for reuse, by
// power-of-two size class. Every record batch allocates the same buffers
// as the one before it, so after the first few batches nothing is asked
// of the Go heap: no fresh memory to fault in and zero, no garbage.
// Buffers are cleared when freed, so every buffer handed out is zero, as
// Go's allocator's are, and a use after Release (a bug the garbage
// collector would hide) reads zeros, which tests notice, rather than
// another batch's values. At most poolDepth buffers of a class are kept;
// the rest go to the garbage collector.
type Pool struct {
	mu    sync.Mutex
	free  [48][][]byte
	alloc memory.Allocator
}

const poolDepth = 64

// NewPool returns an empty pool.
func NewPool() *Pool { return &Pool{alloc: memory.NewGoAllocator()} }

func sizeClass(n int) int { return bits.Len(uint(n - 1)) }

// Allocate returns a cleared buffer of size bytes.
func (p *Pool) Allocate(size int) []byte {
	if size <= 0 {
		return p.alloc.Allocate(size)
	}
	c := sizeClass(size)
	p.mu.Lock()
	if k := len(p.free[c]); k > 0 {
		b := p.free[c][k-1]
		p.free[c] = p.free[c][:k-1]
		p.mu.Unlock()
		return b[:size] // cleared by Free
	}
	p.mu.Unlock()
	return p.alloc.Allocate(1 << c)[:size]
}

// Reallocate grows or shrinks b to size bytes, keeping its contents.
func (p *Pool) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) && size > 0 && sizeClass(size) == sizeClass(cap(b)) {
		if old := len(b); size < old {
			clear(b[size:old]) // past len a buffer stays zero: Free clears only len
		}
		return b[:size]
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

// Free returns b to the pool.
func (p *Pool) Free(b []byte) {
	c := cap(b)
	if c == 0 || c&(c-1) != 0 { // not one of ours
		return
	}
	cl := sizeClass(c)
	p.mu.Lock()
	keep := len(p.free[cl]) < poolDepth
	p.mu.Unlock()
	if !keep {
		return
	}
	clear(b) // beyond len(b) the buffer is still zero: never handed out
	p.mu.Lock()
	if len(p.free[cl]) < poolDepth {
		p.free[cl] = append(p.free[cl], b[:c])
	}
	p.mu.Unlock()
}
