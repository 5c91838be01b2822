// Package initgc holds the garbage collector back while the program's
// packages initialize. iceberg-go's table/substrait parses substrait's
// YAML function catalogues into a package-level variable at init (32 MB,
// half a million allocations), in every cdcetl process whether or not it
// writes a lake table; with the collector at its 4 MB starting goal that
// costs many collections, a third of a one-line conversion's CPU time.
// GOGC=800 during init, not off: with no collection at all the live part
// ends up spread over every span of the 32 MB and the heap stays 7-10 MB
// larger for the whole run. main calls Resume before any work.
//
// It must initialize before iceberg-go's packages: Go initializes packages
// in dependency order and, among those ready, by import path, and this one
// imports only the runtime while substrait-go (github.com/substrait-io/...)
// sorts after github.com/cdcetl/... (TestInitGCFirst checks the order).
package initgc

import "runtime/debug"

// percent is the setting the collector had (GOGC, 100 by default).
var percent = debug.SetGCPercent(800)

// Resume turns the collector back on at the setting it had.
func Resume() { debug.SetGCPercent(percent) }
