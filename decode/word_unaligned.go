//go:build amd64 || arm64

package decode

import "unsafe"

// word returns the eight bytes of b at i as one word in the machine's
// byte order, by one unaligned load. The caller has checked 0 <= i and
// i+8 <= len(b). Cheaper to inline than load64 (a byte-order conversion
// the compiler also makes one load, but that costs the inliner's budget).
func word(b []byte, i int) uint64 {
	return *(*uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), i))
}
