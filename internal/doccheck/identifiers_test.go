package doccheck_test

import (
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// packages are the retrykit packages a reader imports, by folder: the
// identifiers the Markdown pages name in them must exist.
var packages = []string{
	"backoff", "policy", "retry", "retryhttp", "retrysql", "retrytest",
	"retrygrpc", "retryotel", "retrykube", "retryriver", "retryvet",
}

// TestIdentifiers checks that every identifier of a retrykit package that
// README.md, BENCHMARKS.md and the docs/ pages name exists in that
// package's exported API.
func TestIdentifiers(t *testing.T) {
	root := repositoryRoot(t)
	api := loadAPI(t, root)
	for _, name := range pages(t, root) {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, problem := range api.check(string(data)) {
			t.Errorf("%s:%s", name, problem)
		}
	}
}

// TestIdentifierCheck shows what the check accepts and what it reports.
func TestIdentifierCheck(t *testing.T) {
	api := loadAPI(t, repositoryRoot(t))
	tests := []struct {
		name string
		page string
		want []string // the problems, each a substring of one report, in order
	}{
		{"a function", "Call `retry.Do`.", nil},
		{"a type and its method", "`policy.Policy.WithGuard` and `policy.Guard`.", nil},
		{"a constructor grouped under its type", "`policy.Default()` and `backoff.Default()`.", nil},
		{"a struct field", "`retry.Error.Attempts` and `retry.DoneEvent.Attempts`.", nil},
		{"a method promoted from another module", "`retrytest.Clock.Add`", nil},
		{"a module of its own", "`retrygrpc.WithCodes` and `retryriver.NewMiddleware`.", nil},
		{"a generic call", "`retrykube.NewRateLimiter[string](p)`", nil},
		{"a metric name is no identifier", "`retry.client.calls`", nil},
		{"a name outside retrykit", "`http.DefaultTransport` and `errgroup.Group`.", nil},
		{"prose is not checked", "policy.Budget in plain words", nil},
		{"a span across lines", "`retrykube.NewRateLimiter[string](p),\n&workqueue.X{}`", nil},
		{"a bare type's member", "`Error.Attempts` and `Policy.WithGuard`.", nil},
		{"a bare name outside retrykit", "`Config.Workers`", nil},

		{"a missing name", "The `policy.Budget` caps retries.", []string{"1: policy.Budget: package policy has no exported Budget"}},
		{"a missing method", "`policy.Policy.WithBudget`", []string{"policy.Policy.WithBudget: policy.Policy has no exported WithBudget"}},
		{"a member of a function", "`retry.Do.Attempts`", []string{"retry.Do.Attempts: retry.Do is not a type"}},
		{"a constant's member, judged by its type", "`backoff.Full.String`", []string{"backoff.Full.String: backoff.JitterKind has no exported String"}},
		{"a bare type's missing member", "`Policy.WithBudget`", []string{"Policy.WithBudget: no retrykit type Policy has WithBudget"}},
		{"a line number", "one\n\ntwo `retry.Nope`", []string{"3: retry.Nope"}},
		{"in a Go snippet", "```go\np := policy.Default().WithGuard(policy.NewBudget(1))\n```\n", []string{"2: policy.NewBudget"}},
		{"a shell block is not Go", "```sh\necho policy.Budget\n```\n", nil},
		{"a link to pkg.go.dev", "[doc](https://pkg.go.dev/github.com/retrykit/retrykit/policy#Budget)", []string{"policy.Budget: package policy has no exported Budget"}},
		{"a link's section", "[doc](https://pkg.go.dev/github.com/retrykit/retrykit/retry#hdr-The_loop)", nil},
		{"a link to a package that is not one", "[doc](https://pkg.go.dev/github.com/retrykit/retrykit/budget)", []string{"no retrykit package budget"}},
		{"a folder's row names its package's names", "| `policy/` | `Policy`, `Guard`, `Hedging` |", nil},
		{"a folder's row with a name from elsewhere", "| `policy/` | the immutable `Policy`, `Budget`, `Guard`, `Hedge` |", []string{"policy.Budget", "policy.Hedge"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := api.check(tt.page)
			require := func(ok bool, format string, args ...any) {
				t.Helper()
				if !ok {
					t.Fatalf(format, args...)
				}
			}
			require(len(got) == len(tt.want), "check(%q) = %q, want %d problems like %q", tt.page, got, len(tt.want), tt.want)
			for i, w := range tt.want {
				require(strings.Contains(got[i], w), "check(%q)[%d] = %q, want it to contain %q", tt.page, i, got[i], w)
			}
		})
	}
}

// repositoryRoot returns the root module's folder, skipping the test when
// this module runs from the module cache, where no README is beside it.
func repositoryRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "README.md")); err != nil {
		t.Skipf("the repository's README.md is not two folders up (run from a clone, not the module cache): %v", err)
	}
	return root
}

// pkgAPI is the exported API of one package.
type pkgAPI struct {
	names   map[string]bool            // every exported top-level name
	typeOf  map[string]string          // a name's type, for types and the constants and variables go/doc groups under one
	members map[string]map[string]bool // a type's exported methods and fields
	open    map[string]bool            // types that embed one from another package: their members cannot all be known here
}

// api is the exported API of every package, by folder.
type api map[string]*pkgAPI

// loadAPI parses the non-test Go files of every package in packages, modules
// of their own included, and collects what they export.
func loadAPI(t *testing.T, root string) api {
	t.Helper()
	a := api{}
	for _, dir := range packages {
		paths, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		var files []*ast.File
		for _, path := range paths {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		if len(files) == 0 {
			t.Fatalf("package %s: no Go files in %s", dir, filepath.Join(root, dir))
		}
		p, err := doc.NewFromFiles(fset, files, "github.com/retrykit/retrykit/"+dir, doc.AllMethods)
		if err != nil {
			t.Fatal(err)
		}
		a[dir] = exported(p)
	}
	return a
}

// exported collects the exported API of p.
func exported(p *doc.Package) *pkgAPI {
	pa := &pkgAPI{names: map[string]bool{}, typeOf: map[string]string{}, members: map[string]map[string]bool{}, open: map[string]bool{}}
	values := func(vs []*doc.Value, typ string) {
		for _, v := range vs {
			for _, n := range v.Names {
				pa.names[n] = true
				if typ != "" {
					pa.typeOf[n] = typ
				}
			}
		}
	}
	values(p.Consts, "")
	values(p.Vars, "")
	for _, f := range p.Funcs {
		pa.names[f.Name] = true
	}
	for _, typ := range p.Types {
		pa.names[typ.Name] = true
		pa.typeOf[typ.Name] = typ.Name
		values(typ.Consts, typ.Name)
		values(typ.Vars, typ.Name)
		for _, f := range typ.Funcs {
			pa.names[f.Name] = true
		}
		m := map[string]bool{}
		for _, f := range typ.Methods {
			m[f.Name] = true
		}
		for _, spec := range typ.Decl.Specs {
			ts, ok := spec.(*ast.TypeSpec)
			if !ok || ts.Name.Name != typ.Name {
				continue
			}
			var fields []*ast.Field
			switch tt := ts.Type.(type) {
			case *ast.StructType:
				fields = tt.Fields.List
			case *ast.InterfaceType:
				fields = tt.Methods.List
			}
			for _, field := range fields {
				for _, n := range field.Names {
					if n.IsExported() {
						m[n.Name] = true
					}
				}
				if len(field.Names) == 0 { // embedded
					name, foreign := embeddedName(field.Type)
					m[name] = true
					if foreign {
						pa.open[typ.Name] = true
					}
				}
			}
		}
		pa.members[typ.Name] = m
	}
	return pa
}

// embeddedName returns the field name of an embedded type, and whether the
// type comes from another package.
func embeddedName(e ast.Expr) (name string, foreign bool) {
	switch e := e.(type) {
	case *ast.StarExpr:
		return embeddedName(e.X)
	case *ast.IndexExpr:
		return embeddedName(e.X)
	case *ast.IndexListExpr:
		return embeddedName(e.X)
	case *ast.SelectorExpr:
		return e.Sel.Name, true
	case *ast.Ident:
		return e.Name, false
	}
	return "?", true
}

var (
	// qualified matches pkg.Name and pkg.Type.Member for a retrykit
	// package, not preceded by a letter, digit, dot or slash, so that
	// import paths and x.retry.Y are left alone.
	qualified = regexp.MustCompile(`(?:^|[^\w./])(` + strings.Join(packages, "|") + `)\.([A-Z]\w*)(?:\.([A-Z]\w*))?`)
	// bare matches Type.Member with no package.
	bare = regexp.MustCompile(`(?:^|[^\w./])([A-Z]\w*)\.([A-Z]\w*)`)
	// word matches a word of code, dots included, so that an exported
	// identifier on its own can be told from a qualified one.
	word = regexp.MustCompile(`[\w.]+`)
	// exportedIdent matches an exported identifier and nothing else.
	exportedIdent = regexp.MustCompile(`^[A-Z]\w*$`)
	// link matches a pkg.go.dev link to the repository, with its anchor.
	link = regexp.MustCompile(`https://pkg\.go\.dev/github\.com/retrykit/retrykit(/[\w/]+)?(?:#([\w.\-]+))?`)
	// folderRow matches a table row whose first cell names a package
	// folder, as in "| `policy/` | … |".
	folderRow = regexp.MustCompile("^\\|\\s*`(\\w+)/`\\s*\\|")
)

// check returns the problems of a Markdown page, each as "line: what".
func (a api) check(page string) []string {
	var problems []string
	report := func(line int, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("%d: %s", line, fmt.Sprintf(format, args...)))
	}
	for _, c := range codeOf(page) {
		for _, m := range qualified.FindAllStringSubmatchIndex(c.text, -1) {
			pkg, name := c.text[m[2]:m[3]], c.text[m[4]:m[5]]
			member := ""
			if m[6] >= 0 {
				member = c.text[m[6]:m[7]]
			}
			if err := a.resolve(pkg, name, member); err != nil {
				report(c.line+strings.Count(c.text[:m[2]], "\n"), "%v", err)
			}
		}
		for _, m := range bare.FindAllStringSubmatchIndex(c.text, -1) {
			typ, member := c.text[m[2]:m[3]], c.text[m[4]:m[5]]
			if err := a.resolveBare(typ, member); err != nil {
				report(c.line+strings.Count(c.text[:m[2]], "\n"), "%v", err)
			}
		}
		if c.pkg == "" {
			continue
		}
		// A package folder's row: its bare names are that package's.
		for _, w := range word.FindAllString(c.text, -1) {
			if !exportedIdent.MatchString(w) {
				continue
			}
			if err := a.resolve(c.pkg, w, ""); err != nil {
				report(c.line, "%v", err)
			}
		}
	}
	for i, line := range strings.Split(page, "\n") {
		for _, m := range link.FindAllStringSubmatch(line, -1) {
			pkg := strings.Trim(m[1], "/")
			if pkg != "" && !slices.Contains(packages, pkg) {
				report(i+1, "%s: no retrykit package %s", m[0], pkg)
				continue
			}
			anchor := m[2]
			if pkg == "" || anchor == "" || strings.HasPrefix(anchor, "hdr-") {
				continue
			}
			name, member, _ := strings.Cut(anchor, ".")
			if err := a.resolve(pkg, name, member); err != nil {
				report(i+1, "%s: %v", m[0], err)
			}
		}
	}
	return problems
}

// resolve reports whether pkg exports name, and name, a type, member.
func (a api) resolve(pkg, name, member string) error {
	p := a[pkg]
	if !p.names[name] {
		return fmt.Errorf("%s.%s: package %s has no exported %s", pkg, name, pkg, name)
	}
	if member == "" {
		return nil
	}
	typ, ok := p.typeOf[name]
	if !ok {
		return fmt.Errorf("%s.%s.%s: %s.%s is not a type, nor a value of one", pkg, name, member, pkg, name)
	}
	if !p.members[typ][member] && !p.open[typ] {
		return fmt.Errorf("%s.%s.%s: %s.%s has no exported %s", pkg, name, member, pkg, typ, member)
	}
	return nil
}

// resolveBare reports whether Type.Member, named without its package, is a
// member of a retrykit type of that name, when there is one.
func (a api) resolveBare(typ, member string) error {
	found := false
	for _, pkg := range packages {
		p := a[pkg]
		if p.typeOf[typ] != typ {
			continue
		}
		found = true
		if p.members[typ][member] || p.open[typ] {
			return nil
		}
	}
	if found {
		return fmt.Errorf("%s.%s: no retrykit type %s has %s", typ, member, typ, member)
	}
	return nil
}

// code is a piece of code in a Markdown page: an inline code span, or the
// body of a ```go block, with the line it starts on and, for the spans of a
// table row that names a package folder, that package.
type code struct {
	text string
	line int
	pkg  string
}

// codeOf returns the code spans and Go blocks of a Markdown page. A span
// may run across lines within a paragraph. Other fenced blocks (shell,
// text) are not Go and are left out.
func codeOf(page string) []code {
	var out []code
	lines := strings.Split(page, "\n")
	var para []string // the paragraph being read, outside fences
	paraStart := 0
	flush := func() {
		out = append(out, spans(strings.Join(para, "\n"), paraStart)...)
		para = nil
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if fence, ok := strings.CutPrefix(strings.TrimSpace(line), "```"); ok {
			flush()
			start := i + 2
			var body []string
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
				body = append(body, lines[i])
			}
			if strings.TrimSpace(fence) == "go" {
				out = append(out, code{text: strings.Join(body, "\n"), line: start})
			}
			continue
		}
		if m := folderRow.FindStringSubmatch(line); m != nil && slices.Contains(packages, m[1]) {
			flush()
			for _, s := range spans(line, i+1) {
				if s.text != m[1]+"/" {
					s.pkg = m[1]
				}
				out = append(out, s)
			}
			continue
		}
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		if len(para) == 0 {
			paraStart = i + 1
		}
		para = append(para, line)
	}
	flush()
	return out
}

// spans returns the inline code spans of text, which starts on line first:
// a run of n backticks up to the next run of exactly n.
func spans(text string, first int) []code {
	var out []code
	for i := 0; i < len(text); {
		if text[i] != '`' {
			i++
			continue
		}
		n := 0
		for i+n < len(text) && text[i+n] == '`' {
			n++
		}
		open := i
		end := -1
		for j := open + n; j < len(text); {
			if text[j] != '`' {
				j++
				continue
			}
			k := 0
			for j+k < len(text) && text[j+k] == '`' {
				k++
			}
			if k == n {
				end = j
				break
			}
			j += k
		}
		if end < 0 {
			i = open + n // no closing run: the backticks are literal
			continue
		}
		out = append(out, code{text: text[open+n : end], line: first + strings.Count(text[:open], "\n")})
		i = end + n
	}
	return out
}
