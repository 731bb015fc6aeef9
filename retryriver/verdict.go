package retryriver

import (
	"context"
	"time"

	"github.com/retrykit/retrykit/backoff"
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
// record (the operation's own, or one matching retry.ErrHintTooLong).
type verdict struct {
	action action
	hint   time.Duration
	err    error
}

// judge asks package retry itself what it would do with err after a first
// attempt, on a clock that never waits, so that the rules stay those of
// retry.Do: a Permanent mark anywhere in err, the outermost hint, the
// policy's retry predicate and its hint ceiling. (Package retry keeps the
// marks to itself; this asks it rather than copy its rules.) Everything
// else that could stop the call (limits, guard, jitter, timeout) is
// taken out of the policy first: a job's limits are River's, and admission
// is asked separately.
func judge(p policy.Policy, err error) verdict {
	p = p.WithMaxAttempts(2).WithMaxElapsed(0).WithAttemptTimeout(0).
		WithGuard(nil).WithJitter(backoff.Jitter{}).WithClock(instant{})
	var v verdict
	hooks := &retry.Hooks{OnRetry: func(_ context.Context, e retry.RetryEvent) {
		if e.Hinted {
			v.action, v.hint = snooze, max(e.Delay, 0)
		}
	}}
	calls := 0
	out := retry.Do(context.Background(), func(context.Context) error {
		if calls++; calls == 1 {
			return err
		}
		return nil
	}, p, retry.WithHooks(hooks))
	if out != nil {
		// Permanent, an error the policy does not retry, or a hint above
		// the ceiling (out then matches retry.ErrHintTooLong and err).
		v = verdict{action: cancel, err: out}
	}
	return v
}

// instant is a clock on which every wait is over at once.
type instant struct{}

func (instant) Now() time.Time { return time.Time{} }

func (instant) After(time.Duration) <-chan time.Time {
	c := make(chan time.Time, 1)
	c <- time.Time{}
	return c
}
