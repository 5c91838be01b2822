package layers

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestFilesLayered: in the packages below, at most the given number of
// pairs of files use each other's names (package-level names, and the
// methods and fields of the package's types). A new pair means a file
// reaches back up into one that uses it: move the name down (to the
// file of the state or types it belongs with) instead.
func TestFilesLayered(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks packages from the build's export data; skipped with -short")
	}
	for pkg, most := range map[string]int{
		"github.com/cdcetl/cdcetl/pipeline":        0,
		"github.com/cdcetl/cdcetl/internal/outdir": 0,
		"github.com/cdcetl/cdcetl/decode":          6,
	} {
		pairs, err := mutualPairs(pkg)
		if err != nil {
			t.Fatal(err)
		}
		if len(pairs) > most {
			t.Errorf("%s: %d pairs of files use each other, want at most %d:\n  %s", pkg, len(pairs), most, strings.Join(pairs, "\n  "))
		}
	}
}

// mutualPairs type-checks pkg's files (without tests) and returns the
// pairs of files that use each other, with the names each uses.
func mutualPairs(pkg string) ([]string, error) {
	exports, dir, err := exportData(pkg)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	matches, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	var files []*ast.File
	for _, m := range matches {
		if strings.HasSuffix(m, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, m, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		p, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(p)
	})
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	tp, err := (&types.Config{Importer: imp}).Check(pkg, fset, files, info)
	if err != nil {
		return nil, err
	}
	uses := map[[2]string]map[string]bool{}
	for id, obj := range info.Uses {
		if obj == nil || obj.Pkg() != tp || !declaredInPackage(obj, tp) {
			continue
		}
		a, b := filepath.Base(fset.Position(id.Pos()).Filename), filepath.Base(fset.Position(obj.Pos()).Filename)
		if a == b {
			continue
		}
		k := [2]string{a, b}
		if uses[k] == nil {
			uses[k] = map[string]bool{}
		}
		uses[k][obj.Name()] = true
	}
	var pairs []string
	for k, names := range uses {
		back, ok := uses[[2]string{k[1], k[0]}]
		if !ok || k[0] > k[1] {
			continue
		}
		pairs = append(pairs, fmt.Sprintf("%s uses %s of %s, which uses %s", k[0], list(names), k[1], list(back)))
	}
	sort.Strings(pairs)
	return pairs, nil
}

// declaredInPackage: package-level objects, and methods and fields (of
// the package's types); not locals.
func declaredInPackage(obj types.Object, pkg *types.Package) bool {
	switch o := obj.(type) {
	case *types.Func:
		return o.Type().(*types.Signature).Recv() != nil || o.Parent() == pkg.Scope()
	case *types.Var:
		return o.IsField() || o.Parent() == pkg.Scope()
	}
	return obj.Parent() == pkg.Scope()
}

func list(m map[string]bool) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	if len(out) > 5 {
		out = append(out[:5], "...")
	}
	return strings.Join(out, ", ")
}

// exportData builds pkg's dependencies and returns their export data
// files by import path, and pkg's directory.
func exportData(pkg string) (map[string]string, string, error) {
	out, err := exec.Command("go", "list", "-export", "-deps", "-json=ImportPath,Export,Dir", pkg).Output()
	if err != nil {
		return nil, "", fmt.Errorf("go list %s: %w", pkg, err)
	}
	exports := map[string]string{}
	dir := ""
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p struct{ ImportPath, Export, Dir string }
		if err := dec.Decode(&p); err != nil {
			return nil, "", err
		}
		exports[p.ImportPath] = p.Export
		if p.ImportPath == pkg {
			dir = p.Dir
		}
	}
	return exports, dir, nil
}
