//go:build !amd64

package simdscan

var chosen, impl = impls{nextGo}, "go"

func supported() map[string]impls {
	return map[string]impls{"go": {nextGo}}
}
