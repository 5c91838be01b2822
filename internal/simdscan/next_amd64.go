package simdscan

import "golang.org/x/sys/cpu"

//go:noescape
func nextAVX2(b []byte) (int, uint64)

//go:noescape
func nextAVX512(b []byte) (int, uint64)

var (
	hasAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW
	hasAVX2   = cpu.X86.HasAVX2
)

var chosen, impl = choose()

// choose picks the widest implementation this CPU runs.
func choose() (nextFunc, string) {
	switch {
	case hasAVX512:
		return nextAVX512, "avx512"
	case hasAVX2:
		return nextAVX2, "avx2"
	}
	return nextGo, "go"
}

// supported lists every implementation this CPU runs, for the twin tests.
func supported() map[string]nextFunc {
	m := map[string]nextFunc{"go": nextGo}
	if hasAVX2 {
		m["avx2"] = nextAVX2
	}
	if hasAVX512 {
		m["avx512"] = nextAVX512
	}
	return m
}
