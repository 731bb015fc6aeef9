package policy

import "github.com/retrykit/retrykit/internal/admit"

// Guard decides whether a retry may run. It admits retries while enough
// attempts succeed, and denies them while retries would only add load to a
// dependency that fails. For example, 200 calls at once, each allowed 4
// attempts, to a server that fails every request make 800 requests without
// a guard, and the 200 first tries and a few retries with NewGuard(50, 1).
// Give one Guard to every policy that calls the same dependency
// ([Policy.WithGuard]). docs/admission.md shows it at work.
//
// Three rules matter most to a user:
//
//   - One call at a time always gets its retries. The guard admits every
//     retry of the only call in flight on it, whatever its tokens. A call
//     is in flight from its start to its end, its waits included.
//   - A denied retry waits. It does not fail the call. The call waits its
//     next back-off delay and asks again. The denied retry uses up one
//     attempt of the limit. A call that runs out of attempts or time while
//     denied ends with an error matching retry.ErrThrottled.
//   - While the dependency answers nothing but overload, new calls wait for
//     their turn. A new call may end with retry.ErrShed without running.
//
// Inside a request served behind retryhttp.Handler or retrygrpc's server
// interceptors, a call retries less than these rules say (docs/layers.md).
//
// A Guard is safe for concurrent use. Use NewGuard: the zero Guard holds no
// tokens.
//
// # Tokens
//
// A retry may start while the guard holds at least one whole token. Each
// attempt adds or takes tokens, within zero and the capacity, with r the
// ratio given to NewGuard:
//
//	what the attempt did             first try   retry or hedge
//	succeeded                        +r          +r
//	succeeded after the hedge delay  +r (*)      +r (*)
//	failed fast                      -r/2        -1
//	failed with overload             -1          -2
//	was started as a hedge                       -1
//	(*) never lifting the tokens above nine tenths of the capacity
//
// Asking for a retry costs nothing, and a Permanent error or one the policy
// does not retry counts for nothing. With less than one token left, one
// retry a second still goes through, as a probe.
//
// # Overload
//
// A failed attempt counts as overload, in every package of retrykit, when
// any of these holds:
//
//   - The policy's attempt timeout cut it off (retry.ErrAttemptTimeout).
//   - Its error, or one it wraps, has a Timeout method that returns true,
//     as context.DeadlineExceeded and network timeouts do.
//   - Its error carries a server's hint to wait (retry.After), or matches
//     retry.ErrPushback.
//
// Any other failed attempt is a fast failure. An attempt that the caller's
// own context cut off is not counted. In retryhttp, a 429, a 504, and a 5xx
// or other retried response with a valid Retry-After count as overload. A
// 500, 502 or 503 without Retry-After is a fast failure. In retrygrpc, a
// status that carries a pushback counts as overload.
//
// # New calls wait their turn
//
// Once the last 16 attempts in a row counted as overload, at most 16
// attempts run at once, and a new call's first attempt waits for its turn.
// The first success or fast failure ends this. docs/admission.md, under
// "New calls wait their turn", says how long a call waits and when it ends
// with retry.ErrShed.
type Guard admit.Guard

// NewGuard returns a full guard that holds up to tokens tokens, to which
// every success adds ratio tokens (see [Guard] for the rules).
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
