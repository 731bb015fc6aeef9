package retry

import (
	"time"

	"github.com/retrykit/retrykit/internal/classify"
)

// ErrHintTooLong is matched by the error a call returns at once when an
// operation's hint from [After] asks for a wait above the policy's hint
// ceiling, past its time limit or past the context's deadline. It matches
// [ErrExhausted] too, since a limit ends the call.
var ErrHintTooLong error = &limitError{"retry: hinted wait too long"}

// After marks err with a hint: wait d before the next attempt, instead of
// the schedule's delay. retryhttp and retrygrpc turn an HTTP Retry-After
// and a gRPC pushback into such hints. A hint ≤ 0 means retry now. The
// hint is not jittered. A hint that is too long ends the call at once:
// policy.Policy.WithMaxHint has the rule. After(d, nil) is nil.
//
// A hinted wait takes the place of one step of the schedule. The next
// unhinted wait is the step after it. For example, with
// policy.Exponential(100*time.Millisecond), the waits of a call are 100ms,
// 200ms, then a 2s hint, then 800ms. The schedule does not go back to its
// first delay, because a server that asked for a wait is likely still
// loaded.
func After(d time.Duration, err error) error {
	if err == nil {
		return nil
	}
	return &classify.Hint{D: d, Err: err}
}
