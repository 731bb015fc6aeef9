// Package retrykube paces a Kubernetes controller's requeues by a retry
// policy: [NewRateLimiter] is a client-go workqueue rate limiter whose delays
// are the policy's, jitter and cap included, and whose memory stays bounded.
//
// It is a module of its own, so that users of the core packages never
// download client-go. See [NewRateLimiter] for how to compose it with
// client-go's own overall rate limit.
package retrykube
