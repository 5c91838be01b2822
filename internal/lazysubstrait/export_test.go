package lazysubstrait

// Shared is the shared collection, for the external tests (which import
// iceberg-go's table/substrait: in this package they would make it
// initialize first).
var Shared = shared
