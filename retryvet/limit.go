package retryvet

import (
	"go/ast"
	"go/constant"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"
)

// Limit reports a policy built in the argument list of retry.Do, DoValue,
// Hedge, HedgeValue or Go, from policy.Default, Exponential, Constant or
// Custom, with neither WithMaxAttempts nor WithMaxElapsed, when no context
// gets a deadline (context.WithTimeout, WithDeadline, WithTimeoutCause,
// WithDeadlineCause) in the function where the call's context comes from.
// That is the function that declares the context, when the call's context
// is a variable, and the innermost function around the call otherwise, as
// for r.Context(). A deadline set inside an operation does not count: it
// bounds one attempt, not the call. Such a call retries until the context
// ends, which may be never. retry.Loop is left out, since it is meant to
// run forever. So is a policy that comes from a variable or a function,
// which this check cannot see into, and so are test files, whose calls go
// test's timeout bounds.
var Limit = &analysis.Analyzer{
	Name:     "limit",
	Doc:      "report retry calls whose policy, built in the call, has no attempt or time limit, and whose function sets no deadline",
	URL:      docURL + "#limit",
	Requires: []*analysis.Analyzer{inspect.Analyzer},
	Run:      runLimit,
}

// deadlines are the functions of package context that give a context a deadline.
var deadlines = []string{"WithTimeout", "WithDeadline", "WithTimeoutCause", "WithDeadlineCause"}

func runLimit(pass *analysis.Pass) (any, error) {
	in := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	isOp := map[*ast.FuncLit]bool{}
	for c := range in.Root().Preorder((*ast.CallExpr)(nil)) {
		call := c.Node().(*ast.CallExpr)
		if r, ok := runnerOf(pass.TypesInfo, call); ok {
			if lit := operation(call, r); lit != nil {
				isOp[lit] = true
			}
		}
	}
	for c := range in.Root().Preorder((*ast.CallExpr)(nil)) {
		call := c.Node().(*ast.CallExpr)
		r, ok := runnerOf(pass.TypesInfo, call)
		if !ok || r.loop || isTestFile(pass, call) {
			continue
		}
		arg := call.Args[r.policy]
		base := unlimitedPolicy(pass.TypesInfo, arg)
		if base == nil || setsDeadline(pass.TypesInfo, contextFunc(pass.TypesInfo, c, call.Args[0]), isOp) {
			continue
		}
		pass.Reportf(arg.Pos(), "%s has neither WithMaxAttempts nor WithMaxElapsed, and no context gets a deadline in this function: "+
			"retry.%s can retry forever. Give the policy a limit, or the context a deadline",
			types.ExprString(base.Fun)+"(…)", r.name)
	}
	return nil, nil
}

// unlimitedPolicy returns the constructor call at the root of expr when
// expr is a chain of policy.Policy methods on policy.Default, Exponential,
// Constant or Custom in which the last WithMaxAttempts and the last
// WithMaxElapsed are missing or set 0, which means no limit. It returns nil
// for any other expression, and for a chain with a limit.
func unlimitedPolicy(info *types.Info, expr ast.Expr) *ast.CallExpr {
	attempts, elapsed := false, false // whether the chain's last setting of each has been seen
	for {
		call, ok := ast.Unparen(expr).(*ast.CallExpr)
		if !ok {
			return nil
		}
		fn := callee(info, call)
		for _, name := range []string{"Default", "Exponential", "Constant", "Custom"} {
			if isFunc(fn, policyPath, name) {
				return call
			}
		}
		sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
		if !ok || fn == nil || !isPolicyMethod(fn, fn.Name()) {
			return nil
		}
		if s := info.Selections[sel]; s == nil || s.Kind() != types.MethodVal {
			return nil
		}
		switch {
		case fn.Name() == "WithMaxAttempts" && !attempts:
			attempts = true
			if !isZero(info, call.Args[0]) {
				return nil
			}
		case fn.Name() == "WithMaxElapsed" && !elapsed:
			elapsed = true
			if !isZero(info, call.Args[0]) {
				return nil
			}
		}
		expr = sel.X
	}
}

// isZero reports whether expr is a constant zero.
func isZero(info *types.Info, expr ast.Expr) bool {
	tv := info.Types[expr]
	return tv.Value != nil && constant.Sign(tv.Value) == 0
}

// setsDeadline reports whether fn calls one of the context functions that
// give a context a deadline, anywhere in its body, function literals
// included except operations, whose deadlines bound one attempt.
func setsDeadline(info *types.Info, fn ast.Node, isOp map[*ast.FuncLit]bool) bool {
	if fn == nil {
		return false
	}
	found := false
	ast.Inspect(funcBody(fn), func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return !isOp[n] // fn itself may be an operation: its body is searched
		case *ast.CallExpr:
			for _, name := range deadlines {
				found = found || isCall(info, n, "context", name)
			}
		}
		return !found
	})
	return found
}

// contextFunc returns the function where ctx, the context argument of the
// call at c, comes from: the function declaration or literal that declares
// it when ctx is a variable of a function, and the innermost one that holds
// the call otherwise. It returns nil at package level.
func contextFunc(info *types.Info, c inspector.Cursor, ctx ast.Expr) ast.Node {
	var decl types.Object
	if id, ok := ast.Unparen(ctx).(*ast.Ident); ok {
		decl = info.Uses[id]
	}
	var innermost ast.Node
	for e := range c.Enclosing((*ast.FuncDecl)(nil), (*ast.FuncLit)(nil)) {
		fn := e.Node()
		if innermost == nil {
			innermost = fn
		}
		if decl != nil && fn.Pos() <= decl.Pos() && decl.Pos() < fn.End() {
			return fn
		}
	}
	return innermost
}

// isTestFile reports whether node is in a _test.go file.
func isTestFile(pass *analysis.Pass, node ast.Node) bool {
	f := pass.Fset.File(node.Pos())
	return f != nil && strings.HasSuffix(f.Name(), "_test.go")
}
