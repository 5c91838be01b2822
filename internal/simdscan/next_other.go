//go:build !amd64

package simdscan

var (
	chosen nextFunc = nextGo
	impl            = "go"
)

func supported() map[string]nextFunc {
	return map[string]nextFunc{"go": nextGo}
}
