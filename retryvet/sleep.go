package retryvet

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"
)

// Sleep reports time.Sleep, and a receive from time.After, in the body of
// an operation written as a function literal in a call of retry.Do,
// DoValue, Hedge, HedgeValue, Loop or Go. Such a wait happens outside the
// policy: its limits, the guard, the hooks and a test's mock clock know
// nothing of it, and time.Sleep ignores the context. A function literal
// started with a go statement is left out, since it does not hold up the
// attempt, and so is one kept in a variable that is only ever started with
// a go statement. So is a receive from time.After in a select with other cases,
// which is a wait the other cases can end. Test files are not checked: a
// test may make an operation slow on purpose.
var Sleep = &analysis.Analyzer{
	Name:     "sleep",
	Doc:      "report time.Sleep and receives from time.After inside retry operations",
	URL:      docURL + "#sleep",
	Requires: []*analysis.Analyzer{inspect.Analyzer},
	Run:      runSleep,
}

func runSleep(pass *analysis.Pass) (any, error) {
	in := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	type op struct {
		lit *ast.FuncLit
		r   runner
	}
	var ops []op
	isOp := map[*ast.FuncLit]bool{}
	for c := range in.Root().Preorder((*ast.CallExpr)(nil)) {
		call := c.Node().(*ast.CallExpr)
		if r, ok := runnerOf(pass.TypesInfo, call); ok && !isTestFile(pass, call) {
			if lit := operation(call, r); lit != nil {
				ops = append(ops, op{lit, r})
				isOp[lit] = true
			}
		}
	}
	for _, o := range ops {
		for _, w := range waits(pass, o.lit.Body, isOp) {
			pass.Reportf(w.pos, "%s in the operation of retry.%s waits outside the policy: "+
				"return the error and let the policy wait, where its limits, guard, hooks and clock see it", w.what, o.r.name)
		}
	}
	return nil, nil
}

type wait struct {
	pos  token.Pos
	what string
}

// waits returns the calls of time.Sleep and the receives from time.After
// in body, except those in a function literal that a go statement starts,
// the time.After cases of a select that has other cases, and those of the
// operations of other calls, which are checked on their own.
func waits(pass *analysis.Pass, body *ast.BlockStmt, isOp map[*ast.FuncLit]bool) []wait {
	var found []wait
	started := goOnly(pass.TypesInfo, body)
	var visit func(n ast.Node) bool
	visit = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return !isOp[n] && !started[n]
		case *ast.GoStmt:
			if _, ok := ast.Unparen(n.Call.Fun).(*ast.FuncLit); ok {
				for _, arg := range n.Call.Args { // evaluated in the attempt
					ast.Inspect(arg, visit)
				}
				return false
			}
		case *ast.SelectStmt:
			if len(n.Body.List) > 1 {
				for _, clause := range n.Body.List {
					for _, stmt := range clause.(*ast.CommClause).Body {
						ast.Inspect(stmt, visit)
					}
				}
				return false
			}
		case *ast.CallExpr:
			if isCall(pass.TypesInfo, n, "time", "Sleep") {
				found = append(found, wait{n.Pos(), "time.Sleep"})
			}
		case *ast.UnaryExpr:
			if call, ok := ast.Unparen(n.X).(*ast.CallExpr); ok && n.Op == token.ARROW && isCall(pass.TypesInfo, call, "time", "After") {
				found = append(found, wait{n.Pos(), "a receive from time.After"})
			}
		}
		return true
	}
	ast.Inspect(body, visit)
	return found
}

// goOnly returns the function literals in body that are assigned to a
// variable declared in body, when every other mention of the variable is
// a go statement that calls it: such a literal never runs in the attempt.
func goOnly(info *types.Info, body *ast.BlockStmt) map[*ast.FuncLit]bool {
	lits := map[types.Object]*ast.FuncLit{}
	ast.Inspect(body, func(n ast.Node) bool {
		var names []*ast.Ident
		var values []ast.Expr
		switch n := n.(type) {
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE {
				for _, l := range n.Lhs {
					id, _ := l.(*ast.Ident)
					names = append(names, id)
				}
				values = n.Rhs
			}
		case *ast.ValueSpec:
			names, values = n.Names, n.Values
		}
		if len(names) != len(values) {
			return true
		}
		for i, id := range names {
			lit, ok := ast.Unparen(values[i]).(*ast.FuncLit)
			if obj := info.Defs[id]; ok && obj != nil {
				lits[obj] = lit
			}
		}
		return true
	})
	if len(lits) == 0 {
		return nil
	}
	goCalls := map[*ast.Ident]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		if g, ok := n.(*ast.GoStmt); ok {
			if id, ok := ast.Unparen(g.Call.Fun).(*ast.Ident); ok {
				goCalls[id] = true
			}
		}
		return true
	})
	started := map[*ast.FuncLit]bool{}
	for _, lit := range lits {
		started[lit] = true
	}
	ast.Inspect(body, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && !goCalls[id] {
			if lit := lits[info.Uses[id]]; lit != nil {
				started[lit] = false // called, passed or assigned in the attempt
			}
		}
		return true
	})
	return started
}
