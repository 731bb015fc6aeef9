// Package retrykit is a retry toolkit for Go: it runs flaky calls (networks,
// disks, cloud APIs) again after a growing, bounded delay, and gives up in a
// way the caller can understand. This package holds no code; it is the tour.
//
// # The layers
//
// Imports point down only:
//
//   - package retry runs operations: retry.Do and the generic retry.DoValue
//     call a function until it succeeds, returns a permanent error, exhausts
//     the policy or the context says stop; retry.Loop restarts long-running
//     work (consumers, watches, supervised processes); retry.Go fans out over
//     an errgroup; retry.Hedge and retry.HedgeValue also start another
//     attempt beside a slow one, for operations safe to run twice at once
//     (policy.Hedging, with a fixed delay or a running latency percentile).
//     All the state of a call lives on its stack.
//   - package policy describes how to retry as an immutable value: the
//     schedule, its cap and jitter, attempt and time limits, which errors to
//     retry, when to start over, a shared guard that admits retries while
//     they pay off, and which clock to read. Every With… method returns a copy, so one policy is shared
//     safely by any number of goroutines. Policies also read from text, JSON
//     and flags.
//   - package backoff computes delays: closed-form schedules with saturating
//     arithmetic, jitter, the stateful backoff.Strategy (Next, Reset) for
//     code that keeps its own loop, and a keyed table for per-key back-off.
//
// Beside them, retryhttp makes an http.Client retry correctly through
// its Transport, and retrytest gives tests a mock clock that says when
// the code under test starts a wait.
//
// # The default
//
// policy.Default() is the Kubernetes kubelet back-off, the numbers of
// CrashLoopBackOff and ImagePullBackOff: 10s after the first failure,
// doubling, capped at 300s, no attempt limit. Attempts start at 0, 10, 30,
// 70, 150, 310, 610, 910s, …
//
//	err := retry.Do(ctx, func(ctx context.Context) error {
//		return client.Ping(ctx)
//	}, policy.Default().WithMaxAttempts(5))
//
// # How a call ends
//
//   - nil on success;
//   - the operation's error as it is, when it was marked with
//     retry.Permanent or the policy does not retry it;
//   - a *retry.Error matching retry.ErrExhausted and the last error, when the
//     attempt or time limit is reached (attempts always count the first
//     call);
//   - a *retry.Error matching the context's error and the last error, at once
//     when the context is done, and without waiting when the next wait would
//     end after the context's deadline;
//   - a *retry.Error matching retry.ErrThrottled and the last error when the
//     call runs out of attempts or time while its policy.Guard holds its
//     retries back (a denied retry is waited out, not the end of the call);
//   - a *retry.Error matching retry.ErrShed, at once and before the
//     operation runs, when the policy.Guard holds new calls back while the
//     dependency answers nothing but overload;
//   - a *retry.Error matching retry.ErrHintTooLong and the last error, at
//     once, when the operation's hint (retry.After, a Retry-After) asks for a
//     wait above the policy's hint ceiling, past the time limit or past the
//     deadline;
//   - an error matching retry.ErrInvalid (and policy.ErrInvalid) before
//     anything runs, for a nonsensical policy, a nil function or a nil
//     context.
//
// An operation can also say how long to wait (retry.After, a server's
// Retry-After), and hooks (retry.WithHooks, retry.SlogHooks) see every wait
// before it starts, never after the final attempt.
//
// # Testing
//
// Time is injectable: policy.WithClock takes anything with Now and After,
// github.com/benbjohnson/clock's Mock included. Package retrytest wraps
// that Mock so a test can wait until the code under test is parked in a
// back-off, read the delay it asked for and advance exactly that much, with
// no sleeps and no races. Code that uses the real clock can also be tested
// inside testing/synctest.
package retrykit
