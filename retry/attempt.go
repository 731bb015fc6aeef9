package retry

import (
	"context"
	"sync/atomic"
)

// Attempt returns the number of the attempt whose context ctx is, or is
// derived from. The first attempt is 1, the first retry 2. It is the
// number that [AttemptEvent].Attempt gives the hooks for the same attempt.
// Do, DoValue, Loop, Hedge, HedgeValue and Go number every attempt they
// make:
//
//   - Hedge and HedgeValue number the attempts in the order they start,
//     hedges included. Each runs on a context of its own, with its own
//     number.
//   - Loop numbers each run as an attempt. It counts every run since Loop
//     started, the runs after a success too.
//
// A context that carries no number gives 1. A call's first attempt runs on
// the caller's context as it is, so a first try costs nothing. A nil ctx
// gives 1 too. A call inside another call's attempt numbers its own
// attempts, its first one included.
//
// Read the number while the attempt runs. Without hedging, all the
// attempts of one call share one context, and the call moves its number
// on for the next attempt. So a goroutine that an attempt started, and
// that reads the number after that attempt returned, may get a later
// attempt's number.
//
// retryhttp puts the context of each attempt in the request it sends, so
// that the base RoundTripper reads Attempt(req.Context()).
func Attempt(ctx context.Context) int {
	if ctx == nil {
		return 1
	}
	if a, ok := ctx.Value(attemptKey{}).(*numbered); ok {
		return int(a.n.Load())
	}
	return 1
}

// attemptKey is the context key of an attempt's number.
type attemptKey struct{}

// numbered is the context an attempt runs with when its number cannot go
// without saying: a retry, or a first attempt inside another call's
// attempt. A call that does not hedge makes one, at its first such
// attempt, and moves its number on for each attempt after, so that a call
// allocates it once however many times it retries. A hedged attempt gets
// one of its own.
type numbered struct {
	context.Context
	n atomic.Int64
}

func newNumbered(parent context.Context, n int) *numbered {
	c := &numbered{Context: parent}
	c.n.Store(int64(n))
	return c
}

func (c *numbered) Value(key any) any {
	if _, ok := key.(attemptKey); ok {
		return c
	}
	return c.Context.Value(key)
}

// carriesAttempt reports whether ctx carries a call's attempt number.
func carriesAttempt(ctx context.Context) bool {
	return ctx.Value(attemptKey{}) != nil
}

// numberedContext returns the context of the call's attempt number n, when
// it does not hedge.
func (c *call) numberedContext(n int) context.Context {
	if c.mark == nil {
		if n == 1 && !c.nested {
			return c.ctx
		}
		c.mark = newNumbered(c.ctx, n)
		return c.mark
	}
	c.mark.n.Store(int64(n))
	return c.mark
}
