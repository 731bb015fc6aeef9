package retrygrpc

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// statusError is what the interceptors return when retrying, not the
// server, ended a call: the *retry.Error (attempts, elapsed, cause, last
// status) with a gRPC status, so that status.Code and status.FromError give
// a sensible code and errors.Is / errors.As reach the cause and the last
// status.
type statusError struct {
	err error
	st  *status.Status
}

func (e *statusError) Error() string              { return e.err.Error() }
func (e *statusError) Unwrap() error              { return e.err }
func (e *statusError) GRPCStatus() *status.Status { return e.st }

// Timeout reports whether a deadline ended the call, as retry.Error's
// Timeout does, so that os.IsTimeout sees it.
func (e *statusError) Timeout() bool {
	var re *retry.Error
	return errors.As(e.err, &re) && re.Timeout()
}

// cutOffError is the error of an attempt that the caller's context ended:
// gRPC's Canceled or DeadlineExceeded status for it, which unwraps to the
// context's error alone. So retry.Do ends the call as the context ending
// does, whatever the policy says of the status, and keeps the failure
// before it as the last error.
type cutOffError struct {
	st  error // the attempt's status error
	ctx error // the caller's context's error
}

func (e *cutOffError) Error() string              { return e.st.Error() }
func (e *cutOffError) Unwrap() error              { return e.ctx }
func (e *cutOffError) GRPCStatus() *status.Status { return status.Convert(e.st) }

// attemptDeadlineError is the error of an attempt that the policy's
// per-attempt timeout ended: the attempt's status, which also matches
// context.DeadlineExceeded. An attempt's error is its own context's, as
// retry.ErrAttemptTimeout's doc says, and a gRPC status alone matches no
// context error.
type attemptDeadlineError struct{ err error }

func (e *attemptDeadlineError) Error() string              { return e.err.Error() }
func (e *attemptDeadlineError) Unwrap() []error            { return []error{e.err, context.DeadlineExceeded} }
func (e *attemptDeadlineError) GRPCStatus() *status.Status { return status.Convert(e.err) }

// toStatus gives what retry.Do returned the status a gRPC caller expects:
//
//   - nil, a server's status (a code that is not retried) and io.EOF pass
//     as they are;
//   - the caller's deadline (also a wait that would end past it) becomes
//     codes.DeadlineExceeded, its cancellation codes.Canceled;
//   - an attempt or time limit, a guard that held the retries back until
//     the limit, a pushback that said stop (retry.ErrPushback), or a
//     pushback above the policy's hint ceiling keeps the last
//     status's code and details, with a message that says why retrying
//     stopped;
//   - an invalid policy or option becomes codes.Internal.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	var re *retry.Error
	if !errors.As(err, &re) {
		if errors.Is(err, policy.ErrInvalid) {
			return &statusError{err: err, st: status.New(codes.Internal, err.Error())}
		}
		return err
	}
	code := codes.Unknown
	var last *status.Status
	if re.Last != nil {
		last = status.Convert(re.Last)
		code = last.Code()
	}
	switch {
	case errors.Is(re.Cause, context.Canceled):
		code = codes.Canceled
	case errors.Is(re.Cause, context.DeadlineExceeded),
		// the next wait would pass the deadline: a limit, which matches
		// context.DeadlineExceeded too, besides what the last status does
		errors.Is(re, context.DeadlineExceeded) && !errors.Is(re.Last, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	}
	var st *status.Status
	if last != nil {
		p := last.Proto() // a copy, details included
		p.Code, p.Message = int32(code), err.Error()
		st = status.FromProto(p)
	} else {
		st = status.New(code, err.Error())
	}
	return &statusError{err: err, st: st}
}

// pushbackError is the error of an attempt whose server asked not to retry
// (a pushback of -1): it matches retry.ErrPushback, and keeps the status.
type pushbackError struct{ err error }

func (e *pushbackError) Error() string              { return e.err.Error() }
func (e *pushbackError) Unwrap() []error            { return []error{retry.ErrPushback, e.err} }
func (e *pushbackError) GRPCStatus() *status.Status { return status.Convert(e.err) }
