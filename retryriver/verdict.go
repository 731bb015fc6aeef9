package retryriver

import (
	"fmt"
	"time"

	"github.com/retrykit/retrykit/internal/classify"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// action is what becomes of a job whose run returned an error.
type action int

const (
	retryLater action = iota // River's retry, on the policy's schedule
	snooze                   // the hint's wait, which uses up no attempt
	cancel                   // the job ends, cancelled
)

// verdict is what retry.Do would make of an error under a policy: its
// action, the hint to snooze for, and for a cancelled job the error to
// record (the operation's own, or one matching retry.ErrHintTooLong). v is
// what package retry finds in the error, for the guard.
type verdict struct {
	action action
	hint   time.Duration
	err    error
	v      classify.Verdict
}

// judge applies the rules of retry.Do after a first attempt to err, from
// what package retry finds in it: a Permanent mark anywhere in err, or an
// error the policy does not retry, cancels the job. A hint snoozes it,
// except one above the policy's hint ceiling, which cancels it. Everything
// else that could stop a call (limits, guard, time) is River's or is asked
// separately.
func judge(p policy.Policy, err error) verdict {
	v := classify.Of(err)
	switch {
	case v.Permanent || !p.Retryable(err):
		return verdict{action: cancel, err: err, v: v}
	case v.Hinted && v.Hint > p.MaxHint():
		return verdict{action: cancel, v: v, err: fmt.Errorf("retryriver: the worker asked to wait %v, above the %v hint ceiling: %w: %w",
			v.Hint, p.MaxHint(), retry.ErrHintTooLong, err)}
	case v.Hinted:
		return verdict{action: snooze, hint: max(v.Hint, 0), v: v}
	}
	return verdict{action: retryLater, v: v}
}
