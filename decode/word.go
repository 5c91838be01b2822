package decode

import (
	"runtime"
	"unsafe"
)

// unalignedLoads: the architectures where an unaligned eight-byte load is
// one instruction (a constant: word compiles to one branch only).
const unalignedLoads = runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64"

// word returns the eight bytes of b at i as one word in the machine's
// byte order: one load on amd64 and arm64, cheaper in the inliner's budget
// than load64 (whose byte-order conversion the compiler also makes one
// load); load64 elsewhere. Callers compare it only with words word read,
// so the order does not matter. The caller has checked 0 <= i and
// i+8 <= len(b).
func word(b []byte, i int) uint64 {
	if unalignedLoads {
		return *(*uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), i))
	}
	return load64(b, i)
}
