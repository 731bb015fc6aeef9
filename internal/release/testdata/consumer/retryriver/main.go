// Command retryriver uses the retryriver module as a user does after
// `go get github.com/retrykit/retrykit/retryriver`: a River client
// configured with the retry policy and middleware of one retrykit policy,
// and what they decide for a worker's outcomes. It needs no database: the
// client is built on a driver without a pool, which River allows for a
// client that is not started, and the middleware runs the worker directly.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retryriver"
)

// deliverArgs is a job that delivers a webhook.
type deliverArgs struct {
	URL string `json:"url"`
}

func (deliverArgs) Kind() string { return "deliver" }

// deliverWorker answers as the webhook's receiver would: busy, then gone.
type deliverWorker struct {
	river.WorkerDefaults[deliverArgs]
	outcome error
}

func (w *deliverWorker) Work(context.Context, *river.Job[deliverArgs]) error { return w.outcome }

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "consumer:", err)
		os.Exit(1)
	}
}

func run() error {
	p := policy.Exponential(10 * time.Second).WithCap(time.Hour).WithMaxHint(24 * time.Hour)
	retryPolicy, err := retryriver.NewRetryPolicy(p)
	if err != nil {
		return err
	}
	middleware, err := retryriver.NewMiddleware(p)
	if err != nil {
		return err
	}
	if _, err := river.NewClient(riverpgxv5.New(nil), &river.Config{
		RetryPolicy: retryPolicy,
		Middleware:  []rivertype.Middleware{middleware},
	}); err != nil {
		return err
	}
	fmt.Println("retryriver: River client configured")

	for attempt := 1; attempt <= 3; attempt++ {
		next := retryPolicy.NextRetry(&rivertype.JobRow{Attempt: attempt})
		fmt.Printf("retryriver: attempt %d failed, next in %v\n", attempt, time.Until(next).Round(time.Second))
	}

	ctx := context.Background()
	job := &river.Job[deliverArgs]{JobRow: &rivertype.JobRow{Attempt: 1, Kind: "deliver"}, Args: deliverArgs{URL: "http://127.0.0.1/hook"}}
	worker := &deliverWorker{}
	for _, outcome := range []error{retry.After(30*time.Second, errors.New("503")), retry.Permanent(errors.New("410 Gone"))} {
		worker.outcome = outcome
		err := middleware.Work(ctx, job.JobRow, func(ctx context.Context) error { return worker.Work(ctx, job) })
		var snooze *rivertype.JobSnoozeError
		switch {
		case errors.As(err, &snooze):
			fmt.Println("retryriver: snoozed for", snooze.Duration)
		case errors.Is(err, &rivertype.JobCancelError{}):
			fmt.Println("retryriver: cancelled:", errors.Unwrap(err))
		default:
			return fmt.Errorf("Work = %v, want a snooze or a cancel", err)
		}
	}
	return nil
}
