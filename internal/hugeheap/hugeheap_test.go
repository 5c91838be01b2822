package hugeheap

import (
	"bufio"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestReserveAdvises checks, in /proc/self/smaps, that the range Reserve
// advised is a mapping flagged for huge pages ("hg"), and that the heap
// hands it out: a fresh allocation lands in it.
func TestReserveAdvises(t *testing.T) {
	if runtime.GOOS != "linux" || !Enabled() {
		t.Skip("transparent huge pages are not given on request here")
	}
	n := Reserve(64 << 20)
	if n < 32<<20 {
		t.Fatalf("Reserve(64 MiB) advised %d bytes", n)
	}
	runtime.GC() // the reservation is garbage: its pages go back to the heap
	// Held, each allocation takes new room: free room elsewhere in the
	// heap (a test process's history) is used up before the advised range.
	var held [][]byte
	for range 32 {
		b := make([]byte, 4<<20)
		b[0] = 1
		held = append(held, b)
		if advised(t, uintptr(unsafe.Pointer(&b[0]))) {
			return
		}
	}
	t.Fatalf("none of %d allocations after Reserve landed in memory advised for huge pages", len(held))
}

// TestReserveAfterJunction: the huge page holding a ballast's end and the
// reservation's start is advised (each alone covers it only in part).
func TestReserveAfterJunction(t *testing.T) {
	if runtime.GOOS != "linux" || !Enabled() {
		t.Skip("transparent huge pages are not given on request here")
	}
	prev := make([]byte, 5<<20+512<<10) // ends inside a huge page
	if n := ReserveAfter(prev, 64<<20); n < 32<<20 {
		t.Fatalf("ReserveAfter advised %d bytes", n)
	}
	end := uintptr(unsafe.Pointer(&prev[len(prev)-1]))
	if end%(2<<20) == 2<<20-1 {
		t.Skip("prev ends on a huge-page boundary")
	}
	if !advised(t, end) {
		t.Fatal("the huge page holding prev's end is not advised")
	}
}

func TestReserveSmall(t *testing.T) {
	if got := Reserve(1 << 20); got != 0 {
		t.Fatalf("Reserve(1 MiB) = %d, want 0 (smaller than two huge pages)", got)
	}
}

// advised reports whether the mapping holding addr has the "hg" flag.
func advised(t *testing.T, addr uintptr) bool {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		// A mapping's header: "c000000000-c004000000 rw-p 00000000 00:00 0".
		if lo, hi, ok := strings.Cut(fields[0], "-"); ok && !strings.HasSuffix(fields[0], ":") {
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && uint64(addr) >= a && uint64(addr) < b
			continue
		}
		if in && fields[0] == "VmFlags:" {
			return slices.Contains(fields[1:], "hg")
		}
	}
	return false
}
