package retrygrpc

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/retrykit/retrykit/internal/classify"
	"github.com/retrykit/retrykit/policy"
)

// blockedSend is a stream whose SendMsg waits, as gRPC's does on flow
// control, until the other side has received. It tells sending when a
// SendMsg has started to wait. received holds one message, so that a
// RecvMsg that comes before the send reaches its wait is not lost.
type blockedSend struct {
	grpc.ClientStream
	sending  chan struct{}
	received chan struct{}
}

func (b *blockedSend) SendMsg(any) error {
	close(b.sending)
	<-b.received
	return nil
}
func (b *blockedSend) RecvMsg(any) error {
	select {
	case b.received <- struct{}{}:
	default:
	}
	return nil
}
func (b *blockedSend) Header() (metadata.MD, error) { return metadata.MD{}, nil }
func (b *blockedSend) Context() context.Context     { return context.Background() }
func (b *blockedSend) CloseSend() error             { return nil }

func TestStreamSendWaitingOnFlowControlDoesNotBlockRecv(t *testing.T) {
	// One goroutine sends while another receives, as grpc.ClientStream
	// allows: a send that waits for the peer must not hold the lock the
	// receiver needs to take its message in.
	fake := &blockedSend{sending: make(chan struct{}), received: make(chan struct{}, 1)}
	streamer := func(context.Context, *grpc.StreamDesc, *grpc.ClientConn, string, ...grpc.CallOption) (grpc.ClientStream, error) {
		return fake, nil
	}
	cs, err := StreamClientInterceptor(policy.Constant(0))(context.Background(), &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, nil, "/x/y", streamer)
	require.NoError(t, err)
	sent := make(chan error, 1)
	go func() { sent <- cs.SendMsg(wrapperspb.String("hello")) }()
	<-fake.sending // the send waits for the peer, past everything the interceptor does first
	recvd := make(chan error, 1)
	go func() { recvd <- cs.RecvMsg(new(wrapperspb.StringValue)) }()
	select {
	case err := <-recvd:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("RecvMsg blocked behind a waiting SendMsg")
	}
	require.NoError(t, <-sent)
}

func TestAttemptDeadlineSeenFirstByTheServerIsRetried(t *testing.T) {
	// The policy's per-attempt timeout ran out, and the server's
	// DeadlineExceeded came in a moment before the attempt's own context
	// was done: the same timeout, retried.
	caller, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	attempt, cancelAttempt := context.WithTimeout(caller, time.Minute)
	defer cancelAttempt()
	c := newConfig(nil)
	err := status.Error(codes.DeadlineExceeded, "stream terminated by RST_STREAM with error code: CANCEL")
	got := c.classify(policy.Default(), caller, attempt, err, nil)
	require.False(t, classify.Of(got).Permanent, "retried as the timeout it is, not made permanent")
	require.ErrorIs(t, got, err)
	require.ErrorIs(t, got, context.DeadlineExceeded, "an attempt timeout matches it, as in package retry")
	require.Equal(t, codes.DeadlineExceeded, status.Code(got))

	// Without an attempt deadline of its own, the server's DeadlineExceeded
	// is not in the retried set.
	got = c.classify(policy.Default(), caller, caller, err, nil)
	require.True(t, classify.Of(got).Permanent)
}

// failedStream is an attempt that failed Unavailable before its header.
type failedStream struct{ grpc.ClientStream }

func (failedStream) RecvMsg(any) error            { return status.Error(codes.Unavailable, "down") }
func (failedStream) Header() (metadata.MD, error) { return nil, nil }
func (failedStream) Trailer() metadata.MD         { return nil }
func (failedStream) SendMsg(any) error            { return nil }
func (failedStream) CloseSend() error             { return nil }
func (failedStream) Context() context.Context     { return context.Background() }

// panicMessage is a proto.Message whose reflection panics, as a broken
// generated type might.
type panicMessage struct{ *wrapperspb.StringValue }

func (panicMessage) ProtoReflect() protoreflect.Message { panic("ProtoReflect") }

func TestStreamPanicLeavesTheStreamUnlocked(t *testing.T) {
	// A panic under the stream's lock, recovered by the caller, must not
	// leave the lock held: the other goroutine's SendMsg, CloseSend,
	// Header and Context would wait on it forever.
	for name, tc := range map[string]struct {
		streamer func(n int) // called at the start of the n-th open
		use      func(cs grpc.ClientStream)
	}{
		"streamer panics on a retry": {
			streamer: func(n int) {
				if n > 1 {
					panic("streamer")
				}
			},
			use: func(cs grpc.ClientStream) { _ = cs.RecvMsg(new(wrapperspb.StringValue)) },
		},
		"message panics as it is kept": {
			streamer: func(int) {},
			use:      func(cs grpc.ClientStream) { _ = cs.SendMsg(panicMessage{wrapperspb.String("x")}) },
		},
	} {
		t.Run(name, func(t *testing.T) {
			opened := 0
			streamer := func(context.Context, *grpc.StreamDesc, *grpc.ClientConn, string, ...grpc.CallOption) (grpc.ClientStream, error) {
				opened++
				tc.streamer(opened)
				return failedStream{}, nil
			}
			cs, err := StreamClientInterceptor(policy.Constant(0).WithMaxAttempts(3))(context.Background(), &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, nil, "/x/y", streamer)
			require.NoError(t, err)
			require.Panics(t, func() { tc.use(cs) })
			s := cs.(*clientStream)
			require.True(t, s.mu.TryLock(), "the panic left the stream's lock held")
			s.mu.Unlock()
		})
	}
}
