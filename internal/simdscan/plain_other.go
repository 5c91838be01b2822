//go:build !amd64

package simdscan

var plain, impl = plainGo, "go"

func supported() map[string]func([]byte) int { return map[string]func([]byte) int{"go": plainGo} }
