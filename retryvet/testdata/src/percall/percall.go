package percall

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retryhttp"
)

var p = policy.Exponential(time.Second).WithMaxAttempts(3)

func call(ctx context.Context) error { return nil }

// The bad cases: made for one call.

func inLoop(ctx context.Context, urls []string) error {
	for _, u := range urls {
		tr, err := retryhttp.New(nil, p) // want `retryhttp.New inside a loop makes a Transport, with its guard and connection pool, for each time round`
		if err != nil {
			return err
		}
		c := &http.Client{Transport: tr}
		resp, err := c.Get(u)
		if err != nil {
			return err
		}
		resp.Body.Close()
	}
	return nil
}

func guardInLoop(ctx context.Context, n int) error {
	for i := 0; i < n; i++ {
		g := policy.NewGuard(50, 1) // want `policy.NewGuard inside a loop makes a guard for each time round`
		if err := retry.Do(ctx, call, p.WithGuard(g)); err != nil {
			return err
		}
	}
	return nil
}

func handler(w http.ResponseWriter, r *http.Request) {
	g := policy.NewGuard(50, 1) // want `policy.NewGuard inside an HTTP handler makes a guard for each request`
	if err := retry.Do(r.Context(), call, p.WithGuard(g)); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
	}
}

type server struct{ mux *http.ServeMux }

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tr, err := retryhttp.New(http.DefaultTransport, p) // want `retryhttp.New inside an HTTP handler`
	if err != nil {
		return
	}
	req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, "http://backend/", nil)
	resp, err := tr.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
	}
}

func register(mux *http.ServeMux) {
	mux.HandleFunc("/items", func(w http.ResponseWriter, r *http.Request) {
		err := retry.Do(r.Context(), func(ctx context.Context) error {
			return call(ctx)
		}, p.WithGuard(policy.NewGuard(50, 1))) // want `policy.NewGuard inside an HTTP handler`
		_ = err
	})
}

func oneCall(ctx context.Context) error {
	g := policy.NewGuard(50, 1) // want `policy.NewGuard makes a guard for the one retried call of this function, at line 80`
	q := p.WithGuard(g)
	return retry.Do(ctx, call, q)
}

func inline(ctx context.Context) error {
	return retry.Do(ctx, call, p.WithGuard(policy.NewGuard(50, 1))) // want `policy.NewGuard makes a guard for the one retried call of this function`
}

func oneRequest(ctx context.Context, url string) (*http.Response, error) {
	tr, err := retryhttp.New(nil, p) // want `retryhttp.New makes a Transport, with its guard and connection pool, for the one retried call of this function, at line 94`
	if err != nil {
		return nil, err
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	return client.Get(url)
}

func throughOperation(ctx context.Context, url string) error {
	tr, err := retryhttp.New(nil, p, retryhttp.WithGuard(nil)) // want `retryhttp.New makes a Transport`
	if err != nil {
		return err
	}
	client := &http.Client{Transport: tr}
	return retry.Do(ctx, func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		fmt.Println(client, resp.Status)
		return resp.Body.Close()
	}, p)
}

// The good cases.

var (
	guard         = policy.NewGuard(50, 1)
	transport, _  = retryhttp.New(nil, p)
	guarded       = p.WithGuard(policy.NewGuard(50, 1))
	sharedHandler = func(w http.ResponseWriter, r *http.Request) {
		_ = retry.Do(r.Context(), call, p.WithGuard(guard))
	}
)

func newClient() (*http.Client, error) {
	tr, err := retryhttp.New(nil, p)
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: tr}, nil
}

type service struct {
	guard  *policy.Guard
	client *http.Client
	once   sync.Once
}

func (s *service) init() error {
	s.guard = policy.NewGuard(50, 1)
	tr, err := retryhttp.New(nil, p, retryhttp.WithGuard(s.guard))
	if err != nil {
		return err
	}
	c := &http.Client{}
	c.Transport = tr
	s.client = c
	return nil
}

func (s *service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.once.Do(func() { s.guard = policy.NewGuard(50, 1) })
	_ = retry.Do(r.Context(), call, p.WithGuard(s.guard))
}

func perHost(hosts []string) map[string]*policy.Guard {
	guards := map[string]*policy.Guard{}
	for _, h := range hosts {
		guards[h] = policy.NewGuard(50, 1)
	}
	return guards
}

func perShard(ctx context.Context, shards int) {
	var guards []*policy.Guard
	for i := 0; i < shards; i++ {
		guards = append(guards, policy.NewGuard(50, 1))
	}
	for i := 0; i < shards; i++ {
		_ = retry.Do(ctx, call, p.WithGuard(guards[i]))
	}
}

var global *policy.Guard

func setGlobal() {
	global = policy.NewGuard(50, 1)
}

func sharedByLoop(ctx context.Context, n int) error {
	q := p.WithGuard(policy.NewGuard(50, 1))
	for i := 0; i < n; i++ {
		if err := retry.Do(ctx, call, q); err != nil {
			return err
		}
	}
	return nil
}

func sharedByGoroutines(ctx context.Context, n int) {
	q := p.WithGuard(policy.NewGuard(50, 1))
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = retry.Do(ctx, call, q)
		}()
	}
	wg.Wait()
}

func twoCalls(ctx context.Context) error {
	q := p.WithGuard(policy.NewGuard(50, 1))
	if err := retry.Do(ctx, call, q); err != nil {
		return err
	}
	return retry.Do(ctx, call, q)
}

func run(ctx context.Context, q policy.Policy) {}

func handedOn(ctx context.Context) {
	run(ctx, p.WithGuard(policy.NewGuard(50, 1)))
}

func handlerFor() (http.HandlerFunc, error) {
	tr, err := retryhttp.New(nil, p)
	if err != nil {
		return nil, err
	}
	c := &http.Client{Transport: tr}
	return func(w http.ResponseWriter, r *http.Request) {
		resp, err := c.Get("http://backend/")
		if err == nil {
			resp.Body.Close()
		}
	}, nil
}

// checked makes a client, tries it once and returns it: the client lives on.
func checked(url string) (*http.Client, error) {
	tr, err := retryhttp.New(nil, p)
	if err != nil {
		return nil, err
	}
	c := &http.Client{Transport: tr}
	resp, err := c.Get(url)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	return c, nil
}

func sent(out chan<- *policy.Guard) {
	out <- policy.NewGuard(50, 1)
}

func notUsed() {
	g := policy.NewGuard(50, 1)
	fmt.Println(g)
}

// NewGuard here is not policy.NewGuard: the check matches the package, not the name.
func NewGuard(tokens, ratio float64) *int { return new(int) }

func sameName(n int) {
	for i := 0; i < n; i++ {
		_ = NewGuard(50, 1)
	}
}
