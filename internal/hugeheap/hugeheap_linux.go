package hugeheap

import (
	"bytes"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

const hugePage = 2 << 20

// enabled is true when transparent huge pages are given on request only
// ("madvise"): with "always" the heap has them already, with "never" the
// advice does nothing.
func enabled() bool {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	return err == nil && bytes.Contains(b, []byte("[madvise]"))
}

func reserve(n int) int {
	if n < 2*hugePage || !enabled() {
		return 0
	}
	return advise(make([]byte, n))
}

func advise(b []byte) int {
	if len(b) < hugePage || !enabled() {
		return 0
	}
	base := unsafe.Pointer(unsafe.SliceData(b))
	p := uintptr(base)
	start := (p + hugePage - 1) &^ (hugePage - 1)
	end := (p + uintptr(len(b))) &^ (hugePage - 1)
	if end <= start {
		return 0
	}
	if err := unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(base, start-p)), end-start), unix.MADV_HUGEPAGE); err != nil {
		return 0
	}
	return int(end - start)
}
