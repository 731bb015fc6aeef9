package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/retrykit/retrykit/retry"
)

// errNotRetried is the cause of a run that ended on a failure it does not
// retry (-on, -not-on, a command that vanished): the final line is then
// the sentence of a *retry.Error with this cause.
var errNotRetried = errors.New("retry: not retried")

// record is one line of -json: one attempt.
type record struct {
	Attempt  int     `json:"attempt"`             // counting from 1
	Status   int     `json:"status"`              // its exit status: 128+N for signal N, 127 or 126 when it could not start
	Signal   int     `json:"signal,omitempty"`    // the signal that ended it
	TimedOut bool    `json:"timed_out,omitempty"` // a timeout ended it
	Matched  *bool   `json:"matched,omitempty"`   // with -until: whether a line matched
	Error    string  `json:"error,omitempty"`     // why it failed
	Duration float64 `json:"duration"`            // how long it ran, in seconds
	Elapsed  float64 `json:"elapsed"`             // since the start of the run, in seconds

	Wait *float64 `json:"wait,omitempty"` // the wait before the next attempt, in seconds; absent on the last line

	Exit    *int   `json:"exit,omitempty"`    // the last line only: retry's exit status
	Summary string `json:"summary,omitempty"` // the last line of a run that failed: the final sentence
}

// onRetry writes the line of an attempt that is retried, before its wait.
func (r *runner) onRetry(_ context.Context, ev retry.RetryEvent) {
	switch {
	case r.cfg.quiet:
	case r.cfg.json:
		rec := r.record(ev.Err, ev.Elapsed)
		wait := ev.Delay.Seconds()
		rec.Wait = &wait
		r.writeJSON(rec)
	default:
		fmt.Fprintf(r.stderr, "retry: attempt %d: %v; waiting %v (%v elapsed)\n", ev.Attempt, ev.Err, round(ev.Delay), round(ev.Elapsed))
	}
}

// finish writes the end of the run, which retry.Do ended with err: the
// sentence of a *retry.Error for a failure, and a line for a success that
// took retries. With -json it is the last attempt's line.
func (r *runner) finish(err error, status int) {
	elapsed := time.Since(r.begin)
	var summary string
	if err != nil {
		var e *retry.Error
		if !errors.As(err, &e) {
			e = &retry.Error{Attempts: r.attempts, Elapsed: elapsed, Last: err, Cause: errNotRetried}
		}
		summary = e.Error()
	} else if r.attempts > 1 {
		summary = fmt.Sprintf("retry: succeeded after %d attempts in %v", r.attempts, round(elapsed))
	}
	switch {
	case r.cfg.quiet:
	case r.cfg.json:
		if r.attempts == 0 {
			return
		}
		rec := r.record(err, elapsed)
		rec.Exit = &status
		if err != nil {
			rec.Summary = summary
		}
		r.writeJSON(rec)
	case summary != "":
		fmt.Fprintln(r.stderr, summary)
	}
}

// record describes the last attempt, whose error as package retry saw it
// is err.
func (r *runner) record(err error, elapsed time.Duration) record {
	l := r.last
	rec := record{Attempt: r.attempts, Status: l.status, Signal: int(l.signal), TimedOut: l.timedOut,
		Duration: l.duration.Seconds(), Elapsed: elapsed.Seconds()}
	if r.cfg.until != nil {
		rec.Matched = &l.matched
	}
	var e *exitError
	if errors.As(err, &e) {
		rec.Error = e.Error()
	}
	return rec
}

func (r *runner) writeJSON(rec record) {
	b, err := json.Marshal(rec)
	if err != nil {
		panic("retry: " + err.Error()) // a record holds nothing json cannot write
	}
	b = append(b, '\n')
	_, _ = r.stderr.Write(b)
}

// round rounds d to the millisecond, as *retry.Error's sentence does, so
// that a jittered wait reads 1.234s rather than 1.234567891s.
func round(d time.Duration) time.Duration {
	if d >= time.Millisecond {
		return d.Round(time.Millisecond)
	}
	return d
}
