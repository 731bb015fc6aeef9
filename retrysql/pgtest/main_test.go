package pgtest_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/retrykit/retrykit/retrysql/pgtest"
)

// server is the package's throwaway cluster, shared by its tests, or nil
// with startErr saying why.
var (
	server   *pgtest.Server
	startErr error
)

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	server, startErr = pgtest.Start(ctx)
	cancel()
	code := m.Run()
	if server != nil {
		if err := server.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// inCI reports whether the tests run in CI, where a missing server is a
// failure rather than a skip.
func inCI() bool { v := os.Getenv("CI"); return v == "true" || v == "1" }

// needServer skips the test, or fails it in CI, when no cluster runs.
func needServer(t testing.TB) *pgtest.Server {
	t.Helper()
	if server == nil {
		if inCI() {
			t.Fatalf("CI=%s: these tests must run against PostgreSQL: %v", os.Getenv("CI"), startErr)
		}
		t.Skipf("no PostgreSQL server for this test (%v)", startErr)
	}
	return server
}

// openDB opens a pool on dsn (the cluster's, by default) that the test
// closes, after checking that it holds no connection: when a context ends
// during a transaction, database/sql rolls it back on a goroutine of its
// own, so this waits for that for up to five seconds.
func openDB(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	db.SetMaxOpenConns(20)
	t.Cleanup(func() {
		require.Eventually(t, func() bool { return db.Stats().InUse == 0 }, 5*time.Second, time.Millisecond,
			"connections still in use: %+v", db.Stats())
		require.NoError(t, db.Close())
	})
	return db
}

// execSQL runs statements on db, failing the test on an error.
func execSQL(t testing.TB, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		_, err := db.ExecContext(context.Background(), s)
		require.NoError(t, err, s)
	}
}

// count returns the result of a query that yields one integer.
func count(t testing.TB, db *sql.DB, query string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, db.QueryRowContext(context.Background(), query, args...).Scan(&n), query)
	return n
}

func itoa(n int) string { return fmt.Sprint(n) }
