// Package lazysubstrait puts off loading substrait-go's default function
// catalogue until a lake table is written or read.
//
// iceberg-go's table/substrait takes substrait-go's default extension
// collection into a package variable while the program initializes. That
// parses every YAML file of substrait's function catalogue: about 510
// million instructions, 32 MB in half a million allocations and some 8,000
// page faults (0.1-0.15 s) in every cdcetl process, also those that never
// touch a lake table (a Parquet conversion of 256 MiB takes about 1 s).
// iceberg-go only needs the functions to turn row filters into Arrow
// compute expressions.
//
// This package hands table/substrait's variable an empty collection
// instead, and fills that same collection with the default catalogue when
// Ensure is called. The lake code calls Ensure before it scans a table
// with a row filter (an upsert load's merge); a load that only appends
// never needs it, and never pays for it.
// Any other caller of substrait-go's GetDefaultCollection (arrow-go's
// compute/exprs) gets the same collection, loaded first.
//
// It replaces substrait-go's unexported getDefaultCollectionOnce through
// go:linkname, so it depends on substrait-go v8's internals (v8.1.1 in
// go.mod). If that variable goes away the build fails; if its meaning
// changes, TestDeferred fails. The replacement must be in place before
// table/substrait initializes: Go initializes this package first because
// it imports only extensions, which table/substrait imports through
// substrait-go's expr package, and github.com/cdcetl/... sorts before
// github.com/substrait-io/... (the test checks that too).
package lazysubstrait

import (
	"fmt"
	"path"
	"runtime"
	"strings"
	"sync"
	_ "unsafe" // go:linkname

	"github.com/substrait-io/substrait"
	"github.com/substrait-io/substrait-go/v8/extensions"
)

//go:linkname defaultCollection github.com/substrait-io/substrait-go/v8/extensions.getDefaultCollectionOnce
var defaultCollection func() (*extensions.Collection, error)

// deferredFor is the package whose initialization gets the collection
// unloaded.
const deferredFor = "github.com/apache/iceberg-go/table/substrait"

var (
	// shared is the collection every caller gets: table/substrait keeps
	// it during init, Ensure fills it.
	shared = newCollection()
	// deferred records that table/substrait took shared unloaded.
	deferred bool
	load     = sync.OnceValue(fill)
)

func init() {
	defaultCollection = func() (*extensions.Collection, error) {
		if calledFromInitOf(deferredFor) {
			deferred = true
			return shared, nil
		}
		return shared, load()
	}
}

// Ensure loads the default catalogue into the shared collection (once;
// later calls return at once). It must run before iceberg-go builds a
// row filter, and before any concurrent use.
func Ensure() error { return load() }

// Loaded reports whether the default catalogue is in the shared
// collection (Ensure ran, or a caller other than table/substrait's
// initialization asked for the collection).
func Loaded() bool {
	return shared.URNLoaded("extension:io.substrait:functions_comparison")
}

// Deferred reports whether table/substrait took the collection unloaded
// at init (false: the hook was not in place in time).
func Deferred() bool { return deferred }

// newCollection returns an empty collection whose maps exist:
// table/substrait's init asks it whether a URI is loaded, which needs
// them. Load makes them before it reads anything, and fails on the empty
// input without adding anything.
func newCollection() *extensions.Collection {
	c := new(extensions.Collection)
	_ = c.Load("", strings.NewReader(""))
	return c
}

// fill loads every default extension file into shared, as substrait-go's
// own default collection loads them (its unsupported "unknown.yaml" left
// out), skipping any URI already there.
func fill() error {
	fsys := substrait.GetSubstraitExtensionsFS()
	entries, err := fsys.ReadDir("extensions")
	if err != nil {
		return fmt.Errorf("substrait extensions: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		uri := extensions.SubstraitDefaultURIPrefix + name
		if name == "unknown.yaml" || shared.URILoaded(uri) {
			continue
		}
		f, err := fsys.Open(path.Join("extensions", name))
		if err != nil {
			return fmt.Errorf("substrait extensions: %w", err)
		}
		err = shared.Load(uri, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("substrait extension %s: %w", name, err)
		}
	}
	return nil
}

// calledFromInitOf reports whether the call stack is pkg's initialization
// (its init functions or package variables).
func calledFromInitOf(pkg string) bool {
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		f, more := frames.Next()
		if strings.HasPrefix(f.Function, pkg+".init") {
			return true
		}
		if !more {
			return false
		}
	}
}
