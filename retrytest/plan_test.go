//go:build go1.25

package retrytest_test

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/retrytest"
)

var errDown = errors.New("down")

func TestNewRefusesNonsense(t *testing.T) {
	fail := retrytest.Fault{Err: errDown}
	for _, tc := range []struct {
		name string
		plan retrytest.Plan
		want string
	}{
		{"the zero plan", retrytest.Plan{}, "no Steps: give the script its steps; Steps: []Step{{}} lets every call through"},
		{"a zero plan with a seed", retrytest.Plan{Seed: 42}, "no Steps"},
		{"a last step that ends by count", retrytest.Plan{Steps: []retrytest.Step{{Fault: fail, Times: 3}}},
			"the last step, 0, ends: the last step must last forever (no Times, no For); add Step{} after it to let the calls that follow go through, or drop its Times or For to repeat its fault"},
		{"a last step that ends by time", retrytest.Plan{Steps: []retrytest.Step{{Times: 1}, {Fault: fail, For: time.Second}}}, "the last step, 1, ends"},
		{"a forever step before others", retrytest.Plan{Steps: []retrytest.Step{{Fault: fail}, {Times: 1}, {}}}, "step 0 lasts forever"},
		{"a rate above 1", retrytest.Plan{Steps: []retrytest.Step{{Fault: fail, Rate: 1.5}}}, "step 0: a Rate of 1.5 is not from 0 to 1"},
		{"a negative rate", retrytest.Plan{Steps: []retrytest.Step{{Fault: fail, Rate: -0.1}}}, "a Rate of -0.1 is not from 0 to 1"},
		{"a NaN rate", retrytest.Plan{Steps: []retrytest.Step{{Fault: fail, Rate: math.NaN()}}}, "a Rate of NaN is not from 0 to 1"},
		{"an infinite rate", retrytest.Plan{Steps: []retrytest.Step{{Fault: fail, Rate: math.Inf(1)}}}, "a Rate of +Inf is not from 0 to 1"},
		{"negative Times", retrytest.Plan{Steps: []retrytest.Step{{Fault: fail, Times: -1}, {}}}, "negative Times -1"},
		{"negative For", retrytest.Plan{Steps: []retrytest.Step{{Fault: fail, For: -time.Second}, {}}}, "negative For -1s"},
		{"Times and For", retrytest.Plan{Steps: []retrytest.Step{{Fault: fail, Times: 1, For: time.Second}, {}}}, "both Times and For"},
		{"a negative latency", retrytest.Plan{Steps: []retrytest.Step{{Fault: retrytest.Fault{Latency: -time.Millisecond}}}}, "step 0: negative Latency -1ms"},
		{"a negative hint", retrytest.Plan{Steps: []retrytest.Step{{Fault: retrytest.Fault{Err: errDown, Hint: -1}}}}, "negative Hint"},
		{"a negative After", retrytest.Plan{Steps: []retrytest.Step{{Fault: retrytest.Fault{Partial: true, Reset: true, After: -1}}}}, "negative After -1"},
		{"a status out of range", retrytest.Plan{Steps: []retrytest.Step{{Fault: retrytest.Fault{Status: 99}}}}, "a Status of 99 is not from 200 to 599"},
		{"two outcomes", retrytest.Plan{Steps: []retrytest.Step{{Fault: retrytest.Fault{Err: errDown, Status: 503}}}}, "more than one of Err, Panic, Status, Reset, Stall and Truncate"},
		{"a hint alone", retrytest.Plan{Steps: []retrytest.Step{{Fault: retrytest.Fault{Hint: time.Second}}}}, "a Hint needs an Err or a Status"},
		{"a date with no status", retrytest.Plan{Steps: []retrytest.Step{{Fault: retrytest.Fault{Err: errDown, Hint: time.Second, HintDate: true}}}}, "a HintDate needs a Hint and a Status"},
		{"Truncate before the response", retrytest.Plan{Steps: []retrytest.Step{{Fault: retrytest.Fault{Truncate: true}}}}, "a Truncate strikes in the body: it needs Partial"},
		{"After before the response", retrytest.Plan{Steps: []retrytest.Step{{Fault: retrytest.Fault{Reset: true, After: 3}}}}, "an After counts what goes through before a Partial fault"},
		{"a partial status", retrytest.Plan{Steps: []retrytest.Step{{Fault: retrytest.Fault{Partial: true, Status: 503}}}}, "a Partial fault strikes in the real response"},
		{"a partial nothing", retrytest.Plan{Steps: []retrytest.Step{{Fault: retrytest.Fault{Partial: true, After: 3}}}}, "a Partial fault with nothing to strike"},
		{"a typed nil clock", retrytest.Plan{Steps: []retrytest.Step{{Fault: fail}}, Clock: (*clock.Mock)(nil)}, "Clock: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := retrytest.New(tc.plan)
			require.Nil(t, in)
			require.ErrorContains(t, err, "retrytest: invalid plan: ")
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestNewAccepts(t *testing.T) {
	for _, tc := range []struct {
		name string
		plan retrytest.Plan
	}{
		{"an empty script that passes", retrytest.Plan{Steps: []retrytest.Step{{}}}},
		{"a forever step", retrytest.Plan{Steps: []retrytest.Step{{Fault: retrytest.Fault{Err: errDown}}}}},
		{"rates 0 and 1", retrytest.Plan{Steps: []retrytest.Step{{Fault: retrytest.Fault{Stall: true}, Rate: 1, Times: 2}, {Fault: retrytest.Fault{Reset: true}, Rate: 0}}}},
		{"a partial pause", retrytest.Plan{Steps: []retrytest.Step{{Fault: retrytest.Fault{Partial: true, After: 3, Latency: time.Second}}}}},
		{"a dated status", retrytest.Plan{Steps: []retrytest.Step{{Fault: retrytest.Fault{Status: 503, Hint: time.Second, HintDate: true}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := retrytest.New(tc.plan)
			require.NoError(t, err)
			require.NotNil(t, in)
		})
	}
}

// recorder tells, call after call, which step of its plan each call fell
// in.
type recorder struct {
	in   *retrytest.Injector
	step int // the step of the last injection
}

// newRecorder returns a recorder for p, whose OnInject it takes.
func newRecorder(t *testing.T, p retrytest.Plan) *recorder {
	t.Helper()
	r := &recorder{}
	p.OnInject = func(_ context.Context, i retrytest.Injection) { r.step = i.Step }
	r.in = mustNew(t, p)
	return r
}

// next asks the injector about n calls and returns, for each, the step it
// fell in, or -1 when it went through.
func (r *recorder) next(n int) []int {
	got := make([]int, 0, n)
	for range n {
		step := -1
		if _, ok := r.in.Next(context.Background()); ok {
			step = r.step
		}
		got = append(got, step)
	}
	return got
}

func mustNew(t *testing.T, p retrytest.Plan) *retrytest.Injector {
	t.Helper()
	in, err := retrytest.New(p)
	require.NoError(t, err)
	return in
}

func TestScriptByTimes(t *testing.T) {
	a, b := retrytest.Fault{Err: errDown}, retrytest.Fault{Reset: true}
	for _, tc := range []struct {
		name string
		plan retrytest.Plan
		want []int
	}{
		{"fail 3 times, then pass", retrytest.Plan{Steps: []retrytest.Step{{Fault: a, Times: 3}, {}}},
			[]int{0, 0, 0, -1, -1, -1}},
		{"pass once, then fail forever", retrytest.Plan{Steps: []retrytest.Step{{Times: 1}, {Fault: a}}},
			[]int{-1, 1, 1, 1, 1, 1}},
		{"a sequence", retrytest.Plan{Steps: []retrytest.Step{{Fault: a, Times: 1}, {Times: 2}, {Fault: b, Times: 1}, {Fault: a}}},
			[]int{0, -1, -1, 2, 3, 3}},
		{"nothing at all", retrytest.Plan{Steps: []retrytest.Step{{}}}, []int{-1, -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRecorder(t, tc.plan)
			require.Equal(t, tc.want, r.next(len(tc.want)))
		})
	}
}

func TestScriptByTime(t *testing.T) {
	clk := clock.NewMock()
	r := newRecorder(t, retrytest.Plan{
		Steps: []retrytest.Step{{Times: 1}, {Fault: retrytest.Fault{Err: errDown}, For: 2 * time.Second}, {}},
		Clock: clk,
	})
	clk.Add(time.Hour) // For counts from the step's first call, not from New
	require.Equal(t, []int{-1, 1}, r.next(2))
	clk.Add(1999 * time.Millisecond)
	require.Equal(t, []int{1}, r.next(1), "still within the 2s")
	clk.Add(time.Millisecond)
	require.Equal(t, []int{-1, -1}, r.next(2), "2s after the step's first call")
}

func TestRateDrawsFromTheSeed(t *testing.T) {
	const n, rate = 10000, 0.3
	plan := retrytest.Plan{Steps: []retrytest.Step{{Fault: retrytest.Fault{Err: errDown}, Rate: rate}}, Seed: 42}
	first := newRecorder(t, plan).next(n)
	require.Equal(t, first, newRecorder(t, plan).next(n), "the same seed, the same faults")
	plan.Seed = 43
	require.NotEqual(t, first, newRecorder(t, plan).next(n), "another seed, other faults")

	injected := 0
	for _, s := range first {
		if s == 0 {
			injected++
		}
	}
	// Five standard deviations of a binomial draw: sqrt(n·p·(1−p)) ≈ 46.
	require.InDelta(t, rate*n, injected, 5*math.Sqrt(n*rate*(1-rate)))
}

func TestDisabledCallsDoNotMoveTheScript(t *testing.T) {
	plan := retrytest.Plan{
		Steps: []retrytest.Step{{Fault: retrytest.Fault{Err: errDown}, Times: 2}, {Fault: retrytest.Fault{Err: errDown}, Rate: 0.5}},
		Seed:  1,
	}
	r := newRecorder(t, plan)
	r.in.SetEnabled(false)
	require.Equal(t, []int{-1, -1, -1}, r.next(3))
	r.in.SetEnabled(true)
	got := r.next(20)
	require.Contains(t, got, -1)
	require.Contains(t, got, 1)
	require.Equal(t, newRecorder(t, plan).next(20), got, "the calls made while off changed nothing")
	require.Equal(t, 23, r.in.Counts().Calls)
}

func TestCountsAndOnInject(t *testing.T) {
	var mu sync.Mutex
	var seen []retrytest.Injection
	in := mustNew(t, retrytest.Plan{
		Steps: []retrytest.Step{
			{Fault: retrytest.Fault{Latency: time.Millisecond, Err: errDown, Hint: time.Second}, Times: 1},
			{Times: 1},
			{Fault: retrytest.Fault{Partial: true, After: 2, Truncate: true}, Times: 1},
			{Fault: retrytest.Fault{Status: 503}, Times: 2},
			{}, // then every call goes through
		},
		OnInject: func(_ context.Context, i retrytest.Injection) {
			mu.Lock()
			seen = append(seen, i)
			mu.Unlock()
		},
	})
	for range 7 {
		in.Next(context.Background())
	}
	require.Equal(t, retrytest.Counts{
		Calls: 7, Injected: 4,
		Delays: 1, Errors: 1, Hints: 1, Statuses: 2, Truncations: 1, Partials: 1,
	}, in.Counts())
	require.Len(t, seen, 4)
	require.Equal(t, []int{1, 3, 4, 5}, []int{seen[0].Call, seen[1].Call, seen[2].Call, seen[3].Call})
	require.Equal(t, []int{0, 2, 3, 3}, []int{seen[0].Step, seen[1].Step, seen[2].Step, seen[3].Step})
	require.Equal(t, 503, seen[3].Fault.Status)
}

func TestNewCopiesTheSteps(t *testing.T) {
	steps := []retrytest.Step{{Fault: retrytest.Fault{Err: errDown}, Times: 1}, {}}
	r := newRecorder(t, retrytest.Plan{Steps: steps})
	steps[0].Fault = retrytest.Fault{}
	steps[1].Fault = retrytest.Fault{Err: errDown}
	require.Equal(t, []int{0, -1}, r.next(2))
}

func TestConcurrentCallsGetEveryDecisionOnce(t *testing.T) {
	const goroutines, each = 8, 250
	in := mustNew(t, retrytest.Plan{Steps: []retrytest.Step{{Fault: retrytest.Fault{Err: errDown}, Times: 1000}, {}}})
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range each {
				in.Next(context.Background())
				if in.Counts().Calls%100 == 0 {
					in.SetEnabled(true) // flipping the switch races with nothing
				}
			}
		})
	}
	wg.Wait()
	require.Equal(t, retrytest.Counts{Calls: 2000, Injected: 1000, Errors: 1000}, in.Counts())
}

func TestForStepsEndWhileDisabled(t *testing.T) {
	clk := clock.NewMock()
	r := newRecorder(t, retrytest.Plan{
		Steps: []retrytest.Step{{Fault: retrytest.Fault{Err: errDown}, For: 2 * time.Second}, {}},
		Clock: clk,
	})
	require.Equal(t, []int{0}, r.next(1))
	r.in.SetEnabled(false)
	clk.Add(3 * time.Second)
	r.in.SetEnabled(true)
	require.Equal(t, []int{-1}, r.next(1), "the 2s went by while the injector was off")
}
