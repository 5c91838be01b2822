package writer

// room returns s with room for n more elements, doubling its capacity
// when it must grow. Grown by append, by a quarter at a time once large,
// a leaf's page and index buffers allocated about five times their final
// size, all of it memory the process touched for the first time (page
// faults were a fifth of a one-worker conversion's time on the benchmark
// machines).
func room[T any](s []T, n int) []T {
	if n <= cap(s)-len(s) {
		return s
	}
	return regrow(s, n)
}

//go:noinline
func regrow[T any](s []T, n int) []T {
	return regrowCap(s, max(2*cap(s), len(s)+n, 256))
}

// regrowCap returns s copied into new room of capacity c (>= len(s)).
func regrowCap[T any](s []T, c int) []T {
	ns := make([]T, len(s), c)
	copy(ns, s)
	return ns
}
