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
// Custom, with neither WithMaxAttempts nor WithMaxElapsed, when the
// function that makes the call gives no context a deadline
// (context.WithTimeout, WithDeadline, WithTimeoutCause, WithDeadlineCause).
// Such a call retries until the context ends, which may be never. retry.Loop
// is left out, since it is meant to run forever. So is a policy that comes
// from a variable or a function, which this check cannot see into, and so
// are test files, whose calls go test's timeout bounds.
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
	for c := range in.Root().Preorder((*ast.CallExpr)(nil)) {
		call := c.Node().(*ast.CallExpr)
		r, ok := runnerOf(pass.TypesInfo, call)
		if !ok || r.loop || isTestFile(pass, call) {
			continue
		}
		arg := call.Args[r.policy]
		base := unlimitedPolicy(pass.TypesInfo, arg)
		if base == nil || setsDeadline(pass.TypesInfo, outermostFunc(c)) {
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
// give a context a deadline, anywhere in its body, function literals included.
func setsDeadline(info *types.Info, fn ast.Node) bool {
	if fn == nil {
		return false
	}
	found := false
	ast.Inspect(fn, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			for _, name := range deadlines {
				found = found || isCall(info, call, "context", name)
			}
		}
		return !found
	})
	return found
}

// outermostFunc returns the function declaration, or the function literal
// at package level, that holds the node at c, or nil at package level.
func outermostFunc(c inspector.Cursor) ast.Node {
	var fn ast.Node
	for e := range c.Enclosing((*ast.FuncDecl)(nil), (*ast.FuncLit)(nil)) {
		fn = e.Node()
	}
	return fn
}

// isTestFile reports whether node is in a _test.go file.
func isTestFile(pass *analysis.Pass, node ast.Node) bool {
	f := pass.Fset.File(node.Pos())
	return f != nil && strings.HasSuffix(f.Name(), "_test.go")
}
