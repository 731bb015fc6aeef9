package retrygrpc_test

import (
	"context"
	"net"
	"regexp"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retrygrpc"
)

// uuid4 is the form of the keys WithIdempotencyKeys makes.
var uuid4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// ledger plays a write service with grpc's health service: every Check or
// Watch is a write. It records the idempotency keys of every attempt. It
// deduplicates by key when dedup is set: the first attempt with a key
// commits the write and then fails as fail says, as if its answer were
// lost; an attempt with a key it has seen commits nothing and succeeds.
// Without dedup, every attempt commits, and the first unavailable ones
// fail.
type ledger struct {
	healthpb.UnimplementedHealthServer
	fail   func() error // the failure after a first commit
	failN  int          // without dedup: how many attempts fail
	dedup  bool
	mu     sync.Mutex
	keys   [][]string // the key values of each attempt
	writes int
	done   map[string]bool
}

func (l *ledger) write(ctx context.Context) error {
	md, _ := metadata.FromIncomingContext(ctx)
	keys := md.Get(retrygrpc.IdempotencyKey)
	l.mu.Lock()
	l.keys = append(l.keys, keys)
	n := len(l.keys)
	key := ""
	if len(keys) == 1 {
		key = keys[0]
	}
	seen := l.dedup && key != "" && l.done[key]
	if !seen {
		l.writes++
		if l.done == nil {
			l.done = map[string]bool{}
		}
		l.done[key] = true
	}
	l.mu.Unlock()
	switch {
	case l.dedup && !seen:
		return l.fail()
	case !l.dedup && n <= l.failN:
		return l.fail()
	}
	return nil
}

func (l *ledger) Check(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	if err := l.write(ctx); err != nil {
		return nil, err
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

func (l *ledger) Watch(_ *healthpb.HealthCheckRequest, stream grpc.ServerStreamingServer[healthpb.HealthCheckResponse]) error {
	if err := l.write(stream.Context()); err != nil {
		return err
	}
	return stream.Send(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING})
}

func (l *ledger) attempts() [][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([][]string(nil), l.keys...)
}

func unavailable() error {
	return status.Error(codes.Unavailable, "committed, and then the answer was lost")
}

// serveLedger serves l on loopback TCP through a client whose interceptors
// retry under p with opts. The listener's connections can be dropped.
func serveLedger(t *testing.T, l *ledger, p policy.Policy, opts ...retrygrpc.Option) (healthpb.HealthClient, *conns) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	cl := &conns{Listener: lis}
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, l)
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(cl)
	}()
	conn, err := grpc.NewClient("passthrough:///"+lis.Addr().String(),
		grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithDisableRetry(),
		grpc.WithUnaryInterceptor(retrygrpc.UnaryClientInterceptor(p, opts...)),
		grpc.WithStreamInterceptor(retrygrpc.StreamClientInterceptor(p, opts...)))
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, conn.Close())
		srv.Stop()
		<-served
	})
	return healthpb.NewHealthClient(conn), cl
}

// conns is a listener that can drop every connection it accepted.
type conns struct {
	net.Listener
	mu  sync.Mutex
	all []net.Conn
}

func (c *conns) Accept() (net.Conn, error) {
	conn, err := c.Listener.Accept()
	if err == nil {
		c.mu.Lock()
		c.all = append(c.all, conn)
		c.mu.Unlock()
	}
	return conn, err
}

func (c *conns) drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conn := range c.all {
		_ = conn.Close()
	}
	c.all = nil
}

func TestIdempotencyKeys(t *testing.T) {
	keys := retrygrpc.WithIdempotencyKeys()
	for _, tt := range []struct {
		name   string
		opts   []retrygrpc.Option
		own    string // the caller's key, if any
		stream bool
		want   func(t *testing.T, key string)
	}{
		{"a unary call gets a key", []retrygrpc.Option{keys}, "", false, func(t *testing.T, k string) { require.Regexp(t, uuid4, k) }},
		{"a stream gets a key", []retrygrpc.Option{keys}, "", true, func(t *testing.T, k string) { require.Regexp(t, uuid4, k) }},
		{"the caller's key is kept", []retrygrpc.Option{keys}, "order-42", false, func(t *testing.T, k string) { require.Equal(t, "order-42", k) }},
		{"an empty key is replaced", []retrygrpc.Option{keys}, " ", false, func(t *testing.T, k string) { require.Regexp(t, uuid4, k) }},
		{"no key without the option", nil, "", false, func(t *testing.T, k string) { require.Empty(t, k) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := &ledger{fail: unavailable, failN: 2}
			c, _ := serveLedger(t, l, policy.Constant(0).WithMaxAttempts(3), tt.opts...)
			ctx := t.Context()
			if tt.own != "" {
				ctx = metadata.AppendToOutgoingContext(ctx, retrygrpc.IdempotencyKey, tt.own)
			}
			if tt.stream {
				s, err := c.Watch(ctx, req)
				require.NoError(t, err)
				_, err = s.Recv()
				require.NoError(t, err)
			} else {
				_, err := c.Check(ctx, req)
				require.NoError(t, err)
			}
			attempts := l.attempts()
			require.Len(t, attempts, 3)
			for _, a := range attempts {
				require.LessOrEqual(t, len(a), 1, "one value: %q", a)
				require.Equal(t, attempts[0], a, "the same key on every attempt")
			}
			k := ""
			if len(attempts[0]) == 1 {
				k = attempts[0][0]
			}
			tt.want(t, k)
		})
	}
}

// Every call gets a key of its own.
func TestIdempotencyKeysNewForEveryCall(t *testing.T) {
	l := &ledger{fail: unavailable}
	c, _ := serveLedger(t, l, policy.Constant(0).WithMaxAttempts(3), retrygrpc.WithIdempotencyKeys())
	const calls = 20
	for range calls {
		_, err := c.Check(t.Context(), req)
		require.NoError(t, err)
	}
	seen := map[string]bool{}
	for _, a := range l.attempts() {
		require.Len(t, a, 1)
		require.Regexp(t, uuid4, a[0])
		seen[a[0]] = true
	}
	require.Len(t, seen, calls, "one key per call")
}

// A server that deduplicates by key makes each write once, while the
// attempts fail after it committed.
func TestIdempotencyKeysWriteOnce(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts []grpc.CallOption
		fail func(*conns) func() error
	}{
		{"unavailable after the commit", nil, func(*conns) func() error { return unavailable }},
		{"the connection dropped after the commit", []grpc.CallOption{grpc.WaitForReady(true)}, func(c *conns) func() error {
			return func() error {
				c.drop() // the answer never leaves
				return unavailable()
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := &ledger{dedup: true}
			c, cl := serveLedger(t, l, policy.Constant(0).WithMaxAttempts(3), retrygrpc.WithIdempotencyKeys())
			l.fail = tt.fail(cl)
			resp, err := c.Check(t.Context(), req, tt.opts...)
			require.NoError(t, err)
			require.Equal(t, healthpb.HealthCheckResponse_SERVING, resp.GetStatus(), "the answer from the server's record")
			l.mu.Lock()
			defer l.mu.Unlock()
			require.Equal(t, 1, l.writes, "the write is made once")
			require.GreaterOrEqual(t, len(l.keys), 2, "and was sent again")
		})
	}
}
