package retry

import (
	"context"
	"sync/atomic"
)

// Attempt returns the number of the attempt that ctx belongs to: 1 for the
// first attempt, 2 for the first retry. Call it inside the operation, with
// the context the operation was given, or one derived from it:
//
//	retry.Do(ctx, func(ctx context.Context) error {
//		log.Printf("attempt %d", retry.Attempt(ctx))
//		return ping(ctx)
//	}, p)
//
// It is the number the hooks see in [AttemptEvent].Attempt. Hedged calls
// number their attempts in the order they start, hedges included; [Loop]
// numbers its runs from its start. A context of no call, or nil, gives 1.
//
// Read the number while the attempt runs: a goroutine that outlives its
// attempt may see a later attempt's number. retryhttp sends each attempt's
// context in its request, so a base RoundTripper can read
// Attempt(req.Context()).
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
