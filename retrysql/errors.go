package retrysql

import (
	"errors"
	"fmt"
)

// ErrCommitRolledBack is matched, with the driver's error, by the error of
// an attempt whose COMMIT the server answered with a rollback. That happens
// when a statement in fn failed and fn returned nil all the same. The server
// had aborted the transaction at that statement, so it rolled the
// transaction back at COMMIT. The outcome is certain: nothing was committed.
//
// [Tx] recognises the errors of two drivers. pgx returns ErrTxCommitRollback,
// "commit unexpectedly resulted in rollback". lib/pq returns
// ErrInFailedTransaction from Commit, after it has rolled back itself.
// Another driver's error of this kind counts as an ambiguous commit.
var ErrCommitRolledBack = errors.New("retrysql: COMMIT rolled back the transaction, in which a statement had failed")

// rolledBackAtCommit reports whether err, from Commit, is a driver's
// report that the server answered COMMIT with a rollback. These drivers'
// errors carry no SQLSTATE or type of their own, so they are known by
// their text, compared in full with each error of err's tree.
func rolledBackAtCommit(err error) bool {
	switch err.Error() {
	case "commit unexpectedly resulted in rollback", // pgx v4 and v5
		"pq: Could not complete operation in a failed transaction": // lib/pq
		return true
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		if inner := u.Unwrap(); inner != nil {
			return rolledBackAtCommit(inner)
		}
	case interface{ Unwrap() []error }:
		for _, inner := range u.Unwrap() {
			if inner != nil && rolledBackAtCommit(inner) {
				return true
			}
		}
	}
	return false
}

// ErrAmbiguousCommit is matched by the error [Tx] returns when the outcome of
// COMMIT is unknown, as when the connection failed while COMMIT was in
// flight. The transaction may or may not have committed, and running it
// again could apply it twice, so Tx does not. The error is an
// [*AmbiguousCommitError], which also matches the driver's error.
var ErrAmbiguousCommit = errors.New("retrysql: commit outcome unknown")

// AmbiguousCommitError is the error [Tx] returns, without retrying, when
// COMMIT failed in a way that leaves its outcome unknown. The connection
// broke, or the context ended, after COMMIT was sent and before the server's
// answer arrived. It matches [ErrAmbiguousCommit] and Err.
//
// The caller decides what to do. It can read the data back to learn whether
// the transaction landed. Or it can make the transaction idempotent, with a
// unique request id for example, so that running it again is harmless.
type AmbiguousCommitError struct {
	// Attempts is the number of times the transaction ran, counting the
	// first. The COMMIT of the last one is in doubt.
	Attempts int
	// Err is the error COMMIT returned.
	Err error
}

// Error says that the outcome is unknown and why, for example
// "retrysql: commit outcome unknown after 1 attempt: unexpected EOF".
func (e *AmbiguousCommitError) Error() string {
	noun := "attempts"
	if e.Attempts == 1 {
		noun = "attempt"
	}
	return fmt.Sprintf("retrysql: commit outcome unknown after %d %s: %v", e.Attempts, noun, e.Err)
}

// Unwrap returns [ErrAmbiguousCommit] and the driver's error.
func (e *AmbiguousCommitError) Unwrap() []error { return []error{ErrAmbiguousCommit, e.Err} }
