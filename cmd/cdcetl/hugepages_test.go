package main

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// TestHugePagesFirst: the package that advises the heap for huge pages is
// initialized before the dependencies that allocate most while starting
// (iceberg-go's Avro schemas, the cloud SDKs' protobuf descriptors), so
// their heap is advised too. Go initializes packages in dependency order,
// the first by import path among those ready; an import that makes early
// depend on something heavy would break this.
func TestHugePagesFirst(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	order := map[string]int{}
	for i, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "init" {
			if _, ok := order[f[1]]; !ok {
				order[f[1]] = i
			}
		}
	}
	early, ok := order["github.com/cdcetl/cdcetl/internal/hugeheap/early"]
	if !ok {
		t.Fatalf("no init of internal/hugeheap/early in the trace:\n%s", out)
	}
	for _, heavy := range []string{"github.com/apache/iceberg-go/internal", "github.com/apache/iceberg-go", "cloud.google.com/go/storage", "github.com/aws/aws-sdk-go-v2/service/s3"} {
		at, ok := order[heavy]
		if !ok {
			continue // left out of this build by a tag, or no init work
		}
		if at < early {
			t.Errorf("%s is initialized before internal/hugeheap/early: its heap is not advised", heavy)
		}
	}
}

// TestBallastReleased: by the time the command runs, hugeheap/early's
// ballast (which keeps collections off while packages initialize) is
// garbage, so the heap is held to what is live.
func TestBallastReleased(t *testing.T) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if ms.HeapAlloc >= 64<<20 {
		t.Fatalf("%d MiB live after a collection: the ballast is still held", ms.HeapAlloc>>20)
	}
}
