// Command retrykube uses the retrykube module as a user does after
// `go get github.com/retrykit/retrykit/retrykube`: a workqueue whose rate
// limiter follows a policy, with an item that fails twice before it is
// processed.
package main

import (
	"fmt"
	"os"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retrykube"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "consumer:", err)
		os.Exit(1)
	}
}

func run() error {
	rl := retrykube.NewRateLimiter[string](policy.Exponential(time.Millisecond).WithCap(20 * time.Millisecond))
	queue := workqueue.NewTypedRateLimitingQueue(rl)
	defer queue.ShutDown()

	const key = "default/web"
	queue.Add(key)
	failures := 0
	for {
		item, shutdown := queue.Get()
		if shutdown {
			return fmt.Errorf("the queue shut down")
		}
		if failures < 2 {
			failures++
			fmt.Printf("retrykube: %s failed, requeued (%d in a row)\n", item, queue.NumRequeues(item)+1)
			queue.AddRateLimited(item)
			queue.Done(item)
			continue
		}
		queue.Forget(item)
		queue.Done(item)
		break
	}
	if n := queue.NumRequeues(key); n != 0 {
		return fmt.Errorf("NumRequeues after Forget = %d, want 0", n)
	}
	fmt.Printf("retrykube: %s processed after %d failures; next failure waits %v\n", key, failures, rl.When(key))
	return nil
}
