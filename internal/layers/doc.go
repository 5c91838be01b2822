// Package layers holds a test of the code's shape: inside a package,
// files are layered, so that no two files use each other's names (a file
// that uses another's names is above it). It has no code of its own.
package layers
