package retryhttp

import (
	"math"
	"net/http"
	"strings"
	"time"
)

// ParseRetryAfter reads a Retry-After header value in either of its forms,
// delta-seconds ("120") or an HTTP-date ("Wed, 21 Oct 2026 07:28:00 GMT"),
// as of time now, and returns the wait it asks for. It reports false for
// anything that does not ask for a positive wait: an empty, negative,
// fractional or garbled value, or a date that is not in the future. Callers
// then fall back to their schedule. A delta too large for a time.Duration
// saturates; clamping it to something sane is the caller's job (the
// Transport clamps it to the policy's cap).
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
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
		if secs == 0 {
			return 0, false
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
