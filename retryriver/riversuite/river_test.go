package riversuite_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retryriver"
)

// testArgs are the arguments of the jobs of these tests.
type testArgs struct {
	Name string `json:"name"`
}

func (testArgs) Kind() string { return "retryriver_test" }

// startRiver starts a client on a fresh database whose jobs are worked by
// work, under p through a RetryPolicy and a Middleware.
func startRiver(t *testing.T, p policy.Policy, work func(context.Context, *river.Job[testArgs]) error) *river.Client[pgx.Tx] {
	t.Helper()
	_, pool := newDB(t)
	retryPolicy, err := retryriver.NewRetryPolicy(p)
	require.NoError(t, err)
	middleware, err := retryriver.NewMiddleware(p)
	require.NoError(t, err)
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(work))
	return newClient(t, pool, &river.Config{
		RetryPolicy: retryPolicy,
		Middleware:  []rivertype.Middleware{middleware},
		Workers:     workers,
	})
}

func insert(t *testing.T, client *river.Client[pgx.Tx], names ...string) []int64 {
	t.Helper()
	params := make([]river.InsertManyParams, len(names))
	for i, name := range names {
		params[i] = river.InsertManyParams{Args: testArgs{Name: name}}
	}
	res, err := client.InsertMany(context.Background(), params)
	require.NoError(t, err)
	ids := make([]int64, len(res))
	for i, r := range res {
		ids[i] = r.Job.ID
	}
	return ids
}

// run is what a worker saw of one run of a job.
type run struct {
	attempt     int
	scheduledAt time.Time // the job's scheduled time, as the run found it
	start, end  time.Time
}

// runs records the runs of jobs, by name.
type runs struct {
	mu sync.Mutex
	m  map[string][]run
}

func (r *runs) add(job *river.Job[testArgs], start time.Time) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string][]run{}
	}
	r.m[job.Args.Name] = append(r.m[job.Args.Name], run{attempt: job.Attempt, scheduledAt: job.ScheduledAt, start: start, end: time.Now()})
	return len(r.m[job.Args.Name])
}

func (r *runs) of(name string) []run {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m[name]
}

func TestRiverNextRetryTimes(t *testing.T) {
	jittered := func() policy.Policy {
		return policy.Exponential(40 * time.Millisecond).WithCap(300 * time.Millisecond).
			WithJitter(backoff.Jitter{Kind: backoff.Full}).WithRandom(rand.NewPCG(3, 3))
	}
	const failures = 6
	var seen runs
	client := startRiver(t, jittered(), func(_ context.Context, job *river.Job[testArgs]) error {
		if seen.add(job, time.Now()) <= failures {
			return errDown
		}
		return nil
	})
	ids := insert(t, client, "job")
	row := waitFinal(t, client, 20*time.Second, ids...)[0]
	require.Equal(t, rivertype.JobStateCompleted, row.State)
	require.Equal(t, failures+1, row.Attempt)
	require.Len(t, row.Errors, failures)

	// Each next-retry time is the failure's time plus the policy's delay for
	// that attempt, drawn from the same seeded source: the worker's failure
	// is measured just before it returns, so the retry policy, which runs
	// after, can only add a little.
	want := jittered()
	r := seen.of("job")
	require.Len(t, r, failures+1)
	for n := 1; n <= failures; n++ {
		delay := want.Backoff(n, 0)
		got := r[n].scheduledAt.Sub(r[n-1].end)
		t.Logf("attempt %d failed; next retry %v later (policy: %v)", n, got.Round(time.Microsecond), delay)
		require.Equal(t, n+1, r[n].attempt)
		require.GreaterOrEqual(t, got, delay-time.Microsecond, "retry %d scheduled early", n)
		require.Less(t, got, delay+50*time.Millisecond, "retry %d scheduled late", n)
		require.False(t, r[n].start.Before(r[n].scheduledAt.Add(-time.Millisecond)), "retry %d ran before its time", n)
	}
}

func TestRiverSnoozesForAHint(t *testing.T) {
	var seen runs
	client := startRiver(t, policy.Exponential(time.Minute), func(_ context.Context, job *river.Job[testArgs]) error {
		n := seen.add(job, time.Now())
		switch {
		case job.Args.Name == "busy" && n == 1:
			return retry.After(300*time.Millisecond, errDown)
		case job.Args.Name == "too long":
			return retry.After(time.Hour, errDown) // above the 5-minute ceiling
		}
		return nil
	})
	ids := insert(t, client, "busy", "too long")
	rows := waitFinal(t, client, 10*time.Second, ids...)

	busy := rows[0]
	require.Equal(t, rivertype.JobStateCompleted, busy.State)
	require.Equal(t, 1, busy.Attempt, "the snooze used up an attempt")
	require.Empty(t, busy.Errors)
	require.EqualValues(t, 1, gjson.GetBytes(busy.Metadata, "snoozes").Int())
	r := seen.of("busy")
	require.Len(t, r, 2)
	gap := r[1].start.Sub(r[0].end)
	t.Logf("hinted 300ms; ran again %v later (the policy's own delay: 1m)", gap.Round(time.Millisecond))
	require.GreaterOrEqual(t, gap, 300*time.Millisecond)
	require.Less(t, gap, 2*time.Second)

	long := rows[1]
	require.Equal(t, rivertype.JobStateCancelled, long.State)
	require.Len(t, seen.of("too long"), 1)
	require.Len(t, long.Errors, 1)
	require.Contains(t, long.Errors[0].Error, "hinted wait too long")
	require.Contains(t, long.Errors[0].Error, errDown.Error())
}

// After a hint's snooze, the schedule carries on, as in retry.Do: the wait
// a hint took counts as one of the schedule's steps, and the next failure
// waits the step after it rather than the one the snooze skipped.
func TestRiverScheduleCarriesOnAfterAHint(t *testing.T) {
	const base = 100 * time.Millisecond
	p := policy.Exponential(base) // 100 ms, 200 ms, 400 ms, 800 ms, …
	var seen runs
	client := startRiver(t, p, func(_ context.Context, job *river.Job[testArgs]) error {
		switch seen.add(job, time.Now()) {
		case 1, 3:
			return retry.After(10*time.Millisecond, errDown)
		case 2, 4:
			return errDown
		}
		return nil
	})
	ids := insert(t, client, "job")
	row := waitFinal(t, client, 20*time.Second, ids...)[0]
	require.Equal(t, rivertype.JobStateCompleted, row.State)
	require.Len(t, row.Errors, 2)
	require.EqualValues(t, 2, gjson.GetBytes(row.Metadata, "snoozes").Int())

	// In retry.Do: a hinted wait (step 1), a failure that waits step 2, a
	// hinted wait (step 3), a failure that waits step 4.
	r := seen.of("job")
	require.Len(t, r, 5)
	for _, tc := range []struct {
		run  int // the failed run, from 1
		step int
	}{{2, 2}, {4, 4}} {
		delay := p.Backoff(tc.step, 0)
		got := r[tc.run].scheduledAt.Sub(r[tc.run-1].end)
		t.Logf("run %d (attempt %d) failed after a hint; next retry %v later (step %d: %v)", tc.run, r[tc.run-1].attempt, got.Round(time.Millisecond), tc.step, delay)
		require.GreaterOrEqual(t, got, delay-time.Microsecond, "run %d: the step after the hint's", tc.run)
		require.Less(t, got, delay+50*time.Millisecond, "run %d: the step after the hint's", tc.run)
	}
}

func TestRiverCancelsAPermanentError(t *testing.T) {
	var seen runs
	client := startRiver(t, policy.Constant(10*time.Millisecond), func(_ context.Context, job *river.Job[testArgs]) error {
		seen.add(job, time.Now())
		return retry.Permanent(errBadArg)
	})
	ids := insert(t, client, "bad")
	row := waitFinal(t, client, 10*time.Second, ids...)[0]
	require.Equal(t, rivertype.JobStateCancelled, row.State)
	require.Equal(t, 1, row.Attempt)
	require.Len(t, seen.of("bad"), 1, "a cancelled job ran again")
	require.Len(t, row.Errors, 1)
	require.Contains(t, row.Errors[0].Error, errBadArg.Error())
}

func TestRiverAdmission(t *testing.T) {
	// Twenty jobs fail together while their dependency is down; their
	// retries are due every 100 ms or less. The guard has 2 tokens: two
	// retries, then one probe a second, reach the dependency; the others
	// are snoozed. Once it is back, a probe's success lets them all through.
	const jobs, down = 20, 1500 * time.Millisecond
	g := policy.NewGuard(2, 1)
	var isDown atomic.Bool
	isDown.Store(true)
	var retriesWhileDown atomic.Int32
	client := startRiver(t, policy.Exponential(50*time.Millisecond).WithCap(100*time.Millisecond).WithGuard(g),
		func(_ context.Context, job *river.Job[testArgs]) error {
			if isDown.Load() {
				if job.Attempt > 1 {
					retriesWhileDown.Add(1)
				}
				return errDown
			}
			return nil
		})
	names := make([]string, jobs)
	for i := range names {
		names[i] = "job" + itoa(i)
	}
	ids := insert(t, client, names...)
	time.Sleep(down)
	isDown.Store(false)
	reached := retriesWhileDown.Load()
	// Without the guard, about 20 × 1.5 s / 100 ms = 300 retries.
	require.LessOrEqual(t, reached, int32(2+3), "retries that reached the dependency while it was down: the tokens and a probe a second")

	start := time.Now()
	rows := waitFinal(t, client, 10*time.Second, ids...)
	recovered := time.Since(start)
	snoozes := int64(0)
	for _, row := range rows {
		require.Equal(t, rivertype.JobStateCompleted, row.State)
		snoozes += gjson.GetBytes(row.Metadata, "snoozes").Int()
	}
	t.Logf("%d jobs failing for %v: %d retries reached the dependency, %d were snoozed; all done %v after it came back",
		jobs, down, reached, snoozes, recovered.Round(time.Millisecond))
	require.Greater(t, snoozes, int64(jobs))
}
