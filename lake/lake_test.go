package lake

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/uptrace/bun/driver/sqliteshim"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// TestOpenConcurrently: processes (shards, or a watcher and a conversion)
// that open one new SQLite catalog at the same moment, one of them then
// committing in a loop, all open it: the file is created, turned to WAL
// and given its tables by whichever comes first, and the others wait (or
// try again) instead of failing with SQLITE_BUSY. (TestShardsEqualOneRun
// failed so once in eight runs here; this test did not fail without the
// retry in 60 rounds: it guards the contract, it does not reproduce that.)
func TestOpenConcurrently(t *testing.T) {
	if dir := os.Getenv("CDCETL_TEST_OPEN_CATALOG"); dir != "" {
		// All at once: the processes start over some 100 ms.
		at, _ := strconv.ParseInt(os.Getenv("CDCETL_TEST_OPEN_AT"), 10, 64)
		time.Sleep(time.Until(time.Unix(0, at)))
		l, err := Open(context.Background(), dir, "")
		if err == nil && os.Getenv("CDCETL_TEST_OPEN_WRITE") != "" {
			// Commits in a loop while the others open.
			var db *sql.DB
			db, err = sql.Open(sqliteshim.ShimName, sqliteDSN(filepath.Join(dir, CatalogFile)))
			for end := time.Now().Add(time.Second); err == nil && time.Now().Before(end); {
				_, err = db.Exec("INSERT INTO iceberg_namespace_properties (catalog_name, namespace, property_key, property_value) VALUES ('x', 'n', ?, 'v')", time.Now().String())
			}
		}
		if err == nil {
			err = l.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if testing.Short() {
		t.Skip("runs processes")
	}
	for round := range 4 {
		dir := filepath.Join(t.TempDir(), "wh")
		at := time.Now().Add(500 * time.Millisecond).UnixNano()
		var wg sync.WaitGroup
		errs := make(chan error, 6)
		for i := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command(os.Args[0], "-test.run=^TestOpenConcurrently$")
				cmd.Env = append(os.Environ(), "CDCETL_TEST_OPEN_CATALOG="+dir, "CDCETL_TEST_OPEN_AT="+strconv.FormatInt(at, 10))
				if i == 0 {
					cmd.Env = append(cmd.Env, "CDCETL_TEST_OPEN_WRITE=1")
				}
				if out, err := cmd.CombinedOutput(); err != nil {
					errs <- fmt.Errorf("%w: %s", err, out)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("round %d: %v", round, err)
		}
	}
}

// TestIsBusy: SQLite's SQLITE_BUSY, as the driver returns it and wrapped,
// is told from other errors (open retries on it).
func TestIsBusy(t *testing.T) {
	p := filepath.Join(t.TempDir(), "busy.db")
	a, err := sql.Open(sqliteshim.ShimName, "file:"+p)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := sql.Open(sqliteshim.ShimName, "file:"+p+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := a.Exec("CREATE TABLE t (x)"); err != nil {
		t.Fatal(err)
	}
	tx, err := a.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec("INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	_, busy := b.Exec("INSERT INTO t VALUES (2)")
	if !isBusy(busy) || !isBusy(fmt.Errorf("catalog: %w", busy)) {
		t.Errorf("isBusy(%v) false", busy)
	}
	_, other := b.Exec("INSERT INTO nosuch VALUES (2)")
	if other == nil || isBusy(other) {
		t.Errorf("isBusy(%v) true", other)
	}
}

// TestStemOfLoc: a data file is one input's when its name is the stem's
// with the run's suffix, directly in data/ or below as many directories
// as the table has partition fields; packed files are no one input's.
func TestStemOfLoc(t *testing.T) {
	const tbl = "file:///wh/shop/t"
	for _, c := range []struct {
		rel    string
		nParts int
		want   string
	}{
		{"b.json-20261203T101112-0a1b2c3d.parquet", 0, "b.json"},
		{"id_bucket=3/b.json-20261203T101112-0a1b2c3d.parquet", 1, "b.json"},
		{"p=1/q=x%2Fy/b.json-20261203T101112-0a1b2c3d.parquet", 2, "b.json"},
		{"p=1/a/b.json-20261203T101112-0a1b2c3d.parquet", 1, "a/b.json"},
		{"x/a.json~2-20261203T101112-0a1b2c3d.parquet", 0, "x/a.json~2"},
		{"g=1/x/a.json~2-20261203T101112-0a1b2c3d.parquet", 1, "x/a.json~2"},
		{"b.json-20261203T101112-0a1b2c3d.packed.parquet", 0, ""},
		{"b.json-20261203T101112-0a1b2c3d.packed3.parquet", 0, ""},
		{"b.json-20261203T101112-0a1b2c3.parquet", 0, ""},
		{"b.json.parquet", 0, ""},
		{"b.json-20261203T101112-0a1b2c3d.parquet.tmp", 0, ""},
		{"b.json-20261203T101112-0a1b2c3d.parquet", 1, ""}, // too few directories
	} {
		if got := stemOfLoc(tbl, tbl+"/data/"+c.rel, c.nParts); got != c.want {
			t.Errorf("stemOfLoc(%q, %d) = %q, want %q", c.rel, c.nParts, got, c.want)
		}
	}
	if got := stemOfLoc(tbl, "file:///wh/shop/u/data/b.json-20261203T101112-0a1b2c3d.parquet", 0); got != "" {
		t.Errorf("another table's file: %q", got)
	}
}

// TestEvolveConcurrently: writers that each add a column to one table at
// the same moment (shards whose inputs bring new columns) all succeed,
// and the table ends with every column: a schema commit that meets
// another is decided again on the new head, as data commits are, for as
// many rounds as writers can take. (TestShardsEvolveOneTable failed once
// on a loaded machine: "metadata-location moved underneath us" after the
// six attempts schema commits had.)
func TestEvolveConcurrently(t *testing.T) {
	if testing.Short() {
		t.Skip("many catalog commits")
	}
	ctx := context.Background()
	wh := t.TempDir()
	base := "id BIGINT, name STRING"
	first, err := Open(ctx, wh, "")
	if err != nil {
		t.Fatal(err)
	}
	s0, err := arrowconv.ParseColumns(base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.Table(ctx, "inv", "wide", filepath.Join(wh, "inv", "wide"), s0); err != nil {
		t.Fatal(err)
	}
	first.Close()
	const writers = 12
	lakes := make([]*Lake, writers)
	for i := range lakes {
		if lakes[i], err = Open(ctx, wh, ""); err != nil {
			t.Fatal(err)
		}
		defer lakes[i].Close()
		// Each writer has read the table before any of them commits.
		if _, err := lakes[i].Existing(ctx, "inv", "wide", filepath.Join(wh, "inv", "wide")); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, writers)
	start := make(chan struct{})
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := arrowconv.ParseColumns(fmt.Sprintf("%s, c%02d INT", base, i))
			if err == nil {
				<-start
				_, err = lakes[i].Table(ctx, "inv", "wide", filepath.Join(wh, "inv", "wide"), s)
			}
			errs[i] = err
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	last, err := Open(ctx, wh, "")
	if err != nil {
		t.Fatal(err)
	}
	defer last.Close()
	tbl, err := last.cat.LoadTable(ctx, table.Identifier{"inv", "wide"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range writers {
		if _, ok := tbl.Schema().FindFieldByName(fmt.Sprintf("c%02d", i)); !ok {
			t.Errorf("column c%02d missing: %s", i, tbl.Schema())
		}
	}
}
