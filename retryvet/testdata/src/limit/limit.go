package limit

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"golang.org/x/sync/errgroup"
)

func call(ctx context.Context) error { return nil }

func value(ctx context.Context) (int, error) { return 1, nil }

type schedule struct{}

func (schedule) Delay(int) time.Duration { return time.Second }

// The bad cases: no limit in the policy, no deadline in the function.

func handler(w http.ResponseWriter, r *http.Request) {
	err := retry.Do(r.Context(), call, policy.Default()) // want `policy.Default\(…\) has neither WithMaxAttempts nor WithMaxElapsed, and no context gets a deadline in this function: retry.Do can retry forever`
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
	}
}

func exponential(ctx context.Context) error {
	return retry.Do(ctx, call, policy.Exponential(time.Second).WithCap(time.Minute)) // want `policy.Exponential\(…\) has neither`
}

func constant(ctx context.Context) (int, error) {
	return retry.DoValue(ctx, value, policy.Constant(time.Second)) // want `retry.DoValue can retry forever`
}

func custom(ctx context.Context) error {
	return retry.Hedge(ctx, call, policy.Custom(schedule{})) // want `policy.Custom\(…\) has neither`
}

func hedgeValue(ctx context.Context) (int, error) {
	return retry.HedgeValue(ctx, value, policy.Default().WithAttemptTimeout(time.Second), nil) // want `retry.HedgeValue can retry forever`
}

func group(ctx context.Context, g *errgroup.Group) {
	retry.Go(ctx, g, call, policy.Default()) // want `retry.Go can retry forever`
}

func limitRemoved(ctx context.Context) error {
	return retry.Do(ctx, call, policy.Default().WithMaxAttempts(0)) // want `policy.Default\(…\) has neither`
}

func lastSettingWins(ctx context.Context) error {
	return retry.Do(ctx, call, policy.Default().WithMaxElapsed(time.Minute).WithMaxElapsed(0)) // want `policy.Default\(…\) has neither`
}

func cancelIsNoDeadline(parent context.Context) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	return retry.Do(ctx, call, (policy.Default())) // want `policy.Default\(…\) has neither`
}

func multiline(ctx context.Context) error {
	return retry.Do(ctx, call,
		policy.Exponential(time.Second). // want `policy.Exponential\(…\) has neither`
							WithCap(time.Minute))
}

func timeoutInOperation(ctx context.Context) error {
	return retry.Do(ctx, func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		return call(ctx)
	}, policy.Exponential(time.Second).WithAttemptTimeout(time.Second)) // want `policy.Exponential\(…\) has neither`
}

func handlerTimeoutInOperation() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_ = retry.Do(r.Context(), func(ctx context.Context) error {
			actx, cancel := context.WithDeadlineCause(ctx, time.Now(), errors.New("late"))
			defer cancel()
			return call(actx)
		}, policy.Default()) // want `policy.Default\(…\) has neither`
	}
}

func deadlineOnAnotherContext(mux *http.ServeMux) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := call(ctx); err != nil {
		return err
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		_ = retry.Do(r.Context(), call, policy.Default()) // want `policy.Default\(…\) has neither`
	})
	return nil
}

// The good cases.

func attempts(ctx context.Context) error {
	return retry.Do(ctx, call, policy.Default().WithMaxAttempts(5))
}

func elapsed(ctx context.Context) error {
	return retry.Do(ctx, call, policy.Exponential(time.Second).WithMaxElapsed(time.Minute).WithCap(10*time.Second))
}

func limitSetAgain(ctx context.Context) error {
	return retry.Do(ctx, call, policy.Default().WithMaxAttempts(0).WithMaxAttempts(3))
}

func attemptsFromConfig(ctx context.Context, n int) error {
	return retry.Do(ctx, call, policy.Default().WithMaxAttempts(n))
}

func timeout(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return retry.Do(ctx, call, policy.Default())
}

func deadline(ctx context.Context, at time.Time) error {
	ctx, cancel := context.WithDeadline(ctx, at)
	defer cancel()
	return retry.Do(ctx, call, policy.Default())
}

func timeoutCause(ctx context.Context) error {
	ctx, cancel := context.WithTimeoutCause(ctx, time.Minute, errors.New("slow"))
	defer cancel()
	return retry.Do(ctx, call, policy.Default())
}

func deadlineInClosure(parent context.Context, at time.Time) error {
	run := func() error {
		ctx, cancel := context.WithDeadlineCause(parent, at, errors.New("late"))
		defer cancel()
		return retry.Do(ctx, call, policy.Default())
	}
	return run()
}

func fanOutWithDeadline(parent context.Context, n int) error {
	ctx, cancel := context.WithTimeout(parent, time.Minute)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)
	for range n {
		g.Go(func() error {
			return retry.Do(gctx, func(ctx context.Context) error { return call(ctx) }, policy.Exponential(time.Second))
		})
	}
	return g.Wait()
}

func fanOutGo(parent context.Context, n int) error {
	ctx, cancel := context.WithTimeout(parent, time.Minute)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)
	for range n {
		retry.Go(gctx, g, call, policy.Exponential(time.Second))
	}
	return g.Wait()
}

func nestedWithItsOwnDeadline(ctx context.Context) error {
	return retry.Do(ctx, func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		return retry.Do(ctx, call, policy.Default())
	}, policy.Default().WithMaxAttempts(3))
}

func loop(ctx context.Context) error {
	return retry.Loop(ctx, call, policy.Default())
}

var shared = policy.Default()

func variable(ctx context.Context) error {
	return retry.Do(ctx, call, shared)
}

func fromFunction(ctx context.Context) error {
	return retry.Do(ctx, call, newPolicy())
}

func newPolicy() policy.Policy { return policy.Default() }

func parsed(ctx context.Context, text string) error {
	p, err := policy.Parse(text)
	if err != nil {
		return err
	}
	return retry.Do(ctx, call, p)
}
