package retrysql

import (
	"errors"
	"fmt"
)

// ErrAmbiguousCommit is matched by the error [Tx] returns when the
// connection failed while COMMIT was in flight: the transaction may or may
// not have committed, and running it again could apply it twice. The error
// is an [*AmbiguousCommitError], which also matches the driver's error.
var ErrAmbiguousCommit = errors.New("retrysql: commit outcome unknown")

// AmbiguousCommitError is the error [Tx] returns, without retrying, when
// COMMIT failed in a way that leaves its outcome unknown: the connection
// broke (or the context ended) after the COMMIT was sent and before the
// server's answer arrived. It matches [ErrAmbiguousCommit] and Err.
//
// The caller decides what to do: read the data back to learn whether the
// transaction landed, or make the transaction idempotent (a unique request
// id) so that running it again is harmless.
type AmbiguousCommitError struct {
	// Attempts is the number of times the transaction ran, counting the
	// first; the last one is the one whose COMMIT is in doubt.
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
