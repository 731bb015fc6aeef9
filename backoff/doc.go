// Package backoff computes how long to wait between attempts, and nothing
// else: it knows nothing of errors, contexts or goroutines. To retry calls,
// use package policy, which builds on it, and package retry, which runs the
// calls.
//
//   - A [Schedule] maps an attempt number to a delay: [Exponential],
//     [Constant] or a [ScheduleFunc] of one's own, bounded by [Cap].
//   - [Jitter] spreads the delays of a schedule, in one of the ways
//     [JitterKind] names.
//   - A [Strategy] hands out the delays of one sequence one at a time:
//     [Default] and [NewStrategy].
//   - [Keyed] keeps one back-off sequence per key, as the kubelet does for
//     image pulls: [NewKeyed].
//
// [Exponential] and [Constant] are computed in closed form with
// saturating arithmetic. Their delay for any attempt from 1 to math.MaxInt is
// defined, never negative and never wrapped.
package backoff
