package riversuite_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
)

// template is the database River's migrator prepared; each test gets a
// copy of it.
const template = "river_template"

var databases atomic.Int32

func dbURL(name string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", server.Port, name)
}

// migrateTemplate creates the template database and applies River's
// migrations to it with River's own migrator.
func migrateTemplate(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, server.URL())
	if err != nil {
		return err
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+template)
	if cerr := conn.Close(ctx); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, dbURL(template))
	if err != nil {
		return err
	}
	defer pool.Close()
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return err
	}
	_, err = migrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
	return err
}

// inCI reports whether the tests run in CI, where a missing server is a
// failure rather than a skip.
func inCI() bool { v := os.Getenv("CI"); return v == "true" || v == "1" }

// newDB returns the URL of a fresh database with River's tables, and a pool
// on it; both go when the test ends. It skips the test, or fails it in CI,
// when no cluster runs.
func newDB(t testing.TB) (string, *pgxpool.Pool) {
	t.Helper()
	if server == nil {
		if inCI() {
			t.Fatalf("CI=%s: these tests must run against PostgreSQL: %v", os.Getenv("CI"), startErr)
		}
		t.Skipf("no PostgreSQL server for this test (%v)", startErr)
	}
	ctx := context.Background()
	name := fmt.Sprintf("test%d", databases.Add(1))
	admin, err := pgx.Connect(ctx, server.URL())
	require.NoError(t, err)
	_, err = admin.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", name, template))
	require.NoError(t, err)
	pool, err := pgxpool.New(ctx, dbURL(name))
	require.NoError(t, err)
	t.Cleanup(func() {
		pool.Close()
		_, err := admin.Exec(ctx, fmt.Sprintf("DROP DATABASE %s WITH (FORCE)", name))
		require.NoError(t, err)
		require.NoError(t, admin.Close(ctx))
	})
	return dbURL(name), pool
}

// newClient returns a River client on pool with quick polling, started
// unless cfg has no workers; it is stopped when the test ends.
func newClient(t testing.TB, pool *pgxpool.Pool, cfg *river.Config) *river.Client[pgx.Tx] {
	t.Helper()
	quick(cfg)
	client, err := river.NewClient(riverpgxv5.New(pool), cfg)
	require.NoError(t, err)
	if cfg.Workers == nil {
		return client
	}
	require.NoError(t, client.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, client.Stop(ctx))
	})
	return client
}

// quick sets what a test client needs: short fetch intervals, no log, and
// a default queue of 100 workers.
func quick(cfg *river.Config) {
	cfg.FetchCooldown = 2 * time.Millisecond
	cfg.FetchPollInterval = 20 * time.Millisecond
	cfg.TestOnly = true
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Workers != nil && cfg.Queues == nil {
		cfg.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 100}}
	}
}

// waitFinal waits until every job of ids has reached a final state
// (completed, cancelled, discarded) and returns their rows.
func waitFinal(t testing.TB, client *river.Client[pgx.Tx], timeout time.Duration, ids ...int64) []*rivertype.JobRow {
	t.Helper()
	rows := make([]*rivertype.JobRow, len(ids))
	require.Eventually(t, func() bool {
		for i, id := range ids {
			row, err := client.JobGet(context.Background(), id)
			require.NoError(t, err)
			rows[i] = row
			if row.FinalizedAt == nil {
				return false
			}
		}
		return true
	}, timeout, 10*time.Millisecond, "jobs not finished")
	return rows
}

func itoa(n int) string { return fmt.Sprint(n) }
