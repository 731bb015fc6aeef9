package retrysql

import (
	"context"
	"database/sql/driver"
	"errors"
	"strings"

	"github.com/retrykit/retrykit/internal/neterr"
)

// SerializationFailure (40001) and DeadlockDetected (40P01) are the SQLSTATE
// codes [Tx] retries by default. Both mean that the server rolled the
// transaction back and that running it again may succeed.
const (
	SerializationFailure = "40001"
	DeadlockDetected     = "40P01"
)

// sqlStater is what the popular drivers' server errors have in common:
// pgx's *pgconn.PgError and lib/pq's *pq.Error both have this method, so
// that this package needs no driver import.
type sqlStater interface{ SQLState() string }

// SQLState returns the SQLSTATE code of the first error in err's tree that
// has a SQLState() string method, such as pgx's *pgconn.PgError and lib/pq's
// *pq.Error. It returns "" when none has.
func SQLState(err error) string {
	var s sqlStater
	if errors.As(err, &s) {
		return s.SQLState()
	}
	return ""
}

// connectionState reports whether a SQLSTATE code says that the connection,
// not the transaction, failed: class 08 (connection exception) and the
// server shutting the session down (57P01 admin_shutdown, 57P02
// crash_shutdown, 57P03 cannot_connect_now).
func connectionState(code string) bool {
	return strings.HasPrefix(code, "08") || code == "57P01" || code == "57P02" || code == "57P03"
}

// connectionError reports whether err says that the connection to the
// server failed rather than the statement, and was not caused by a context.
// A connection-class SQLSTATE decides when there is one. Otherwise it is
// the driver's word (driver.ErrBadConn, pgx's SafeToRetry) or
// the network failures every integration shares (internal/neterr).
// Before COMMIT, any such error leaves nothing committed.
func connectionError(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if code := SQLState(err); code != "" {
		return connectionState(code)
	}
	return unsent(err) || errors.Is(err, driver.ErrBadConn) || neterr.Connection(err)
}

// unsent reports whether the driver marks err as raised before anything
// was sent to the server, or on a connection already closed (pgx's
// SafeToRetry method).
func unsent(err error) bool {
	var s interface{ SafeToRetry() bool }
	return errors.As(err, &s) && s.SafeToRetry()
}

// validCode reports whether code has the form of a SQLSTATE: five digits or
// upper-case letters.
func validCode(code string) bool {
	if len(code) != 5 {
		return false
	}
	for i := 0; i < len(code); i++ {
		if c := code[i]; (c < '0' || c > '9') && (c < 'A' || c > 'Z') {
			return false
		}
	}
	return true
}
