package pipeline

import (
	"context"
	"database/sql"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/iceberg-go"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/uptrace/bun/driver/sqliteshim"

	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/internal/restcatalog"
	"github.com/cdcetl/cdcetl/lake"
)

// TestIcebergRESTCatalog loads the same archive (changelog and upsert
// tables) through --catalog rest+http://... against a REST catalog server
// (internal/restcatalog, over iceberg-go's SQL catalog) and through the
// embedded catalog, and checks that the tables hold the same rows, that
// the commits went through the REST protocol, and that a forced rerun
// commits nothing twice.
func TestIcebergRESTCatalog(t *testing.T) {
	for _, mode := range []string{lake.ModeChangelog, lake.ModeUpsert} {
		t.Run(mode, func(t *testing.T) {
			in := t.TempDir()
			paths := upsertArchive(t, in, 4, 300)
			opts := decode.Options{Producer: true, CaseInsensitive: true}
			lite, wh := t.TempDir(), t.TempDir()
			db, err := sql.Open(sqliteshim.ShimName, "file:"+filepath.Join(t.TempDir(), "rest.db")+"?_pragma=busy_timeout(10000)")
			if err != nil {
				t.Fatal(err)
			}
			db.SetMaxOpenConns(1)
			defer db.Close()
			backing, err := sqlcat.NewCatalog("rest", db, sqlcat.SQLite, iceberg.Properties{"warehouse": lake.FileURL(wh)})
			if err != nil {
				t.Fatal(err)
			}
			h := &restcatalog.Handler{Cat: backing}
			srv := httptest.NewServer(h)
			defer srv.Close()
			uri := "rest+" + srv.URL
			base := Config{DecodingOptions: DecodingOptions{Options: opts}, OutputOptions: OutputOptions{To: ToIceberg}, LakeOptions: LakeOptions{TableMode: mode}, RunOptions: RunOptions{Workers: 2}}
			cfg := base
			cfg.OutDir = lite
			if _, err := Run(context.Background(), cfg, paths); err != nil {
				t.Fatal(err)
			}
			cfg.OutDir, cfg.Catalog = wh, uri
			st, err := Run(context.Background(), cfg, paths)
			if err != nil {
				t.Fatal(err)
			}
			if h.Commits.Load() == 0 || st.Committed == 0 {
				t.Fatalf("%d REST commits, %d committed", h.Commits.Load(), st.Committed)
			}
			cfg.Force = true
			st2, err := Run(context.Background(), cfg, paths)
			if err != nil {
				t.Fatal(err)
			}
			if st2.Committed != 0 {
				t.Errorf("the forced rerun committed %d", st2.Committed)
			}
			rows := func(wh, uri, name string) []string {
				_, got := scanTable(t, loadTable(t, wh, uri, "shop", name))
				return got
			}
			for _, name := range []string{"t0", "t1"} {
				want, got := rows(lite, "", name), rows(wh, uri, name)
				if len(want) == 0 || !slices.Equal(got, want) {
					t.Fatalf("shop.%s: %d rows through REST, %d embedded:\n%s", name, len(got), len(want), firstDiff(got, want))
				}
			}
		})
	}
}
