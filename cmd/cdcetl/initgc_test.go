package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestInitGCFirst: internal/initgc initializes before iceberg-go's
// table/substrait (whose init it is there for), as Go's init order by
// import path promises; checked on this test binary, which links both in
// the same order as the program.
func TestInitGCFirst(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	at := func(pkg string) int {
		i := strings.Index(string(out), "init "+pkg+" @")
		if i < 0 {
			t.Fatalf("no init of %s in the trace:\n%.2000s", pkg, out)
		}
		return i
	}
	if gc, sub := at("github.com/cdcetl/cdcetl/internal/initgc"), at("github.com/apache/iceberg-go/table/substrait"); gc > sub {
		t.Errorf("initgc initializes after iceberg-go's table/substrait: the collector runs at its default through that init")
	}
}
