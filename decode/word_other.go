//go:build !amd64 && !arm64

package decode

// word is load64 where unaligned loads may not be allowed; callers use it
// only to compare with words read by word too, so the order does not
// matter.
func word(b []byte, i int) uint64 { return load64(b, i) }
