package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retryriver"
)

// workerEnv, set to the River schema, makes this program a worker process.
const workerEnv = "WEBHOOK_WORKER_SCHEMA"

// deliveryPolicy is how deliveries are retried: 600 ms doubling to 5 s,
// each wait drawn from its upper half, hints up to a minute. (A real one
// would start at seconds and reach hours: Exponential(10*time.Second).
// WithCap(time.Hour), with a hint ceiling of a day.)
var deliveryPolicy = policy.Exponential(600 * time.Millisecond).WithCap(5 * time.Second).
	WithJitter(backoff.Jitter{Kind: backoff.Equal}).WithMaxHint(time.Minute)

// deliveryArgs is one webhook delivery: a job.
type deliveryArgs struct {
	ID      string `json:"id"`
	URL     string `json:"url"`
	Payload string `json:"payload"`
}

func (deliveryArgs) Kind() string { return "webhook_delivery" }

// deliver posts one delivery and says what its answer means for the job:
// nil, a hint (Retry-After), a permanent refusal (4xx), or an error to
// retry on the policy's schedule.
func deliver(ctx context.Context, job *river.Job[deliveryArgs]) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, job.Args.URL, bytes.NewBufferString(job.Args.Payload))
	if err != nil {
		return retry.Permanent(err)
	}
	req.Header.Set("Idempotency-Key", job.Args.ID)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err // a connection error: retried
	}
	_ = resp.Body.Close()
	status := fmt.Errorf("webhook %s: %s", job.Args.ID, resp.Status)
	switch code := resp.StatusCode; {
	case code < 300:
		fmt.Printf("%s attempt %d: delivered\n", job.Args.ID, job.Attempt)
		return nil
	case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
		if d, ok := retryAfter(resp.Header.Get("Retry-After")); ok {
			fmt.Printf("%s attempt %d: %s, Retry-After %v: snoozed (no attempt used)\n", job.Args.ID, job.Attempt, resp.Status, d)
			return retry.After(d, status)
		}
		return status
	case code >= 400 && code < 500 && code != http.StatusRequestTimeout:
		fmt.Printf("%s attempt %d: %s: cancelled, never retried\n", job.Args.ID, job.Attempt, resp.Status)
		return retry.Permanent(status)
	default:
		return status
	}
}

// retryAfter reads a Retry-After header, in seconds or as an HTTP date.
// retryhttp's Transport reads it itself for the requests it sends.
func retryAfter(v string) (time.Duration, bool) {
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil && time.Until(t) > 0 {
		return time.Until(t), true
	}
	return 0, false
}

// announcedRetryPolicy is the retry policy that also says when each
// failed delivery runs again.
type announcedRetryPolicy struct{ *retryriver.RetryPolicy }

func (r announcedRetryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	next := r.RetryPolicy.NextRetry(job)
	var args deliveryArgs
	_ = json.Unmarshal(job.EncodedArgs, &args)
	fmt.Printf("%s attempt %d failed: next attempt in %v\n", args.ID, job.Attempt, time.Until(next).Round(time.Millisecond))
	return next
}

// work runs a River worker on the deliveries in schema until SIGTERM (or
// SIGKILL, which is the point).
func work(url, schema string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	retryPolicy, err := retryriver.NewRetryPolicy(deliveryPolicy)
	if err != nil {
		return err
	}
	middleware, err := retryriver.NewMiddleware(deliveryPolicy)
	if err != nil {
		return err
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(deliver))
	client, err := river.NewClient(riverpgxv5.New(pool), riverConfig(schema, &river.Config{
		RetryPolicy: announcedRetryPolicy{retryPolicy},
		Middleware:  []rivertype.Middleware{middleware},
		Queues:      map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
		Workers:     workers,
	}))
	if err != nil {
		return err
	}
	if err := client.Start(ctx); err != nil {
		return err
	}
	fmt.Fprintln(os.Stdout, "ready")
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return client.Stop(stopCtx)
}
