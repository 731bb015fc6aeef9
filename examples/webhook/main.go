// Command webhook delivers webhooks through River, the job queue on
// PostgreSQL, under a retrykit policy, so that deliveries outlive the
// process that makes them. A flaky receiver on loopback refuses some
// deliveries (503), asks for others later (429 with Retry-After) and has
// removed one endpoint (410). A worker process delivers them; halfway, while
// deliveries wait for their retries, this program kills it with SIGKILL,
// starts a new one, and prints the timeline: every delivery lands exactly
// once, the 410 is cancelled at once, and a Retry-After becomes a snooze.
//
// It needs a real server, named by DATABASE_URL; River's tables go into a
// schema of their own, dropped at the end:
//
//	DATABASE_URL='postgres://postgres@localhost:5432/postgres?sslmode=disable' go run ./examples/webhook
//
// Without DATABASE_URL it says how to start one, and exits.
package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// schema holds River's tables for this program.
const schema = "retrykit_webhook"

func main() {
	log.SetFlags(0)
	url := os.Getenv("DATABASE_URL")
	if s := os.Getenv(workerEnv); s != "" {
		if err := work(url, s); err != nil {
			log.Fatalf("webhook worker: %v", err)
		}
		return
	}
	if url == "" {
		fmt.Println("webhook: set DATABASE_URL to a PostgreSQL server, for example: docker run -d --rm -p 5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres:17 && DATABASE_URL='postgres://postgres@localhost:5432/postgres?sslmode=disable' go run ./examples/webhook")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, url, os.Stdout); err != nil {
		log.Fatalf("webhook: %v", err)
	}
}

// riverConfig sets what every River client of this program shares.
func riverConfig(schema string, cfg *river.Config) *river.Config {
	cfg.Schema = schema
	cfg.FetchCooldown = 5 * time.Millisecond
	cfg.FetchPollInterval = 50 * time.Millisecond
	return cfg
}

func run(ctx context.Context, url string, out io.Writer) error {
	tl := &timeline{out: out, start: time.Now()}
	rc := newReceiver(tl)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: rc, ReadHeaderTimeout: time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := migrate(ctx, pool); err != nil {
		return err
	}
	defer func() { _, _ = pool.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE") }()
	fmt.Fprintf(out, "policy: %v\n", deliveryPolicy)
	if err := insertDeliveries(ctx, pool, "http://"+ln.Addr().String()+"/hook"); err != nil {
		return err
	}
	tl.printf("queued %d deliveries", len(script))

	first, err := startWorker(ctx, url, tl, 1)
	if err != nil {
		return err
	}
	c, err := waitUntil(ctx, pool, func(c counts) bool { return c.quiet() && c.waiting > 0 && c.done > 0 })
	first.kill()
	if err != nil {
		return err
	}
	tl.printf("SIGKILL worker 1 (pid %d): %d deliveries finished, %d waiting for their retry, none running", first.cmd.Process.Pid, c.done, c.waiting)

	second, err := startWorker(ctx, url, tl, 2)
	if err != nil {
		return err
	}
	_, err = waitUntil(ctx, pool, func(c counts) bool { return c.done == len(script) })
	if serr := second.stop(); err == nil {
		err = serr
	}
	if err != nil {
		return err
	}
	tl.printf("worker 2 (pid %d) stopped: every delivery finished", second.cmd.Process.Pid)
	return report(ctx, pool, rc, out)
}

// migrate creates the schema and applies River's migrations to it.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	if _, err := pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE; CREATE SCHEMA "+schema); err != nil {
		return err
	}
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Schema: schema})
	if err != nil {
		return err
	}
	_, err = migrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
	return err
}

func insertDeliveries(ctx context.Context, pool *pgxpool.Pool, url string) error {
	client, err := river.NewClient(riverpgxv5.New(pool), riverConfig(schema, &river.Config{}))
	if err != nil {
		return err
	}
	ids := make([]string, 0, len(script))
	for id := range script {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	params := make([]river.InsertManyParams, len(ids))
	for i, id := range ids {
		params[i] = river.InsertManyParams{Args: deliveryArgs{ID: id, URL: url, Payload: fmt.Sprintf(`{"event":%q}`, id)}}
	}
	_, err = client.InsertMany(ctx, params)
	return err
}

// worker is a worker process: this program, run again with workerEnv set.
type worker struct {
	n      int
	cmd    *exec.Cmd
	exited chan error
}

// startWorker starts worker process n and waits until its River client
// runs.
func startWorker(ctx context.Context, url string, tl *timeline, n int) (*worker, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	w := &worker{n: n, cmd: exec.CommandContext(ctx, self), exited: make(chan error, 1)}
	w.cmd.Env = append(os.Environ(), "DATABASE_URL="+url, workerEnv+"="+schema)
	w.cmd.Stderr = os.Stderr
	lines := &lineWriter{tl: tl, prefix: fmt.Sprintf("worker %d: ", n), ready: make(chan struct{})}
	w.cmd.Stdout = lines
	if err := w.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { w.exited <- w.cmd.Wait() }()
	select {
	case <-lines.ready:
	case err := <-w.exited:
		return nil, fmt.Errorf("worker %d did not start: %v", n, err)
	}
	tl.printf("worker %d started (pid %d)", n, w.cmd.Process.Pid)
	return w, nil
}

// kill ends the worker at once, as a crash or an OOM kill would.
func (w *worker) kill() {
	_ = w.cmd.Process.Signal(syscall.SIGKILL)
	<-w.exited
}

// stop lets the worker finish what it runs and stop.
func (w *worker) stop() error {
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	return <-w.exited
}

// lineWriter prints a worker's output on the timeline, a line at a time;
// its first line, "ready", closes ready instead.
type lineWriter struct {
	tl      *timeline
	prefix  string
	ready   chan struct{}
	started bool
	partial []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(w.partial[:i])
		w.partial = w.partial[i+1:]
		if !w.started && line == "ready" {
			w.started = true
			close(w.ready)
			continue
		}
		w.tl.printf("%s%s", w.prefix, line)
	}
}

// counts is the state of the deliveries at one moment.
type counts struct {
	running, dueSoon, waiting, done int
}

// quiet: no delivery is being made, and none is due within 100 ms.
func (c counts) quiet() bool { return c.running == 0 && c.dueSoon == 0 }

// waitUntil polls the jobs until ok holds.
func waitUntil(ctx context.Context, pool *pgxpool.Pool, ok func(counts) bool) (counts, error) {
	for {
		var c counts
		err := pool.QueryRow(ctx, `SELECT
			count(*) FILTER (WHERE state = 'running'),
			count(*) FILTER (WHERE state IN ('available', 'retryable', 'scheduled') AND scheduled_at < now() + interval '100 ms'),
			count(*) FILTER (WHERE state IN ('available', 'retryable', 'scheduled') AND (attempt >= 1 OR metadata ? 'snoozes')),
			count(*) FILTER (WHERE finalized_at IS NOT NULL)
			FROM `+schema+`.river_job`).Scan(&c.running, &c.dueSoon, &c.waiting, &c.done)
		if err != nil || ok(c) {
			return c, err
		}
		select {
		case <-ctx.Done():
			return c, ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// report prints how each delivery ended and what the receiver saw.
func report(ctx context.Context, pool *pgxpool.Pool, rc *receiver, out io.Writer) error {
	rows, err := pool.Query(ctx, `SELECT args->>'id', state, attempt, coalesce((metadata->>'snoozes')::int, 0)
		FROM `+schema+`.river_job ORDER BY args->>'id'`)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "\ndelivery  state      attempts  snoozes")
	var id, state string
	var attempts, snoozes int
	_, err = pgx.ForEachRow(rows, []any{&id, &state, &attempts, &snoozes}, func() error {
		fmt.Fprintf(out, "%-9s %-10s %8d %8d\n", id, state, attempts, snoozes)
		return nil
	})
	if err != nil {
		return err
	}
	processed, duplicates, requests := rc.counts()
	fmt.Fprintf(out, "\nthe receiver processed %d deliveries (%d requests, %d duplicates); the 410 was cancelled after one request\n", processed, requests, duplicates)
	if want := len(script) - 1; processed != want || duplicates != 0 {
		return fmt.Errorf("the receiver processed %d deliveries with %d duplicates, want %d and none", processed, duplicates, want)
	}
	return nil
}
