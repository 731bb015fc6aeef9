// Command controller is a small Kubernetes controller whose failed
// reconciles are requeued by retrykube.NewRateLimiter: an informer over
// client-go's fake clientset (no cluster needed) feeds a workqueue, and the
// reconcile of each ConfigMap calls a dependency that is down for the first
// 600 ms. It runs twice, with and without jitter, and prints when the
// requeued reconciles ran: without jitter every object comes back at the
// same moments, with full jitter they are spread.
//
//	go run ./examples/controller
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retrykube"
)

const (
	objects = 40
	workers = 4
	outage  = 600 * time.Millisecond // the dependency is down this long
	bin     = 100 * time.Millisecond // the timeline's resolution
)

var errDown = errors.New("dependency unavailable")

func main() {
	fast := policy.Exponential(10 * time.Millisecond).WithCap(time.Second)
	for _, p := range []policy.Policy{fast, fast.WithJitter(backoff.Jitter{Kind: backoff.Full})} {
		if err := run(p); err != nil {
			fmt.Fprintln(os.Stderr, "controller:", err)
			os.Exit(1)
		}
	}
}

// run starts the controller with a limiter over p, waits until every
// ConfigMap has reconciled, and prints the timeline.
func run(p policy.Policy) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	client := fake.NewClientset()
	for i := range objects {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("app-%02d", i)}}
		if _, err := client.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return err
		}
	}

	// A guard sized for 40 objects that each fail six to eight times in the
	// outage, so that it holds no requeue back and the timeline shows the
	// schedule alone. The limiter's own guard, NewGuard(50, 1), would hold
	// the later requeues back for seconds once its tokens ran out.
	queue := workqueue.NewTypedRateLimitingQueue(retrykube.NewRateLimiter[string](p.WithGuard(policy.NewGuard(1000, 1))))
	factory := informers.NewSharedInformerFactory(client, 0)
	informer := factory.Core().V1().ConfigMaps().Informer()
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
				queue.Add(key)
			}
		},
	}); err != nil {
		return err
	}

	start := time.Now()
	dep := func() error { // the flaky dependency
		if time.Since(start) < outage {
			return errDown
		}
		return nil
	}
	var (
		mu       sync.Mutex
		timeline = map[int]int{} // bin → requeued reconciles
		left     atomic.Int32
		failures atomic.Int32
	)
	left.Store(objects)
	allDone := make(chan struct{})
	reconcile := func(key string) {
		if queue.NumRequeues(key) > 0 {
			mu.Lock()
			timeline[int(time.Since(start)/bin)]++
			mu.Unlock()
		}
		if err := dep(); err != nil {
			failures.Add(1)
			queue.AddRateLimited(key)
			return
		}
		queue.Forget(key)
		if left.Add(-1) == 0 {
			close(allDone)
		}
	}

	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				key, shutdown := queue.Get()
				if shutdown {
					return
				}
				reconcile(key)
				queue.Done(key)
			}
		})
	}
	select {
	case <-allDone:
	case <-time.After(10 * time.Second):
		return errors.New("the objects did not all reconcile within 10s")
	}
	elapsed := time.Since(start)
	queue.ShutDown()
	wg.Wait()
	cancel() // stops the informer, which Shutdown waits for
	factory.Shutdown()

	fmt.Printf("policy %v: %d objects, dependency down for %v; %d failed reconciles; all reconciled after %v\n",
		p, objects, outage, failures.Load(), elapsed.Round(time.Millisecond))
	fmt.Println("  requeued reconciles per 100 ms (# = 2):")
	last := int(elapsed / bin)
	for b := 0; b <= last; b++ {
		if n := timeline[b]; n > 0 {
			fmt.Printf("  %4d ms %3d %s\n", b*int(bin/time.Millisecond), n, strings.Repeat("#", (n+1)/2))
		}
	}
	fmt.Println()
	return nil
}
