//go:build race

package decode

// raceBuild: the tests run under the race detector, about fifteen times
// slower; long randomized tests take fewer steps.
const raceBuild = true
