//go:build go1.25

package retrysql_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retrysql"
	"github.com/retrykit/retrykit/retrytest"
)

// nilContext is a nil context that vet and staticcheck do not see as one.
var nilContext context.Context

// now retries at once, as often as needed: the tests are about which
// errors are retried, not about waits.
var now = policy.Constant(0).WithMaxAttempts(10)

// script returns an fn that fails with errs in turn, then succeeds, and a
// pointer to the number of times it ran.
func script(errs ...error) (func(context.Context, *sql.Tx) error, *int) {
	n := new(int)
	return func(context.Context, *sql.Tx) error {
		*n++
		if *n <= len(errs) {
			return errs[*n-1]
		}
		return nil
	}, n
}

func TestTxCommitsOnTheFirstTry(t *testing.T) {
	f := &fakeDB{}
	fn, runs := script()
	require.NoError(t, retrysql.Tx(context.Background(), open(t, f), nil, fn, now))
	require.Equal(t, 1, *runs)
	begins, commits, rollbacks := f.counts()
	require.Equal(t, [3]int{1, 1, 0}, [3]int{begins, commits, rollbacks}, "begins, commits, rollbacks")
}

func TestTxRetries(t *testing.T) {
	netErr := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	for _, tc := range []struct {
		name          string
		fn            []error
		begin, commit []error
		runs          int // times fn ran
		rollbacks     int
	}{
		{name: "40001 from fn", fn: []error{&stateError{"40001"}}, runs: 2, rollbacks: 1},
		{name: "40P01 from fn, wrapped", fn: []error{fmt.Errorf("moving money: %w", &stateError{"40P01"})}, runs: 2, rollbacks: 1},
		{name: "twice, then success", fn: []error{&stateError{"40001"}, &stateError{"40P01"}}, runs: 3, rollbacks: 2},
		{name: "driver.ErrBadConn from fn", fn: []error{driver.ErrBadConn}, runs: 2, rollbacks: 1},
		{name: "unexpected EOF from fn", fn: []error{fmt.Errorf("reading: %w", io.ErrUnexpectedEOF)}, runs: 2, rollbacks: 1},
		{name: "EOF from fn", fn: []error{io.EOF}, runs: 2, rollbacks: 1},
		{name: "network error from fn", fn: []error{netErr}, runs: 2, rollbacks: 1},
		{name: "broken pipe from fn", fn: []error{syscall.EPIPE}, runs: 2, rollbacks: 1},
		{name: "08006 connection_failure from fn", fn: []error{&stateError{"08006"}}, runs: 2, rollbacks: 1},
		{name: "57P01 admin_shutdown from fn", fn: []error{&stateError{"57P01"}}, runs: 2, rollbacks: 1},
		{name: "connection error from BEGIN", begin: []error{io.ErrUnexpectedEOF}, runs: 1},
		{name: "40001 from BEGIN", begin: []error{&stateError{"40001"}}, runs: 1},
		{name: "40001 from COMMIT", commit: []error{&stateError{"40001"}}, runs: 2},
		{name: "closed connection (SafeToRetry) from fn", fn: []error{fmt.Errorf("exec: %w", unsentError{})}, runs: 2, rollbacks: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeDB{begin: tc.begin, commit: tc.commit}
			fn, runs := script(tc.fn...)
			require.NoError(t, retrysql.Tx(context.Background(), open(t, f), nil, fn, now))
			require.Equal(t, tc.runs, *runs, "fn runs")
			_, commits, rollbacks := f.counts()
			require.Equal(t, 1+len(tc.commit), commits, "commits")
			require.Equal(t, tc.rollbacks, rollbacks, "rollbacks")
		})
	}
}

func TestTxReturnsOtherErrorsAtOnce(t *testing.T) {
	unique := &stateError{"23505"}
	plain := errors.New("insufficient funds")
	ctxErr := fmt.Errorf("timeout: %w", context.DeadlineExceeded) // a statement's own deadline
	// A bad DSN: no retry cures it.
	badAddr := &net.OpError{Op: "dial", Net: "tcp", Err: &net.AddrError{Err: "missing port in address", Addr: "db"}}
	for _, tc := range []struct {
		name          string
		fn            []error
		begin, commit []error
		want          error
		runs          int
		rollbacks     int
	}{
		{name: "23505 from fn", fn: []error{unique}, want: unique, runs: 1, rollbacks: 1},
		{name: "plain error from fn", fn: []error{plain}, want: plain, runs: 1, rollbacks: 1},
		{name: "deadline of a statement in fn", fn: []error{ctxErr}, want: ctxErr, runs: 1, rollbacks: 1},
		{name: "non-connection error from BEGIN", begin: []error{plain}, want: plain},
		{name: "malformed address from BEGIN", begin: []error{badAddr}, want: badAddr},
		{name: "23505 from COMMIT (a deferred constraint)", commit: []error{unique}, want: unique, runs: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeDB{begin: tc.begin, commit: tc.commit}
			fn, runs := script(tc.fn...)
			err := retrysql.Tx(context.Background(), open(t, f), nil, fn, now)
			require.Same(t, tc.want, err, "Tx() = %v, want the error itself", err)
			require.Equal(t, tc.runs, *runs, "fn runs")
			_, _, rollbacks := f.counts()
			require.Equal(t, tc.rollbacks, rollbacks, "rollbacks")
		})
	}
}

func TestTxAmbiguousCommit(t *testing.T) {
	for _, cause := range []error{
		io.ErrUnexpectedEOF,
		fmt.Errorf("failed to receive message: %w", io.EOF),
		driver.ErrBadConn,
		&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET},
		&stateError{"57P01"}, // the backend terminated: before or after it committed?
		&stateError{"08006"},
		errors.New("a driver error that says nothing of the server"),
		fmt.Errorf("timeout: %w", context.Canceled), // ctx cancelled while COMMIT was in flight
		// pgx v5.12.0 reports a connection that broke after COMMIT went out
		// as "conn closed", marked SafeToRetry: not to be trusted here.
		fmt.Errorf("commit: %w", unsentError{}),
	} {
		t.Run(cause.Error(), func(t *testing.T) {
			f := &fakeDB{commit: []error{cause}}
			fn, runs := script(&stateError{"40001"}) // the second attempt's COMMIT breaks
			err := retrysql.Tx(context.Background(), open(t, f), nil, fn, now)
			require.ErrorIs(t, err, retrysql.ErrAmbiguousCommit)
			require.ErrorIs(t, err, cause)
			var amb *retrysql.AmbiguousCommitError
			require.ErrorAs(t, err, &amb)
			require.Equal(t, 2, amb.Attempts)
			require.Same(t, cause, amb.Err)
			require.Equal(t, "retrysql: commit outcome unknown after 2 attempts: "+cause.Error(), err.Error())
			require.Equal(t, 2, *runs, "the transaction ran again after its COMMIT broke")
			_, commits, _ := f.counts()
			require.Equal(t, 1, commits)
		})
	}
	require.Equal(t, "retrysql: commit outcome unknown after 1 attempt: EOF",
		(&retrysql.AmbiguousCommitError{Attempts: 1, Err: io.EOF}).Error())
}

func TestTxCommitRolledBack(t *testing.T) {
	// What pgx (ErrTxCommitRollback) and lib/pq (ErrInFailedTransaction)
	// return when the server answers COMMIT with a rollback; pgx's
	// database/sql driver passes its error on as it is.
	for _, cause := range []error{
		errors.New("commit unexpectedly resulted in rollback"),
		errors.New("pq: Could not complete operation in a failed transaction"),
		fmt.Errorf("wrapped: %w", errors.New("commit unexpectedly resulted in rollback")),
		errors.Join(io.ErrClosedPipe, errors.New("commit unexpectedly resulted in rollback")),
	} {
		t.Run(cause.Error(), func(t *testing.T) {
			f := &fakeDB{commit: []error{cause}}
			fn, runs := script()
			require.NoError(t, retrysql.Tx(context.Background(), open(t, f), nil, fn, now), "retried: nothing was committed")
			require.Equal(t, 2, *runs)

			// With no SQLSTATE retried, the rollback ends the call, and
			// the error says that nothing was committed.
			f = &fakeDB{commit: []error{cause}}
			fn, runs = script()
			err := retrysql.Tx(context.Background(), open(t, f), nil, fn, now, retrysql.WithSQLStates())
			require.ErrorIs(t, err, retrysql.ErrCommitRolledBack)
			require.ErrorIs(t, err, cause)
			require.NotErrorIs(t, err, retrysql.ErrAmbiguousCommit)
			require.Equal(t, retrysql.ErrCommitRolledBack.Error()+": "+cause.Error(), err.Error())
			require.Equal(t, 1, *runs)
		})
	}

	// The policy ends a transaction that rolls back every time with the
	// last rollback.
	f := &fakeDB{onCommit: func() error { return errors.New("commit unexpectedly resulted in rollback") }}
	fn, runs := script()
	err := retrysql.Tx(context.Background(), open(t, f), nil, fn, now.WithMaxAttempts(3))
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.ErrorIs(t, err, retrysql.ErrCommitRolledBack)
	require.NotErrorIs(t, err, retrysql.ErrAmbiguousCommit)
	require.Equal(t, 3, *runs)

	// Text that only resembles the drivers' is an unknown outcome.
	f = &fakeDB{commit: []error{errors.New("commit unexpectedly resulted in rollback?")}}
	fn, _ = script()
	require.ErrorIs(t, retrysql.Tx(context.Background(), open(t, f), nil, fn, now), retrysql.ErrAmbiguousCommit)
}

func TestWithSQLStatesReplacesTheSet(t *testing.T) {
	lockNotAvailable := &stateError{"55P03"}
	serialization := &stateError{"40001"}

	f := &fakeDB{}
	fn, runs := script(lockNotAvailable, lockNotAvailable)
	require.NoError(t, retrysql.Tx(context.Background(), open(t, f), nil, fn, now, retrysql.WithSQLStates("55P03")))
	require.Equal(t, 3, *runs)

	fn, runs = script(serialization)
	err := retrysql.Tx(context.Background(), open(t, &fakeDB{}), nil, fn, now, retrysql.WithSQLStates("55P03"))
	require.Same(t, serialization, err)
	require.Equal(t, 1, *runs)

	// The later option wins; no codes retries no SQLSTATE, but connection
	// errors before COMMIT still are.
	fn, runs = script(io.ErrUnexpectedEOF, serialization)
	err = retrysql.Tx(context.Background(), open(t, &fakeDB{}), nil, fn, now, retrysql.WithSQLStates("40001"), retrysql.WithSQLStates())
	require.Same(t, serialization, err)
	require.Equal(t, 2, *runs)

	// The caller's slice is copied.
	codes := []string{"55P03"}
	opt := retrysql.WithSQLStates(codes...)
	codes[0] = "40001"
	fn, runs = script(lockNotAvailable)
	require.NoError(t, retrysql.Tx(context.Background(), open(t, &fakeDB{}), nil, fn, now, opt))
	require.Equal(t, 2, *runs)
}

func TestTxInvalid(t *testing.T) {
	fn, runs := script()
	var nilDB *sql.DB
	var nilConn *sql.Conn
	f := &fakeDB{}
	db := open(t, f)
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"nil ctx", func() error { return retrysql.Tx(nilContext, db, nil, fn, now) }},
		{"nil db", func() error { return retrysql.Tx(context.Background(), nil, nil, fn, now) }},
		{"nil *sql.DB", func() error { return retrysql.Tx(context.Background(), nilDB, nil, fn, now) }},
		{"nil *sql.Conn", func() error { return retrysql.Tx(context.Background(), nilConn, nil, fn, now) }},
		{"nil fn", func() error { return retrysql.Tx(context.Background(), db, nil, nil, now) }},
		{"invalid policy", func() error {
			return retrysql.Tx(context.Background(), db, nil, fn, policy.Exponential(-time.Second))
		}},
		{"four-character code", func() error {
			return retrysql.Tx(context.Background(), db, nil, fn, now, retrysql.WithSQLStates("4001"))
		}},
		{"lower-case code", func() error {
			return retrysql.Tx(context.Background(), db, nil, fn, now, retrysql.WithSQLStates("40p01"))
		}},
		{"empty code", func() error {
			return retrysql.Tx(context.Background(), db, nil, fn, now, retrysql.WithSQLStates("40001", ""))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			require.ErrorIs(t, err, policy.ErrInvalid)
		})
	}
	require.Zero(t, *runs)
	begins, _, _ := f.counts()
	require.Zero(t, begins)
	require.EqualError(t, retrysql.Tx(context.Background(), db, nil, fn, now, retrysql.WithSQLStates("4001")),
		`retrysql: SQLSTATE code "4001" is not five digits or upper-case letters: policy: invalid`)
}

func TestTxPolicyEndsTheCall(t *testing.T) {
	f := &fakeDB{}
	fail := &stateError{"40001"}
	n := 0
	err := retrysql.Tx(context.Background(), open(t, f), nil, func(context.Context, *sql.Tx) error {
		n++
		return fail
	}, now.WithMaxAttempts(3))
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.ErrorIs(t, err, fail)
	require.Equal(t, 3, n)
	_, commits, rollbacks := f.counts()
	require.Zero(t, commits)
	require.Equal(t, 3, rollbacks)

	// The policy's own predicate is asked too.
	fn, runs := script(fail)
	err = retrysql.Tx(context.Background(), open(t, &fakeDB{}), nil, fn, now.WithRetryIf(func(error) bool { return false }))
	require.Same(t, fail, err)
	require.Equal(t, 1, *runs)
}

func TestTxWaitsThePolicysDelay(t *testing.T) {
	clk := retrytest.NewClock()
	p := policy.Exponential(time.Second).WithClock(clk)
	fn, runs := script(&stateError{"40001"}, &stateError{"40P01"})
	done := make(chan error, 1)
	db := open(t, &fakeDB{})
	go func() { done <- retrysql.Tx(context.Background(), db, nil, fn, p) }()
	require.Equal(t, time.Second, clk.Step(t))
	require.Equal(t, 2*time.Second, clk.Step(t))
	require.NoError(t, <-done)
	require.Equal(t, 3, *runs)
}

func TestTxRollsBackOnPanic(t *testing.T) {
	f := &fakeDB{}
	db := open(t, f)
	require.PanicsWithValue(t, "boom", func() {
		_ = retrysql.Tx(context.Background(), db, nil, func(context.Context, *sql.Tx) error { panic("boom") }, now)
	})
	_, commits, rollbacks := f.counts()
	require.Zero(t, commits)
	require.Equal(t, 1, rollbacks)
}

func TestTxContext(t *testing.T) {
	t.Run("done before the call", func(t *testing.T) {
		f := &fakeDB{}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		fn, runs := script()
		err := retrysql.Tx(ctx, open(t, f), nil, fn, now)
		require.ErrorIs(t, err, context.Canceled)
		require.Zero(t, *runs)
		begins, _, _ := f.counts()
		require.Zero(t, begins)
	})
	for _, tc := range []struct {
		name  string
		fnErr func(ctx context.Context) error // what fn returns after cancelling
		check func(t *testing.T, err error)
	}{
		{"fn returns ctx's error", func(ctx context.Context) error { return ctx.Err() }, func(t *testing.T, err error) {
			var e *retry.Error
			require.ErrorAs(t, err, &e)
			require.Same(t, context.Canceled, e.Last, "fn's error kept")
		}},
		{"fn returns nil", func(context.Context) error { return nil }, func(t *testing.T, err error) {
			require.ErrorContains(t, err, "retrysql: context done before COMMIT, rolled back: context canceled")
		}},
		{"fn returns a retryable error", func(context.Context) error { return &stateError{"40001"} }, func(t *testing.T, err error) {
			var e *retry.Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, 1, e.Attempts)
			require.Equal(t, "40001", retrysql.SQLState(err))
		}},
	} {
		t.Run("cancelled in fn, "+tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fakeDB{}
				db := open(t, f)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				runs := 0
				err := retrysql.Tx(ctx, db, nil, func(ctx context.Context, _ *sql.Tx) error {
					runs++
					cancel()
					return tc.fnErr(ctx)
				}, now)
				require.ErrorIs(t, err, context.Canceled)
				tc.check(t, err)
				require.Equal(t, 1, runs)
				synctest.Wait() // database/sql's own rollback goroutine is done
				_, commits, rollbacks := f.counts()
				require.Zero(t, commits)
				require.Equal(t, 1, rollbacks)
			})
		})
	}
}

func TestTxFnMustNotEndTheTransaction(t *testing.T) {
	for _, end := range []string{"Commit", "Rollback"} {
		t.Run(end, func(t *testing.T) {
			f := &fakeDB{}
			runs := 0
			err := retrysql.Tx(context.Background(), open(t, f), nil, func(_ context.Context, tx *sql.Tx) error {
				runs++
				if end == "Commit" {
					return tx.Commit()
				}
				return tx.Rollback()
			}, now)
			require.ErrorIs(t, err, retrysql.ErrTxEnded)
			require.ErrorIs(t, err, sql.ErrTxDone)
			require.Equal(t, 1, runs)
		})
	}
}

func TestTxFnThatCommitsThenFailsIsNotRunAgain(t *testing.T) {
	f := &fakeDB{}
	runs := 0
	err := retrysql.Tx(context.Background(), open(t, f), nil, func(_ context.Context, tx *sql.Tx) error {
		runs++
		require.NoError(t, tx.Commit())
		return &stateError{"40001"} // a retryable error, after the work landed
	}, now)
	require.ErrorIs(t, err, retrysql.ErrTxEnded)
	require.Equal(t, "40001", retrysql.SQLState(err))
	require.Equal(t, 1, runs, "the committed work is not done twice")
}

func TestTxContextEndingDuringCommitIsAmbiguous(t *testing.T) {
	// The driver was waiting for COMMIT's answer when ctx ended, and says
	// so with ctx's error: the transaction may have committed.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &fakeDB{onCommit: func() error { cancel(); return context.Canceled }}
	fn, runs := script()
	err := retrysql.Tx(ctx, open(t, f), nil, fn, now)
	require.ErrorIs(t, err, retrysql.ErrAmbiguousCommit)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 1, *runs)
}

func TestTxAttemptTimeoutBeforeCommitIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeDB{}
		runs := 0
		err := retrysql.Tx(context.Background(), open(t, f), nil, func(ctx context.Context, _ *sql.Tx) error {
			runs++
			if runs == 1 {
				<-ctx.Done() // the first attempt overruns its timeout
				return ctx.Err()
			}
			return nil
		}, now.WithAttemptTimeout(time.Second))
		require.NoError(t, err)
		require.Equal(t, 2, runs)
		synctest.Wait()
		_, commits, _ := f.counts()
		require.Equal(t, 1, commits)
	})
}

// nilBeginner returns neither a transaction nor an error.
type nilBeginner struct{}

func (nilBeginner) BeginTx(context.Context, *sql.TxOptions) (*sql.Tx, error) { return nil, nil }

func TestTxBeginnerWithNoTransactionIsAnError(t *testing.T) {
	fn, runs := script()
	err := retrysql.Tx(context.Background(), nilBeginner{}, nil, fn, now)
	require.ErrorContains(t, err, "BeginTx returned neither a transaction nor an error")
	require.Zero(t, *runs)
}

func TestTxOnAConnAndWithOptions(t *testing.T) {
	f := &fakeDB{}
	db := open(t, f)
	conn, err := db.Conn(context.Background())
	require.NoError(t, err)
	defer conn.Close()
	var retried []error
	hooks := retry.WithHooks(&retry.Hooks{OnRetry: func(_ context.Context, e retry.RetryEvent) { retried = append(retried, e.Err) }})
	fail := &stateError{"40001"}
	fn, runs := script(fail)
	require.NoError(t, retrysql.Tx(context.Background(), conn, &sql.TxOptions{Isolation: sql.LevelSerializable}, fn, now,
		retrysql.WithRetryOptions(hooks)))
	require.Equal(t, 2, *runs)
	require.Equal(t, []error{fail}, retried)
}

func TestSQLState(t *testing.T) {
	require.Equal(t, "40P01", retrysql.SQLState(fmt.Errorf("a: %w", fmt.Errorf("b: %w", &stateError{"40P01"}))))
	require.Equal(t, "23505", retrysql.SQLState(errors.Join(io.EOF, &stateError{"23505"})))
	require.Empty(t, retrysql.SQLState(io.EOF))
	require.Empty(t, retrysql.SQLState(nil))
}
