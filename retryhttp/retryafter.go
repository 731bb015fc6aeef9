package retryhttp

import (
	"math"
	"net/http"
	"strings"
	"time"
)

// parseRetryAfter returns the wait that a Retry-After header value v asks
// for, as of time now. It reads both forms, delta-seconds ("120") and an
// HTTP-date ("Wed, 21 Oct 2026 07:28:00 GMT"). "0" asks for no wait, which
// means a retry at once.
//
// parseRetryAfter reports false for any value that does not ask for a wait.
// That covers an empty, negative, fractional or garbled value, and a date
// that is not in the future, since a clock skew cannot be told from a stale
// date. Callers then fall back to their schedule. A delta too large for a
// time.Duration saturates. Bounding it is the caller's job. The Transport
// leaves it to the policy's hint ceiling, which ends the call instead of
// waiting that long.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if v[0] >= '0' && v[0] <= '9' {
		var secs uint64
		for i := 0; i < len(v); i++ {
			c := v[i]
			if c < '0' || c > '9' {
				return 0, false
			}
			if secs > (math.MaxUint64-9)/10 {
				secs = math.MaxUint64 // saturate; keep checking the syntax
				continue
			}
			secs = secs*10 + uint64(c-'0')
		}
		if secs > uint64(math.MaxInt64/int64(time.Second)) {
			return time.Duration(math.MaxInt64), true
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d := t.Sub(now)
	if d <= 0 {
		return 0, false
	}
	return d, true
}
