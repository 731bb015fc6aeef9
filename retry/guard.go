package retry

import "errors"

// ErrThrottled is matched, with the last error, by the error a call returns
// at once, instead of waiting, when its policy's guard denies the retry
// because failures dominate the calls to the dependency (see policy.Guard).
var ErrThrottled = errors.New("retry: retries throttled by the guard")
