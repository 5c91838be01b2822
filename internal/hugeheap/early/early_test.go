//go:build linux

package early

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestBallastUntouched: the ballast holds the heap goal up without memory
// behind it. Made from freed memory the allocator would clear it, and
// every one of its pages would be resident.
func TestBallastUntouched(t *testing.T) {
	if ballast == nil {
		t.Skip("the ballast was let go")
	}
	const page = 4096
	p := uintptr(unsafe.Pointer(unsafe.SliceData(ballast)))
	start := (p + page - 1) &^ (page - 1)
	end := (p + uintptr(len(ballast))) &^ (page - 1)
	vec := make([]byte, (end-start)/page)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, start, end-start, uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Skip(e)
	}
	resident := 0
	for _, v := range vec {
		resident += int(v & 1)
	}
	// A page or two may share a huge page with something else the heap
	// touched; a cleared ballast has all 6,144.
	if resident > len(vec)/8 {
		t.Fatalf("%d of the ballast's %d pages are resident: it was written", resident, len(vec))
	}
}
