package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// A pkgAPI is the exported API of one package.
type pkgAPI struct {
	rel   string   // the import path relative to the repository's root module: retry, retrysql/pgtest
	lines []string // sorted lines, each starting "pkg <rel>, "
	names []string // top-level exported names, and Type.Method for exported methods of exported types
}

// listedPackage is what `go list -json` says of a package that apiOf reads.
type listedPackage struct {
	ImportPath string
	Name       string
	Export     string
	DepOnly    bool
	Imports    []string
	Module     *struct{ Path string }
	Error      *struct{ Err string }
}

// apiOf returns the exported API of every package of module m, except main
// packages and internal ones. rootPath is the root module's path, which
// the API lines leave out of the packages' import paths. For a nested
// module, the API also holds the root's internal packages that its
// packages import: a release of the nested module compiles against them,
// so they are part of what later releases of the root must keep. The types come
// from the compiler's export data, so test files play no part. The module
// is built on its own (GOWORK=off), as a user's build sees it.
func apiOf(root, rootPath string, m libModule) ([]pkgAPI, error) {
	cmd := exec.Command("go", "list", "-export", "-deps",
		"-json=ImportPath,Name,Export,DepOnly,Imports,Module,Error", "./...")
	cmd.Dir = filepath.Join(root, filepath.FromSlash(m.dir))
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go list in %s: %v\n%s", m.dir, err, stderr.Bytes())
	}
	exports := map[string]string{}
	var mine []string
	for dec := json.NewDecoder(&stdout); ; {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list in %s: %v", m.dir, err)
		}
		if p.Error != nil {
			return nil, fmt.Errorf("go list in %s: %s: %s", m.dir, p.ImportPath, p.Error.Err)
		}
		exports[p.ImportPath] = p.Export
		if !p.DepOnly && p.Module != nil && p.Module.Path == m.path && p.Name != "main" && !isInternal(p.ImportPath) {
			mine = append(mine, p.ImportPath)
			for _, imported := range p.Imports {
				if m.path != rootPath && strings.HasPrefix(imported, rootPath+"/internal/") && !slices.Contains(mine, imported) {
					mine = append(mine, imported)
				}
			}
		}
	}
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	})
	slices.Sort(mine)
	var apis []pkgAPI
	for _, importPath := range mine {
		pkg, err := imp.Import(importPath)
		if err != nil {
			return nil, err
		}
		apis = append(apis, packageAPI(relPath(rootPath, importPath), pkg))
	}
	return apis, nil
}

func isInternal(importPath string) bool {
	return slices.Contains(strings.Split(importPath, "/"), "internal")
}

// relPath is importPath relative to the root module's path, or the import
// path itself for a package outside it.
func relPath(rootPath, importPath string) string {
	if importPath == rootPath {
		return path.Base(rootPath)
	}
	if rel, ok := strings.CutPrefix(importPath, rootPath+"/"); ok {
		return rel
	}
	return importPath
}

// packageAPI lists the exported declarations of pkg, one a line, in the
// manner of the Go project's api/*.txt.
func packageAPI(rel string, pkg *types.Package) pkgAPI {
	api := pkgAPI{rel: rel}
	add := func(format string, args ...any) {
		api.lines = append(api.lines, "pkg "+rel+", "+fmt.Sprintf(format, args...))
	}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		if !token.IsExported(name) {
			continue
		}
		api.names = append(api.names, name)
		switch obj := scope.Lookup(name).(type) {
		case *types.Const:
			add("const %s %s = %s", name, typeString(pkg, obj.Type()), obj.Val().ExactString())
		case *types.Var:
			add("var %s %s", name, typeString(pkg, obj.Type()))
		case *types.Func:
			add("func %s%s", name, signatureString(pkg, obj.Signature()))
		case *types.TypeName:
			for _, m := range typeAPI(pkg, obj, add) {
				api.names = append(api.names, name+"."+m)
			}
		}
	}
	slices.Sort(api.lines)
	return api
}

// typeAPI lists a named type, its exported fields or interface methods, and
// its exported methods. It returns the names of the exported methods it
// declares.
func typeAPI(pkg *types.Package, obj *types.TypeName, add func(string, ...any)) []string {
	name := obj.Name()
	if obj.IsAlias() {
		add("type %s = %s", name, typeString(pkg, types.Unalias(obj.Type())))
		return nil
	}
	named, ok := obj.Type().(*types.Named)
	if !ok {
		add("type %s %s", name, typeString(pkg, obj.Type()))
		return nil
	}
	decl := name + (&typeWriter{pkg: pkg}).typeParamsString(named.TypeParams())
	switch u := named.Underlying().(type) {
	case *types.Struct:
		add("type %s struct", decl)
		for i := range u.NumFields() {
			f := u.Field(i)
			switch {
			case !f.Exported():
			case f.Embedded():
				add("type %s struct, embedded %s", name, typeString(pkg, f.Type()))
			default:
				add("type %s struct, %s %s", name, f.Name(), typeString(pkg, f.Type()))
			}
		}
	case *types.Interface:
		interfaceAPI(pkg, name, decl, u, add)
	default:
		add("type %s %s", decl, typeString(pkg, u))
	}
	var methods []string
	for i := range named.NumMethods() {
		m := named.Method(i)
		if !m.Exported() {
			continue
		}
		methods = append(methods, m.Name())
		recv := name + (&typeWriter{pkg: pkg}).typeParamNames(named.TypeParams())
		if _, ptr := m.Signature().Recv().Type().(*types.Pointer); ptr {
			recv = "*" + recv
		}
		add("method (%s) %s%s", recv, m.Name(), signatureString(pkg, m.Signature()))
	}
	return methods
}

// interfaceAPI lists an interface type: its exported methods, one a line,
// and a line that names them with the type terms of a constraint and
// whether it has methods no other package can implement.
func interfaceAPI(pkg *types.Package, name, decl string, u *types.Interface, add func(string, ...any)) {
	var items []string
	for i := range u.NumEmbeddeds() {
		if _, isIface := u.EmbeddedType(i).Underlying().(*types.Interface); !isIface {
			items = append(items, typeString(pkg, u.EmbeddedType(i)))
		}
	}
	unexported := false
	for i := range u.NumMethods() {
		m := u.Method(i)
		if !m.Exported() {
			unexported = true
			continue
		}
		items = append(items, m.Name())
		add("type %s interface, %s%s", name, m.Name(), signatureString(pkg, m.Signature()))
	}
	if unexported {
		items = append(items, "unexported methods")
	}
	if len(items) == 0 {
		add("type %s interface {}", decl)
		return
	}
	add("type %s interface { %s }", decl, strings.Join(items, ", "))
}

func (w *typeWriter) typeParamsString(params *types.TypeParamList) string {
	w.typeParams(params)
	return w.b.String()
}

// typeParamNames spells a generic receiver's parameters: [T], [K, V].
func (w *typeWriter) typeParamNames(params *types.TypeParamList) string {
	if params.Len() == 0 {
		return ""
	}
	names := make([]string, params.Len())
	for i := range params.Len() {
		names[i] = params.At(i).Obj().Name()
	}
	return "[" + strings.Join(names, ", ") + "]"
}
