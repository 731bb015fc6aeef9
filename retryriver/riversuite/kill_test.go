package riversuite_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retryriver"
)

// workerEnv names the database a worker process of TestKilledWorker works
// on: the test binary, run again with it set, is that process.
const workerEnv = "RETRYRIVER_TEST_WORKER_URL"

// effectArgs are the jobs of the worker processes: each fails its first
// Failures attempts, then writes its effect and completes in one
// transaction.
type effectArgs struct {
	Failures int `json:"failures"`
}

func (effectArgs) Kind() string { return "retryriver_effect" }

// killPolicy waits 250 to 500 ms after a first failure, 500 ms to 1 s after
// a second: long enough that no retry is due at the moment of the kill.
var killPolicy = policy.Exponential(500 * time.Millisecond).WithJitter(backoff.Jitter{Kind: backoff.Equal})

// runWorkerProcess works effectArgs jobs on the database at url under
// killPolicy until it is killed, or stopped by SIGTERM.
func runWorkerProcess(url string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if err := workEffects(ctx, url); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	return 0
}

func workEffects(ctx context.Context, url string) error {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	retryPolicy, err := retryriver.NewRetryPolicy(killPolicy)
	if err != nil {
		return err
	}
	middleware, err := retryriver.NewMiddleware(killPolicy)
	if err != nil {
		return err
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, job *river.Job[effectArgs]) error {
		if _, err := pool.Exec(ctx, `INSERT INTO runs (job_id, attempt, pid) VALUES ($1, $2, $3)`, job.ID, job.Attempt, os.Getpid()); err != nil {
			return err
		}
		if job.Attempt <= job.Args.Failures {
			return errDown
		}
		tx, err := pool.Begin(ctx)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback(context.Background()) }()
		if _, err := tx.Exec(ctx, `INSERT INTO effects (job_id) VALUES ($1)`, job.ID); err != nil {
			return err
		}
		if _, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job); err != nil {
			return err
		}
		return tx.Commit(ctx)
	}))
	cfg := &river.Config{RetryPolicy: retryPolicy, Middleware: []rivertype.Middleware{middleware}, Workers: workers}
	quick(cfg)
	client, err := river.NewClient(riverpgxv5.New(pool), cfg)
	if err != nil {
		return err
	}
	if err := client.Start(ctx); err != nil {
		return err
	}
	fmt.Println("ready")
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return client.Stop(stopCtx)
}

// startWorker starts a worker process on url and waits until it is ready.
func startWorker(t *testing.T, url string) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), workerEnv+"="+url)
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, "worker: %s", stderr)
	require.Equal(t, "ready\n", line)
	return cmd, stderr
}

// jobCounts is the state of the jobs at one moment.
type jobCounts struct {
	running, dueSoon, midRetry, completed int
}

func countJobs(t *testing.T, pool *pgxpool.Pool) jobCounts {
	t.Helper()
	var c jobCounts
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT
		count(*) FILTER (WHERE state = 'running'),
		count(*) FILTER (WHERE state IN ('available', 'retryable') AND scheduled_at < now() + interval '100 ms'),
		count(*) FILTER (WHERE state IN ('available', 'retryable') AND attempt >= 1),
		count(*) FILTER (WHERE state = 'completed')
		FROM river_job`).Scan(&c.running, &c.dueSoon, &c.midRetry, &c.completed))
	return c
}

// TestKilledWorker kills a worker process (SIGKILL) while its jobs are in
// the middle of their retries, starts another, and checks that every job
// then completes, its effect written exactly once.
func TestKilledWorker(t *testing.T) {
	const jobs = 30
	url, pool := newDB(t)
	ctx := context.Background()
	_, err := pool.Exec(ctx, `CREATE TABLE runs (job_id bigint, attempt int, pid int);
		CREATE TABLE effects (job_id bigint)`)
	require.NoError(t, err)
	client := newClient(t, pool, &river.Config{})
	params := make([]river.InsertManyParams, jobs)
	for i := range params {
		params[i] = river.InsertManyParams{Args: effectArgs{Failures: i % 3}}
	}
	_, err = client.InsertMany(ctx, params)
	require.NoError(t, err)

	first, stderr := startWorker(t, url)
	var atKill jobCounts
	require.Eventually(t, func() bool {
		atKill = countJobs(t, pool)
		return atKill.running == 0 && atKill.dueSoon == 0 && atKill.midRetry > 0
	}, 20*time.Second, time.Millisecond, "worker: %s", stderr)
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	require.Error(t, first.Wait(), "killed")
	after := countJobs(t, pool)
	require.Zero(t, after.running, "a job was running at the kill: River would rescue it only after RescueStuckJobsAfter")
	t.Logf("killed worker 1 (pid %d) with %d jobs completed and %d in the middle of their retries", first.Process.Pid, after.completed, after.midRetry)

	second, stderr := startWorker(t, url)
	require.Eventually(t, func() bool { return countJobs(t, pool).completed == jobs }, 20*time.Second, 10*time.Millisecond, "worker: %s", stderr)
	require.NoError(t, second.Process.Signal(syscall.SIGTERM))
	require.NoError(t, second.Wait(), "worker: %s", stderr)

	var effects, distinct, badRuns, byFirst, bySecond int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT job_id) FROM effects`).Scan(&effects, &distinct))
	require.Equal(t, jobs, effects, "effects written")
	require.Equal(t, jobs, distinct, "jobs with an effect")
	// Each job ran once per attempt, attempts 1 to failures+1, and no more.
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM river_job j WHERE j.attempt <> (j.args->>'failures')::int + 1
		OR (SELECT count(*) FROM runs r WHERE r.job_id = j.id) <> j.attempt
		OR (SELECT count(DISTINCT attempt) FROM runs r WHERE r.job_id = j.id) <> j.attempt`).Scan(&badRuns))
	require.Zero(t, badRuns, "jobs run other than once per attempt")
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE pid = $1), count(*) FILTER (WHERE pid = $2) FROM runs`,
		first.Process.Pid, second.Process.Pid).Scan(&byFirst, &bySecond))
	require.Positive(t, bySecond, "the second worker ran nothing")
	t.Logf("worker 1 ran %d attempts, worker 2 %d; all %d jobs completed, each effect written once", byFirst, bySecond, jobs)
}
