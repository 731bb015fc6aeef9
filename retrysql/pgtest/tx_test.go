package pgtest_test

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retrysql"
)

// jittered is the policy of these tests: 1 ms doubling to 50 ms, full
// jitter, at most 20 attempts.
var jittered = policy.Exponential(time.Millisecond).WithCap(50 * time.Millisecond).
	WithJitter(backoff.Jitter{Kind: backoff.Full}).WithMaxAttempts(20)

var serializable = &sql.TxOptions{Isolation: sql.LevelSerializable}

// retries records the errors a Tx call retried.
type retries struct {
	mu   sync.Mutex
	errs []error
}

func (r *retries) option() retrysql.Option {
	return retrysql.WithRetryOptions(retry.WithHooks(&retry.Hooks{OnRetry: func(_ context.Context, e retry.RetryEvent) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.errs = append(r.errs, e.Err)
	}}))
}

// codes returns the SQLSTATE of each retried error ("" for none).
func (r *retries) codes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	codes := make([]string, 0, len(r.errs))
	for _, err := range r.errs {
		codes = append(codes, retrysql.SQLState(err))
	}
	return codes
}

// requireOnly checks that at least one error was retried, each with code.
func requireOnly(t *testing.T, codes []string, code string) {
	t.Helper()
	require.NotEmpty(t, codes, "nothing was retried")
	for _, c := range codes {
		require.Equal(t, code, c, "retried errors: %v", codes)
	}
	t.Logf("retried %d× with %s", len(codes), code)
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestWriteSkew runs the textbook write skew under SERIALIZABLE: two
// transactions each read the sum of a table and insert a row holding it.
// Both read before either writes, so one of them gets 40001; it is run
// again and both commit, leaving the rows of one serial order.
func TestWriteSkew(t *testing.T) {
	db := openDB(t, needServer(t).DSN())
	execSQL(t, db, `DROP TABLE IF EXISTS skew`, `CREATE TABLE skew (who text PRIMARY KEY, v int NOT NULL)`,
		`INSERT INTO skew VALUES ('seed', 1)`)
	ctx := testContext(t)
	var read sync.WaitGroup
	read.Add(2)
	rec := &retries{}
	insertSum := func(who string) error {
		attempt := 0
		return retrysql.Tx(ctx, db, serializable, func(ctx context.Context, tx *sql.Tx) error {
			attempt++
			var sum int
			if err := tx.QueryRowContext(ctx, `SELECT sum(v) FROM skew`).Scan(&sum); err != nil {
				return err
			}
			if attempt == 1 { // both have read before either writes
				read.Done()
				read.Wait()
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO skew VALUES ($1, $2)`, who, sum)
			return err
		}, jittered, rec.option())
	}
	errs := make(chan error, 2)
	go func() { errs <- insertSum("a") }()
	go func() { errs <- insertSum("b") }()
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)

	requireOnly(t, rec.codes(), "40001")
	got := map[string]int{}
	rows, err := db.QueryContext(ctx, `SELECT who, v FROM skew`)
	require.NoError(t, err)
	for rows.Next() {
		var who string
		var v int
		require.NoError(t, rows.Scan(&who, &v))
		got[who] = v
	}
	require.NoError(t, rows.Err())
	aFirst := map[string]int{"seed": 1, "a": 1, "b": 2}
	bFirst := map[string]int{"seed": 1, "b": 1, "a": 2}
	require.True(t, equal(got, aFirst) || equal(got, bFirst), "rows %v are no serial order's", got)
}

func equal(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestDeadlock locks two rows in opposite orders from two transactions,
// each holding its first lock before asking for its second: the server
// aborts one with 40P01, which is run again, and both commit.
func TestDeadlock(t *testing.T) {
	db := openDB(t, needServer(t).DSN())
	execSQL(t, db, `DROP TABLE IF EXISTS pair`, `CREATE TABLE pair (id int PRIMARY KEY, n int NOT NULL)`,
		`INSERT INTO pair VALUES (1, 0), (2, 0)`)
	ctx := testContext(t)
	var locked sync.WaitGroup
	locked.Add(2)
	rec := &retries{}
	bump := func(first, second int) error {
		attempt := 0
		return retrysql.Tx(ctx, db, nil, func(ctx context.Context, tx *sql.Tx) error {
			attempt++
			if _, err := tx.ExecContext(ctx, `UPDATE pair SET n = n + 1 WHERE id = $1`, first); err != nil {
				return err
			}
			if attempt == 1 {
				locked.Done()
				locked.Wait()
			}
			_, err := tx.ExecContext(ctx, `UPDATE pair SET n = n + 1 WHERE id = $1`, second)
			return err
		}, jittered, rec.option())
	}
	errs := make(chan error, 2)
	go func() { errs <- bump(1, 2) }()
	go func() { errs <- bump(2, 1) }()
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)

	// Usually one retry; more when the victim, run again at once, takes
	// the first row back before the survivor wakes up to lock it.
	requireOnly(t, rec.codes(), "40P01")
	require.Equal(t, 2, count(t, db, `SELECT n FROM pair WHERE id = 1`))
	require.Equal(t, 2, count(t, db, `SELECT n FROM pair WHERE id = 2`))
}

// TestUniqueViolationIsNotRetried: 23505 comes back at once, as the
// driver's own error.
func TestUniqueViolationIsNotRetried(t *testing.T) {
	db := openDB(t, needServer(t).DSN())
	execSQL(t, db, `DROP TABLE IF EXISTS uniq`, `CREATE TABLE uniq (id int PRIMARY KEY)`, `INSERT INTO uniq VALUES (1)`)
	runs := 0
	var fnErr error
	err := retrysql.Tx(testContext(t), db, serializable, func(ctx context.Context, tx *sql.Tx) error {
		runs++
		_, fnErr = tx.ExecContext(ctx, `INSERT INTO uniq VALUES (1)`)
		return fnErr
	}, jittered)
	require.Equal(t, 1, runs)
	require.Error(t, err)
	require.True(t, err == fnErr, "Tx() = %v, want fn's error itself", err)
	var pgErr *pgconn.PgError
	require.ErrorAs(t, err, &pgErr)
	require.Equal(t, "23505", pgErr.Code)
	require.Equal(t, 1, count(t, db, `SELECT count(*) FROM uniq`))
}

// TestConnectionLostBeforeCommit terminates the transaction's backend from
// a second connection in the middle of the first attempt: the next
// statement fails on the dead connection, nothing was committed, and the
// transaction runs again on another connection.
func TestConnectionLostBeforeCommit(t *testing.T) {
	s := needServer(t)
	db, admin := openDB(t, s.DSN()), openDB(t, s.DSN())
	execSQL(t, db, `DROP TABLE IF EXISTS lost`, `CREATE TABLE lost (id int PRIMARY KEY)`)
	ctx := testContext(t)
	rec := &retries{}
	attempt := 0
	err := retrysql.Tx(ctx, db, nil, func(ctx context.Context, tx *sql.Tx) error {
		attempt++
		if _, err := tx.ExecContext(ctx, `INSERT INTO lost VALUES ($1)`, attempt); err != nil {
			return err
		}
		if attempt == 1 {
			var pid int
			require.NoError(t, tx.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid))
			var ok bool
			require.NoError(t, admin.QueryRowContext(ctx, `SELECT pg_terminate_backend($1)`, pid).Scan(&ok))
			require.True(t, ok)
			require.Eventually(t, func() bool {
				return count(t, admin, `SELECT count(*) FROM pg_stat_activity WHERE pid = $1`, pid) == 0
			}, 10*time.Second, time.Millisecond, "backend %d still there", pid)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO lost VALUES (100 + $1)`, attempt)
		return err
	}, jittered, rec.option())
	require.NoError(t, err)
	require.Equal(t, 2, attempt)
	require.Len(t, rec.errs, 1)
	t.Logf("retried after: %v", rec.errs[0])
	require.Equal(t, 2, count(t, db, `SELECT count(*) FROM lost WHERE id IN (2, 102)`))
	require.Equal(t, 2, count(t, db, `SELECT count(*) FROM lost`))
}

// TestAmbiguousCommit breaks the connection during COMMIT through a proxy,
// once after the server committed and once before it got the COMMIT: the
// client cannot tell the two apart, so both return the distinct error and
// neither runs the transaction again (which, in the first case, would
// insert the row twice).
func TestAmbiguousCommit(t *testing.T) {
	s := needServer(t)
	for _, tc := range []struct {
		name  string
		reach bool // the COMMIT reaches the server
		rows  int
	}{
		{"committed, answer lost", true, 1},
		{"COMMIT never arrived", false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			direct := openDB(t, s.DSN())
			execSQL(t, direct, `DROP TABLE IF EXISTS payment`, `CREATE TABLE payment (n serial PRIMARY KEY, amount int NOT NULL)`)
			proxy := newCommitCutter(t, "127.0.0.1:"+itoa(s.Port), tc.reach)
			db := openDB(t, proxy.DSN())
			runs := 0
			err := retrysql.Tx(testContext(t), db, nil, func(ctx context.Context, tx *sql.Tx) error {
				runs++
				_, err := tx.ExecContext(ctx, `INSERT INTO payment (amount) VALUES (100)`)
				return err
			}, jittered)
			require.ErrorIs(t, err, retrysql.ErrAmbiguousCommit)
			var amb *retrysql.AmbiguousCommitError
			require.ErrorAs(t, err, &amb)
			require.ErrorIs(t, err, amb.Err)
			require.Equal(t, 1, amb.Attempts)
			t.Logf("Tx() = %v", err)
			require.Equal(t, 1, runs)
			require.Equal(t, tc.rows, count(t, direct, `SELECT count(*) FROM payment`))
		})
	}
}

// TestCancelRollsBack cancels the context in the middle of a transaction,
// after it inserted a row and before its next statement: the call returns
// the context's error, the row is gone and its key free at once, and the
// connection is back in the pool (openDB's check).
func TestCancelRollsBack(t *testing.T) {
	db := openDB(t, needServer(t).DSN())
	execSQL(t, db, `DROP TABLE IF EXISTS cancelled`, `CREATE TABLE cancelled (id int PRIMARY KEY)`)
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	runs := 0
	err := retrysql.Tx(ctx, db, nil, func(ctx context.Context, tx *sql.Tx) error {
		runs++
		if _, err := tx.ExecContext(ctx, `INSERT INTO cancelled VALUES (1)`); err != nil {
			return err
		}
		cancel()
		_, err := tx.ExecContext(ctx, `INSERT INTO cancelled VALUES (2)`)
		return err
	}, jittered)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 1, runs)

	// The same key can be inserted at once: no transaction holds it.
	check, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	_, err = db.ExecContext(check, `INSERT INTO cancelled VALUES (1)`)
	require.NoError(t, err, "the cancelled transaction still holds its row")
	require.Equal(t, 1, count(t, db, `SELECT count(*) FROM cancelled`))
}

// TestSwallowedSerializationFailureIsRetried has fn swallow the 40001 of
// an UPDATE that lost a race to a concurrent one and return nil: the
// server answers COMMIT with a rollback, which is retried, and the second
// attempt commits. (Reported as an unknown commit outcome, the rollback
// stopped the call, although nothing was committed.)
func TestSwallowedSerializationFailureIsRetried(t *testing.T) {
	db := openDB(t, needServer(t).DSN())
	execSQL(t, db, `DROP TABLE IF EXISTS swallowed`, `CREATE TABLE swallowed (id int PRIMARY KEY, v int NOT NULL)`,
		`INSERT INTO swallowed VALUES (1, 0)`)
	ctx := testContext(t)
	rec := &retries{}
	var swallowed []string
	err := retrysql.Tx(ctx, db, serializable, func(ctx context.Context, tx *sql.Tx) error {
		var v int
		if err := tx.QueryRowContext(ctx, `SELECT v FROM swallowed WHERE id = 1`).Scan(&v); err != nil {
			return err
		}
		if len(swallowed) == 0 { // a concurrent update commits after this snapshot
			_, err := db.ExecContext(ctx, `UPDATE swallowed SET v = v + 1 WHERE id = 1`)
			require.NoError(t, err)
		}
		_, err := tx.ExecContext(ctx, `UPDATE swallowed SET v = v + 10 WHERE id = 1`)
		swallowed = append(swallowed, retrysql.SQLState(err))
		return nil
	}, jittered, rec.option())
	require.NoError(t, err)
	require.Equal(t, []string{"40001", ""}, swallowed, "the first attempt's UPDATE failed, the second's did not")
	require.Len(t, rec.errs, 1)
	require.ErrorIs(t, rec.errs[0], retrysql.ErrCommitRolledBack)
	require.ErrorIs(t, rec.errs[0], pgx.ErrTxCommitRollback, "pgx's error, through database/sql")
	t.Logf("retried after: %v", rec.errs[0])
	require.Equal(t, 11, count(t, db, `SELECT v FROM swallowed WHERE id = 1`))
}

// TestCommitRolledBackIsCertain has fn swallow a unique violation and
// return nil: COMMIT is answered with a rollback, and the error says so,
// not that the outcome is unknown. Nothing was committed either way.
func TestCommitRolledBackIsCertain(t *testing.T) {
	db := openDB(t, needServer(t).DSN())
	for _, tc := range []struct {
		name string
		opts []retrysql.Option
		runs int
	}{
		{"no SQLSTATE retried: not retried", []retrysql.Option{retrysql.WithSQLStates()}, 1},
		{"retried until the policy's limit", nil, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			execSQL(t, db, `DROP TABLE IF EXISTS certain`, `CREATE TABLE certain (id int PRIMARY KEY)`)
			runs := 0
			err := retrysql.Tx(testContext(t), db, nil, func(ctx context.Context, tx *sql.Tx) error {
				runs++
				if _, err := tx.ExecContext(ctx, `INSERT INTO certain VALUES (1)`); err != nil {
					return err
				}
				_, err := tx.ExecContext(ctx, `INSERT INTO certain VALUES (1)`)
				require.Equal(t, "23505", retrysql.SQLState(err))
				return nil
			}, jittered.WithMaxAttempts(3), tc.opts...)
			t.Logf("Tx() = %v", err)
			require.ErrorIs(t, err, retrysql.ErrCommitRolledBack)
			require.ErrorIs(t, err, pgx.ErrTxCommitRollback)
			require.NotErrorIs(t, err, retrysql.ErrAmbiguousCommit)
			require.Equal(t, tc.runs > 1, errors.Is(err, retry.ErrExhausted))
			require.Equal(t, tc.runs, runs)
			require.Zero(t, count(t, db, `SELECT count(*) FROM certain`))
		})
	}
}
