package retryvet

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/types/typeutil"
)

// The packages whose API the checks know. Names are matched by package path
// and name, through the type checker, never by the text of the call.
const (
	retryPath     = "github.com/retrykit/retrykit/retry"
	policyPath    = "github.com/retrykit/retrykit/policy"
	retryhttpPath = "github.com/retrykit/retrykit/retryhttp"
)

// A runner is one of the retry package's functions that run an operation.
type runner struct {
	name   string
	op     int  // the index of the operation among the call's arguments
	policy int  // the index of the policy among the call's arguments
	loop   bool // retry.Loop, which is meant to run forever
}

var runners = map[string]runner{
	"Do":         {name: "Do", op: 1, policy: 2},
	"DoValue":    {name: "DoValue", op: 1, policy: 2},
	"Hedge":      {name: "Hedge", op: 1, policy: 2},
	"HedgeValue": {name: "HedgeValue", op: 1, policy: 2},
	"Loop":       {name: "Loop", op: 1, policy: 2, loop: true},
	"Go":         {name: "Go", op: 2, policy: 3},
}

// callee returns the function or method a call calls, its generic origin
// for an instantiation, or nil for a call of a function value, a
// conversion or a builtin.
func callee(info *types.Info, call *ast.CallExpr) *types.Func {
	fn, _ := typeutil.Callee(info, call).(*types.Func)
	if fn == nil {
		return nil
	}
	return fn.Origin()
}

// isFunc reports whether fn is the package-level function pkg.name.
func isFunc(fn *types.Func, pkg, name string) bool {
	return fn != nil && fn.Pkg() != nil && fn.Pkg().Path() == pkg && fn.Name() == name &&
		fn.Type().(*types.Signature).Recv() == nil
}

// isCall reports whether call calls the package-level function pkg.name.
func isCall(info *types.Info, call *ast.CallExpr, pkg, name string) bool {
	return isFunc(callee(info, call), pkg, name)
}

// runnerOf returns the retry function that call calls, if it is one.
func runnerOf(info *types.Info, call *ast.CallExpr) (runner, bool) {
	fn := callee(info, call)
	if fn == nil || fn.Pkg() == nil || fn.Pkg().Path() != retryPath || fn.Type().(*types.Signature).Recv() != nil {
		return runner{}, false
	}
	r, ok := runners[fn.Name()]
	if !ok || len(call.Args) <= r.policy {
		return runner{}, false
	}
	return r, true
}

// operation returns the function literal a runner's call passes as its
// operation, or nil when the operation is anything else, such as a named
// function or a variable.
func operation(call *ast.CallExpr, r runner) *ast.FuncLit {
	lit, _ := ast.Unparen(call.Args[r.op]).(*ast.FuncLit)
	return lit
}

// isPolicyMethod reports whether fn is the method name of policy.Policy.
func isPolicyMethod(fn *types.Func, name string) bool {
	if fn == nil || fn.Name() != name || fn.Pkg() == nil || fn.Pkg().Path() != policyPath {
		return false
	}
	recv := fn.Type().(*types.Signature).Recv()
	return recv != nil && isNamed(recv.Type(), policyPath, "Policy")
}

// isNamed reports whether t, or what it points to, is the named type pkg.name.
func isNamed(t types.Type, pkg, name string) bool {
	if p, ok := types.Unalias(t).(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	if !ok {
		return false
	}
	obj := n.Obj()
	return obj.Pkg() != nil && obj.Pkg().Path() == pkg && obj.Name() == name
}

// isContext reports whether t is context.Context.
func isContext(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "context" && n.Obj().Name() == "Context"
}
