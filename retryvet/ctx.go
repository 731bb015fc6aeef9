package retryvet

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"
)

// Ctx reports an operation, written as a function literal in a call of
// retry.Do, DoValue, Hedge, HedgeValue, Loop or Go, that ignores its context
// parameter while it calls something that takes a context.Context. A
// parameter that the operation overwrites before it reads it is ignored too.
// Such an operation runs under another context, usually the enclosing
// function's, so neither the attempt timeout nor the end of the call reaches
// it. The report is at the first call in the operation that takes a
// context.
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
// blank, unused or overwritten before it is read, and its body calls
// something that takes a context.
func checkOperationContext(pass *analysis.Pass, r runner, lit *ast.FuncLit) {
	var param *types.Var
	if params := lit.Type.Params.List; len(params) == 1 && len(params[0].Names) == 1 {
		if id := params[0].Names[0]; id.Name != "_" {
			param, _ = pass.TypesInfo.Defs[id].(*types.Var)
		}
	}
	used := param != nil && usesObject(pass.TypesInfo, lit.Body, param)
	overwritten := used && overwrittenFirst(pass.TypesInfo, lit.Body, param)
	if used && !overwritten {
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
	if overwritten {
		pass.Reportf(call.Pos(), "the operation of retry.%s overwrites its context %s before reading it, yet calls %s, which takes a context: "+
			"derive the new context from %s, so that the call's end and its attempt timeout reach it",
			r.name, param.Name(), types.ExprString(call.Fun), param.Name())
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

// overwrittenFirst reports whether the first statement of body that mentions
// param assigns it a value computed without it, as in
// ctx, cancel := context.WithTimeout(context.Background(), d) or ctx = base.
// The statements before it do not mention param, so its value is never
// read. A body with a goto is not judged, since a jump could skip the
// assignment.
func overwrittenFirst(info *types.Info, body *ast.BlockStmt, param *types.Var) bool {
	if hasGoto(body) {
		return false
	}
	for _, stmt := range body.List {
		if !usesObject(info, stmt, param) {
			continue
		}
		assign, ok := stmt.(*ast.AssignStmt)
		if !ok || (assign.Tok != token.ASSIGN && assign.Tok != token.DEFINE) {
			return false
		}
		for _, r := range assign.Rhs {
			if usesObject(info, r, param) {
				return false
			}
		}
		for _, l := range assign.Lhs {
			if id, ok := ast.Unparen(l).(*ast.Ident); (!ok || info.Uses[id] != param) && usesObject(info, l, param) {
				return false // read to find where to store, as in m[ctx] = v
			}
		}
		return true
	}
	return false
}

// hasGoto reports whether node holds a goto statement.
func hasGoto(node ast.Node) bool {
	found := false
	ast.Inspect(node, func(n ast.Node) bool {
		if b, ok := n.(*ast.BranchStmt); ok && b.Tok == token.GOTO {
			found = true
		}
		return !found
	})
	return found
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
