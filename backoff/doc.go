// Package backoff computes how long to wait between attempts: schedules that
// map an attempt number to a delay, and the stateful [Strategy] built on them.
//
// Everything here is a pure function of its arguments. A [Schedule] is
// computed in closed form with saturating arithmetic, so the delay for any
// attempt from 1 to math.MaxInt is defined, never negative and never wrapped.
// The package knows nothing of errors, contexts or goroutines; package policy
// composes schedules into retry policies and package retry runs them.
package backoff
