// Package retrykube paces a Kubernetes controller's requeues by a retry
// policy. [NewRateLimiter] returns a client-go workqueue rate limiter whose
// delays are the policy's, and whose memory stays bounded.
//
// It is a module of its own, so that users of the core packages never
// download client-go. See [NewRateLimiter] and [WithIdle].
package retrykube
