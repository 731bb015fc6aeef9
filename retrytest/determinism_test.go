//go:build go1.25

package retrytest_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/internal/admission"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retryhttp"
	"github.com/retrykit/retrykit/retrytest"
)

// mixed is a plan with every kind of step: by count, by time, random, and
// random forever.
func mixed(seed uint64, clk policy.Clock) retrytest.Plan {
	return retrytest.Plan{
		Steps: []retrytest.Step{
			{Fault: retrytest.Fault{Status: 503, Hint: time.Second}, Times: 2},
			{Fault: retrytest.Fault{Reset: true}, Rate: 0.5, For: 10 * time.Second},
			{Fault: retrytest.Fault{Partial: true, After: 10, Truncate: true}, Rate: 0.3, Times: 20},
			{Fault: retrytest.Fault{Status: 429}, Rate: 0.1},
		},
		Seed:  seed,
		Clock: clk,
	}
}

// journal records injections as lines: call number, step, time since start.
type journal struct {
	mu    sync.Mutex
	start time.Time
	now   func() time.Time
	lines []string
}

func (j *journal) record(_ context.Context, i retrytest.Injection) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.lines = append(j.lines, fmt.Sprintf("call %d step %d at %v", i.Call, i.Step, j.now().Sub(j.start)))
}

// handClock is a clock that moves only when told, with none of the Mock's
// real pauses in Add, and whose timers never fire.
type handClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *handClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *handClock) After(time.Duration) <-chan time.Time { return nil }

func (c *handClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// onHandClock makes 200 calls, one every 100ms on a clock moved by hand.
func onHandClock(t *testing.T, seed uint64) []string {
	clk := &handClock{}
	j := &journal{start: clk.Now(), now: clk.Now}
	p := mixed(seed, clk)
	p.OnInject = j.record
	in := mustNew(t, p)
	for range 200 {
		in.Next(context.Background())
		clk.Add(100 * time.Millisecond)
	}
	return j.lines
}

// underSynctest sends 60 requests, one after another, through retryhttp to
// the in-memory server with the plan's faults, inside a bubble, where the
// plan's real clock and the client's back-off are virtual.
func underSynctest(t *testing.T, seed uint64) []string {
	var lines []string
	synctest.Test(t, func(t *testing.T) {
		j := &journal{start: time.Now(), now: time.Now}
		p := mixed(seed, nil)
		p.OnInject = j.record
		in := mustNew(t, p)
		srv := retrytest.NewServer(in.Handler(&counted{}))
		defer srv.Close()
		tr, err := retryhttp.New(srv.Client().Transport, policy.Constant(time.Second).WithMaxAttempts(4).WithGuard(admission.Off))
		require.NoError(t, err)
		client := &http.Client{Transport: tr}
		for range 60 {
			resp, err := client.Get(srv.URL)
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
		}
		lines = j.lines
	})
	return lines
}

func TestSameSeedSameFaults(t *testing.T) {
	first := onHandClock(t, 7)
	require.Equal(t, first, onHandClock(t, 7), "on a clock moved by hand")
	require.NotEqual(t, first, onHandClock(t, 8), "another seed")
	require.Greater(t, len(first), 20)

	inBubble := underSynctest(t, 7)
	require.Equal(t, inBubble, underSynctest(t, 7), "under synctest")
	require.NotEqual(t, inBubble, underSynctest(t, 8), "another seed under synctest")
	require.Greater(t, len(inBubble), 20)
}

// FuzzPlan holds the bounds: a plan from any numbers is refused with an
// error or runs without panic, its decisions stay within its steps, a
// latency never outlasts its context, and a rate shows over many calls.
func FuzzPlan(f *testing.F) {
	f.Add(uint64(1), 0.3, 0, int64(0), int64(0), 0, uint8(0), uint8(0))
	f.Add(uint64(2), 1.0, 3, int64(0), int64(time.Second), 5, uint8(3), uint8(1))
	f.Add(uint64(3), 0.0, 0, int64(2*time.Second), int64(-1), 0, uint8(1), uint8(2))
	f.Add(uint64(4), math.NaN(), -1, int64(-5), int64(math.MaxInt64), -3, uint8(9), uint8(7))
	f.Fuzz(func(t *testing.T, seed uint64, rate float64, times int, forNs, latencyNs int64, after int, kind, then uint8) {
		fault := retrytest.Fault{Latency: time.Duration(latencyNs)}
		switch kind % 6 {
		case 1:
			fault.Err = errDown
		case 2:
			fault.Status = 500 + int(after%200)
		case 3:
			fault.Partial, fault.Truncate, fault.After = true, true, after
		case 4:
			fault.Stall = true
		case 5:
			fault.After = after // Partial missing: refused unless 0
		}
		clk := &handClock{}
		final := retrytest.Step{Fault: fault, Rate: rate}
		if then%3 == 1 {
			final.Times = 1 // a last step that ends: refused
		}
		p := retrytest.Plan{
			Steps: []retrytest.Step{{Fault: fault, Times: times, For: time.Duration(forNs)}, final},
			Seed:  seed,
			Clock: clk,
		}
		in, err := retrytest.New(p)
		bad := math.IsNaN(rate) || rate < 0 || rate > 1 || times < 0 || forNs < 0 || latencyNs < 0 ||
			(times > 0 && forNs > 0) || (kind%6 == 3 && after < 0) || (kind%6 == 5 && after != 0) || then%3 == 1
		if bad {
			require.Error(t, err, "a plan out of bounds is refused")
			require.Nil(t, in)
			return
		}
		if err != nil {
			require.ErrorContains(t, err, "retrytest: invalid plan: ")
			return
		}

		const calls = 2000
		injected, last := 0, 0
		for i := range calls {
			got, ok := in.Next(context.Background())
			if ok {
				injected++
				require.Equal(t, fault.Status, got.Status)
				require.Equal(t, fault.Latency, got.Latency)
				if i >= calls/2 {
					last++
				}
			}
			clk.Add(time.Millisecond)
		}
		c := in.Counts()
		require.Equal(t, calls, c.Calls)
		require.Equal(t, injected, c.Injected)
		require.LessOrEqual(t, c.Delays, c.Injected)

		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		werr := in.Wait(ctx, fault)
		if fault.Latency > 0 || fault.Stall {
			require.ErrorIs(t, werr, context.Canceled, "a wait ends with its context")
		} else {
			require.NoError(t, werr)
		}

		// The second step lasts forever; by the second half of the calls a
		// first step of at most 1,000 calls or 1s has ended.
		if (times == 0 && forNs == 0) || times > calls/2 || forNs > int64(calls/2)*int64(time.Millisecond) {
			return
		}
		want := rate
		switch {
		case (kind%6 == 0 || kind%6 == 5) && latencyNs == 0:
			want = 0 // the zero Fault: every call goes through
		case rate == 0:
			want = 1
		}
		const n = calls / 2
		sigma := math.Sqrt(n * want * (1 - want))
		require.InDelta(t, want*n, last, 6*sigma+1, "rate %v over %d calls", rate, n)

	})
}
