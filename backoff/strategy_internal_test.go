package backoff

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestStrategyCountSaturates(t *testing.T) {
	st := NewStrategy(ScheduleFunc(func(n int) time.Duration { return time.Duration(n) })).(*strategy)
	st.n = math.MaxInt - 1
	require.Equal(t, time.Duration(math.MaxInt), st.Next())
	require.Equal(t, time.Duration(math.MaxInt), st.Next(), "Next at math.MaxInt must not wrap to a negative count")
	require.Equal(t, math.MaxInt, st.n)
}

// Default's shift form, written out by hand, is the one newShifts computes
// for Kubelet.
func TestDefaultIsKubeletInShiftForm(t *testing.T) {
	base, limit, ok := shiftForm(Kubelet())
	require.True(t, ok)
	require.Equal(t, newShifts(base, limit), Default())
}

// Schedules in shift form get the fast Strategy; any other keeps the
// general one.
func TestNewStrategyPicksShiftsOnlyForShiftForms(t *testing.T) {
	fast := []Schedule{
		Kubelet(),
		Exponential(time.Second, 2),
		Exponential(time.Second, 1),
		Exponential(-1, 3),
		Constant(time.Second),
		Cap(Cap(Constant(5*time.Second), time.Minute), time.Second),
	}
	for _, s := range fast {
		require.IsType(t, &shifts{}, NewStrategy(s), "%#v", s)
	}
	slow := []Schedule{
		Exponential(time.Second, 1.6),
		Cap(Exponential(time.Second, 3), time.Minute),
		ScheduleFunc(func(int) time.Duration { return time.Second }),
	}
	for _, s := range slow {
		require.IsType(t, &strategy{}, NewStrategy(s), "%#v", s)
	}
}
