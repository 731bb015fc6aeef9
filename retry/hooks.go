package retry

import "context"

// hookSet is the Hooks of one call, in the order given. The first
// inPlace are kept in place rather than joined, so that they cost the call
// no allocation. Only a call given more than that allocates, for the rest.
type hookSet struct {
	list     [inPlace]*Hooks
	more     []*Hooks // the Hooks after the first inPlace
	n        int
	attempts bool // some Hooks has OnAttempt or OnAttemptDone
}

// inPlace is how many Hooks a call keeps without allocating.
const inPlace = 8

// attemptCtxs are the contexts each Hooks's OnAttempt returned for one
// attempt, for its OnAttemptDone.
type attemptCtxs struct {
	list [inPlace]context.Context
	more []context.Context
}

// at returns the context of the i-th Hooks, counting from 0.
func (cs *attemptCtxs) at(i int) context.Context {
	if i < inPlace {
		return cs.list[i]
	}
	return cs.more[i-inPlace]
}

// add adds h after the others.
func (s *hookSet) add(h *Hooks) {
	if s.n < inPlace {
		s.list[s.n] = h
	} else {
		s.more = append(s.more, h)
	}
	s.n++
	s.attempts = s.attempts || h.OnAttempt != nil || h.OnAttemptDone != nil
}

// at returns the i-th Hooks, counting from 0.
func (s *hookSet) at(i int) *Hooks {
	if i < inPlace {
		return s.list[i]
	}
	return s.more[i-inPlace]
}

// attempt tells each Hooks of an attempt about to start with ctx, and
// returns the context the attempt runs with. cs gets each Hooks's own.
func (s *hookSet) attempt(ctx context.Context, e AttemptEvent, cs *attemptCtxs) context.Context {
	for i := range s.n {
		if h := s.at(i); h.OnAttempt != nil {
			if next := h.OnAttempt(ctx, e); next != nil {
				ctx = next
			}
		}
		if i < inPlace {
			cs.list[i] = ctx
		} else {
			cs.more = append(cs.more, ctx)
		}
	}
	return ctx
}

// attemptDone tells each Hooks that the attempt it heard of in attempt
// returned.
func (s *hookSet) attemptDone(cs *attemptCtxs, e AttemptEvent) {
	for i := range s.n {
		if h := s.at(i); h.OnAttemptDone != nil {
			h.OnAttemptDone(cs.at(i), e)
		}
	}
}

// retry tells each Hooks of a wait announced.
func (s *hookSet) retry(ctx context.Context, e RetryEvent) {
	for i := range s.n {
		if h := s.at(i); h.OnRetry != nil {
			h.OnRetry(ctx, e)
		}
	}
}

// denied tells each Hooks that the guard denied the retry the wait e
// announced was for.
func (s *hookSet) denied(ctx context.Context, e RetryEvent) {
	for i := range s.n {
		if h := s.at(i); h.OnDenied != nil {
			h.OnDenied(ctx, e)
		}
	}
}

// done tells each Hooks how the call ended.
func (s *hookSet) done(ctx context.Context, e DoneEvent) {
	for i := range s.n {
		if h := s.at(i); h.OnDone != nil {
			h.OnDone(ctx, e)
		}
	}
}
