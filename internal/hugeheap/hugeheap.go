// Package hugeheap asks the kernel to back the Go heap with transparent
// huge pages where the system leaves that to each program (the common
// "madvise" setting).
//
// Why: a conversion touches tens of MiB of fresh heap once (the row group
// being buffered, the batches in flight, the chunks read). With 4 KiB
// pages that is one page fault per 4 KiB, and on virtual machines a fault
// can cost 10 µs or more: on the benchmark VM a third of a 128 MiB
// conversion's time. With 2 MiB pages the faults are 512 times fewer.
//
// The Go runtime no longer advises huge pages for the heap itself (it
// did, and stopped, over memory bloat in long-running servers), and the
// advice is per mapping, made when the heap grows. So Reserve grows the
// heap once by the expected working set, advises that range, and leaves
// it to the allocator, which fills the lowest free addresses first.
package hugeheap

// Enabled reports whether Reserve does anything on this system.
func Enabled() bool { return enabled() }

// Reserve grows the heap's mapping by about n bytes advised for huge
// pages, without touching them (the allocation is fresh memory, known to
// be zero). It returns the bytes advised (0 when the system has no
// transparent huge pages or always uses them).
func Reserve(n int) int { return reserve(n) }

// ReserveAfter is Reserve for memory allocated just after prev (a
// ballast): when the heap laid the two out one after the other, the range
// advised runs from prev's start to the reservation's end, so the huge
// page they share is advised too (neither covers it whole alone).
func ReserveAfter(prev []byte, n int) int { return reserveAfter(prev, n) }

// Advise asks for huge pages for the 2 MiB pages b covers whole, without
// touching them, and returns the bytes advised. For memory the program
// allocates before Reserve and lets go of later (a ballast): the heap
// hands its range out again after it is freed.
func Advise(b []byte) int { return advise(b) }
