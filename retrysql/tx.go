// Package retrysql runs a database/sql transaction again, with [Tx], when the
// database aborts it for a reason that a new attempt can cure. The reasons
// are a serialization failure (SQLSTATE 40001), a deadlock (40P01) and a
// connection lost before COMMIT.
//
//	err := retrysql.Tx(ctx, db, &sql.TxOptions{Isolation: sql.LevelSerializable},
//		func(ctx context.Context, tx *sql.Tx) error {
//			_, err := tx.ExecContext(ctx, `UPDATE account SET balance = balance - 10 WHERE id = 1`)
//			return err
//		}, policy.Exponential(5*time.Millisecond).WithCap(time.Second).WithMaxAttempts(10))
//
// Tx reads an error's SQLSTATE through a SQLState() string method, as
// [SQLState] does. The errors of pgx (*pgconn.PgError) and lib/pq (*pq.Error)
// have that method, so this package imports no driver. A transaction whose
// COMMIT has an unknown outcome is never run again: see
// [ErrAmbiguousCommit].
package retrysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// Beginner starts transactions. *sql.DB and *sql.Conn are Beginners.
type Beginner interface {
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
}

var (
	errNilDB       = fmt.Errorf("retrysql: nil database: %w", policy.ErrInvalid)
	errNilFunction = fmt.Errorf("retrysql: nil function: %w", policy.ErrInvalid)
	errNoTx        = errors.New("retrysql: BeginTx returned neither a transaction nor an error")
	// ErrTxEnded is matched by the error [Tx] returns when fn committed or
	// rolled back the transaction itself. fn must not do that. Tx cannot
	// tell whether the work landed, so it neither commits nor retries.
	ErrTxEnded = errors.New("retrysql: the transaction was ended inside fn")
)

// Tx runs fn in a transaction begun on db with opts, and commits it. When the
// transaction fails for a reason that a new attempt may cure, Tx rolls it
// back, waits as p says and runs the whole transaction again: a new BeginTx,
// fn, then COMMIT. A nil opts means the driver's defaults.
//
// fn may run several times. So it must not have effects outside the
// transaction that cannot be repeated, and it must not call Commit or
// Rollback.
//
// Tx retries three kinds of failure:
//
//   - An error whose SQLSTATE is in the retried set, whether fn, BEGIN or
//     COMMIT returned it. The set is 40001 serialization_failure and 40P01
//     deadlock_detected, unless [WithSQLStates] replaces it. The server has
//     rolled the transaction back.
//   - A connection error from BEGIN or fn: a broken, closed or refused
//     connection, an EOF, a network error, or a SQLSTATE of class 08 or from
//     57P01 to 57P03. Nothing was committed, and the pool gives the next
//     attempt another connection.
//   - A COMMIT that the server answered with a rollback: see
//     [ErrCommitRolledBack]. It means that a statement in fn failed and fn
//     returned nil all the same. Nothing was committed. The server does not
//     say which error that was, so Tx retries it as it would a 40001 or 40P01
//     that fn returned. It does not retry it when [WithSQLStates] emptied the
//     retried set. A fn that swallows an error no retry cures rolls back on
//     every attempt until p's limit, so let fn return such errors.
//
// p's own retry predicate, set by policy.Policy.WithRetryIf, is asked too:
// Tx retries an error only when both agree. A per-attempt timeout, set by
// policy.Policy.WithAttemptTimeout, that cuts BEGIN or fn short is retried,
// since nothing was committed. One that ends while COMMIT is in flight makes
// the outcome ambiguous, as below.
//
// Tx returns:
//
//   - nil once COMMIT succeeds.
//   - Any other error of fn, BEGIN or COMMIT as it is, after rolling back, so
//     that errors.As finds the driver's error. A unique violation, 23505,
//     comes back at once, after one run of fn.
//   - An error matching [ErrCommitRolledBack] and the driver's error, when
//     the server answered COMMIT with a rollback and Tx does not retry it.
//     Nothing was committed.
//   - An [*AmbiguousCommitError], matching [ErrAmbiguousCommit] and the
//     driver's error, when COMMIT failed with anything except the server's
//     own refusal, which is an error with a SQLSTATE outside the connection
//     classes. That covers a connection error, ctx ending while COMMIT was in
//     flight, and an error the driver cannot place. Tx does not run such a
//     transaction again.
//   - An error matching ctx's error when ctx ends during fn, between fn and
//     COMMIT, or during a wait between attempts. Nothing was
//     committed. The error is a *retry.Error that keeps the last attempt's
//     error.
//   - The errors of retry.Do when p ends the call, such as a *retry.Error
//     matching retry.ErrExhausted and the last error.
//   - An error matching [ErrTxEnded] when fn committed or rolled back the
//     transaction itself, whether fn then returned nil or an error. Tx does
//     not run the transaction again, since its work may have landed.
//   - An error matching policy.ErrInvalid, before anything runs, for a nil
//     ctx, db or fn, an invalid policy or an invalid option.
//
// Tx rolls back every attempt that does not commit, also when fn panics, so
// no path holds a connection. The panic then goes on unchanged. When ctx
// ends during a transaction, database/sql rolls it back on a goroutine of
// its own, and the connection returns to the pool when that rollback ends.
//
// Between attempts the connection goes back to the pool. Give the pool at
// least as many idle connections as there are concurrent transactions, with
// sql.DB.SetMaxIdleConns. With fewer, the default being 2, the pool closes
// connections while their goroutines wait and opens new ones afterwards.
//
// With a *sql.Conn, whose connection cannot be replaced, a broken connection
// fails every attempt. Give p an attempt limit.
func Tx(ctx context.Context, db Beginner, opts *sql.TxOptions, fn func(context.Context, *sql.Tx) error, p policy.Policy, options ...Option) error {
	switch d := db.(type) {
	case nil:
		return errNilDB
	case *sql.DB:
		if d == nil {
			return errNilDB
		}
	case *sql.Conn:
		if d == nil {
			return errNilDB
		}
	}
	if fn == nil {
		return errNilFunction
	}
	s, err := collect(options)
	if err != nil {
		return err
	}
	r := run{db: db, opts: opts, fn: fn, codes: s.codes}
	return retry.Do(ctx, r.attempt, p, s.retry...)
}

// run is the state of one Tx call.
type run struct {
	db       Beginner
	opts     *sql.TxOptions
	fn       func(context.Context, *sql.Tx) error
	codes    []string
	attempts int
}

// retryable reports whether err's SQLSTATE is in the retried set.
func (r *run) retryable(err error) bool {
	code := SQLState(err)
	return code != "" && slices.Contains(r.codes, code)
}

// attempt runs the transaction once. It returns nil after a commit, a plain
// error to retry, and an error marked retry.Permanent to stop.
func (r *run) attempt(ctx context.Context) error {
	r.attempts++
	tx, err := r.db.BeginTx(ctx, r.opts)
	if err != nil {
		return r.retryOrStop(ctx, err)
	}
	if tx == nil {
		return retry.Permanent(errNoTx)
	}
	finished := false
	defer func() {
		if !finished {
			// Runs on a panic in fn too. The attempt's own error is what
			// the caller needs; a failed rollback (a broken connection)
			// leaves the connection to be discarded by the pool.
			_ = tx.Rollback()
		}
	}()
	if err := r.fn(ctx, tx); err != nil {
		finished = true
		if rerr := tx.Rollback(); errors.Is(rerr, sql.ErrTxDone) && ctx.Err() == nil {
			// fn ended the transaction itself, then failed: what it
			// committed cannot be told, so the call is not run again.
			return retry.Permanent(fmt.Errorf("%w (then: %w)", ErrTxEnded, err))
		}
		return r.retryOrStop(ctx, err)
	}
	if err := ctx.Err(); err != nil {
		// Nothing was committed. The caller's context ends the call; a
		// per-attempt timeout (this attempt's context) is retried.
		return fmt.Errorf("retrysql: context done before COMMIT, rolled back: %w", err)
	}
	finished = true
	return r.commit(ctx, tx)
}

// commit sends COMMIT and classifies its error.
func (r *run) commit(ctx context.Context, tx *sql.Tx) error {
	err := tx.Commit()
	switch {
	case err == nil:
		return nil
	case err == sql.ErrTxDone && ctx.Err() == nil:
		// Commit did nothing: the transaction had ended before it, and
		// not through ctx, so fn ended it.
		return retry.Permanent(fmt.Errorf("%w (Commit: %w)", ErrTxEnded, err))
	case err == sql.ErrTxDone && ctx.Err() != nil:
		// ctx ended before COMMIT and database/sql rolled the transaction
		// back: Commit found it done.
		return retry.Permanent(fmt.Errorf("retrysql: context done before COMMIT, rolled back: %w", err))
	case rolledBackAtCommit(err):
		// The server answered COMMIT with ROLLBACK: nothing was committed.
		// It does not say which statement's error fn swallowed; a 40001
		// or 40P01 is the one a new attempt cures.
		err = fmt.Errorf("%w: %w", ErrCommitRolledBack, err)
		if len(r.codes) == 0 {
			return retry.Permanent(err)
		}
		return err
	}
	// A context error from Commit itself may come from database/sql's check
	// before sending COMMIT or from the driver, interrupted while waiting for
	// COMMIT's answer (pgx does so): the outcome is unknown, below.
	// A driver's own claim that nothing was sent (pgx's SafeToRetry) is not
	// trusted here: pgx v5.12.0 reports a connection that broke after
	// COMMIT went out as "conn closed", which it marks safe to retry.
	if code := SQLState(err); code != "" && !connectionState(code) {
		// The server answered COMMIT with an error: it rolled back.
		if r.retryable(err) {
			return err
		}
		return retry.Permanent(err)
	}
	return retry.Permanent(&AmbiguousCommitError{Attempts: r.attempts, Err: err})
}

// retryOrStop classifies an error from BEGIN or fn, before any COMMIT. An
// error that came with ctx done is left to retry.Do: it ends the call when
// the caller's context is done and retries a per-attempt timeout, since
// nothing was committed.
func (r *run) retryOrStop(ctx context.Context, err error) error {
	if r.retryable(err) || connectionError(err) || ctx.Err() != nil {
		return err
	}
	return retry.Permanent(err)
}
