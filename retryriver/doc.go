// Package retryriver runs River jobs (github.com/riverqueue/river, on
// PostgreSQL) under a retrykit [policy.Policy], so that retries outlive the
// process that started them: [RetryPolicy] schedules a failed job's next
// attempt from the policy's back-off, and [Middleware] turns what a worker
// returns into River's words, a hint ([retry.After]) into a snooze, a
// [retry.Permanent] error into a cancelled job, and holds retries back while
// the policy's guard sees the dependency down.
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
// River counts a job's attempts as retrykit does, the first run included,
// and discards the job once it has failed MaxAttempts times
// (river.InsertOpts.MaxAttempts, or river.Config.MaxAttempts, 25 by default);
// snoozes do not count. That is the job's attempt limit: this package does
// not read the policy's attempt limit (policy.Policy.WithMaxAttempts) nor its
// time limit (policy.Policy.WithMaxElapsed), since a job's life, its
// attempts and their times are River's to record. To carry them over, insert
// the job with MaxAttempts set to the policy's attempts, or, for a time
// limit, to the number of attempts whose delays add up to it: the kubelet
// schedule of [policy.Default] (10 s doubling to 300 s) spans 24 hours in
// 293 attempts, River's default schedule (attempt⁴ seconds) about 20 days in
// its 25. A policy's per-attempt timeout is not read either: River's own
// (river.Config.JobTimeout, a worker's Timeout) bounds each run.
package retryriver
