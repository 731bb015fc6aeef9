// Package retryvet holds go vet analyzers that find the mistakes that make
// retries with retrykit useless or dangerous: an operation that ignores its
// context ([Ctx]), a guard or Transport made for one call ([PerCall]), a
// Permanent mark formatted away ([Permanent]), a policy with no limit and
// no deadline ([Limit]), and a wait inside an operation ([Sleep]).
//
// The command github.com/retrykit/retrykit/retryvet/cmd/retryvet runs them,
// alone or as go vet's -vettool. docs/retryvet.md shows each mistake and
// its correction.
package retryvet

import "golang.org/x/tools/go/analysis"

// docURL is the page that explains each check, with the bad code and the good.
const docURL = "https://github.com/retrykit/retrykit/blob/main/docs/retryvet.md"

// Analyzers returns every analyzer of the package, in a new slice.
func Analyzers() []*analysis.Analyzer {
	return []*analysis.Analyzer{Ctx, PerCall, Permanent, Limit, Sleep}
}
