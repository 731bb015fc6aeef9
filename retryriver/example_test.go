package retryriver_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retryriver"
)

// A job's next attempt follows the policy's schedule for the attempt that
// failed: here the kubelet's 10 s doubling to 300 s.
func ExampleRetryPolicy_NextRetry() {
	r, err := retryriver.NewRetryPolicy(policy.Default())
	if err != nil {
		panic(err)
	}
	for attempt := 1; attempt <= 7; attempt++ {
		next := r.NextRetry(&rivertype.JobRow{Attempt: attempt})
		fmt.Printf("attempt %d failed: next in %v\n", attempt, time.Until(next).Round(time.Second))
	}
	// Output:
	// attempt 1 failed: next in 10s
	// attempt 2 failed: next in 20s
	// attempt 3 failed: next in 40s
	// attempt 4 failed: next in 1m20s
	// attempt 5 failed: next in 2m40s
	// attempt 6 failed: next in 5m0s
	// attempt 7 failed: next in 5m0s
}

// What a worker returns becomes River's snooze, cancel or retry.
func ExampleMiddleware() {
	m, err := retryriver.NewMiddleware(policy.Default())
	if err != nil {
		panic(err)
	}
	unavailable := errors.New("503 Service Unavailable")
	for _, workerErr := range []error{
		nil,
		retry.After(30*time.Second, unavailable),
		retry.Permanent(errors.New("410 Gone")),
		unavailable,
	} {
		err := m.Work(context.Background(), &rivertype.JobRow{Attempt: 1}, func(context.Context) error { return workerErr })
		var snooze *rivertype.JobSnoozeError
		switch {
		case err == nil:
			fmt.Println("completed")
		case errors.As(err, &snooze):
			fmt.Println("snoozed for", snooze.Duration)
		case errors.Is(err, &rivertype.JobCancelError{}):
			fmt.Println("cancelled:", errors.Unwrap(err))
		default:
			fmt.Println("retried by River:", err)
		}
	}
	// Output:
	// completed
	// snoozed for 30s
	// cancelled: 410 Gone
	// retried by River: 503 Service Unavailable
}
