package bench

import (
	"context"
	"time"

	avast "github.com/avast/retry-go/v4"
	cenkalti "github.com/cenkalti/backoff/v5"
	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/adaptivethrottler"
	"github.com/failsafe-go/failsafe-go/budget"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	sethvargo "github.com/sethvargo/go-retry"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/internal/storm"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// spec is the clients' common policy in a scenario, spelled out for the
// peers: exponential back-off from base, ×2, capped, with full jitter (a
// delay drawn evenly from zero to the capped exponential), within attempts
// (0: no limit, the first call counted) and limit (0: no time limit), each
// attempt with its own timeout (0: none).
type spec struct {
	base, cap time.Duration
	attempts  int
	timeout   time.Duration
	limit     time.Duration
}

// specOf returns the common policy of s: storm.Retrying, the fleet
// outage's own, or that of the fleets whose callers would wait a minute
// (the fleet outage's with the attempt timeout). TestAdmissionScenarios
// checks that it says what the scenario's policy says; a scenario of a
// policy of its own not named here gets none.
func specOf(s storm.Scenario) spec {
	fleet := spec{base: 100 * time.Millisecond, cap: 5 * time.Second, limit: time.Minute}
	switch {
	case s.Policy == nil:
		return spec{base: 100 * time.Millisecond, cap: 2 * time.Second, attempts: 4, timeout: storm.AttemptTimeout}
	case s.Name == storm.FleetOutage().Name:
		return fleet
	case s.Name == storm.FleetLimit().Name, s.Name == storm.FleetStall().Name:
		fleet.timeout = storm.AttemptTimeout
		return fleet
	}
	return spec{}
}

// policy returns sp as a retrykit policy.
func (sp spec) policy() policy.Policy {
	p := policy.Exponential(sp.base).WithCap(sp.cap).WithJitter(backoff.Jitter{Kind: backoff.Full})
	if sp.attempts > 0 {
		p = p.WithMaxAttempts(sp.attempts)
	}
	if sp.timeout > 0 {
		p = p.WithAttemptTimeout(sp.timeout)
	}
	if sp.limit > 0 {
		p = p.WithMaxElapsed(sp.limit)
	}
	return p
}

// timed makes one attempt under the attempt timeout, as every peer is given
// it: none of them has one of its own besides failsafe's Timeout policy.
func (sp spec) timed(ctx context.Context, attempt func(context.Context) error) error {
	if sp.timeout == 0 {
		return attempt(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, sp.timeout)
	defer cancel()
	return attempt(ctx)
}

// caller makes one call, every attempt through attempt, and returns its
// error.
type caller func(ctx context.Context, attempt func(context.Context) error) error

// admissionClient is one library configured for the common policy. New
// runs inside the run's synctest bubble and returns the caller for one run,
// with whatever the calls share (a guard, a budget, a throttler) fresh.
type admissionClient struct {
	name string
	// peer: a plain-retrying peer, one of those the goals compare with.
	peer bool
	// goal: the client held to the goals, retrykit's default guard.
	goal bool
	new  func(s storm.Scenario, sp spec) caller
}

// through returns the caller of a retrykit policy made from the scenario's
// own common policy.
func through(change func(policy.Policy) policy.Policy) func(storm.Scenario, spec) caller {
	return func(s storm.Scenario, _ spec) caller {
		base := storm.Retrying()
		if s.Policy != nil {
			base = s.Policy()
		}
		p := change(base)
		return func(ctx context.Context, attempt func(context.Context) error) error {
			return retry.Do(ctx, attempt, p)
		}
	}
}

// admissionClients returns the clients compared: retrykit without retries,
// with plain retries, with its default guard (storm.Guarded) and with the
// guard that was the default before, NewGuard(10, 0.5); the four
// plain-retrying peers; and failsafe-go's two ways of holding retries back.
func admissionClients() []admissionClient {
	return []admissionClient{
		{name: "no retry", new: through(func(p policy.Policy) policy.Policy { return p.WithMaxAttempts(1) })},
		{name: "retrykit plain", new: through(func(p policy.Policy) policy.Policy { return p })},
		{name: "retrykit " + storm.Guarded().Name, goal: true, new: through(storm.Guarded().New)},
		{name: "retrykit NewGuard(10, 0.5)", new: through(func(p policy.Policy) policy.Policy {
			return p.WithGuard(policy.NewGuard(10, 0.5))
		})},
		{name: "cenkalti", peer: true, new: cenkaltiCaller},
		{name: "sethvargo", peer: true, new: sethvargoCaller},
		{name: "avast", peer: true, new: avastCaller},
		{name: "failsafe", peer: true, new: func(_ storm.Scenario, sp spec) caller {
			return failsafeCaller(sp, failsafe.With[any](failsafeRetries(sp).Build()))
		}},
		{name: "failsafe + budget", new: func(_ storm.Scenario, sp spec) caller {
			// budget.New: retries may be up to 20 % of the calls in flight,
			// and at least 3 at once. A denied retry ends the call.
			return failsafeCaller(sp, failsafe.With[any](failsafeRetries(sp).WithBudget(budget.New()).Build()))
		}},
		{name: "failsafe + throttler", new: func(_ storm.Scenario, sp spec) caller {
			// The SRE book's adaptive throttling with failsafe's defaults
			// (rejects in proportion to the excess over a 90 % success rate
			// in the last minute, at most 90 %), inside the retries, so that
			// it sees every attempt and a rejected attempt is retried after
			// the next delay.
			return failsafeCaller(sp, failsafe.With[any](failsafeRetries(sp).Build(), adaptivethrottler.NewWithDefaults[any]()))
		}},
	}
}

// cenkalti's randomisation spreads a delay evenly over [d−f·d, d+f·d], and
// its cap applies before it: half the base and half the cap with a factor of
// 1 make [0, 2·min(base/2·2ⁿ, cap/2)], which is full jitter exactly.
func cenkaltiCaller(_ storm.Scenario, sp spec) caller {
	return func(ctx context.Context, attempt func(context.Context) error) error {
		b := &cenkalti.ExponentialBackOff{InitialInterval: sp.base / 2, RandomizationFactor: 1, Multiplier: 2, MaxInterval: sp.cap / 2}
		_, err := cenkalti.Retry(ctx, func() (struct{}, error) { return struct{}{}, sp.timed(ctx, attempt) },
			cenkalti.WithBackOff(b), cenkalti.WithMaxTries(uint(sp.attempts)), cenkalti.WithMaxElapsedTime(sp.limit))
		return err
	}
}

// sethvargo has full jitter, a cap, a retry limit and a time limit of its
// own; its back-off is stateful, so each call builds one.
func sethvargoCaller(_ storm.Scenario, sp spec) caller {
	return func(ctx context.Context, attempt func(context.Context) error) error {
		b := sethvargo.WithFullJitter(sethvargo.WithCappedDuration(sp.cap, sethvargo.NewExponential(sp.base)))
		if sp.attempts > 0 {
			b = sethvargo.WithMaxRetries(uint64(sp.attempts-1), b)
		}
		if sp.limit > 0 {
			b = sethvargo.WithMaxDuration(sp.limit, b)
		}
		return sethvargo.Do(ctx, b, func(ctx context.Context) error {
			if err := sp.timed(ctx, attempt); err != nil {
				return sethvargo.RetryableError(err)
			}
			return nil
		})
	}
}

// avast's FullJitterBackoffDelay draws from [0, min(delay·2ⁿ, cap)] with n
// counting from 1 at the first retry, so the delay given is half the base.
// avast has no time limit: a context deadline stands for it, which also
// ends an attempt in flight at the limit (the others let it finish).
func avastCaller(_ storm.Scenario, sp spec) caller {
	return func(ctx context.Context, attempt func(context.Context) error) error {
		if sp.limit > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, sp.limit)
			defer cancel()
		}
		return avast.Do(func() error { return sp.timed(ctx, attempt) },
			avast.Context(ctx), avast.Attempts(uint(sp.attempts)), // 0: no limit, as in sp
			avast.Delay(sp.base/2), avast.MaxDelay(sp.cap), avast.DelayType(avast.FullJitterBackoffDelay),
			avast.LastErrorOnly(true))
	}
}

// failsafe's jitter factor spreads a delay evenly over [d−f·d, d+f·d] after
// its cap: half the base and half the cap with a factor of 1 make full
// jitter exactly, as for cenkalti.
func failsafeRetries(sp spec) retrypolicy.Builder[any] {
	b := retrypolicy.NewBuilder[any]().WithBackoff(sp.base/2, sp.cap/2).WithJitterFactor(1).ReturnLastFailure()
	if sp.attempts > 0 {
		b = b.WithMaxAttempts(sp.attempts)
	} else {
		b = b.WithMaxRetries(-1)
	}
	if sp.limit > 0 {
		b = b.WithMaxDuration(sp.limit)
	}
	return b
}

func failsafeCaller(sp spec, ex failsafe.Executor[any]) caller {
	return func(ctx context.Context, attempt func(context.Context) error) error {
		return ex.WithContext(ctx).RunWithExecution(func(e failsafe.Execution[any]) error {
			return sp.timed(e.Context(), attempt)
		})
	}
}
