package retryhttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// hedged reports whether req is hedged.
func (t *Transport) hedged(req *http.Request) bool {
	return t.p.Hedging() != (policy.Hedging{}) && idempotent(req) &&
		(req.Body == nil || req.Body == http.NoBody || req.GetBody != nil)
}

// hedgeState is the part of a call its concurrent attempts share.
type hedgeState struct {
	mu       sync.Mutex
	pending  []*http.Response        // retryable responses not yet released
	released map[*http.Response]bool // responses released, by either path
	sent     atomic.Int32            // attempts sent so far
}

// hold makes the responses held so far let go of their connections before
// a wait: with a guard, which may deny the retry and make one of them the
// final response, each body is kept in memory (see keep); without one, each
// is released.
func (hs *hedgeState) hold(guarded bool) {
	hs.mu.Lock()
	held := hs.pending
	hs.pending = nil
	if guarded {
		for _, r := range held {
			if !hs.released[r] { // not a loser, released already
				keep(r) // under the lock, so that no release reads the body meanwhile
			}
		}
		hs.mu.Unlock()
		return
	}
	hs.mu.Unlock()
	for _, r := range held {
		hs.release(r)
	}
}

// release drains and closes r once, however many paths hand it over: a
// losing retryable response is both pending and discarded.
func (hs *hedgeState) release(r *http.Response) {
	hs.mu.Lock()
	if hs.released[r] {
		hs.mu.Unlock()
		return
	}
	if hs.released == nil {
		hs.released = map[*http.Response]bool{}
	}
	hs.released[r] = true
	hs.mu.Unlock()
	release(r)
}

// runHedged is run for a hedged request.
func (c *call) runHedged() (*http.Response, error) {
	ctx := c.req.Context()
	if c.req.Body != nil && c.req.Body != http.NoBody {
		_ = c.req.Body.Close() // every attempt sends a body of its own, from GetBody
	}
	hs := &hedgeState{}
	hooks := retry.Hooks{OnRetry: func(ctx context.Context, e retry.RetryEvent) {
		// A wait is about to start: the responses held so far let go of
		// their connections now rather than after the wait.
		hs.hold(c.p.Guard() != nil)
	}}
	attempt := func(actx context.Context) (*http.Response, error) {
		r, err := withBody(c.req)
		if err != nil {
			return nil, retry.Permanent(fmt.Errorf("retryhttp: rewinding the request body: %w", err))
		}
		n := int(hs.sent.Add(1))
		resp, err := c.sendTied(withPrevious(r, n), actx)
		admitted := n > 1
		if actx.Err() != nil && ctx.Err() == nil {
			// A losing attempt, cancelled: its outcome is no news.
			if resp != nil {
				return resp, actx.Err()
			}
			return nil, actx.Err()
		}
		if c.cutOff(n, err) {
			return nil, err
		}
		if !c.retryable(c.req, resp, err) {
			return c.final(resp, err, admitted)
		}
		e := c.retryError(resp, err)
		if e == nil {
			return c.final(resp, err, admitted)
		}
		if err != nil {
			return nil, e
		}
		hs.mu.Lock()
		hs.pending = append(hs.pending, resp)
		hs.mu.Unlock()
		return resp, e
	}
	var resp *http.Response
	var err error
	if len(c.t.opts) == 0 {
		resp, err = retry.HedgeValue(ctx, attempt, c.p, hs.release, retry.WithHooks(&hooks))
	} else {
		resp, err = retry.HedgeValue(c.loopContext(), attempt, c.p, hs.release, c.t.options(retry.WithHooks(&hooks))...)
	}
	if err == nil || unretried(err) {
		return resp, nil
	}
	if resp == nil {
		return nil, err
	}
	// The call ended with a retryable response in hand, which no further
	// attempt follows: as without hedging, it is the final response.
	if ctx.Err() == nil {
		return withErr(resp, c.req, err), nil
	}
	hs.release(resp)
	return nil, fmt.Errorf("retryhttp: %s %s: %w", c.req.Method, c.req.URL.Redacted(), err)
}

// sendTied sends r as one hedged attempt on actx, the attempt's own context,
// which package retry leaves untied from the request's. The request's
// context is tied back to it here for as long as the response's body is
// open, so that the caller's cancellation still reaches the body, and the
// tie is undone when the body is closed: a request made on a long-lived
// context holds nothing once its body is closed.
func (c *call) sendTied(r *http.Request, actx context.Context) (*http.Response, error) {
	actx, cancel := context.WithCancel(actx)
	stop := context.AfterFunc(c.req.Context(), func() {
		// actx ends at the request's deadline on its own: left to it, the
		// attempt sees DeadlineExceeded, as the caller does, not Canceled.
		if !errors.Is(c.req.Context().Err(), context.DeadlineExceeded) {
			cancel()
		}
	})
	untie := func() {
		stop()
		cancel()
	}
	resp, err := c.send(r.WithContext(actx))
	if resp == nil {
		untie()
		return nil, err
	}
	resp.Body = cancelOnClose(resp.Body, untie)
	return resp, err
}
