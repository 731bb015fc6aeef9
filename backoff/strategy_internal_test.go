package backoff

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStrategyCountSaturates(t *testing.T) {
	st := NewStrategy(Exponential{Base: 1, Factor: 2}).(*strategy)
	st.n = math.MaxInt - 1
	require.Equal(t, maxDuration, st.Next())
	require.Equal(t, maxDuration, st.Next(), "Next at math.MaxInt must not wrap to a negative count")
	require.Equal(t, math.MaxInt, st.n)
}
