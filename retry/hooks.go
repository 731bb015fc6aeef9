package retry

import "context"

// hookSet is the Hooks of one call, in the order given. They are kept in
// place rather than joined, so that they cost the call no allocation.
type hookSet struct {
	list     [maxHooks]*Hooks
	n        int
	over     bool // more than maxHooks were given: the call is refused
	attempts bool // some Hooks has OnAttempt or OnAttemptDone
}

// attemptCtxs are the contexts each Hooks's OnAttempt returned for one
// attempt, for its OnAttemptDone.
type attemptCtxs [maxHooks]context.Context

// add adds h after the others.
func (s *hookSet) add(h *Hooks) {
	if s.n == maxHooks {
		s.over = true
		return
	}
	s.list[s.n] = h
	s.n++
	s.attempts = s.attempts || h.OnAttempt != nil || h.OnAttemptDone != nil
}

// attempt tells each Hooks of an attempt about to start with ctx, and
// returns the context the attempt runs with. cs gets each Hooks's own.
func (s *hookSet) attempt(ctx context.Context, e AttemptEvent, cs *attemptCtxs) context.Context {
	for i, h := range s.list[:s.n] {
		if h.OnAttempt != nil {
			if next := h.OnAttempt(ctx, e); next != nil {
				ctx = next
			}
		}
		cs[i] = ctx
	}
	return ctx
}

// attemptDone tells each Hooks that the attempt it heard of in attempt
// returned.
func (s *hookSet) attemptDone(cs *attemptCtxs, e AttemptEvent) {
	for i, h := range s.list[:s.n] {
		if h.OnAttemptDone != nil {
			h.OnAttemptDone(cs[i], e)
		}
	}
}

// retry tells each Hooks of a wait announced.
func (s *hookSet) retry(ctx context.Context, e RetryEvent) {
	for _, h := range s.list[:s.n] {
		if h.OnRetry != nil {
			h.OnRetry(ctx, e)
		}
	}
}

// denied tells each Hooks that the guard denied the retry the wait e
// announced was for.
func (s *hookSet) denied(ctx context.Context, e RetryEvent) {
	for _, h := range s.list[:s.n] {
		if h.OnDenied != nil {
			h.OnDenied(ctx, e)
		}
	}
}

// done tells each Hooks how the call ended.
func (s *hookSet) done(ctx context.Context, e DoneEvent) {
	for _, h := range s.list[:s.n] {
		if h.OnDone != nil {
			h.OnDone(ctx, e)
		}
	}
}
