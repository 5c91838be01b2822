package main

import (
	"bytes"
	"io"
	"strings"
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

// The reference is the same on every machine: the default of --workers
// is the machine's core count, which the reference names instead of
// giving this machine's (docs/cli.md failed under taskset or on one core).
func TestCLIReferenceMachineFree(t *testing.T) {
	for _, line := range strings.Split(cliReference(), "\n") {
		if strings.HasPrefix(line, "| `--workers int` |") && !strings.HasSuffix(line, "| the number of cores |") {
			t.Fatalf("the workers row gives this machine's default: %s", line)
		}
	}
}
