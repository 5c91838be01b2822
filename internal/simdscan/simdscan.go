// Package simdscan finds the special bytes of JSON string content -- a
// quote, a backslash or a byte with the high bit set (UTF-8 to validate)
// -- 64 bytes per step with AVX2 or AVX-512 where the CPU has them, and in
// portable Go elsewhere. The scanners call it for the long strings of CDC
// messages (descriptions, JSON documents held as text), where a byte or
// word at a time dominated.
package simdscan

import (
	"encoding/binary"
	"slices"
)

// Next finds the first 64-byte block of b holding a special byte and
// returns its offset and the mask of its special bytes: bit k for
// b[off+k], every one of them, not only the first, so a scanner handles
// the escapes and UTF-8 sequences of a block with one call. Plain blocks
// before it are skipped in the same call. When no whole block of b holds
// one it returns the length of b's whole blocks and a zero mask.
func Next(b []byte) (off int, mask uint64) { return chosen(b) }

// Impl names the implementation chosen for this CPU ("avx512", "avx2" or
// "go"), for benchmarks and reports.
func Impl() string { return impl }

// Implementations names the implementations this CPU runs, the chosen one
// among them, for tests that run a caller with each (Use).
func Implementations() []string {
	var names []string
	for name := range supported() {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Use makes the named implementation the one Next calls, for a test of a
// caller, and returns a function that restores the chosen one; false for
// an implementation this CPU does not run. Not safe while Next runs
// elsewhere.
func Use(name string) (restore func(), ok bool) {
	f, ok := supported()[name]
	if !ok {
		return func() {}, false
	}
	saved := chosen
	chosen = f
	return func() { chosen = saved }, true
}

// nextFunc is one implementation of Next.
type nextFunc func([]byte) (int, uint64)

// nextGo is Next in portable Go (and the vector versions' twin in tests).
func nextGo(b []byte) (int, uint64) {
	i := 0
	for ; len(b)-i >= 64; i += 64 {
		if m := specialsGo(b[i:]); m != 0 {
			return i, m
		}
	}
	return i, 0
}

// specialsGo is the mask of the special bytes of b[0:64]: eight words,
// each byte's flag exact.
func specialsGo(b []byte) uint64 {
	var m uint64
	for i := 0; i < 64; i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		f := nonZero(w^0x2222222222222222) & nonZero(w^0x5c5c5c5c5c5c5c5c) // 0x80 where neither quote nor backslash
		f = (^f | w) & 0x8080808080808080
		// Gather the eight high bits into one byte.
		m |= ((f >> 7) * 0x0102040810204080 >> 56) << i
	}
	return m
}

// nonZero sets the high bit of each non-zero byte of x, and only those:
// ((x & 0x7f) + 0x7f) carries into the high bit unless the low seven bits
// are zero, and x's own high bit covers the rest.
func nonZero(x uint64) uint64 {
	const low7 = 0x7f7f7f7f7f7f7f7f
	return ((x & low7) + low7) | x
}
