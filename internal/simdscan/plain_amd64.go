package simdscan

import "golang.org/x/sys/cpu"

//go:noescape
func plainAVX2(b []byte) int

//go:noescape
func plainAVX512(b []byte) int

var plain, impl = choose()

func choose() (func([]byte) int, string) {
	switch {
	case cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW:
		return plainAVX512, "avx512"
	case cpu.X86.HasAVX2:
		return plainAVX2, "avx2"
	}
	return plainGo, "go"
}

// supported lists every implementation this CPU runs, for the twin tests.
func supported() map[string]func([]byte) int {
	m := map[string]func([]byte) int{"go": plainGo}
	if cpu.X86.HasAVX2 {
		m["avx2"] = plainAVX2
	}
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW {
		m["avx512"] = plainAVX512
	}
	return m
}
