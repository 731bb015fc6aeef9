package retryvet

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/ast/inspector"
)

// A flow is what a function does with the value that one call in it makes.
type flow struct {
	info    *types.Info
	fn      inspector.Cursor
	made    *ast.CallExpr
	holders map[types.Object]bool // the function's variables that hold the value, or something made with it
	escapes bool                  // the value may outlive the function
	uses    []ast.Node            // the retried calls made with it
	shared  bool                  // a retried call made with it is in a loop or a function literal
}

// requestMethods are the methods that send a request through an
// http.Client or a Transport.
var requestMethods = map[string]bool{"Do": true, "Get": true, "Head": true, "Post": true, "PostForm": true, "RoundTrip": true}

// keepers are the packages whose functions may be given the value without
// keeping it beyond the function: retrykit's own, which build policies,
// options and Transports from it, and those that print it.
var keepers = map[string]bool{
	retryPath: true, policyPath: true, retryhttpPath: true,
	"context": true, "fmt": true, "log": true, "log/slog": true,
}

// follow traces the value that the call made, inside the function fn,
// makes: into which of its variables it goes, whether it may leave the
// function, and which retried calls are made with it.
func follow(info *types.Info, fn inspector.Cursor, made *ast.CallExpr) flow {
	f := flow{info: info, fn: fn, made: made, holders: map[types.Object]bool{}}
	for grown := true; grown && !f.escapes; {
		grown = false
		for c := range fn.Preorder((*ast.AssignStmt)(nil), (*ast.ValueSpec)(nil)) {
			grown = f.assign(c.Node()) || grown
		}
	}
	if f.escapes {
		return f
	}
	for c := range fn.Preorder((*ast.ReturnStmt)(nil), (*ast.SendStmt)(nil), (*ast.CallExpr)(nil)) {
		switch n := c.Node().(type) {
		case *ast.ReturnStmt:
			f.escapes = f.escapes || f.anyRefers(n.Results)
		case *ast.SendStmt:
			f.escapes = f.escapes || f.refers(n.Value)
		case *ast.CallExpr:
			f.call(c, n)
		}
	}
	return f
}

// assign follows the value through one assignment or declaration, and
// reports whether it found a new holder.
func (f *flow) assign(n ast.Node) bool {
	var lhs, rhs []ast.Expr
	switch n := n.(type) {
	case *ast.AssignStmt:
		lhs, rhs = n.Lhs, n.Rhs
	case *ast.ValueSpec:
		for _, id := range n.Names {
			lhs = append(lhs, id)
		}
		rhs = n.Values
	}
	grown := false
	for i, l := range lhs {
		var r ast.Expr
		switch {
		case len(rhs) == len(lhs):
			r = rhs[i]
		case len(rhs) == 1: // a call with several results
			r = rhs[0]
		default:
			continue
		}
		if !f.refers(r) {
			continue
		}
		obj, ok := f.holder(l)
		if !ok {
			f.escapes = true
			return false
		}
		if obj != nil && !f.holders[obj] && canHold(obj.Type()) {
			f.holders[obj] = true
			grown = true
		}
	}
	return grown
}

// holder returns the variable of the function that an assignment to l
// puts the value in, or nil for _. It returns false when l is somewhere
// the value outlives the function: a package-level variable, one of an
// enclosing function, a field of something from outside, a map or slice
// element, or a pointer's target.
func (f *flow) holder(l ast.Expr) (types.Object, bool) {
	switch l := ast.Unparen(l).(type) {
	case *ast.Ident:
		if l.Name == "_" {
			return nil, true
		}
		obj := f.info.ObjectOf(l)
		return obj, f.declaredIn(obj, f.fn.Node())
	case *ast.SelectorExpr:
		if s := f.info.Selections[l]; s == nil || s.Kind() != types.FieldVal {
			return nil, false
		}
		root := l.X
		for {
			sel, ok := ast.Unparen(root).(*ast.SelectorExpr)
			if !ok {
				break
			}
			root = sel.X
		}
		id, ok := ast.Unparen(root).(*ast.Ident)
		if !ok {
			return nil, false
		}
		obj := f.info.ObjectOf(id)
		return obj, f.declaredIn(obj, funcBody(f.fn.Node())) // a parameter's fields may be the caller's
	}
	return nil, false
}

// declaredIn reports whether obj is a variable declared inside node.
func (f *flow) declaredIn(obj types.Object, node ast.Node) bool {
	_, isVar := obj.(*types.Var)
	return isVar && node != nil && node.Pos() <= obj.Pos() && obj.Pos() < node.End()
}

// call records a call that is a retried call made with the value, and
// marks the value as escaping when the call is given it and may keep it.
func (f *flow) call(c inspector.Cursor, call *ast.CallExpr) {
	if call == f.made {
		return
	}
	if r, ok := runnerOf(f.info, call); ok {
		for i, arg := range call.Args {
			if i != r.op && f.refers(arg) {
				f.use(c)
				break
			}
		}
	} else if f.isRetried(call) && f.refers(ast.Unparen(call.Fun).(*ast.SelectorExpr).X) {
		f.use(c)
	}
	if !f.anyRefers(call.Args) {
		return
	}
	if tv := f.info.Types[call.Fun]; tv.IsType() {
		return // a conversion
	}
	if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok {
		if b, ok := f.info.Uses[id].(*types.Builtin); ok && b.Name() != "append" {
			return
		}
	}
	if fn := callee(f.info, call); fn != nil && fn.Pkg() != nil && keepers[fn.Pkg().Path()] {
		return
	}
	f.escapes = true
}

// isRequest reports whether sel selects a request method of an
// http.Client, a retryhttp.Transport or an http.RoundTripper.
func isRequest(info *types.Info, sel *ast.SelectorExpr) bool {
	t := info.TypeOf(sel.X)
	return isNamed(t, "net/http", "Client") || isNamed(t, retryhttpPath, "Transport") || isNamed(t, "net/http", "RoundTripper")
}

// use records a retried call, and whether it may run more than once: in a
// loop, or in a function literal other than an operation.
func (f *flow) use(c inspector.Cursor) {
	f.uses = append(f.uses, c.Node())
	if inLoop(c, f.fn) {
		f.shared = true
	}
	for e := range c.Enclosing((*ast.FuncLit)(nil)) {
		if e == f.fn {
			break
		}
		if parent, ok := e.Parent().Node().(*ast.CallExpr); ok {
			if r, ok := runnerOf(f.info, parent); ok && operation(parent, r) == e.Node() {
				continue
			}
		}
		f.shared = true
	}
}

// refers reports whether e contains the call that makes the value, or a
// variable that holds it, in a place where the value of e can carry it. The
// result of a retried call, and what fmt and log return, do not carry it.
func (f *flow) refers(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if n == f.made {
				found = true
			} else if f.isRetried(n) || f.isPrint(n) {
				return false
			}
		case *ast.Ident:
			found = found || f.holders[f.info.Uses[n]]
		}
		return !found
	})
	return found
}

// isRetried reports whether call runs a retried call: a call of a retry
// function that runs an operation, or a request method of an http.Client
// or a Transport.
func (f *flow) isRetried(call *ast.CallExpr) bool {
	if _, ok := runnerOf(f.info, call); ok {
		return true
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	return ok && requestMethods[sel.Sel.Name] && isRequest(f.info, sel)
}

// isPrint reports whether call calls a function of fmt, log or log/slog.
func (f *flow) isPrint(call *ast.CallExpr) bool {
	fn := callee(f.info, call)
	if fn == nil || fn.Pkg() == nil {
		return false
	}
	switch fn.Pkg().Path() {
	case "fmt", "log", "log/slog":
		return true
	}
	return false
}

func (f *flow) anyRefers(es []ast.Expr) bool {
	for _, e := range es {
		if f.refers(e) {
			return true
		}
	}
	return false
}

// canHold reports whether a variable of type t can hold a guard, a
// Transport or something made with them: not an error, a number, a string
// or a bool, which is what the other results of the calls that make them are.
func canHold(t types.Type) bool {
	if _, ok := t.Underlying().(*types.Basic); ok {
		return false
	}
	return !types.Identical(t, types.Universe.Lookup("error").Type())
}

// funcBody returns the body of a function declaration or literal.
func funcBody(fn ast.Node) *ast.BlockStmt {
	switch fn := fn.(type) {
	case *ast.FuncDecl:
		return fn.Body
	case *ast.FuncLit:
		return fn.Body
	}
	return nil
}
