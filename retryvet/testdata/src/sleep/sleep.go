package sleep

import (
	"context"
	"errors"
	"time"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"golang.org/x/sync/errgroup"
)

var (
	p       = policy.Constant(time.Second).WithMaxAttempts(3)
	errBusy = errors.New("busy")
)

func call(ctx context.Context) error { return nil }

// The bad cases: the operation waits by itself.

func sleeps(ctx context.Context) error {
	return retry.Do(ctx, func(ctx context.Context) error {
		if err := call(ctx); err != nil {
			time.Sleep(time.Second) // want `time.Sleep in the operation of retry.Do waits outside the policy`
			return err
		}
		return nil
	}, p)
}

func receives(ctx context.Context) (int, error) {
	return retry.DoValue(ctx, func(ctx context.Context) (int, error) {
		<-time.After(100 * time.Millisecond) // want `a receive from time.After in the operation of retry.DoValue waits outside the policy`
		return 1, call(ctx)
	}, p)
}

func receivesValue(ctx context.Context) error {
	return retry.Hedge(ctx, func(ctx context.Context) error {
		at := <-time.After(time.Second) // want `a receive from time.After in the operation of retry.Hedge`
		_ = at
		return call(ctx)
	}, p)
}

func selectAlone(ctx context.Context) error {
	return retry.Loop(ctx, func(ctx context.Context) error {
		select {
		case <-time.After(time.Second): // want `a receive from time.After in the operation of retry.Loop`
		}
		return call(ctx)
	}, p)
}

func inGroup(ctx context.Context, g *errgroup.Group) {
	retry.Go(ctx, g, func(ctx context.Context) error {
		time.Sleep(time.Millisecond) // want `time.Sleep in the operation of retry.Go`
		return call(ctx)
	}, p)
}

func inHedgeValue(ctx context.Context) (string, error) {
	return retry.HedgeValue(ctx, func(ctx context.Context) (string, error) {
		time.Sleep(time.Millisecond) // want `time.Sleep in the operation of retry.HedgeValue`
		return "", call(ctx)
	}, p, nil)
}

func inClosure(ctx context.Context) error {
	return retry.Do(ctx, func(ctx context.Context) error {
		backoff := func() { time.Sleep(time.Second) } // want `time.Sleep in the operation of retry.Do`
		if err := call(ctx); errors.Is(err, errBusy) {
			backoff()
			return err
		}
		return nil
	}, p)
}

func nested(ctx context.Context) error {
	return retry.Do(ctx, func(ctx context.Context) error {
		return retry.Hedge(ctx, func(ctx context.Context) error {
			time.Sleep(time.Millisecond) // want `time.Sleep in the operation of retry.Hedge`
			return call(ctx)
		}, p)
	}, p)
}

func startedAndCalled(ctx context.Context) error {
	return retry.Do(ctx, func(ctx context.Context) error {
		bg := func() { time.Sleep(time.Second) } // want `time.Sleep in the operation of retry.Do`
		go bg()
		bg()
		return call(ctx)
	}, p)
}

func startedAndPassed(ctx context.Context, run func(func())) error {
	return retry.Do(ctx, func(ctx context.Context) error {
		var bg = func() { time.Sleep(time.Second) } // want `time.Sleep in the operation of retry.Do`
		go bg()
		run(bg)
		return call(ctx)
	}, p)
}

func startedAfterReassigned(ctx context.Context) error {
	return retry.Do(ctx, func(ctx context.Context) error {
		bg := func() {}
		bg = func() { time.Sleep(time.Second) } // want `time.Sleep in the operation of retry.Do`
		go bg()
		return call(ctx)
	}, p)
}

// The good cases.

func sleepsOutside(ctx context.Context) error {
	time.Sleep(time.Millisecond)
	<-time.After(time.Millisecond)
	return retry.Do(ctx, call, p)
}

func inGoroutine(ctx context.Context) error {
	return retry.Do(ctx, func(ctx context.Context) error {
		go func() {
			time.Sleep(time.Second)
		}()
		return call(ctx)
	}, p)
}

func startedFromVariable(ctx context.Context) error {
	return retry.Do(ctx, func(ctx context.Context) error {
		bg := func() { time.Sleep(time.Second) }
		go bg()
		return call(ctx)
	}, p)
}

func startedFromVarTwice(ctx context.Context) error {
	return retry.Do(ctx, func(ctx context.Context) error {
		var bg = func() { <-time.After(time.Second) }
		go bg()
		go (bg)()
		return call(ctx)
	}, p)
}

func selectWithContext(ctx context.Context) error {
	return retry.Do(ctx, func(ctx context.Context) error {
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return ctx.Err()
		}
		return call(ctx)
	}, p)
}

func timerNotReceived(ctx context.Context) error {
	return retry.Do(ctx, func(ctx context.Context) error {
		deadline := time.After(time.Second)
		_ = deadline
		return call(ctx)
	}, p)
}

type clock struct{}

func (clock) Sleep(time.Duration) {}

func ownSleep(ctx context.Context, c clock) error {
	return retry.Do(ctx, func(ctx context.Context) error {
		c.Sleep(time.Second)
		return call(ctx)
	}, p)
}

func namedOperation(ctx context.Context) error {
	slow := func(ctx context.Context) error {
		time.Sleep(time.Second)
		return call(ctx)
	}
	return retry.Do(ctx, slow, p)
}
