// Package lake lands conversions in Apache Iceberg tables (iceberg-go).
//
// cdcetl writes the data files itself, with its own Parquet encoder in
// Iceberg mode (field IDs, Iceberg's physical types), and registers them
// in a commit per input and table. Each commit's snapshot summary names
// the input it holds (content hash and size, path for people), so a rerun,
// a restarted run or a second writer never commits an input twice: before
// committing, the table's history is read, and the commit asserts the
// branch head it read (AssertRefSnapshotID), so a concurrent commit makes
// it fail and look again instead of applying twice.
package lake

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	_ "github.com/jackc/pgx/v5/stdlib" // the postgres:// catalog's driver
	"github.com/uptrace/bun/driver/sqliteshim"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/partition"
)

// CatalogFile is the embedded catalog's file in the warehouse.
const CatalogFile = "_catalog.db"

// Lake is a warehouse directory and the catalog its tables are kept in.
type Lake struct {
	cat       catalog.Catalog
	mode      string // ModeChangelog or ModeUpsert
	partition []partition.Field
	warehouse string // absolute
	// remote, when set, is the warehouse's bucket URL (scheme://bucket/
	// prefix): tables live there, and warehouse is the local staging
	// directory their data files are written in before they are uploaded.
	remote string
	props  iceberg.Properties // of the bucket (endpoint, region), for iceberg-go's IO
	// uploaded are the local data files already in the bucket.
	uploaded sync.Map
	closeFn  func() error

	// tableProps are properties a new table gets (--option), over the
	// defaults.
	tableProps iceberg.Properties

	mu     sync.Mutex
	tables map[string]*Table // by identifier
}

// isBusy reports whether err is SQLite's SQLITE_BUSY (any extended code).
func isBusy(err error) bool {
	var e interface{ Code() int }
	return errors.As(err, &e) && e.Code()&0xff == 5
}

// sqliteDSN is the SQLite catalog's connection string: WAL and a busy
// timeout (see open).
func sqliteDSN(path string) string {
	return (&url.URL{Scheme: "file", Opaque: path, RawQuery: "_pragma=busy_timeout(60000)&_pragma=journal_mode(WAL)&_txlock=immediate"}).String()
}

// Open opens the catalog uri for the warehouse directory: "" or
// "sqlite:PATH" (the embedded SQL catalog, default WAREHOUSE/_catalog.db),
// "postgres://..." (the same SQL catalog on a PostgreSQL server, shared by
// many machines), or "rest+https://HOST/PATH" / "rest+http://..." (a
// REST catalog).
func Open(ctx context.Context, warehouse, uri string) (*Lake, error) {
	return OpenMode(ctx, warehouse, uri, ModeChangelog)
}

// OpenMode is Open for tables of a mode (ModeChangelog or ModeUpsert):
// tables it makes get the mode, and a table of the other mode is refused.
func OpenMode(ctx context.Context, warehouse, uri, mode string) (*Lake, error) {
	return open(ctx, warehouse, "", nil, uri, mode)
}

// OpenRemote opens a warehouse kept in a bucket (remote, a bucket URL
// without its query; props configure iceberg-go's IO for it: endpoint,
// region). Data files are written below staging, then uploaded before
// they are committed. The catalog must be one that many machines share
// (postgres://, rest+https://) or a local sqlite:PATH: a SQLite file
// cannot live in a bucket.
func OpenRemote(ctx context.Context, staging, remote string, props map[string]string, uri, mode string) (*Lake, error) {
	if uri == "" {
		return nil, fmt.Errorf("an Iceberg warehouse in a bucket (%s) needs a catalog outside it: postgres://USER@HOST:PORT/DB or rest+https://HOST/PATH (or sqlite:/LOCAL/PATH for one machine)", remote)
	}
	return open(ctx, staging, strings.TrimSuffix(remote, "/"), props, uri, mode)
}

func open(ctx context.Context, warehouse, remote string, props map[string]string, uri, mode string) (*Lake, error) {
	if mode != ModeChangelog && mode != ModeUpsert {
		return nil, fmt.Errorf("table mode %q: want changelog or upsert", mode)
	}
	abs, err := filepath.Abs(warehouse)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, err
	}
	l := &Lake{warehouse: abs, tables: map[string]*Table{}, mode: mode, remote: remote, props: iceberg.Properties{}}
	maps.Copy(l.props, props)
	l.props["warehouse"] = l.URL(abs)
	catProps := func() iceberg.Properties { return maps.Clone(l.props) }
	switch {
	case uri == "" || strings.HasPrefix(uri, "sqlite:"):
		path := strings.TrimPrefix(uri, "sqlite:")
		if path == "" {
			path = filepath.Join(abs, CatalogFile)
		}
		// WAL and a busy timeout: shards and a watcher share the file.
		// Transactions take the write lock when they begin (a read that
		// becomes a write in WAL mode fails at once instead of waiting),
		// and one connection serializes the process's own.
		db, err := sql.Open(sqliteshim.ShimName, sqliteDSN(path))
		if err != nil {
			return nil, fmt.Errorf("catalog %s: %w", uri, err)
		}
		db.SetMaxOpenConns(1)
		c, err := sqlcat.NewCatalog("cdcetl", db, sqlcat.SQLite, catProps())
		// SQLite answers SQLITE_BUSY at once, without waiting out the
		// busy timeout, where waiting could deadlock (processes opening
		// a new file together: one turns it to WAL while another reads
		// it). Making the catalog's tables is idempotent: try again.
		for wait := 10 * time.Millisecond; isBusy(err) && wait < 5*time.Second; wait *= 2 {
			time.Sleep(wait)
			c, err = sqlcat.NewCatalog("cdcetl", db, sqlcat.SQLite, catProps())
		}
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("catalog %s: %w", path, err)
		}
		l.cat, l.closeFn = c, func() error { return errors.Join(c.Close(), db.Close()) }
	case strings.HasPrefix(uri, "postgres://") || strings.HasPrefix(uri, "postgresql://"):
		// The same SQL catalog on a shared server. The password belongs in
		// PGPASSWORD or ~/.pgpass (pgx reads both), not in the URI.
		db, err := sql.Open("pgx", uri)
		if err != nil {
			return nil, fmt.Errorf("catalog: %w", err)
		}
		if err := db.PingContext(ctx); err != nil {
			db.Close()
			return nil, fmt.Errorf("catalog %s: %w (is the server up? the password goes in PGPASSWORD or ~/.pgpass)", redact(uri), err)
		}
		c, err := sqlcat.NewCatalog("cdcetl", db, sqlcat.Postgres, catProps())
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("catalog %s: %w", redact(uri), err)
		}
		l.cat, l.closeFn = c, func() error { return errors.Join(c.Close(), db.Close()) }
	case strings.HasPrefix(uri, "rest+"):
		u := strings.TrimPrefix(uri, "rest+")
		if _, err := url.Parse(u); err != nil {
			return nil, fmt.Errorf("catalog %s: %w", uri, err)
		}
		c, err := rest.NewCatalog(ctx, "cdcetl", u, rest.WithWarehouseLocation(l.URL(abs)), rest.WithAdditionalProps(catProps()))
		if err != nil {
			return nil, fmt.Errorf("catalog %s: %w", uri, err)
		}
		l.cat, l.closeFn = c, func() error { return nil }
	default:
		return nil, fmt.Errorf("catalog %q: want sqlite:PATH (the default, WAREHOUSE/%s), postgres://USER@HOST:PORT/DB or rest+https://HOST/PATH", redact(uri), CatalogFile)
	}
	return l, nil
}

// redact drops a URI's password, for messages.
func redact(uri string) string {
	if u, err := url.Parse(uri); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			return u.Redacted()
		}
	}
	return uri
}

// URL is where the file or directory at path (below the warehouse) is
// kept: its file: URL, or for a warehouse in a bucket, the object's.
func (l *Lake) URL(path string) string {
	if l.remote == "" {
		return FileURL(path)
	}
	rel, err := filepath.Rel(l.warehouse, path)
	if err != nil || rel == "." {
		return l.remote
	}
	return l.remote + "/" + filepath.ToSlash(rel)
}

// Remote reports whether the warehouse is in a bucket.
func (l *Lake) Remote() bool { return l.remote != "" }

// FileURL is the file: URL of an absolute path, escaped (table and
// directory names may hold '%', spaces and the like).
func FileURL(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

// PartitionBy sets the partition spec of the tables the lake makes (and
// expects of those it finds). Upsert tables need it to be of key columns
// (checked per table: Table.KeyPartitioned).
func (l *Lake) PartitionBy(fields []partition.Field) error {
	l.partition = fields
	return nil
}

// TableProperties are the properties of the tables the lake makes:
// Iceberg's (format-version, write.target-file-size-bytes, ...) over
// cdcetl's defaults (format v3 for upsert tables, whose deletes are
// deletion vectors; v2 for changelog tables, which every reader reads).
func (l *Lake) TableProperties(props map[string]string) error {
	for k, v := range props {
		if k == "format-version" && v != "2" && v != "3" {
			return fmt.Errorf("format-version %q: cdcetl writes Iceberg tables of format 2 or 3", v)
		}
		if l.tableProps == nil {
			l.tableProps = iceberg.Properties{}
		}
		l.tableProps[k] = v
	}
	return nil
}

// Close closes the catalog.
func (l *Lake) Close() error {
	if l.closeFn == nil {
		return nil
	}
	return l.closeFn()
}

// Catalog is the catalog (tests read tables back through it).
func (l *Lake) Catalog() catalog.Catalog { return l.cat }

// Table is one Iceberg table cdcetl writes to.
type Table struct {
	lake  *Lake
	ident table.Identifier
	dir   string // absolute: the table's location

	mu  sync.Mutex
	tbl *table.Table
	ids map[string]int32 // Parquet path (names joined by \x00) → field ID
	// committed holds the inputs found in the table's snapshots, and seen
	// the snapshots already read for them.
	committed map[string]string // input identity → snapshot summary's run
	stems     map[string]string // input stem → the identity of its latest version
	seen      map[int64]bool
	propSeen  string // the PropInputs read

	// partOf holds the partition values of the partitioned data files
	// written (path → field ID → value), for their commit.
	partOf sync.Map
}

// Table returns the table ns.name kept at dir (an absolute directory in
// the warehouse), created when missing and evolved to hold schema s: every
// column of s exists in it (added when missing, widened where Iceberg
// allows). _rowkind comes first.
func (l *Lake) Table(ctx context.Context, ns, name, dir string, s *arrowconv.Schema) (*Table, error) {
	ident := table.Identifier{ns, name}
	key := ns + "\x00" + name
	l.mu.Lock()
	t := l.tables[key]
	if t == nil {
		t = &Table{lake: l, ident: ident, dir: dir, committed: map[string]string{}, seen: map[int64]bool{}}
		l.tables[key] = t
	}
	l.mu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.ensure(ctx, s); err != nil {
		return nil, fmt.Errorf("iceberg table %s: %w", strings.Join(ident, "."), err)
	}
	return t, nil
}

// Existing returns the table ns.name when the catalog has it, else nil.
func (l *Lake) Existing(ctx context.Context, ns, name, dir string) (*Table, error) {
	key := ns + "\x00" + name
	l.mu.Lock()
	t := l.tables[key]
	l.mu.Unlock()
	if t != nil {
		return t, nil
	}
	tbl, err := l.cat.LoadTable(ctx, table.Identifier{ns, name})
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if t = l.tables[key]; t == nil {
		t = &Table{lake: l, ident: table.Identifier{ns, name}, dir: dir, tbl: tbl, committed: map[string]string{}, seen: map[int64]bool{}}
		t.index()
		l.tables[key] = t
	}
	return t, nil
}

// Name is the table's identifier, "ns.name".
func (t *Table) Name() string { return strings.Join(t.ident, ".") }

// Dir is the table's location (a directory).
func (t *Table) Dir() string { return t.dir }

// ensure loads or creates the table and evolves its schema to hold s.
func (t *Table) ensure(ctx context.Context, s *arrowconv.Schema) error {
	if t.tbl == nil {
		tbl, err := t.lake.cat.LoadTable(ctx, t.ident)
		if errors.Is(err, catalog.ErrNoSuchTable) {
			tbl, err = t.create(ctx, s)
		}
		if err != nil {
			return err
		}
		if len(t.lake.partition) > 0 && !sameSpec(tbl.Spec(), tbl.Schema(), t.lake.partition) {
			return fmt.Errorf("the table is partitioned by %s, not by the partition spec given: give the table's own spec, or load into another table", tbl.Spec())
		}
		if m := tbl.Properties()[PropMode]; m != "" && m != t.lake.mode || m == "" && t.lake.mode == ModeUpsert {
			if m == "" {
				m = ModeChangelog
			}
			return fmt.Errorf("the table is a %s table, and this is a %s load: load it in table mode %s, or into another table", m, t.lake.mode, m)
		}
		t.tbl = tbl
		t.writeHint(ctx)
	}
	for attempt := 1; ; attempt++ {
		err := t.evolve(ctx, s)
		if err == nil {
			t.index()
			return nil
		}
		if !conflict(err) {
			return err
		}
		if attempt == maxAttempts {
			return fmt.Errorf("%d attempts met concurrent schema changes: %w", maxAttempts, err)
		}
		if err := conflictPause(ctx, attempt); err != nil {
			return err
		}
		if err := t.tbl.Refresh(ctx); err != nil {
			return err
		}
	}
}

func (t *Table) create(ctx context.Context, s *arrowconv.Schema) (*table.Table, error) {
	ns := t.ident[:1]
	if err := t.lake.cat.CreateNamespace(ctx, ns, nil); err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
		return nil, err
	}
	var key []string
	if t.lake.mode == ModeUpsert {
		if len(s.PrimaryKey) == 0 {
			return nil, fmt.Errorf("an upsert load needs a primary key, and the table has none (declare PRIMARY KEY (...) NOT ENFORCED, pin the table with a DDL that has one, or load a changelog table)")
		}
		key = s.PrimaryKey
	}
	sc, err := Schema(s, key)
	if err != nil {
		return nil, err
	}
	opts := []catalog.CreateTableOpt{catalog.WithLocation(t.lake.URL(t.dir))}
	if len(t.lake.partition) > 0 {
		spec, err := partition.Spec(t.lake.partition, sc)
		if err != nil {
			return nil, err
		}
		opts = append(opts, catalog.WithPartitionSpec(&spec))
	}
	tbl, err := t.lake.cat.CreateTable(ctx, t.ident, sc, append(opts,
		catalog.WithProperties(t.lake.newTableProps()))...)
	if errors.Is(err, catalog.ErrTableAlreadyExists) {
		return t.lake.cat.LoadTable(ctx, t.ident) // another writer made it first
	}
	return tbl, err
}

// newTableProps are a new table's properties.
func (l *Lake) newTableProps() iceberg.Properties {
	props := iceberg.Properties{
		"format-version":                  "2",
		"write.parquet.compression-codec": "snappy",
	}
	if l.mode == ModeUpsert {
		props["format-version"] = "3"
	}
	for k, v := range l.tableProps {
		props[k] = v
	}
	props[PropMode] = l.mode
	return props
}

// evolve adds the columns of s the table lacks and widens those whose
// type s widens, in one schema commit (none when nothing changes).
func (t *Table) evolve(ctx context.Context, s *arrowconv.Schema) error {
	cur := t.tbl.Schema()
	tx := t.tbl.NewTransaction()
	us := tx.UpdateSchema(true, false)
	changed := false
	for _, c := range s.Columns {
		want, err := icebergType(c.Type)
		if err != nil {
			return fmt.Errorf("column %s: %w", c.Name, err)
		}
		f, ok := cur.FindFieldByNameCaseInsensitive(c.Name)
		if !ok || f.Name != c.Name {
			if ok {
				return fmt.Errorf("column %s: the table has %s; Iceberg readers may match names without case", c.Name, f.Name)
			}
			us.AddColumn([]string{c.Name}, want, c.Comment, false, nil)
			changed = true
			continue
		}
		if sameType(f.Type, want) {
			continue
		}
		if !promotable(f.Type, want) {
			if promotable(want, f.Type) {
				continue // narrower data in a wider column
			}
			return fmt.Errorf("column %s is %s in the table and %s now: Iceberg cannot change the one into the other; convert into a new table (a pinned DDL for it, or another warehouse)", c.Name, f.Type, want)
		}
		us.UpdateColumn([]string{c.Name}, table.ColumnUpdate{FieldType: iceberg.Optional[iceberg.Type]{Val: want, Valid: true}})
		changed = true
	}
	if !changed {
		return nil
	}
	if err := us.Commit(); err != nil {
		return err
	}
	tbl, err := tx.Commit(ctx)
	if err != nil {
		return err
	}
	t.tbl = tbl
	t.writeHint(ctx)
	return nil
}

// sameType compares two types ignoring field IDs (a schema made from
// SQL types has none yet).
func sameType(a, b iceberg.Type) bool {
	switch x := a.(type) {
	case *iceberg.ListType:
		y, ok := b.(*iceberg.ListType)
		return ok && x.ElementRequired == y.ElementRequired && sameType(x.Element, y.Element)
	case *iceberg.MapType:
		y, ok := b.(*iceberg.MapType)
		return ok && x.ValueRequired == y.ValueRequired && sameType(x.KeyType, y.KeyType) && sameType(x.ValueType, y.ValueType)
	case *iceberg.StructType:
		y, ok := b.(*iceberg.StructType)
		if !ok || len(x.FieldList) != len(y.FieldList) {
			return false
		}
		for i, f := range x.FieldList {
			g := y.FieldList[i]
			if f.Name != g.Name || f.Required != g.Required || !sameType(f.Type, g.Type) {
				return false
			}
		}
		return true
	}
	return a.Equals(b)
}

// promotable reports whether Iceberg lets a column of type from become to.
func promotable(from, to iceberg.Type) bool {
	switch f := from.(type) {
	case iceberg.Int32Type:
		_, ok := to.(iceberg.Int64Type)
		return ok
	case iceberg.Float32Type:
		_, ok := to.(iceberg.Float64Type)
		return ok
	case iceberg.DecimalType:
		d, ok := to.(iceberg.DecimalType)
		return ok && d.Scale() == f.Scale() && d.Precision() > f.Precision()
	}
	return false
}

// index records the field ID of every Parquet path of the current schema.
func (t *Table) index() { t.ids = fieldIDs(t.tbl.Schema()) }

// fieldIDs maps a schema's Parquet paths (names joined by \x00) to their
// field IDs.
func fieldIDs(sch *iceberg.Schema) map[string]int32 {
	ids := map[string]int32{}
	var walk func(path []string, f iceberg.NestedField)
	walk = func(path []string, f iceberg.NestedField) {
		path = append(path, f.Name)
		ids[strings.Join(path, "\x00")] = int32(f.ID)
		switch ty := f.Type.(type) {
		case *iceberg.StructType:
			for _, c := range ty.FieldList {
				walk(path, c)
			}
		case *iceberg.ListType:
			walk(append(path, "list"), ty.ElementField())
		case *iceberg.MapType:
			walk(append(path, "key_value"), ty.KeyField())
			walk(append(path, "key_value"), ty.ValueField())
		}
	}
	for _, f := range sch.Fields() {
		walk(nil, f)
	}
	return ids
}

// FieldIDs returns the field ID of a Parquet path of the table's schema.
func (t *Table) FieldIDs() func(path []string) int32 {
	t.mu.Lock()
	ids := t.ids
	t.mu.Unlock()
	return func(path []string) int32 { return ids[strings.Join(path, "\x00")] }
}

// Schema is the Iceberg schema of s: _rowkind, then its columns (IDs in
// order; a catalog assigns its own when the table is made), with the
// columns key (required) as its identifier fields.
func Schema(s *arrowconv.Schema, key []string) (*iceberg.Schema, error) {
	fields := []iceberg.NestedField{{ID: 1, Name: arrowconv.RowKindColumn, Type: iceberg.PrimitiveTypes.String, Required: false,
		Doc: "the change: +I insert, -U before and +U after an update, -D delete"}}
	for _, c := range s.Columns {
		ty, err := icebergType(c.Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.Name, err)
		}
		fields = append(fields, iceberg.NestedField{Name: c.Name, Type: ty, Doc: c.Comment, Required: slices.Contains(key, c.Name)})
	}
	next := 0
	var number func(ty iceberg.Type) iceberg.Type
	number = func(ty iceberg.Type) iceberg.Type {
		switch t := ty.(type) {
		case *iceberg.StructType:
			for i := range t.FieldList {
				next++
				t.FieldList[i].ID = next
				t.FieldList[i].Type = number(t.FieldList[i].Type)
			}
		case *iceberg.ListType:
			next++
			t.ElementID = next
			t.Element = number(t.Element)
		case *iceberg.MapType:
			next++
			t.KeyID = next
			next++
			t.ValueID = next
			t.KeyType, t.ValueType = number(t.KeyType), number(t.ValueType)
		}
		return ty
	}
	root := &iceberg.StructType{FieldList: fields}
	number(root)
	var ids []int
	for _, k := range key {
		for _, f := range root.FieldList {
			if f.Name == k {
				ids = append(ids, f.ID)
			}
		}
	}
	return iceberg.NewSchemaWithIdentifiers(0, ids, root.FieldList...), nil
}

// icebergType maps a SQL type to Iceberg's. TINYINT and SMALLINT become
// int; TIME becomes time and TIMESTAMP timestamp (microseconds): a
// precision above 6 keeps its first six digits (format version 2 has no
// nanoseconds); MULTISET becomes map<element, int>.
func icebergType(t arrowconv.Type) (iceberg.Type, error) {
	switch t.Kind {
	case arrowconv.Boolean:
		return iceberg.PrimitiveTypes.Bool, nil
	case arrowconv.TinyInt, arrowconv.SmallInt, arrowconv.Int:
		return iceberg.PrimitiveTypes.Int32, nil
	case arrowconv.BigInt:
		return iceberg.PrimitiveTypes.Int64, nil
	case arrowconv.Float:
		return iceberg.PrimitiveTypes.Float32, nil
	case arrowconv.Double:
		return iceberg.PrimitiveTypes.Float64, nil
	case arrowconv.Decimal:
		return iceberg.DecimalTypeOf(t.Precision, t.Scale), nil
	case arrowconv.Char, arrowconv.VarChar, arrowconv.String:
		return iceberg.PrimitiveTypes.String, nil
	case arrowconv.Binary, arrowconv.VarBinary, arrowconv.Bytes:
		return iceberg.PrimitiveTypes.Binary, nil
	case arrowconv.Date:
		return iceberg.PrimitiveTypes.Date, nil
	case arrowconv.Time:
		return iceberg.PrimitiveTypes.Time, nil
	case arrowconv.Timestamp:
		return iceberg.PrimitiveTypes.Timestamp, nil
	case arrowconv.TimestampLTZ:
		return iceberg.PrimitiveTypes.TimestampTz, nil
	case arrowconv.Array:
		e, err := icebergType(*t.Elem)
		if err != nil {
			return nil, err
		}
		return &iceberg.ListType{Element: e}, nil
	case arrowconv.Map, arrowconv.Multiset:
		k, err := icebergType(*t.Elem)
		if err != nil {
			return nil, err
		}
		var v iceberg.Type = iceberg.PrimitiveTypes.Int32
		if t.Kind == arrowconv.Map {
			if v, err = icebergType(*t.Value); err != nil {
				return nil, err
			}
		}
		return &iceberg.MapType{KeyType: k, ValueType: v}, nil
	case arrowconv.Row:
		st := &iceberg.StructType{}
		for _, f := range t.Fields {
			ft, err := icebergType(f.Type)
			if err != nil {
				return nil, err
			}
			st.FieldList = append(st.FieldList, iceberg.NestedField{Name: f.Name, Type: ft, Doc: f.Comment})
		}
		return st, nil
	}
	return nil, fmt.Errorf("no Iceberg type for %s", t)
}

// HintFile is the file beside a table's metadata that names its current
// metadata file, for readers that open a table by its directory without a
// catalog (Hadoop tables; DuckDB's iceberg_scan of a directory).
const HintFile = "version-hint.text"

// writeHint points the table's version-hint.text at its current metadata
// file, unless it already names a later one (another process committed
// meanwhile). A hint that cannot be written is removed rather than left
// naming an older version: readers then need the catalog, as before.
func (t *Table) writeHint(ctx context.Context) { t.lake.writeHint(ctx, t.tbl) }

func (l *Lake) writeHint(ctx context.Context, tbl *table.Table) {
	loc := tbl.MetadataLocation()
	version := strings.TrimSuffix(path.Base(loc), ".metadata.json")
	hint := strings.TrimSuffix(tbl.Location(), "/") + "/metadata/" + HintFile
	fs, err := tbl.FS(ctx)
	if err != nil {
		return
	}
	if f, err := fs.Open(hint); err == nil {
		old, _ := io.ReadAll(f)
		f.Close()
		if metadataSeq(string(old)) > metadataSeq(version) {
			return
		}
	}
	if l.remote == "" {
		// A local warehouse: a temporary file renamed into place.
		p, err := PathOf(hint)
		if err != nil {
			return
		}
		tmp := p + ".tmp"
		if err := os.WriteFile(tmp, []byte(version), 0o644); err == nil && os.Rename(tmp, p) == nil {
			return
		}
		os.Remove(tmp)
		os.Remove(p)
		return
	}
	wfs, ok := fs.(iceio.WriteFileIO)
	if !ok {
		return
	}
	if w, err := wfs.Create(hint); err == nil { // one PUT: readers see the old or the new
		_, err = w.Write([]byte(version))
		if cerr := w.Close(); err == nil && cerr == nil {
			return
		}
	}
	if r, ok := fs.(interface{ Remove(string) error }); ok {
		r.Remove(hint)
	}
}

// metadataSeq is the version number a metadata file's name starts with
// ("00012-<uuid>"), or -1.
func metadataSeq(name string) int {
	n, err := strconv.Atoi(strings.SplitN(strings.TrimSpace(name), "-", 2)[0])
	if err != nil {
		return -1
	}
	return n
}
