package compare

import (
	"context"
	"sync"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/failsafegrpc"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	grpcretry "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/retry"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retrygrpc"
)

// setup is one scenario's settings, given to each library in its own terms:
// at most attempts attempts (counting the first), exponential waits from
// base doubling to cap, jitter ± jitter (a fraction; 0 for none), retrying
// codes.Unavailable.
type setup struct {
	attempts  int
	base, cap time.Duration
	jitter    float64
}

// delays records the waits a library chose, as it reports them.
type delays struct {
	mu sync.Mutex
	ds []time.Duration
}

func (d *delays) add(x time.Duration) {
	d.mu.Lock()
	d.ds = append(d.ds, x)
	d.mu.Unlock()
}

func (d *delays) all() []time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]time.Duration(nil), d.ds...)
}

// lib builds a library's client interceptors for a setup; rec, if not nil,
// learns each wait the library chose.
type lib struct {
	name   string
	unary  func(s setup, rec *delays) grpc.UnaryClientInterceptor
	stream func(s setup, rec *delays) grpc.StreamClientInterceptor // nil: the library has none
}

func retrykitPolicy(s setup) policy.Policy {
	p := policy.Exponential(s.base).WithCap(s.cap).WithMaxAttempts(s.attempts)
	if s.jitter > 0 {
		p = p.WithJitter(backoff.Jitter{Kind: backoff.Symmetric, Fraction: s.jitter})
	}
	return p
}

func retrykitOptions(rec *delays) []retrygrpc.Option {
	if rec == nil {
		return nil
	}
	return []retrygrpc.Option{retrygrpc.WithRetryOptions(retry.WithHooks(&retry.Hooks{
		OnRetry: func(_ context.Context, e retry.RetryEvent) { rec.add(e.Delay) },
	}))}
}

func middlewareOptions(s setup, rec *delays) []grpcretry.CallOption {
	bf := grpcretry.BackoffExponentialWithJitterBounded(s.base, s.jitter, s.cap)
	return []grpcretry.CallOption{
		grpcretry.WithMax(uint(s.attempts)),
		grpcretry.WithCodes(codes.Unavailable),
		grpcretry.WithBackoff(func(ctx context.Context, attempt uint) time.Duration {
			d := bf(ctx, attempt)
			if rec != nil {
				rec.add(d)
			}
			return d
		}),
	}
}

func failsafePolicy(s setup, rec *delays) retrypolicy.RetryPolicy[any] {
	b := failsafegrpc.NewRetryPolicyBuilder[any]().
		WithMaxAttempts(s.attempts).
		WithBackoff(s.base, s.cap)
	if s.jitter > 0 {
		b = b.WithJitterFactor(s.jitter)
	}
	if rec != nil {
		b = b.OnRetryScheduled(func(e failsafe.ExecutionScheduledEvent[any]) { rec.add(e.Delay) })
	}
	return b.Build()
}

var libs = []lib{
	{
		name: "retrykit",
		unary: func(s setup, rec *delays) grpc.UnaryClientInterceptor {
			return retrygrpc.UnaryClientInterceptor(retrykitPolicy(s), retrykitOptions(rec)...)
		},
		stream: func(s setup, rec *delays) grpc.StreamClientInterceptor {
			return retrygrpc.StreamClientInterceptor(retrykitPolicy(s), retrykitOptions(rec)...)
		},
	},
	{
		name: "go-grpc-middleware",
		unary: func(s setup, rec *delays) grpc.UnaryClientInterceptor {
			return grpcretry.UnaryClientInterceptor(middlewareOptions(s, rec)...)
		},
		stream: func(s setup, rec *delays) grpc.StreamClientInterceptor {
			return grpcretry.StreamClientInterceptor(middlewareOptions(s, rec)...)
		},
	},
	{
		name: "failsafegrpc",
		unary: func(s setup, rec *delays) grpc.UnaryClientInterceptor {
			return failsafegrpc.NewUnaryClientInterceptor[any](failsafePolicy(s, rec))
		},
		// failsafegrpc v0.9.8 has no stream client interceptor.
	},
}
