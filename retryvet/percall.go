package retryvet

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"
)

// PerCall reports a policy.NewGuard or a retryhttp.New whose result lives
// for one call, and so sees one call: a guard that sees one call admits
// every retry, and a Transport made for one request also has a guard and a
// connection pool of its own. It reports one made inside a loop, one made
// inside an HTTP handler (a function taking an http.ResponseWriter and an
// *http.Request), and one made by a function that then makes a single
// retried call with it: retry.Do, DoValue, Hedge, HedgeValue, Loop or Go,
// or a request through the http.Client or Transport. One made at package
// level, or returned, stored in a field, a map, a slice, a package-level
// variable or a channel, or passed to a function other than those of
// retrykit, fmt and log, is not reported; nor is one made by main, which
// lives as long as the program. Test files are not checked: a test makes
// its own guard on purpose.
var PerCall = &analysis.Analyzer{
	Name:     "percall",
	Doc:      "report guards and retrying Transports made for a single call: in a loop, in an HTTP handler, or for one retried call",
	URL:      docURL + "#percall",
	Requires: []*analysis.Analyzer{inspect.Analyzer},
	Run:      runPerCall,
}

func runPerCall(pass *analysis.Pass) (any, error) {
	in := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	for c := range in.Root().Preorder((*ast.CallExpr)(nil)) {
		call := c.Node().(*ast.CallExpr)
		var what, made string
		switch {
		case isCall(pass.TypesInfo, call, policyPath, "NewGuard"):
			what, made = "policy.NewGuard", "a guard"
		case isCall(pass.TypesInfo, call, retryhttpPath, "New"):
			what, made = "retryhttp.New", "a Transport, with its guard and connection pool,"
		default:
			continue
		}
		if isTestFile(pass, call) {
			continue
		}
		fn, ok := enclosingFunc(c)
		if !ok {
			continue // package level
		}
		f := follow(pass.TypesInfo, fn, call)
		if f.escapes {
			continue
		}
		switch {
		case inLoop(c, fn):
			pass.Reportf(call.Pos(), "%s inside a loop makes %s for each time round, and one that sees a single call admits every retry: "+
				"make it once, outside the loop, and share it", what, made)
		case inHandler(pass.TypesInfo, c):
			pass.Reportf(call.Pos(), "%s inside an HTTP handler makes %s for each request, and one that sees a single call admits every retry: "+
				"make it once per dependency, when the server starts, and share it", what, made)
		case len(f.uses) == 1 && !f.shared && !isMain(pass, fn.Node()):
			pass.Reportf(call.Pos(), "%s makes %s for the one retried call of this function, at line %d, and one that sees a single call admits every retry: "+
				"make it once per dependency, at package level or where it is stored, and share it",
				what, made, pass.Fset.Position(f.uses[0].Pos()).Line)
		}
	}
	return nil, nil
}

// enclosingFunc returns the innermost function declaration or literal
// that holds the node at c.
func enclosingFunc(c inspector.Cursor) (inspector.Cursor, bool) {
	for e := range c.Enclosing((*ast.FuncDecl)(nil), (*ast.FuncLit)(nil)) {
		return e, true
	}
	return inspector.Cursor{}, false
}

// inLoop reports whether the node at c is in the body of a for or range
// statement of the function fn, not counting loops outside fn.
func inLoop(c, fn inspector.Cursor) bool {
	pos := c.Node().Pos()
	for e := range c.Enclosing((*ast.ForStmt)(nil), (*ast.RangeStmt)(nil)) {
		if !fn.Contains(e) {
			return false
		}
		var body *ast.BlockStmt
		switch loop := e.Node().(type) {
		case *ast.ForStmt:
			body = loop.Body
		case *ast.RangeStmt:
			body = loop.Body
		}
		if body.Pos() <= pos && pos < body.End() {
			return true
		}
	}
	return false
}

// inHandler reports whether the node at c is inside a function, at any
// depth, whose parameters are an http.ResponseWriter and an *http.Request.
func inHandler(info *types.Info, c inspector.Cursor) bool {
	for e := range c.Enclosing((*ast.FuncDecl)(nil), (*ast.FuncLit)(nil)) {
		var t types.Type
		switch fn := e.Node().(type) {
		case *ast.FuncDecl:
			if obj := info.Defs[fn.Name]; obj != nil {
				t = obj.Type()
			}
		case *ast.FuncLit:
			t = info.TypeOf(fn)
		}
		sig, ok := t.(*types.Signature)
		if ok && sig.Params().Len() == 2 &&
			isNamed(sig.Params().At(0).Type(), "net/http", "ResponseWriter") &&
			isPointerTo(sig.Params().At(1).Type(), "net/http", "Request") {
			return true
		}
	}
	return false
}

func isPointerTo(t types.Type, pkg, name string) bool {
	_, ok := types.Unalias(t).(*types.Pointer)
	return ok && isNamed(t, pkg, name)
}

// isMain reports whether fn is the main function of a main package.
func isMain(pass *analysis.Pass, fn ast.Node) bool {
	decl, ok := fn.(*ast.FuncDecl)
	return ok && decl.Recv == nil && decl.Name.Name == "main" && pass.Pkg.Name() == "main"
}
