//go:build go1.25

package backoff_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/backoff"
)

// Nil schedules are programming errors: they panic at construction, with a
// message that says so, never later inside a Next.
func TestNilScheduleFailsAtConstruction(t *testing.T) {
	require.PanicsWithValue(t, "backoff: NewStrategy: nil Schedule", func() { backoff.NewStrategy(nil) })
	require.PanicsWithValue(t, "backoff: Cap: nil Schedule", func() { backoff.Cap(nil, time.Second) })
	require.PanicsWithValue(t, "backoff: NewKeyed: nil Schedule", func() { backoff.NewKeyed[string](nil, time.Second) })
}

func TestKeyedHostileTimes(t *testing.T) {
	tables := []*backoff.Keyed[int]{new(backoff.Keyed[int])}
	for _, idle := range []time.Duration{math.MinInt64, -1, 0, 1, math.MaxInt64} {
		tables = append(tables, backoff.NewKeyed[int](backoff.Exponential(time.Second, 2), idle))
	}
	for _, k := range tables {
		for _, now := range []time.Time{{}, time.Unix(0, 0), time.Unix(1<<40, 0), time.Unix(-1<<40, 0), t0} {
			require.NotPanics(t, func() {
				require.GreaterOrEqual(t, k.Next(1, now), time.Duration(0))
				k.InBackoff(1, now)
				k.Delay(1, now)
			})
		}
	}
}

func TestTypedNilSchedulePanicsAtConstruction(t *testing.T) {
	for _, s := range []backoff.Schedule{nil, backoff.ScheduleFunc(nil), (*backoff.ScheduleFunc)(nil)} {
		require.Panics(t, func() { backoff.Cap(s, time.Second) }, "Cap(%#v)", s)
		require.Panics(t, func() { backoff.NewStrategy(s) }, "NewStrategy(%#v)", s)
		require.Panics(t, func() { backoff.NewKeyed[string](s, time.Minute) }, "NewKeyed(%#v)", s)
	}
}
