package retryvet

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"slices"
	"strconv"
	"unicode/utf8"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"
)

// Permanent reports retry.Permanent(err) given to fmt.Errorf for a verb
// other than %w. The error fmt.Errorf returns then keeps the text and drops
// the mark, so the call goes on retrying an error that was meant to end it.
// The report suggests the verb w, which keeps the mark. It is at the Permanent call.
var Permanent = &analysis.Analyzer{
	Name:     "permanent",
	Doc:      "report retry.Permanent errors formatted by fmt.Errorf with a verb other than %w, which drops the mark",
	URL:      docURL + "#permanent",
	Requires: []*analysis.Analyzer{inspect.Analyzer},
	Run:      runPermanent,
}

func runPermanent(pass *analysis.Pass) (any, error) {
	in := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	for c := range in.Root().Preorder((*ast.CallExpr)(nil)) {
		call := c.Node().(*ast.CallExpr)
		if !isCall(pass.TypesInfo, call, "fmt", "Errorf") || len(call.Args) < 2 || call.Ellipsis.IsValid() {
			continue
		}
		if outer, ok := c.Parent().Node().(*ast.CallExpr); ok && isCall(pass.TypesInfo, outer, retryPath, "Permanent") {
			continue // the result is marked again
		}
		tv := pass.TypesInfo.Types[call.Args[0]]
		if tv.Value == nil || tv.Value.Kind() != constant.String {
			continue
		}
		format := constant.StringVal(tv.Value)
		for k, d := range parseFormat(format) {
			if d.verb == 'w' || d.arg+1 >= len(call.Args) {
				continue
			}
			arg, ok := ast.Unparen(call.Args[d.arg+1]).(*ast.CallExpr)
			if !ok || !isCall(pass.TypesInfo, arg, retryPath, "Permanent") {
				continue
			}
			pass.Report(analysis.Diagnostic{
				Pos: arg.Pos(),
				End: arg.End(),
				Message: "fmt.Errorf formats " + types.ExprString(arg) + " with " + format[d.start:d.end] +
					", which drops the permanent mark, so the call goes on retrying: use %w",
				SuggestedFixes: wrapFix(call.Args[0], format, k),
			})
		}
	}
	return nil, nil
}

// wrapFix returns the edit that turns the verb of the k-th directive of
// the format into w, flags and width kept, when the format is a string
// literal in which the edit can be placed.
func wrapFix(lit ast.Expr, format string, k int) []analysis.SuggestedFix {
	basic, ok := lit.(*ast.BasicLit)
	if !ok || basic.Kind != token.STRING {
		return nil
	}
	// The directives of the literal's source text stand where those of its
	// value do, unless an escape such as \x25 spells a % in the source.
	raw := parseFormat(basic.Value[1 : len(basic.Value)-1])
	if unquoted, err := strconv.Unquote(basic.Value); err != nil || unquoted != format ||
		!slices.EqualFunc(raw, parseFormat(format), sameDirective) {
		return nil
	}
	verbAt := basic.Pos() + 1 + token.Pos(raw[k].end-utf8.RuneLen(raw[k].verb))
	return []analysis.SuggestedFix{{
		Message: "format the error with %w",
		TextEdits: []analysis.TextEdit{{
			Pos:     verbAt,
			End:     verbAt + token.Pos(utf8.RuneLen(raw[k].verb)),
			NewText: []byte("w"),
		}},
	}}
}

func sameDirective(a, b directive) bool {
	return a.verb == b.verb && a.arg == b.arg && a.star == b.star
}
