package outdir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cdcetl/cdcetl/infer"
)

func writeSchema(t *testing.T, dir string, k infer.Key) {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	ddl := "CREATE TABLE `" + k.Namespace + "`.`" + k.Name + "` (`id` INT) WITH ('format' = 'canal-json', 'cdcetl.namespace' = '" + k.Namespace + "', 'cdcetl.table' = '" + k.Name + "');\n"
	if err := os.WriteFile(filepath.Join(dir, SchemaFile), []byte(ddl), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTableDirs: tables keep their names as directories; where the file
// system ignores case, a table whose directory another table has (in this
// run, or an earlier one, in whatever case) gets "~2", and keeps it in
// later runs; a table an earlier version wrote under the old escaping
// stays there.
func TestTableDirs(t *testing.T) {
	out := t.TempDir()
	lower, upper, oracle := infer.Key{Namespace: "shop", Name: "orders"}, infer.Key{Namespace: "shop", Name: "Orders"}, infer.Key{Namespace: "SCOTT", Name: "EMP"}

	plain := ReadTableDirs(out)
	if a, b := plain.Dir(lower, 1), plain.Dir(upper, 2); a != filepath.Join("shop", "orders") || b != filepath.Join("shop", "Orders", "v2") {
		t.Errorf("a file system that keeps case: %s and %s", a, b)
	}

	folding := ReadTableDirs(out)
	folding.fold = true
	if a, b := folding.Dir(lower, 1), folding.Dir(upper, 1); a != filepath.Join("shop", "orders") || b != filepath.Join("shop", "Orders~2") {
		t.Errorf("one run on a file system that ignores case: %s and %s", a, b)
	}

	// An earlier run made SHOP/Orders for shop.Orders: this run's
	// shop.orders, the first of the two now, does not take it.
	writeSchema(t, filepath.Join(out, "SHOP", "Orders"), upper)
	later := ReadTableDirs(out)
	later.fold = true
	if a, b := later.Dir(lower, 1), later.Dir(upper, 1); a != filepath.Join("shop", "orders~2") || b != filepath.Join("shop", "Orders") {
		t.Errorf("a later run: %s and %s", a, b)
	}

	// The old escaping's directory of SCOTT.EMP is where it stays.
	legacy := LegacyDir(oracle.Namespace, oracle.Name)
	writeSchema(t, filepath.Join(out, legacy), oracle)
	if got := ReadTableDirs(out).Dir(oracle, 1); got != legacy {
		t.Errorf("SCOTT.EMP: %s, want the earlier version's %s", got, legacy)
	}
	if got := ReadTableDirs(t.TempDir()).Dir(oracle, 1); got != filepath.Join("SCOTT", "EMP") {
		t.Errorf("SCOTT.EMP in a new directory: %s", got)
	}
}

// inside reports whether p is below dir.
func inside(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && !filepath.IsAbs(rel) && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// FuzzRoutedPaths: for any two tables, versions and input stems, the
// outputs of a routed conversion stay below the output directory and two
// different (table, version, stem) never share a path, even on a file
// system that ignores case; no output is a schema file.
func FuzzRoutedPaths(f *testing.F) {
	f.Add("inventory", "products", "inventory", "Products", uint8(1), uint8(1), "a.json", "a.json")
	f.Add("..", "..", "", "", uint8(1), uint8(2), "v2/x.json", "x.json")
	f.Add("shop", "CON", "shop", "con", uint8(1), uint8(1), "v2~/x.json", "v2/x.json")
	f.Add("a.b", "c", "a", "b.c", uint8(3), uint8(3), "_schema.sql", "x")
	f.Fuzz(func(t *testing.T, ns1, t1, ns2, t2 string, v1, v2 uint8, stem1, stem2 string) {
		out := "/out"
		clean := func(s string) string {
			// Stems are input paths relative to their argument: clean,
			// relative, without '.' or '..' elements.
			var parts []string
			for _, p := range strings.Split(filepath.ToSlash(s), "/") {
				if p != "" && p != "." && p != ".." {
					parts = append(parts, p)
				}
			}
			if len(parts) == 0 {
				return "x"
			}
			return filepath.Join(parts...)
		}
		stem1, stem2 = clean(stem1), clean(stem2)
		ver := func(v uint8) int { return int(v%4) + 1 }
		// An output directory on a file system that ignores case.
		dirs := ReadTableDirs(out)
		dirs.fold = true
		p1 := filepath.Join(out, dirs.Dir(infer.Key{Namespace: ns1, Name: t1}, ver(v1)), RoutedStem(stem1)) + ".parquet"
		p2 := filepath.Join(out, dirs.Dir(infer.Key{Namespace: ns2, Name: t2}, ver(v2)), RoutedStem(stem2)) + ".parquet"
		for _, p := range []string{p1, p2} {
			if !inside(out, p) {
				t.Fatalf("%s is not below %s", p, out)
			}
			if filepath.Base(p) == SchemaFile {
				t.Fatalf("%s is a schema file", p)
			}
		}
		// Two tables (or versions) never meet, even ignoring case; two
		// inputs of one table never meet byte for byte (that their own
		// names may differ only in case is the inputs' matter).
		sameTable := ns1 == ns2 && t1 == t2 && ver(v1) == ver(v2)
		if !sameTable && foldEqual(p1, p2) || sameTable && stem1 != stem2 && p1 == p2 {
			t.Fatalf("(%q.%q v%d %q) and (%q.%q v%d %q) share %s", ns1, t1, ver(v1), stem1, ns2, t2, ver(v2), stem2, p1)
		}
		s1 := filepath.Join(out, dirs.Dir(infer.Key{Namespace: ns1, Name: t1}, ver(v1)), SchemaFile)
		s2 := filepath.Join(out, dirs.Dir(infer.Key{Namespace: ns2, Name: t2}, ver(v2)), SchemaFile)
		if !(ns1 == ns2 && t1 == t2 && ver(v1) == ver(v2)) && strings.EqualFold(s1, s2) {
			t.Fatalf("two tables share the schema file %s", s1)
		}
	})
}

// foldEqual: equal ignoring case as a file system might (Unicode folding
// for UTF-8 text, ASCII folding for other bytes).
func foldEqual(a, b string) bool {
	if utf8.ValidString(a) && utf8.ValidString(b) {
		return strings.EqualFold(a, b)
	}
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
