//go:build !linux

package hugeheap

func enabled() bool     { return false }
func reserve(n int) int { return 0 }
func advise([]byte) int { return 0 }

func reserveAfter([]byte, int) int { return 0 }
