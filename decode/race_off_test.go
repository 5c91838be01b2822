//go:build !race

package decode

const raceBuild = false
