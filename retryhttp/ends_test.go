//go:build go1.25

package retryhttp_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/internal/admit"
	"github.com/retrykit/retrykit/internal/classify"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retryhttp"
)

// errConn is the error of an in-memory base RoundTripper that gets no
// response: a refused connection, which the Transport retries.
var errConn = &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}

// sentinels are every error a test of how a request ends may look for.
var sentinels = []error{
	retry.ErrExhausted, retry.ErrThrottled, retry.ErrShed, retry.ErrHintTooLong,
	retry.ErrPushback, retry.ErrAttemptTimeout, policy.ErrInvalid,
	context.Canceled, context.DeadlineExceeded, errConn,
}

// answers is an in-memory base RoundTripper: each request gets the status
// and header, or waits for its context to end when block is set.
type answers struct {
	status int
	header http.Header
	block  bool
	sent   atomic.Int32
}

func (a *answers) RoundTrip(req *http.Request) (*http.Response, error) {
	a.sent.Add(1)
	if a.block {
		<-req.Context().Done()
		return nil, req.Context().Err()
	}
	if a.status == 0 {
		return nil, errConn
	}
	h := a.header.Clone()
	if h == nil {
		h = http.Header{}
	}
	return &http.Response{StatusCode: a.status, Header: h, Body: io.NopCloser(strings.NewReader("x")), Request: req}, nil
}

// heldGuard returns a guard that holds new calls back: 16 attempts are
// running whose like timed out, and the probe of this second is spent.
func heldGuard(t *testing.T) *policy.Guard {
	g := policy.NewGuard(50, 1)
	hold(t, g)
	return g
}

// hold makes g hold new calls back, as heldGuard says.
func hold(t *testing.T, pg *policy.Guard) {
	g := protocol(pg)
	for range 16 {
		g.Record(false, admit.Overloaded)
		g.Run()
		t.Cleanup(g.Leave)
	}
	turn := g.Enter()
	require.True(t, g.Probe(turn, time.Now()))
	g.Leave()
}

// requestEnd is one way a call ends, a row of the list in docs/calls.md
// under "How a call ends", for a request through the Transport.
type requestEnd struct {
	name  string
	setup func(t *testing.T) (context.Context, policy.Policy, *answers)
	// is lists what errors.Is finds in the request's error: RoundTrip's, or
	// Err's when a response came back. Every other error of sentinels it
	// must not find. Empty: no error.
	is []error
	// response says a final response comes back, with a nil error.
	response bool
}

func requestEnds() []requestEnd {
	bg := func(*testing.T) context.Context { return context.Background() }
	with := func(ctx func(*testing.T) context.Context, p policy.Policy, a *answers) func(*testing.T) (context.Context, policy.Policy, *answers) {
		return func(t *testing.T) (context.Context, policy.Policy, *answers) { return ctx(t), p, a }
	}
	in := func(d time.Duration) func(*testing.T) context.Context {
		return func(t *testing.T) context.Context {
			ctx, cancel := context.WithTimeout(context.Background(), d)
			t.Cleanup(cancel)
			return ctx
		}
	}
	cancelledIn := func(d time.Duration) func(*testing.T) context.Context {
		return func(t *testing.T) context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(d, cancel)
			t.Cleanup(cancel)
			return ctx
		}
	}
	every := policy.Constant(100 * time.Millisecond)
	unavailable := func() *answers { return &answers{status: http.StatusServiceUnavailable} }
	retryAfter := func(s string) *answers {
		return &answers{status: http.StatusServiceUnavailable, header: http.Header{"Retry-After": {s}}}
	}
	return []requestEnd{
		{name: "success", setup: with(bg, every, &answers{status: http.StatusOK}), response: true},
		{name: "final: a status not retried", setup: with(bg, every, &answers{status: http.StatusNotFound}), response: true},
		{name: "limit: attempts", setup: with(bg, every.WithMaxAttempts(3), unavailable()),
			is: []error{retry.ErrExhausted}, response: true},
		{name: "limit: attempts, no response", setup: with(bg, every.WithMaxAttempts(3), &answers{}),
			is: []error{retry.ErrExhausted, errConn}},
		{name: "limit: time", setup: with(bg, every.WithMaxElapsed(250*time.Millisecond), unavailable()),
			is: []error{retry.ErrExhausted}, response: true},
		{name: "limit: the next wait would pass the deadline", setup: with(in(250*time.Millisecond), every, unavailable()),
			is: []error{retry.ErrExhausted, context.DeadlineExceeded}, response: true},
		{name: "limit: while the guard held the retries back", setup: func(t *testing.T) (context.Context, policy.Policy, *answers) {
			g := spentGuard(t, time.Now())
			return context.Background(), every.WithMaxAttempts(3).WithGuard(g), unavailable()
		}, is: []error{retry.ErrThrottled, retry.ErrExhausted}, response: true},
		{name: "limit: a Retry-After above the ceiling", setup: with(bg, every, retryAfter("3600")),
			is: []error{retry.ErrHintTooLong, retry.ErrExhausted}, response: true},
		{name: "limit: a Retry-After past the deadline", setup: with(in(time.Hour), every.WithMaxHint(3*time.Hour), retryAfter("7200")),
			is: []error{retry.ErrHintTooLong, retry.ErrExhausted, context.DeadlineExceeded}, response: true},
		{name: "limit: held back before the first attempt", setup: func(t *testing.T) (context.Context, policy.Policy, *answers) {
			return context.Background(), every.WithMaxAttempts(3).WithGuard(heldGuard(t)), unavailable()
		}, is: []error{retry.ErrShed, retry.ErrExhausted}},
		{name: "context: cancelled in a wait", setup: with(cancelledIn(150*time.Millisecond), every, &answers{}),
			is: []error{context.Canceled, errConn}},
		{name: "context: the deadline passed in an attempt", setup: with(in(50*time.Millisecond), every, &answers{block: true}),
			is: []error{context.DeadlineExceeded}},
		{name: "context: cancelled while held back", setup: func(t *testing.T) (context.Context, policy.Policy, *answers) {
			return cancelledIn(150 * time.Millisecond)(t), every.WithGuard(heldGuard(t)), unavailable()
		}, is: []error{retry.ErrShed, context.Canceled}},
		{name: "pushback", setup: with(bg, every, &answers{status: http.StatusServiceUnavailable, header: http.Header{"Retry-Pushback": {"never"}}}),
			is: []error{retry.ErrPushback}, response: true},
		{name: "limit: attempts, after attempt timeouts", setup: with(bg, every.WithMaxAttempts(2).WithAttemptTimeout(50*time.Millisecond), &answers{block: true}),
			is: []error{retry.ErrExhausted, retry.ErrAttemptTimeout, context.DeadlineExceeded}},
	}
}

// TestHowARequestEnds runs every way a call ends through the Transport,
// and checks the sentinels that the request's error matches, RoundTrip's or
// Err's for a final response, and those it does not.
func TestHowARequestEnds(t *testing.T) {
	for _, e := range requestEnds() {
		t.Run(e.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, p, base := e.setup(t)
				tr := build(t, base, p)
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://example.test/", nil)
				require.NoError(t, err)
				resp, err := tr.RoundTrip(req)
				if e.response {
					require.NoError(t, err)
					require.NotNil(t, resp)
					defer resp.Body.Close()
					err = retryhttp.Err(resp)
				} else {
					require.Nil(t, resp)
				}
				if len(e.is) == 0 {
					require.NoError(t, err)
					return
				}
				for _, want := range e.is {
					require.ErrorIs(t, err, want)
				}
				for _, other := range sentinels {
					if !isOneOf(e.is, other) {
						require.NotErrorIs(t, err, other)
					}
				}
				if errors.Is(err, retry.ErrShed) {
					require.Zero(t, base.sent.Load(), "a request held back is never sent")
				}
			})
		})
	}
}

// A request whose first attempt went out, and whose retries the guard then
// held back until the attempt limit, matches ErrThrottled, not ErrShed: it
// was sent, so it is not safe to send again as a shed one would be.
func TestRequestSentThenHeldIsThrottled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := policy.NewGuard(50, 1)
		var sent atomic.Int32
		base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if sent.Add(1) == 1 {
				hold(t, g) // the guard starts to hold calls back while the first attempt runs
			}
			return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("x")), Request: req}, nil
		})
		tr := build(t, base, policy.Constant(100*time.Millisecond).WithMaxAttempts(2).WithGuard(g))
		req, err := http.NewRequest(http.MethodGet, "http://example.test/", nil)
		require.NoError(t, err)
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		err = retryhttp.Err(resp)
		require.ErrorIs(t, err, retry.ErrThrottled)
		require.ErrorIs(t, err, retry.ErrExhausted)
		require.NotErrorIs(t, err, retry.ErrShed)
		require.Equal(t, int32(1), sent.Load())
	})
}

// A request whose body has no GetBody is a call of one attempt. Held back
// by the guard, it still waits its turn once, the schedule's first delay,
// as an in-memory body's request does, before it is shed unsent.
func TestStreamedRequestHeldWaitsItsTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := policy.NewGuard(50, 1)
		hold(t, g)
		var sent atomic.Int32
		base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
			sent.Add(1)
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok")), Request: req}, nil
		})
		tr := build(t, base, policy.Exponential(100*time.Millisecond).WithMaxAttempts(4).WithGuard(g))
		req, err := http.NewRequest(http.MethodPut, "http://example.test/", io.MultiReader(strings.NewReader("x")))
		require.NoError(t, err)
		require.Nil(t, req.GetBody)
		start := time.Now()
		resp, err := tr.RoundTrip(req)
		require.Nil(t, resp)
		require.ErrorIs(t, err, retry.ErrShed)
		require.Equal(t, 100*time.Millisecond, time.Since(start), "one wait, the first delay")
		require.Zero(t, sent.Load())
	})
}

// path is a way a Transport sends a request under p: its first attempt
// outside the loop, every attempt in the loop, or hedged.
type path struct {
	name string
	p    policy.Policy
	opts []retryhttp.Option
}

func paths(p policy.Policy) []path {
	return []path{
		{"first try", p, nil},
		{"loop", p, []retryhttp.Option{retryhttp.WithRetryOptions(retry.WithHooks(&retry.Hooks{}))}},
		{"hedged", p.WithHedging(policy.Hedging{Delay: time.Hour}), nil},
	}
}

// A request whose first attempt got a 503 and whose caller gives up during
// the retry ends with a *retry.Error that matches the context's error and
// names the 503, its last error, hedged or not, through the first try or the
// loop's first attempt. The retry's own context.Canceled is no news.
func TestRequestCancelledDuringARetryKeepsTheLastError(t *testing.T) {
	for _, tt := range paths(policy.Constant(50 * time.Millisecond).WithMaxAttempts(4)) {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var sent atomic.Int32
				base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
					if sent.Add(1) == 1 {
						return &http.Response{StatusCode: http.StatusServiceUnavailable, Status: "503 Service Unavailable",
							Header: http.Header{}, Body: io.NopCloser(strings.NewReader("x")), Request: req}, nil
					}
					<-req.Context().Done()
					return nil, req.Context().Err()
				})
				tr := build(t, base, tt.p, tt.opts...)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				time.AfterFunc(300*time.Millisecond, cancel) // during attempt 2
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://example.test/", nil)
				require.NoError(t, err)
				resp, err := tr.RoundTrip(req)
				require.Nil(t, resp)
				require.ErrorIs(t, err, context.Canceled)
				var re *retry.Error
				require.ErrorAs(t, err, &re)
				require.Equal(t, 2, re.Attempts)
				var se interface{ StatusCode() int }
				require.ErrorAs(t, re.Last, &se, "the last error is the 503's")
				require.Equal(t, http.StatusServiceUnavailable, se.StatusCode())
				require.ErrorContains(t, err, "status 503 Service Unavailable")
				require.Equal(t, int32(2), sent.Load())
			})
		})
	}
}

// An invalid policy is refused when the Transport is made.
func TestInvalidPolicyEnds(t *testing.T) {
	_, err := retryhttp.New(&answers{}, policy.Constant(-1))
	require.ErrorIs(t, err, policy.ErrInvalid)
	require.NotErrorIs(t, err, retry.ErrExhausted)
}

func isOneOf(errs []error, err error) bool {
	for _, e := range errs {
		if e == err {
			return true
		}
	}
	return false
}

// A request whose context ends during its first attempt ends as the
// context ending does, on every path: a *retry.Error that matches
// context.Canceled and the context's cause, which the message names once.
func TestRequestCancelledDuringItsFirstAttempt(t *testing.T) {
	for _, tt := range paths(policy.Constant(50 * time.Millisecond).WithMaxAttempts(4)) {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
					<-req.Context().Done()
					return nil, context.Cause(req.Context()) // as net/http's transport does
				})
				tr := build(t, base, tt.p, tt.opts...)
				errShutdown := errors.New("shutting down")
				ctx, cancel := context.WithCancelCause(context.Background())
				defer cancel(nil)
				time.AfterFunc(100*time.Millisecond, func() { cancel(errShutdown) })
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://example.test/", nil)
				require.NoError(t, err)
				resp, err := tr.RoundTrip(req)
				require.Nil(t, resp)
				require.ErrorIs(t, err, context.Canceled)
				require.ErrorIs(t, err, errShutdown)
				require.NotErrorIs(t, err, retry.ErrExhausted)
				var re *retry.Error
				require.ErrorAs(t, err, &re)
				require.Equal(t, 1, re.Attempts)
				require.Equal(t, 1, strings.Count(err.Error(), "shutting down"), "%v", err)
			})
		})
	}
}

// A request through an http.Client that runs out of time reports a timeout,
// as it does without retries: url.Error's Timeout and os.IsTimeout hold,
// whether the deadline passed during the first attempt, during a retry, or
// before a wait that would pass it. A limit of attempts is no timeout.
func TestRequestOutOfTimeIsATimeout(t *testing.T) {
	for _, tt := range []struct {
		name     string
		deadline time.Duration
		answer   func(n int32, req *http.Request) (*http.Response, error)
		p        policy.Policy
		timeout  bool
	}{
		{"first attempt", 100 * time.Millisecond, func(_ int32, req *http.Request) (*http.Response, error) {
			<-req.Context().Done()
			return nil, req.Context().Err()
		}, policy.Constant(50 * time.Millisecond), true},
		{"a retry", 100 * time.Millisecond, func(n int32, req *http.Request) (*http.Response, error) {
			if n == 1 {
				return nil, errConn
			}
			<-req.Context().Done()
			return nil, req.Context().Err()
		}, policy.Constant(50 * time.Millisecond), true},
		{"the next wait", 100 * time.Millisecond, func(int32, *http.Request) (*http.Response, error) {
			return nil, errConn
		}, policy.Constant(time.Second), true},
		{"the attempt limit", time.Hour, func(int32, *http.Request) (*http.Response, error) {
			return nil, errConn
		}, policy.Constant(time.Millisecond).WithMaxAttempts(2), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var n atomic.Int32
				base := roundTripFunc(func(req *http.Request) (*http.Response, error) { return tt.answer(n.Add(1), req) })
				client := &http.Client{Transport: build(t, base, tt.p)}
				ctx, cancel := context.WithTimeout(context.Background(), tt.deadline)
				defer cancel()
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://example.test/", nil)
				require.NoError(t, err)
				_, err = client.Do(req)
				require.Error(t, err)
				var ue *url.Error
				require.ErrorAs(t, err, &ue)
				require.Equal(t, tt.timeout, ue.Timeout(), "%v", err)
				require.Equal(t, tt.timeout, os.IsTimeout(ue.Err), "%v", err)
			})
		})
	}
}

// getWithin sends a GET through tr with a deadline d from now, and
// returns its error.
func getWithin(t *testing.T, tr http.RoundTripper, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://example.test/", nil)
	require.NoError(t, err)
	resp, err := tr.RoundTrip(req)
	require.Nil(t, resp)
	return err
}

// untilDone is a base RoundTripper that answers nothing until the request's
// context ends, and then returns its error.
var untilDone = roundTripFunc(func(req *http.Request) (*http.Response, error) {
	<-req.Context().Done()
	return nil, req.Context().Err()
})

// A hedged request that its deadline cuts off ends as the deadline does:
// it matches context.DeadlineExceeded, never context.Canceled, and its last
// error carries no mark of the loop's.
func TestHedgedRequestCutOffByItsDeadline(t *testing.T) {
	p := policy.Constant(20 * time.Millisecond).WithMaxAttempts(4).WithHedging(policy.Hedging{Delay: 10 * time.Millisecond, MaxInFlight: 3})
	for range 50 {
		synctest.Test(t, func(t *testing.T) {
			tr := build(t, untilDone, p)
			err := getWithin(t, tr, 35*time.Millisecond)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.NotErrorIs(t, err, context.Canceled, "%v", err)
			var re *retry.Error
			require.ErrorAs(t, err, &re)
			var perm *classify.Permanent
			require.False(t, errors.As(re.Last, &perm), "the last error %#v", re.Last)
		})
	}
}

// An attempt timeout that ends with the request's deadline, at the same
// instant, does not race it: the deadline cuts the attempt off, and the
// request ends as its context ending does, on every path.
func TestAttemptTimeoutEqualToTheTimeLeft(t *testing.T) {
	for _, tt := range paths(policy.Constant(time.Millisecond).WithMaxAttempts(10).WithAttemptTimeout(time.Second)) {
		t.Run(tt.name, func(t *testing.T) {
			for range 20 {
				synctest.Test(t, func(t *testing.T) {
					tr := build(t, untilDone, tt.p, tt.opts...)
					err := getWithin(t, tr, time.Second)
					require.ErrorIs(t, err, context.DeadlineExceeded)
					require.NotErrorIs(t, err, retry.ErrExhausted, "%v", err)
					require.NotErrorIs(t, err, retry.ErrAttemptTimeout, "%v", err)
				})
			}
		})
	}
}
