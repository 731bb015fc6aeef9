package retrykube_test

import (
	"fmt"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retrykube"
)

func ExampleNewRateLimiter() {
	// The kubelet's back-off for a controller's failed reconciles.
	rl := retrykube.NewRateLimiter[string](policy.Default())
	queue := workqueue.NewTypedRateLimitingQueue(rl)
	defer queue.ShutDown()

	for range 3 {
		fmt.Println("requeue default/web after", rl.When("default/web"))
	}
	fmt.Println("failures in a row:", queue.NumRequeues("default/web"))
	queue.Forget("default/web") // the reconcile succeeded
	fmt.Println("after Forget:", queue.NumRequeues("default/web"), rl.When("default/web"))
	// Output:
	// requeue default/web after 10s
	// requeue default/web after 20s
	// requeue default/web after 40s
	// failures in a row: 3
	// after Forget: 0 10s
}

func ExampleNewRateLimiter_bucket() {
	// client-go's default item schedule, with full jitter so that objects
	// that fail together come back apart, and client-go's own overall cap of
	// 10 requeues a second (burst 100) beside it. The guard in the policy is
	// sized for the 150 objects, at half a token for each first failure, so
	// that the bucket alone spaces them here.
	p := policy.Exponential(5 * time.Millisecond).WithCap(1000 * time.Second).
		WithJitter(backoff.Jitter{Kind: backoff.Full}).WithGuard(policy.NewGuard(100, 1))
	rl := workqueue.NewTypedMaxOfRateLimiter(
		retrykube.NewRateLimiter[string](p),
		&workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(10, 100)},
	)
	queue := workqueue.NewTypedRateLimitingQueue(rl)
	defer queue.ShutDown()

	var last time.Duration
	for i := range 150 {
		last = rl.When(fmt.Sprintf("default/object-%d", i))
	}
	fmt.Println("150 objects failed at once; the last one comes back within", last.Round(time.Second))
	// Output: 150 objects failed at once; the last one comes back within 5s
}
