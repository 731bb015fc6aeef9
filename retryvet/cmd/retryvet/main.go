// Command retryvet checks Go code for the retry mistakes that package
// github.com/retrykit/retrykit/retryvet describes. It runs on its own,
//
//	retryvet ./...
//
// or as go vet's analysis tool:
//
//	go vet -vettool=$(command -v retryvet) ./...
//
// Each check can be turned off, or run alone, by its flag: -ctx, -percall,
// -permanent, -limit and -sleep. retryvet -help lists them.
package main

import (
	"golang.org/x/tools/go/analysis/multichecker"

	"github.com/retrykit/retrykit/retryvet"
)

func main() {
	multichecker.Main(retryvet.Analyzers()...)
}
