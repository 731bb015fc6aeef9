package retryvet

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"
)

// Ctx reports an operation, written as a function literal in a call of
// retry.Do, DoValue, Hedge, HedgeValue, Loop or Go, that ignores its context
// parameter while it calls something that takes a context.Context. Such an
// operation runs under another context, usually the enclosing function's,
// so neither the attempt timeout nor the end of the call reaches it. The
// report is at the first call in the operation that takes a context.
var Ctx = &analysis.Analyzer{
	Name:     "ctx",
	Doc:      "report retry operations that ignore their context parameter while calling something that takes a context",
	URL:      docURL + "#ctx",
	Requires: []*analysis.Analyzer{inspect.Analyzer},
	Run:      runCtx,
}

func runCtx(pass *analysis.Pass) (any, error) {
	in := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	for c := range in.Root().Preorder((*ast.CallExpr)(nil)) {
		call := c.Node().(*ast.CallExpr)
		r, ok := runnerOf(pass.TypesInfo, call)
		if !ok {
			continue
		}
		if lit := operation(call, r); lit != nil {
			checkOperationContext(pass, r, lit)
		}
	}
	return nil, nil
}

// checkOperationContext reports lit when its context parameter is unnamed,
// blank or unused, and its body calls something that takes a context.
func checkOperationContext(pass *analysis.Pass, r runner, lit *ast.FuncLit) {
	var param *types.Var
	if params := lit.Type.Params.List; len(params) == 1 && len(params[0].Names) == 1 {
		if id := params[0].Names[0]; id.Name != "_" {
			param, _ = pass.TypesInfo.Defs[id].(*types.Var)
		}
	}
	if param != nil && usesObject(pass.TypesInfo, lit.Body, param) {
		return
	}
	call := contextCall(pass.TypesInfo, lit.Body)
	if call == nil {
		return
	}
	if param == nil {
		pass.Reportf(call.Pos(), "the operation of retry.%s ignores its context parameter, yet calls %s, which takes a context: "+
			"name the parameter and pass it on, so that the call's end and its attempt timeout reach %s",
			r.name, types.ExprString(call.Fun), types.ExprString(call.Fun))
		return
	}
	pass.Reportf(call.Pos(), "the operation of retry.%s never uses its context %s, yet calls %s, which takes a context: "+
		"pass it %s, so that the call's end and its attempt timeout reach it",
		r.name, param.Name(), types.ExprString(call.Fun), param.Name())
}

// usesObject reports whether node refers to obj anywhere.
func usesObject(info *types.Info, node ast.Node, obj types.Object) bool {
	used := false
	ast.Inspect(node, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && info.Uses[id] == obj {
			used = true
		}
		return !used
	})
	return used
}

// contextCall returns the first call in body, in source order, of a function
// or method that takes a context.Context, or nil. A function literal inside
// body that has a context parameter of its own is left out: the calls in it
// are that function's business.
func contextCall(info *types.Info, body *ast.BlockStmt) *ast.CallExpr {
	var found *ast.CallExpr
	ast.Inspect(body, func(n ast.Node) bool {
		if found != nil {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit:
			return !hasContextParam(info.TypeOf(n))
		case *ast.CallExpr:
			if tv, ok := info.Types[n.Fun]; ok && tv.IsValue() && hasContextParam(tv.Type) {
				found = n
			}
		}
		return true
	})
	return found
}

// hasContextParam reports whether t is a function type with a parameter of
// type context.Context.
func hasContextParam(t types.Type) bool {
	if t == nil {
		return false
	}
	sig, ok := t.Underlying().(*types.Signature)
	if !ok {
		return false
	}
	for i := range sig.Params().Len() {
		if isContext(sig.Params().At(i).Type()) {
			return true
		}
	}
	return false
}
