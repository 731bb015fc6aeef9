package compare

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/retrykit/retrykit/internal/admit"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retrygrpc"
)

// Each test runs every library through one scenario, logs what it did (the
// table in docs/grpc.md is these logs) and asserts it, so that a peer that changes
// its behaviour fails here and the table is brought up to date.

var req = &healthpb.HealthCheckRequest{}

func unaryClient(t *testing.T, l lib, h *health, s setup, rec *delays) healthpb.HealthClient {
	return serve(t, h, grpc.WithUnaryInterceptor(l.unary(s, rec)))
}

// TestPushback: the server answers Unavailable with a pushback of 300ms,
// then OK, to a client whose own first wait would be 1ms (cap 1s).
func TestPushback(t *testing.T) {
	want := map[string]bool{"retrykit": true, "go-grpc-middleware": false, "failsafegrpc": false}
	for _, l := range libs {
		t.Run(l.name, func(t *testing.T) {
			h := &health{steps: []step{{code: codes.Unavailable, pushback: "300"}, {code: codes.OK}}}
			c := unaryClient(t, l, h, setup{attempts: 3, base: time.Millisecond, cap: time.Second}, nil)
			_, err := c.Check(t.Context(), req)
			require.NoError(t, err)
			calls := h.calls()
			require.Len(t, calls, 2)
			gap := calls[1].Sub(calls[0])
			honoured := gap >= 300*time.Millisecond
			t.Logf("%s: second attempt %v after the first: pushback honoured %v", l.name, gap.Round(time.Millisecond), honoured)
			require.Equal(t, want[l.name], honoured)
		})
	}
}

// TestPushbackStop: the server answers Unavailable with a pushback of -1,
// which gRPC's A6 defines as "do not retry".
func TestPushbackStop(t *testing.T) {
	want := map[string]int{"retrykit": 1, "go-grpc-middleware": 3, "failsafegrpc": 3}
	for _, l := range libs {
		t.Run(l.name, func(t *testing.T) {
			h := &health{steps: []step{{code: codes.Unavailable, pushback: "-1"}}}
			c := unaryClient(t, l, h, setup{attempts: 3, base: time.Millisecond, cap: time.Millisecond}, nil)
			_, err := c.Check(t.Context(), req)
			require.Equal(t, codes.Unavailable, status.Code(err))
			t.Logf("%s: %d attempts after a pushback of -1", l.name, len(h.calls()))
			require.Len(t, h.calls(), want[l.name])
		})
	}
}

// TestJitterInsideCap: exponential waits from 1ms, capped at 8ms, jittered
// ±50%, 12 attempts against a server that is always Unavailable. The waits
// from the sixth on are at the cap: are they all at most the cap, and do
// they still differ from one another?
func TestJitterInsideCap(t *testing.T) {
	const limit = 8 * time.Millisecond
	type verdict struct{ withinCap, spreadAtCap bool }
	want := map[string]verdict{
		"retrykit":           {withinCap: true, spreadAtCap: true},
		"go-grpc-middleware": {withinCap: true, spreadAtCap: false}, // jitter, then clamped to the cap
		"failsafegrpc":       {withinCap: false, spreadAtCap: true}, // capped, then jittered
	}
	for _, l := range libs {
		t.Run(l.name, func(t *testing.T) {
			var all []time.Duration
			for range 5 {
				h := &health{steps: []step{{code: codes.Unavailable}}}
				rec := &delays{}
				c := unaryClient(t, l, h, setup{attempts: 12, base: time.Millisecond, cap: limit, jitter: 0.5}, rec)
				_, err := c.Check(t.Context(), req)
				require.Equal(t, codes.Unavailable, status.Code(err))
				ds := rec.all()
				require.Len(t, ds, 11)
				all = append(all, ds[5:]...)
			}
			top := slices.Max(all)
			v := verdict{withinCap: top <= limit, spreadAtCap: len(slices.Compact(slices.Sorted(slices.Values(all)))) > 1}
			t.Logf("%s: waits at the cap range %v..%v (cap %v): within the cap %v, still spread %v",
				l.name, slices.Min(all), top, limit, v.withinCap, v.spreadAtCap)
			require.Equal(t, want[l.name], v)
		})
	}
}

// TestDeadlineAwareWait: the caller's deadline is 500ms away and the next
// wait would be 5s. Does the call return at once, or sleep out the
// deadline?
func TestDeadlineAwareWait(t *testing.T) {
	type verdict struct {
		early    bool
		code     codes.Code
		lastKept bool // the error still says what the server answered
	}
	want := map[string]verdict{
		"retrykit":           {early: true, code: codes.DeadlineExceeded, lastKept: true},
		"go-grpc-middleware": {early: false, code: codes.DeadlineExceeded, lastKept: false},
		"failsafegrpc":       {early: false, code: codes.Unknown, lastKept: false}, // a bare context.DeadlineExceeded, no status
	}
	for _, l := range libs {
		t.Run(l.name, func(t *testing.T) {
			h := &health{steps: []step{{code: codes.Unavailable}}}
			c := unaryClient(t, l, h, setup{attempts: 3, base: 5 * time.Second, cap: 5 * time.Second}, nil)
			ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := c.Check(ctx, req)
			took := time.Since(start)
			v := verdict{early: ctx.Err() == nil, code: status.Code(err), lastKept: strings.Contains(err.Error(), "scripted Unavailable")}
			t.Logf("%s: returned after %v, before the deadline %v, with %v after %d attempt(s): %v",
				l.name, took.Round(time.Millisecond), v.early, v.code, len(h.calls()), err)
			require.Equal(t, want[l.name], v)
			require.Len(t, h.calls(), 1)
		})
	}
}

// TestStreamCommit: a Watch stream that fails with Unavailable before its
// first message, and one that fails after it.
func TestStreamCommit(t *testing.T) {
	type verdict struct{ retriedBefore, retriedAfter bool }
	want := map[string]verdict{
		"retrykit":           {retriedBefore: true, retriedAfter: false},
		"go-grpc-middleware": {retriedBefore: true, retriedAfter: true}, // and the caller sees the first message twice
	}
	for _, l := range libs {
		t.Run(l.name, func(t *testing.T) {
			if l.stream == nil {
				t.Logf("%s: no stream client interceptor", l.name)
				return
			}
			s := setup{attempts: 3, base: time.Millisecond, cap: time.Millisecond}
			run := func(first step) (int, []healthpb.HealthCheckResponse_ServingStatus, error) {
				h := &health{steps: []step{first, {code: codes.OK}}}
				c := serve(t, h, grpc.WithStreamInterceptor(l.stream(s, nil)))
				w, err := c.Watch(t.Context(), req)
				require.NoError(t, err)
				var got []healthpb.HealthCheckResponse_ServingStatus
				for {
					m, err := w.Recv()
					if err != nil {
						return len(h.calls()), got, err
					}
					got = append(got, m.GetStatus())
				}
			}
			nBefore, gotBefore, errBefore := run(step{code: codes.Unavailable})
			nAfter, gotAfter, errAfter := run(step{code: codes.Unavailable, sendFirst: true})
			v := verdict{retriedBefore: nBefore > 1, retriedAfter: nAfter > 1}
			t.Logf("%s: failed before the first message: %d attempts, got %v, ended with %v", l.name, nBefore, gotBefore, errBefore)
			t.Logf("%s: failed after the first message: %d attempts, got %v, ended with %v", l.name, nAfter, gotAfter, errAfter)
			require.Equal(t, want[l.name], v)
			if v.retriedBefore {
				require.True(t, errors.Is(errBefore, io.EOF))
			}
		})
	}
}

// TestStorm: a server that fails every call with Unavailable, 50 calls
// each allowed 3 attempts. How many attempts reach the server, per call,
// with each library as configured above and no further component?
func TestStorm(t *testing.T) {
	for _, l := range libs {
		t.Run(l.name, func(t *testing.T) {
			h := &health{steps: []step{{code: codes.Unavailable}}}
			c := unaryClient(t, l, h, setup{attempts: 3, base: time.Microsecond, cap: time.Microsecond}, nil)
			const calls = 50
			for range calls {
				_, err := c.Check(t.Context(), req)
				require.Equal(t, codes.Unavailable, status.Code(err))
			}
			amp := float64(len(h.calls())) / calls
			t.Logf("%s: %.2f attempts per call against a dead server", l.name, amp)
			require.Equal(t, 3.0, amp)
		})
	}
	// retrykit with the connection's own storm guard, as recommended.
	t.Run("retrykit+guard", func(t *testing.T) {
		h := &health{steps: []step{{code: codes.Unavailable}}}
		g := policy.NewGuard(10, 0.5)
		// A storm is many calls in flight at once; this one stands for the
		// others (a call alone in flight keeps its retries).
		protocol(g).Start()
		defer protocol(g).Done()
		p := retrykitPolicy(setup{attempts: 3, base: time.Microsecond, cap: time.Microsecond}).WithGuard(g)
		c := serve(t, h, grpc.WithUnaryInterceptor(retrygrpc.UnaryClientInterceptor(p)))
		const calls = 50
		for range calls {
			_, err := c.Check(t.Context(), req)
			require.Equal(t, codes.Unavailable, status.Code(err))
		}
		amp := float64(len(h.calls())) / calls
		t.Logf("retrykit with policy.NewGuard(10, 0.5): %.2f attempts per call against a dead server", amp)
		require.LessOrEqual(t, len(h.calls()), calls+10+2, "the first tries, the guard's 10 tokens and a probe a second")
	})
}

// protocol returns g with the protocol that retrykit's packages drive.
func protocol(g *policy.Guard) *admit.Guard { return (*admit.Guard)(g) }
