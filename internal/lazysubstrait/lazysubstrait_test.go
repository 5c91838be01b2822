package lazysubstrait_test

import (
	"testing"
	_ "unsafe" // go:linkname

	"github.com/apache/iceberg-go"
	isub "github.com/apache/iceberg-go/table/substrait"
	"github.com/substrait-io/substrait-go/v8/extensions"

	"github.com/cdcetl/cdcetl/internal/lazysubstrait"
)

// comparison is a default catalogue file's URN: loaded by Ensure, not at
// init.
const comparison = "extension:io.substrait:functions_comparison"

// The tests are an external package: importing iceberg-go's table/substrait
// from the package itself would make it initialize first.

// TestDeferred: iceberg-go's table/substrait (imported by this test, as by
// the lake package) took the collection at init without the default
// catalogue; Ensure fills it in place, so row filters that need both the
// default functions (equal, is_null, and) and iceberg-go's own (is_in)
// convert; every caller of GetDefaultCollection gets that collection.
// Without the hook (or with it installed too late) Deferred is false;
// without the fill the conversion fails.
func TestDeferred(t *testing.T) {
	if !lazysubstrait.Deferred() {
		t.Fatal("table/substrait loaded the default collection at init: the hook was not installed before it initialized")
	}
	if lazysubstrait.Shared.URNLoaded(comparison) {
		t.Fatal("the default catalogue was loaded before Ensure")
	}
	if !lazysubstrait.Shared.URNLoaded("extension:apache.iceberg:functions_set") {
		t.Fatal("table/substrait's own functions are not in the shared collection")
	}
	if err := lazysubstrait.Ensure(); err != nil {
		t.Fatal(err)
	}
	if !lazysubstrait.Shared.URNLoaded(comparison) {
		t.Fatal("Ensure did not load the default catalogue")
	}
	if c, err := extensions.GetDefaultCollection(); err != nil || c != lazysubstrait.Shared {
		t.Fatalf("GetDefaultCollection = %p, %v; want the shared collection %p", c, err, lazysubstrait.Shared)
	}
	schema := iceberg.NewSchema(1,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String})
	filter := iceberg.NewAnd(
		iceberg.IsIn(iceberg.Reference("id"), int64(1), 2, 3),
		iceberg.NewOr(iceberg.EqualTo(iceberg.Reference("name"), "x"), iceberg.IsNull(iceberg.Reference("name"))))
	bound, err := iceberg.BindExpr(schema, filter, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, e, err := isub.ConvertExpr(schema, bound, true); err != nil || e == nil {
		t.Fatalf("ConvertExpr: %v", err)
	}
}

// loadDefaultCollection is substrait-go's own loader of the default
// catalogue (what getDefaultCollectionOnce runs once).
//
//go:linkname loadDefaultCollection github.com/substrait-io/substrait-go/v8/extensions.loadDefaultCollection
func loadDefaultCollection() (*extensions.Collection, error)

// TestSameAsDefault: the filled collection holds every function
// substrait-go's own loader gives.
func TestSameAsDefault(t *testing.T) {
	if err := lazysubstrait.Ensure(); err != nil {
		t.Fatal(err)
	}
	want, err := loadDefaultCollection()
	if err != nil {
		t.Fatal(err)
	}
	names := func(c *extensions.Collection) map[extensions.ID]bool {
		m := map[extensions.ID]bool{}
		for _, f := range c.GetAllScalarFunctions() {
			m[f.ID()] = true
		}
		for _, f := range c.GetAllAggregateFunctions() {
			m[f.ID()] = true
		}
		for _, f := range c.GetAllWindowFunctions() {
			m[f.ID()] = true
		}
		return m
	}
	got, exp := names(lazysubstrait.Shared), names(want)
	if len(exp) < 100 {
		t.Fatalf("only %d functions in the reference collection", len(exp))
	}
	for id := range exp {
		if !got[id] {
			t.Errorf("function %v missing after Ensure", id)
		}
	}
}
