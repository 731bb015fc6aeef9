package main

import (
	"fmt"
	"go/types"
	"strings"
)

// A typeWriter spells types as the API files show them: without parameter
// names, which are not part of the API, and with types of other packages
// qualified by the package's name (context.Context, policy.Policy).
type typeWriter struct {
	pkg *types.Package // the package whose API is written: its names stay unqualified
	b   strings.Builder
}

// typeString spells t as seen from package pkg.
func typeString(pkg *types.Package, t types.Type) string {
	w := &typeWriter{pkg: pkg}
	w.typ(t)
	return w.b.String()
}

// signatureString spells a function's type parameters, parameters and
// results as they follow its name: [T any](context.Context, T) (T, error).
func signatureString(pkg *types.Package, sig *types.Signature) string {
	w := &typeWriter{pkg: pkg}
	w.typeParams(sig.TypeParams())
	w.signature(sig)
	return w.b.String()
}

func (w *typeWriter) typ(t types.Type) {
	switch t := t.(type) {
	case *types.Basic:
		w.b.WriteString(t.Name())
	case *types.Alias:
		w.object(t.Obj())
		w.typeArgs(t.TypeArgs())
	case *types.Named:
		w.object(t.Obj())
		w.typeArgs(t.TypeArgs())
	case *types.TypeParam:
		w.b.WriteString(t.Obj().Name())
	case *types.Pointer:
		w.b.WriteString("*")
		w.typ(t.Elem())
	case *types.Slice:
		w.b.WriteString("[]")
		w.typ(t.Elem())
	case *types.Array:
		fmt.Fprintf(&w.b, "[%d]", t.Len())
		w.typ(t.Elem())
	case *types.Map:
		w.b.WriteString("map[")
		w.typ(t.Key())
		w.b.WriteString("]")
		w.typ(t.Elem())
	case *types.Chan:
		w.chanType(t)
	case *types.Signature:
		w.b.WriteString("func")
		w.signature(t)
	case *types.Struct:
		w.structType(t)
	case *types.Interface:
		w.interfaceType(t)
	case *types.Union:
		w.union(t)
	default:
		// A kind of type this writer does not know yet still gets a stable spelling.
		w.b.WriteString(types.TypeString(t, w.qualifier))
	}
}

func (w *typeWriter) qualifier(p *types.Package) string {
	if p == w.pkg {
		return ""
	}
	return p.Name()
}

func (w *typeWriter) object(obj types.Object) {
	if p := obj.Pkg(); p != nil && p != w.pkg {
		w.b.WriteString(p.Name())
		w.b.WriteString(".")
	}
	w.b.WriteString(obj.Name())
}

func (w *typeWriter) typeArgs(args *types.TypeList) {
	if args.Len() == 0 {
		return
	}
	w.b.WriteString("[")
	for i := range args.Len() {
		if i > 0 {
			w.b.WriteString(", ")
		}
		w.typ(args.At(i))
	}
	w.b.WriteString("]")
}

func (w *typeWriter) typeParams(params *types.TypeParamList) {
	if params.Len() == 0 {
		return
	}
	w.b.WriteString("[")
	for i := range params.Len() {
		if i > 0 {
			w.b.WriteString(", ")
		}
		p := params.At(i)
		w.b.WriteString(p.Obj().Name())
		w.b.WriteString(" ")
		w.typ(p.Constraint())
	}
	w.b.WriteString("]")
}

func (w *typeWriter) chanType(t *types.Chan) {
	switch t.Dir() {
	case types.SendRecv:
		w.b.WriteString("chan ")
	case types.SendOnly:
		w.b.WriteString("chan<- ")
	case types.RecvOnly:
		w.b.WriteString("<-chan ")
	}
	// chan (<-chan T) needs its parentheses; the others read the same without.
	inner, ok := t.Elem().(*types.Chan)
	paren := ok && t.Dir() == types.SendRecv && inner.Dir() == types.RecvOnly
	if paren {
		w.b.WriteString("(")
	}
	w.typ(t.Elem())
	if paren {
		w.b.WriteString(")")
	}
}

// signature writes (parameters) results, without names.
func (w *typeWriter) signature(sig *types.Signature) {
	w.b.WriteString("(")
	params := sig.Params()
	for i := range params.Len() {
		if i > 0 {
			w.b.WriteString(", ")
		}
		t := params.At(i).Type()
		if sig.Variadic() && i == params.Len()-1 {
			w.b.WriteString("...")
			t = t.(*types.Slice).Elem()
		}
		w.typ(t)
	}
	w.b.WriteString(")")
	results := sig.Results()
	switch results.Len() {
	case 0:
		return
	case 1:
		w.b.WriteString(" ")
		w.typ(results.At(0).Type())
		return
	}
	w.b.WriteString(" (")
	for i := range results.Len() {
		if i > 0 {
			w.b.WriteString(", ")
		}
		w.typ(results.At(i).Type())
	}
	w.b.WriteString(")")
}

// structType spells a struct type that has no name of its own: every field
// belongs to its identity, the unexported ones included.
func (w *typeWriter) structType(t *types.Struct) {
	w.b.WriteString("struct{")
	for i := range t.NumFields() {
		if i > 0 {
			w.b.WriteString(";")
		}
		w.b.WriteString(" ")
		f := t.Field(i)
		if !f.Embedded() {
			w.b.WriteString(f.Name())
			w.b.WriteString(" ")
		}
		w.typ(f.Type())
	}
	if t.NumFields() > 0 {
		w.b.WriteString(" ")
	}
	w.b.WriteString("}")
}

func (w *typeWriter) interfaceType(t *types.Interface) {
	if t.NumMethods() == 0 && t.NumEmbeddeds() == 0 {
		w.b.WriteString("interface{}")
		return
	}
	w.b.WriteString("interface{")
	sep := " "
	for i := range t.NumEmbeddeds() {
		w.b.WriteString(sep)
		w.typ(t.EmbeddedType(i))
		sep = "; "
	}
	for i := range t.NumExplicitMethods() {
		m := t.ExplicitMethod(i)
		w.b.WriteString(sep)
		w.b.WriteString(m.Name())
		w.signature(m.Type().(*types.Signature))
		sep = "; "
	}
	w.b.WriteString(" }")
}

func (w *typeWriter) union(t *types.Union) {
	for i := range t.Len() {
		if i > 0 {
			w.b.WriteString(" | ")
		}
		term := t.Term(i)
		if term.Tilde() {
			w.b.WriteString("~")
		}
		w.typ(term.Type())
	}
}
