package outdir

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestCleanTempRacesOthers: two runs sweeping one directory at once (the
// shards of a run starting together), while the files' owners remove
// them too, is no error: a file gone already is what the sweep wanted.
func TestCleanTempRacesOthers(t *testing.T) {
	dir := t.TempDir()
	for round := 0; round < 20; round++ {
		var names []string
		for i := 0; i < 300; i++ {
			p := filepath.Join(dir, fmt.Sprintf(".cdcetl-case-%d-%d.tmp", round, i))
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			names = append(names, p)
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for w := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[w] = CleanTemp(dir)
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, p := range names {
				os.Remove(p)
			}
		}()
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
}
