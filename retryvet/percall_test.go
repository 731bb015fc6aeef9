package retryvet_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/retrykit/retrykit/retryvet"
)

func TestPerCall(t *testing.T) {
	t.Parallel()
	analysistest.Run(t, analysistest.TestData(), retryvet.PerCall, "percall", "percallmain")
}
