// Package early advises the heap for huge pages (package hugeheap) as the
// program starts, before the packages initialized after it allocate:
// imported for that alone by the command, never by the library. The Go
// runtime initializes a package as soon as its dependencies are and it is
// the first such by import path, so this runs before the dependencies
// whose initialization allocates most (iceberg-go, the cloud SDKs).
// CDCETL_HUGEPAGES=0 turns it off.
//
// It also keeps the garbage collector from running while the packages
// after it initialize (some 16 MB of descriptors and schemas, which kept
// collecting a heap of 4 MB, with pauses of milliseconds): a ballast, an
// allocation never touched (no memory behind it), raises the heap goal
// until the command's own init calls Resume. (runtime/debug's
// SetGCPercent would do it, but importing runtime/debug would make this
// package initialize later.)
package early

import (
	"os"
	"runtime"

	"github.com/cdcetl/cdcetl/internal/hugeheap"
)

// Bytes is the heap advised: the command's soft memory limit, which the
// heap stays under.
const Bytes = 192 << 20

// ballast is live, and never touched, while the program initializes.
var ballast []byte

func init() {
	// The ballast comes first, from memory the heap has never used: a
	// large allocation there is known to be zero, so nothing writes it.
	// Made after the reservation below, it would reuse the reservation's
	// freed pages, which the allocator clears: 24 MiB written for nothing
	// (15% of an empty run's start).
	ballast = make([]byte, 24<<20)
	// The ballast's range is handed out again once Resume lets go of it:
	// advised with the reservation, so it is no island of small pages.
	if os.Getenv("CDCETL_HUGEPAGES") != "0" && hugeheap.ReserveAfter(ballast, Bytes) > 0 {
		// The reservation is garbage now: collect it at once, so that
		// what is allocated from here on lands in the advised range.
		runtime.GC()
	}
}

// Resume lets go of the ballast: a main package's init calls it, after
// every package it imports has initialized.
func Resume() { ballast = nil }
