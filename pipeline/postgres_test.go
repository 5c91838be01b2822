package pipeline

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/lake"
)

// pgCatalog is a new, empty database on the PostgreSQL server that
// CDCETL_TEST_POSTGRES names (.ci/run starts one), as a --catalog URI;
// the test is skipped without a server.
func pgCatalog(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv("CDCETL_TEST_POSTGRES")
	if dsn == "" {
		t.Skip("CDCETL_TEST_POSTGRES is not set (.ci/run starts a PostgreSQL server and sets it): the postgres:// catalog is not tested")
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	name := fmt.Sprintf("cdcetl_test_%d", time.Now().UnixNano())
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("CREATE DATABASE on %s: %v", dsn, err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", dsn)
		if err == nil {
			db.Exec("DROP DATABASE " + name + " WITH (FORCE)")
			db.Close()
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// TestIcebergPostgresCatalog loads the same archive into upsert tables
// twice, once with the embedded SQLite catalog and once with a PostgreSQL
// one, and checks that both hold the same rows, and that a rerun against
// the PostgreSQL catalog commits nothing twice.
func TestIcebergPostgresCatalog(t *testing.T) {
	catalog := pgCatalog(t)
	in := t.TempDir()
	paths := upsertArchive(t, in, 4, 300)
	opts := decode.Options{Producer: true, CaseInsensitive: true}
	lite, pg := t.TempDir(), t.TempDir()
	base := Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToIceberg}, LakeOptions: LakeOptions{TableMode: lake.ModeUpsert}, RunOptions: RunOptions{Workers: 2}}
	cfg := base
	cfg.OutDir = lite
	if _, err := Run(context.Background(), cfg, paths); err != nil {
		t.Fatal(err)
	}
	cfg.OutDir, cfg.Catalog = pg, catalog
	st, err := Run(context.Background(), cfg, paths)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(pg, lake.CatalogFile)); err == nil {
		t.Fatal("a SQLite catalog was made beside the PostgreSQL one")
	}
	cfg.Force = true
	st2, err := Run(context.Background(), cfg, paths)
	if err != nil {
		t.Fatal(err)
	}
	if st.Committed == 0 || st2.Committed != 0 {
		t.Errorf("first run committed %d, the forced rerun %d", st.Committed, st2.Committed)
	}
	rows := func(wh, uri, name string) []string {
		_, got := scanTable(t, loadTable(t, wh, uri, "shop", name))
		return got
	}
	for _, name := range []string{"t0", "t1"} {
		want, got := rows(lite, "", name), rows(pg, catalog, name)
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Fatalf("shop.%s: %d rows with the PostgreSQL catalog, %d with SQLite:\n%s", name, len(got), len(want), firstDiff(got, want))
		}
	}
}
