package retrygrpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// MaxReplay bounds the request messages a stream keeps to send again on a
// retry, in encoded bytes. 256 KiB is gRPC's own retry buffer. A stream that
// sends more is no longer retried.
const MaxReplay = 256 << 10

var errStreamAttemptTimeout = fmt.Errorf("retrygrpc: a per-attempt timeout would cut off a stream: %w", policy.ErrInvalid)

// StreamClientInterceptor returns an interceptor that retries streams under
// p, as [UnaryClientInterceptor] does unary calls, until a response message
// or header has reached the client. From then on a retry would replay data
// the caller has seen, so the stream's error is returned as it is.
//
// Until then, a stream that failed is opened again, and the request messages
// sent so far are sent again, up to [MaxReplay] bytes.
//
// A policy with a per-attempt timeout is refused with codes.Internal before
// the stream opens, because the timeout would cut the stream off. An invalid
// policy is refused the same way.
//
// The interceptor is safe for concurrent use. Each stream follows
// grpc.ClientStream's rules: one goroutine may send while one receives.
func StreamClientInterceptor(p policy.Policy, opts ...Option) grpc.StreamClientInterceptor {
	c := newConfig(opts)
	p, refusal := adopt(p)
	if refusal == nil && p.AttemptTimeout() > 0 {
		refusal = toStatus(errStreamAttemptTimeout)
	}
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, callOpts ...grpc.CallOption) (grpc.ClientStream, error) {
		if refusal != nil {
			return nil, refusal
		}
		cp, on := policyFor(p, callOpts)
		if !on {
			return streamer(ctx, desc, cc, method, callOpts...)
		}
		if err := cp.Validate(); err != nil {
			return nil, invalid(err)
		}
		if cp.AttemptTimeout() > 0 {
			return nil, toStatus(errStreamAttemptTimeout)
		}
		ctx = c.keyed(ctx)
		s := &clientStream{cfg: c, p: cp, caller: ctx, desc: desc, cc: cc, method: method, streamer: streamer, opts: callOpts}
		cs, err := streamer(withPrevious(ctx, 1), desc, cc, method, callOpts...)
		s.n = 1
		if err == nil {
			s.cs = cs
			return s, nil
		}
		if err := s.retry(c.classify(cp, ctx, ctx, err, nil), nil); err != nil {
			return nil, err
		}
		return s, nil
	}
}

// clientStream is a stream that opens a new attempt when the current one
// fails before it is committed. mu guards everything below it; the current
// attempt's RecvMsg runs without it, so that a bidirectional stream can send
// while it waits for its first response.
type clientStream struct {
	cfg      *config
	p        policy.Policy
	caller   context.Context
	desc     *grpc.StreamDesc
	cc       *grpc.ClientConn
	method   string
	streamer grpc.Streamer
	opts     []grpc.CallOption

	mu        sync.Mutex
	cs        grpc.ClientStream // the current attempt
	n         int               // attempts so far, counting the first
	committed bool
	sent      []proto.Message // copies of the messages sent, while not committed
	size      int
	closed    bool  // CloseSend was called
	final     error // the error retrying ended with: every later RecvMsg returns it
}

var _ grpc.ClientStream = (*clientStream)(nil)

func (s *clientStream) current() (grpc.ClientStream, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cs, s.committed
}

func (s *clientStream) commitLocked() {
	s.committed = true
	s.sent, s.size = nil, 0
}

func (s *clientStream) commit() {
	s.mu.Lock()
	s.commitLocked()
	s.mu.Unlock()
}

// Header returns the current attempt's header; a header commits the stream.
func (s *clientStream) Header() (metadata.MD, error) {
	cs, _ := s.current()
	md, err := cs.Header()
	if md != nil {
		s.commit()
	}
	return md, err
}

// Trailer returns the current attempt's trailer.
func (s *clientStream) Trailer() metadata.MD {
	cs, _ := s.current()
	return cs.Trailer()
}

// CloseSend closes the sending side, now and on any later attempt.
func (s *clientStream) CloseSend() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return s.cs.CloseSend()
}

// Context returns the current attempt's context.
func (s *clientStream) Context() context.Context {
	cs, _ := s.current()
	return cs.Context()
}

// SendMsg sends m on the current attempt and, while the stream is not
// committed, keeps a copy to replay. An attempt that has ended takes no
// more messages (io.EOF); while a retry may follow, SendMsg then returns
// nil and leaves the outcome to RecvMsg, as grpc's own retry does.
func (s *clientStream) SendMsg(m any) error {
	// The send itself runs without the lock: it can wait for flow control
	// while the receiving goroutine needs the lock to take messages in.
	cs, committed := s.keep(m)
	err := cs.SendMsg(m)
	if err == io.EOF && !committed {
		return nil
	}
	return err
}

// keep keeps a copy of m to replay while the stream is not committed, and
// returns the current attempt and whether the stream is committed.
func (s *clientStream) keep(m any) (grpc.ClientStream, bool) {
	s.mu.Lock()
	defer s.mu.Unlock() // a message whose reflection panics leaves the lock free
	if !s.committed {
		pm, ok := m.(proto.Message)
		if ok {
			s.size += proto.Size(pm)
		}
		if !ok || s.size > MaxReplay {
			s.commitLocked()
		} else {
			s.sent = append(s.sent, proto.Clone(pm))
		}
	}
	return s.cs, s.committed
}

// RecvMsg receives the next message. A failure before the stream is
// committed is retried here, and the message comes from the new attempt.
func (s *clientStream) RecvMsg(m any) error {
	s.mu.Lock()
	final := s.final
	s.mu.Unlock()
	if final != nil {
		return final // retrying has ended: the stream's error, every time
	}
	cs, committed := s.current()
	err := cs.RecvMsg(m)
	if committed || err == nil || err == io.EOF {
		if !committed {
			s.commit()
		}
		return err
	}
	// The attempt ended without a message: committed only if its header
	// came (Header does not block on a finished stream).
	if md, _ := cs.Header(); md != nil {
		s.commit()
		return err
	}
	err = s.retry(s.cfg.classify(s.p, s.caller, s.caller, err, cs.Trailer()), m)
	if err != nil && err != io.EOF {
		s.mu.Lock()
		s.final = err
		s.mu.Unlock()
	}
	return err
}

// retry runs retry.Do over new attempts after the attempt that failed with
// first (already classified). m, if not nil, is the caller's pending
// RecvMsg, which each new attempt makes before it counts as a success.
func (s *clientStream) retry(first error, m any) error {
	called := false
	err := retry.Do(s.caller, func(ctx context.Context) error {
		if !called {
			called = true
			return first
		}
		return s.attempt(ctx, m)
	}, s.p, s.cfg.retryOpts...)
	if errors.Is(err, io.EOF) {
		return io.EOF
	}
	return toStatus(err)
}

// attempt opens a new stream, replays what the caller sent, and receives
// into m.
func (s *clientStream) attempt(ctx context.Context, m any) error {
	cs, err := s.open(ctx)
	if err != nil {
		return s.cfg.classify(s.p, s.caller, ctx, err, nil)
	}
	if m == nil {
		return nil
	}
	err = cs.RecvMsg(m)
	if err == nil {
		s.commit()
		return nil
	}
	if err == io.EOF {
		s.commit()
		return retry.Permanent(io.EOF)
	}
	if md, _ := cs.Header(); md != nil {
		s.commit()
		return retry.Permanent(err)
	}
	return s.cfg.classify(s.p, s.caller, ctx, err, cs.Trailer())
}

// open opens the next attempt, makes it the current one, and replays on it
// what the caller sent.
func (s *clientStream) open(ctx context.Context) (grpc.ClientStream, error) {
	s.mu.Lock()
	defer s.mu.Unlock() // a streamer that panics leaves the lock free
	s.n++
	cs, err := s.streamer(withPrevious(ctx, s.n), s.desc, s.cc, s.method, s.opts...)
	if err != nil {
		return nil, err
	}
	s.cs = cs
	for _, msg := range s.sent {
		if cs.SendMsg(msg) != nil {
			break // the attempt has ended: RecvMsg says how
		}
	}
	if s.closed {
		_ = cs.CloseSend()
	}
	return cs, nil
}
