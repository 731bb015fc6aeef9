package policy

import "github.com/retrykit/retrykit/internal/admit"

// Guard decides whether a retry may run. It admits retries while enough
// attempts succeed, and denies them while retries would only add load to
// a dependency that fails. So a failing dependency gets its first tries
// and a few retries, not a storm of them, and a short outage is still
// ridden out. Give one Guard to every policy that calls the same
// dependency ([Policy.WithGuard]). Package retry and retrykit's
// integrations tell it of every call and attempt, and nothing else needs
// to.
//
// Three rules matter most to a user of the guard:
//
//   - One call at a time always gets its retries. The guard admits every
//     retry of a call that is the only call in flight on it.
//   - A denied retry waits. It does not fail the call. The call waits its
//     next back-off delay and asks again. While denied, it ends only when
//     it runs out of attempts or time.
//   - While the dependency answers nothing but overload, new calls wait
//     their turn. Then at most 16 attempts run at once.
//
// The sections below state each rule in full: tokens, overload, one call
// at a time, probes and denied retries, and new calls that wait their
// turn. docs/admission.md shows them at work. A Guard also keeps the
// latency estimate of hedging after a quantile (see [Hedging]).
//
// A Guard is safe for concurrent use. The zero Guard admits nothing but
// probes. Use NewGuard.
//
// # Tokens
//
// A retry may start while the guard has at least one token left. Each
// attempt's outcome adds tokens or takes them, as the table below shows,
// with r the ratio given to NewGuard. The count never goes below zero or
// above the capacity.
//
//	what happened                            first try       retry or hedge
//	success                                  +r              +r
//	success only after the hedge delay       +r up to 9/10   +r up to 9/10
//	failure, fast (refused, reset, a 502)    -r/2            -1
//	failure that counts as overload          -1              -2
//	a Permanent error, one RetryIf rejects   nothing         nothing
//	cut short by the caller's context        nothing         nothing
//	asking for a retry, admitted or denied                   nothing
//	starting a hedge                                         -1
//	a first attempt waiting its turn         nothing
//
// "Up to 9/10" means that a slow success adds r without lifting the tokens
// above nine tenths of the capacity. A hedge starts only while the guard
// holds more than nine tenths of its capacity, and takes its token as it
// starts. A hedge that wins then adds r, as any success does. A hedge that
// loses and is cancelled adds nothing, so its token stays spent. In
// retry.Loop, the run after a successful run is a first try.
//
// # Overload
//
// This is the one definition of overload, for the guard and for every
// package of retrykit. A failed attempt counts as overload when any of
// these holds:
//
//   - The policy's attempt timeout cut it off (retry.ErrAttemptTimeout).
//   - Its error reports a timeout: the error, or one it wraps, has a Timeout
//     method that returns true. context.DeadlineExceeded and a network
//     timeout do.
//   - Its error carries a server's hint to wait (retry.After).
//
// Package retryhttp reports 429 Too Many Requests and 504 Gateway Timeout
// as timeouts. It turns a valid Retry-After header into a hint, on a 429, on
// a 5xx and on any other response it retries. So in retryhttp a 429, a 504,
// and a 5xx that carries Retry-After count as overload. A 500, 502 or 503
// without Retry-After is a fast failure. Package retrygrpc turns a server's
// pushback into a hint, so a status that carries a pushback counts as
// overload. Package retrykube counts every failed reconcile as a fast
// failure.
//
// Any other failed attempt is a fast failure. An attempt that the caller's
// own context cut off says nothing about the dependency and is not counted.
//
// # What the numbers mean
//
// For NewGuard(50, 1), the guard each integration makes when its policy
// has none:
//
//   - Retries that succeed never use up tokens, however many there are.
//   - First tries that fail fast use up the tokens only when more than two
//     in three fail. Each success adds r and each fast failure takes r/2,
//     whatever r is. So a burst of calls that all fail at once leaves no
//     token for their retries. A burst that mostly succeeds keeps them.
//   - First tries that count as overload use up the tokens when more than
//     half of them do. Each takes 1 and each success adds 1. For another
//     ratio r, the share is more than one first try in 1 + 1/r.
//   - When attempts fail at random, retries keep going as long as about
//     half of all attempts fail, or fewer.
//   - A dependency that is down gets every first try, about 50 retries and
//     then one probe a second, however many calls wait. Its failing first
//     tries take tokens too, so it gets fewer than 50 retries when there
//     are many of them.
//
// # One call at a time
//
// The retries of a call that is the only call in flight on the guard are
// always admitted, whatever the tokens, as Envoy's minimum retry
// concurrency does. One call at a time cannot make a storm, because its
// retries take the place of its next call. Its outcomes still add or take
// tokens. A call is in flight from its start to its end, its waits
// included.
//
// # Probes and denied retries
//
// When less than one token is left, one retry a second still goes through,
// as a probe. Asking for it costs nothing, and its outcome counts as a
// retry's. A probe that succeeds adds r like any success, so the waiting
// calls' retries start again.
//
// A denied retry means "not now". Package retry waits the next back-off
// delay and asks again. The wait ends early when the dependency serves
// again. Each success lets the denied retry that has waited longest ask
// again at once, one success for one retry. So retries denied during an
// outage come back as fast as the dependency answers, without a rush. A
// wait for a server's hint does not end early. The denied retry uses up
// the attempt it replaced (step 8 of "The loop" in package retry). A call ends while denied only when it runs out
// of attempts or time. It then returns an error matching
// retry.ErrThrottled.
//
// # New calls wait their turn
//
// While the dependency answers nothing but overload, at most 16 attempts
// run at once, and a new call's first attempt waits for its turn. This
// starts once the last 16 attempts in a row counted as overload, and the
// first success or fast failure ends it. Only attempts that are running
// take room. A call waiting between attempts does not, nor does a Loop
// between runs.
//
// Waiting calls take their turns first come, first served. A turn comes
// when a running attempt ends, or at once when the dependency answers
// with a success or a fast failure. Meanwhile the call waits as it would
// for a denied retry. It waits its next back-off delay and asks again, and
// each wait uses up an attempt. A waiting call always waits at least once,
// even a call of one attempt. Its first wait is the schedule's first
// delay, or less when its time limit or deadline comes sooner: it then
// waits up to that limit. Once a second, one waiting call goes as the guard's probe, which
// it shares with retries. So attempts that never end cannot keep calls
// waiting forever. A waiting call ends only when its time limit or its
// context's deadline comes first, or when its attempts run out after that
// first wait. It then returns an error matching retry.ErrShed, and the
// operation never ran.
//
// So a pause shorter than the attempt timeout makes no call wait, because
// no attempt times out during it. A dependency that answers at once, even
// with a 429, has few attempts running and makes no call wait either. A
// stall lets 16 attempts at a time reach the dependency. That keeps its
// queue from filling with attempts whose callers will be gone by the time
// it serves them, while the callers who would wait keep their calls.
type Guard admit.Guard

// NewGuard returns a full guard of the given capacity, in tokens, to which
// every success adds ratio tokens (see [Guard] for the rule).
//
// NewGuard(50, 1) is the guard to reach for, and the one each integration
// makes when its policy has none (see docs/admission.md).
//
// A capacity that is not a number from 1 to 1,000,000, or a ratio that is
// not a number from 0.000001 to the capacity, makes every policy that uses
// the guard invalid.
func NewGuard(tokens, ratio float64) *Guard {
	return (*Guard)(admit.New(tokens, ratio))
}

// guardErr is what Validate reports for an invalid guard, or nil.
func guardErr(g *Guard) error {
	if err := (*admit.Guard)(g).Err(); err != nil {
		return &invalidError{setting: "guard", reason: err.Error()}
	}
	return nil
}
