package retrytest_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// archived is the module whose types retrytest keeps out of its API: it is
// archived upstream, and its method set would be frozen into ours.
const archived = "github.com/benbjohnson/clock"

// TestAPIShowsNoArchivedType: the exported declarations of retrytest, as
// go doc shows them, name no type of github.com/benbjohnson/clock, not even
// as an embedded field.
func TestAPIShowsNoArchivedType(t *testing.T) {
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var files []*ast.File
	local := map[string]bool{} // the names the files import archived under
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		require.NoError(t, err)
		files = append(files, f)
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			require.NoError(t, err)
			if path == archived || strings.HasPrefix(path, archived+"/") {
				local[localName(imp, path)] = true
			}
		}
	}
	pkg, err := doc.NewFromFiles(fset, files, "github.com/retrykit/retrykit/retrytest")
	require.NoError(t, err)
	var found []string
	for _, decl := range exported(pkg) {
		ast.Inspect(decl, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && local[id.Name] {
					found = append(found, fset.Position(sel.Pos()).String()+": "+id.Name+"."+sel.Sel.Name)
				}
			}
			return true
		})
	}
	require.Empty(t, found, "exported declarations that name a type of %s", archived)
}

// exported returns the declarations that go doc shows: doc.NewFromFiles
// has dropped the unexported names and struct fields.
func exported(pkg *doc.Package) []ast.Node {
	var decls []ast.Node
	for _, v := range append(pkg.Consts, pkg.Vars...) {
		decls = append(decls, v.Decl)
	}
	funcs := pkg.Funcs
	for _, typ := range pkg.Types {
		decls = append(decls, typ.Decl)
		for _, v := range append(typ.Consts, typ.Vars...) {
			decls = append(decls, v.Decl)
		}
		funcs = append(append(funcs, typ.Funcs...), typ.Methods...)
	}
	for _, f := range funcs {
		f.Decl.Body = nil // the signature only
		decls = append(decls, f.Decl)
	}
	return decls
}

// localName returns the name a file refers to the package at path by.
func localName(imp *ast.ImportSpec, path string) string {
	if imp.Name != nil {
		return imp.Name.Name
	}
	return path[strings.LastIndex(path, "/")+1:]
}
