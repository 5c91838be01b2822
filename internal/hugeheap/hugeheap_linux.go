package hugeheap

// Only the standard library's syscall, not golang.org/x/sys/unix: the
// packages sorted before x/sys/unix initialize first, and early (which
// imports this) waited for them: 21 ms into the start instead of 9.
import (
	"bytes"
	"syscall"
	"unsafe"
)

const hugePage = 2 << 20

// enabled is true when transparent huge pages are given on request only
// ("madvise"): with "always" the heap has them already, with "never" the
// advice does nothing.
func enabled() bool {
	fd, err := syscall.Open("/sys/kernel/mm/transparent_hugepage/enabled", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer syscall.Close(fd)
	var buf [128]byte // "always [madvise] never\n"
	n, err := syscall.Read(fd, buf[:])
	return err == nil && n > 0 && bytes.Contains(buf[:n], []byte("[madvise]"))
}

func reserve(n int) int {
	if n < 2*hugePage || !enabled() {
		return 0
	}
	return advise(make([]byte, n))
}

func reserveAfter(prev []byte, n int) int {
	if n < 2*hugePage || !enabled() {
		return 0
	}
	r := make([]byte, n)
	a0, a1 := span(prev)
	b0, b1 := span(r)
	if len(prev) == 0 || b0 < a1 || b0-a1 > hugePage {
		// Not laid out one after the other: each on its own.
		return adviseRange(a0, a1) + adviseRange(b0, b1)
	}
	// The huge page holding the end of prev and the start of r is covered
	// whole by neither alone.
	return adviseRange(a0, b1)
}

// span is the address range of b's bytes.
func span(b []byte) (uintptr, uintptr) {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p, p + uintptr(len(b))
}

func advise(b []byte) int {
	if len(b) < hugePage || !enabled() {
		return 0
	}
	return adviseRange(span(b))
}

// adviseRange advises the huge pages within [p, end), all of it heap
// memory the program holds.
func adviseRange(p, end uintptr) int {
	start := (p + hugePage - 1) &^ (hugePage - 1)
	end &^= hugePage - 1
	if end <= start {
		return 0
	}
	if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, start, end-start, syscall.MADV_HUGEPAGE); e != 0 {
		return 0
	}
	return int(end - start)
}
