package retryvet_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/retrykit/retrykit/retryvet"
)

// TestPermanent also applies the suggested fixes and compares the result
// with permanent.go.golden.
func TestPermanent(t *testing.T) {
	t.Parallel()
	analysistest.RunWithSuggestedFixes(t, analysistest.TestData(), retryvet.Permanent, "permanent")
}
