// Package simdscan finds the bytes that end a plain run of JSON string
// content -- a quote, a backslash or a byte with the high bit set (UTF-8
// to validate) -- 32 or 64 bytes per step with AVX2 or AVX-512 where the
// CPU has them, and eight bytes per step in portable Go elsewhere. The
// scanners call it for the long strings of CDC messages (descriptions,
// JSON documents held as text), where a byte or word at a time dominated.
package simdscan

import (
	"encoding/binary"
	"math/bits"
)

// Plain returns the length of b's leading run of plain bytes (none of
// '"', '\\' or >= 0x80). It may stop early at a multiple of its block
// size; callers loop or finish the tail themselves. Every implementation
// returns the index of the first special byte whenever that byte lies in
// the blocks it examined.
func Plain(b []byte) int { return plain(b) }

// Impl names the implementation chosen for this CPU ("avx512", "avx2" or
// "go"), for benchmarks and reports.
func Impl() string { return impl }

// plainGo is the portable implementation (and the fast paths' twin in
// tests): eight bytes per step, whole words only.
func plainGo(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		// The lowest flagged byte is exact: hasZero's false positives lie
		// only above a real match.
		if m := hasZero(w^0x2222222222222222) | hasZero(w^0x5c5c5c5c5c5c5c5c) | (w & 0x8080808080808080); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	return i
}

func hasZero(x uint64) uint64 { return (x - 0x0101010101010101) & ^x & 0x8080808080808080 }
