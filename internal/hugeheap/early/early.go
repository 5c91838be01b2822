// Package early advises the heap for huge pages (package hugeheap) as the
// program starts, before the packages initialized after it allocate:
// imported for that alone by the command, never by the library. The Go
// runtime initializes a package as soon as its dependencies are and it is
// the first such by import path, so this runs before the dependencies
// whose initialization allocates most (iceberg-go, the cloud SDKs).
// CDCETL_HUGEPAGES=0 turns it off.
package early

import (
	"os"
	"runtime"

	"github.com/cdcetl/cdcetl/internal/hugeheap"
)

// Bytes is the heap advised: the command's soft memory limit, which the
// heap stays under.
const Bytes = 192 << 20

func init() {
	if os.Getenv("CDCETL_HUGEPAGES") == "0" {
		return
	}
	if hugeheap.Reserve(Bytes) > 0 {
		// The reservation is garbage now: collect it at once, so that
		// what is allocated from here on lands in the advised range.
		runtime.GC()
	}
}
