package retry

import (
	"time"

	"github.com/retrykit/retrykit/internal/classify"
)

// ErrHintTooLong is matched by the error a call returns at once when an
// operation's hint from [After] asks for a wait above the policy's hint
// ceiling, past its time limit or past the context's deadline. It matches
// [ErrExhausted] too, since a limit ends the call. See docs/calls.md, "How
// a call ends".
var ErrHintTooLong error = &limitError{"retry: hinted wait too long"}

// After marks err with a server's hint: wait d before the next attempt,
// instead of the schedule's delay. An HTTP Retry-After and a gRPC pushback
// are such hints. A hint ≤ 0 means retry now. The hint is not jittered.
// A hint too long for the policy's hint ceiling, its time limit or the
// context's deadline ends the call at once: policy.Policy.WithMaxHint has
// the rule.
//
// The schedule carries on after a hinted wait rather than starting over.
// A server that pushed back once is likely still loaded, and starting over
// would bring the client back at the base delay. After(d, nil) is nil.
func After(d time.Duration, err error) error {
	if err == nil {
		return nil
	}
	return &classify.Hint{D: d, Err: err}
}
