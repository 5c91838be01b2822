package simdscan

import "golang.org/x/sys/cpu"

//go:noescape
func plainAVX2(b []byte) int

//go:noescape
func plainAVX512(b []byte) int

var (
	hasAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW
	hasAVX2   = cpu.X86.HasAVX2
)

var plain, impl = choose()

// choose picks the widest implementation this CPU runs.
func choose() (func([]byte) int, string) {
	switch {
	case hasAVX512:
		return plainAVX512, "avx512"
	case hasAVX2:
		return plainAVX2, "avx2"
	}
	return plainGo, "go"
}

// supported lists every implementation this CPU runs, for the twin tests.
func supported() map[string]func([]byte) int {
	m := map[string]func([]byte) int{"go": plainGo}
	if hasAVX2 {
		m["avx2"] = plainAVX2
	}
	if hasAVX512 {
		m["avx512"] = plainAVX512
	}
	return m
}
