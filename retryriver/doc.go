// Package retryriver runs River jobs under a retrykit [policy.Policy], so
// that retries outlive the process that started them. [RetryPolicy]
// schedules a failed job's next run by the policy's back-off, and
// [Middleware] turns what a worker returns into River's words.
//
// River is github.com/riverqueue/river, a job queue on PostgreSQL. Give
// River both parts of the same policy:
//
//	p := policy.Exponential(10 * time.Second).WithCap(time.Hour).
//		WithJitter(backoff.Jitter{Kind: backoff.Full}).WithMaxHint(24 * time.Hour)
//	retryPolicy, err := retryriver.NewRetryPolicy(p)
//	if err != nil {
//		return err
//	}
//	middleware, err := retryriver.NewMiddleware(p)
//	if err != nil {
//		return err
//	}
//	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
//		RetryPolicy: retryPolicy,
//		Middleware:  []rivertype.Middleware{middleware},
//		Queues:      map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
//		Workers:     workers,
//	})
//
// # Limits
//
// River enforces the attempt limit of a job, not this package. River counts
// a job's attempts as retrykit does, the first run included. It discards
// the job once it has failed MaxAttempts times. MaxAttempts comes from
// river.InsertOpts.MaxAttempts or river.Config.MaxAttempts, and is 25 by
// default. Snoozes do not count as attempts.
//
// This package does not read the policy's attempt limit
// (policy.Policy.WithMaxAttempts) or its time limit
// (policy.Policy.WithMaxElapsed). A job's life, its attempts and their
// times are River's to record. To carry a policy's attempt limit over,
// insert the job with MaxAttempts set to it. To carry a time limit over,
// set MaxAttempts to the number of attempts whose delays add up to it. The
// kubelet schedule of [policy.Default], 10 s doubling to 300 s, spans 24
// hours in 293 attempts. River's default schedule, attempt⁴ seconds, spans
// about 20 days in its 25 attempts.
//
// The policy's per-attempt timeout is not read either. River's own
// river.Config.JobTimeout, or a worker's Timeout method, bounds each run.
package retryriver
