// Package retrykit is a retry toolkit for Go. It runs a flaky call until the
// call succeeds, fails for good, runs out of attempts or time, or its context
// ends, and it keeps the last error whatever happens. This package holds no
// code: it is the tour.
//
// # The layers
//
// Imports point down only:
//
//   - Package retry runs operations. retry.Do and the generic retry.DoValue
//     call a function until it succeeds, returns a permanent error, exhausts
//     the policy or its context ends. retry.Loop restarts long-running work
//     forever, such as consumers, watches and supervised processes. retry.Go
//     fans out over an errgroup. retry.Hedge and retry.HedgeValue also start
//     another attempt beside a slow one, for operations that are safe to run
//     twice at once. All the state of a call lives on its stack.
//   - Package policy describes how to retry, as an immutable value: the
//     schedule, its cap and jitter, the attempt and time limits, which errors
//     to retry, when to start over, a guard that admits retries while they
//     pay off, hedging, and which clock to read. Every With… method returns a
//     copy, so any number of goroutines can share one policy. Policies also
//     read from text, JSON and flags.
//   - Package backoff computes bare delays: closed-form schedules with
//     saturating arithmetic, jitter, the stateful backoff.Strategy for code
//     that keeps its own loop, and a keyed table for per-key back-off.
//
// The integrations use only the public API of these packages, as a third
// party's would. retryhttp makes an
// http.Client retry through its Transport. retrysql runs a database/sql
// transaction again after a serialization failure or a deadlock. retrytest
// makes calls fail on purpose, and gives tests a mock clock that says when
// the code under test starts a wait. retrygrpc, retryotel, retrykube and
// retryriver are modules of their own, for gRPC, OpenTelemetry, client-go's
// work queues and River jobs.
//
// # The default
//
// policy.Default() is the Kubernetes kubelet back-off, the numbers of
// CrashLoopBackOff and ImagePullBackOff: 10s after the first failure,
// doubling, capped at 300s. Attempts start at 0, 10, 30, 70, 150, 310, 610,
// 910s, … It has no attempt limit, so a call under it retries forever until
// it succeeds, fails for good or its context ends. Give it a limit:
//
//	err := retry.Do(ctx, func(ctx context.Context) error {
//		return client.Ping(ctx)
//	}, policy.Default().WithMaxAttempts(5))
//
// Attempts always count the first attempt: WithMaxAttempts(5) makes the first
// attempt and at most four retries.
//
// # How a call ends
//
// A call returns nil on success, the operation's own error when it is
// final, or a *retry.Error that matches the reason and the last error:
// retry.ErrExhausted when a limit ended the call, the context's error when
// the caller ended it. docs/calls.md lists every way a call ends and the
// sentinels each matches.
//
// An operation can also say how long to wait (retry.After, a server's
// Retry-After). Hooks (retry.WithHooks, retry.SlogHooks) hear of every
// attempt, every wait before it starts and every retry the guard denied.
// No wait is announced after the final attempt.
//
// # Retry admission
//
// Retries mask a flaky dependency, and they can also turn a stall into an
// outage that outlives it. A policy.Guard, one per dependency and shared by
// every policy that calls it, admits retries while they pay off and holds
// them back while they only add load. Give it with Policy.WithGuard.
//
// # Testing
//
// Time is injectable. policy.WithClock takes anything with Now and After,
// github.com/benbjohnson/clock's Mock included. retrytest.Clock wraps that
// Mock, so that a test can wait until the code under test is parked in a
// back-off, read the delay it asked for and advance exactly that much. The
// test needs no sleep and has no race. Code that uses the real clock can
// also be tested inside testing/synctest. retrytest's Injector makes calls fail on
// purpose, by a script or at random from a seed.
package retrykit
