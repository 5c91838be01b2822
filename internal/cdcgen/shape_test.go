package cdcgen

import (
	"strings"
	"testing"
)

// TestNewShapeFormats: a format name the generators do not know is an
// error, not Debezium messages under that name (a benchmark asked for
// "canal" got Debezium once).
func TestNewShapeFormats(t *testing.T) {
	for _, f := range Formats {
		if _, err := NewShape(f, "products", 1); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, f := range []string{"canal", "debezium", "json", ""} {
		if _, err := NewShape(f, "products", 1); err == nil || !strings.Contains(err.Error(), "unknown format") {
			t.Errorf("NewShape(%q) = %v, want an unknown-format error", f, err)
		}
	}
}
