package main

import (
	"bytes"
	"io"
	"testing"

	"github.com/cdcetl/cdcetl/internal/testutil"
)

// TestCLIReference: docs/cli.md is what 'cdcetl help flags --markdown'
// makes from the flag definitions (-update writes it again), so a flag
// added or changed without it fails here.
func TestCLIReference(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"help", "flags", "--markdown"}, &out, io.Discard); code != 0 {
		t.Fatalf("exit %d", code)
	}
	testutil.Golden(t, "../../docs/cli.md", out.Bytes())
}
