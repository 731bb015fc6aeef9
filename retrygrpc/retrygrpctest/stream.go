package retrygrpctest

import (
	"context"
	"io"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/retrykit/retrykit/retrytest"
)

// StreamServerInterceptor returns a server interceptor that gives each
// stream of the given methods the fault in decides on, as
// [UnaryServerInterceptor] does unary calls. Methods are full names, and
// none means every method. With Partial, the handler's first After messages
// go out, and the fault strikes at the next one, or when the handler
// returns. Latency alone pauses the stream, which goes on. Err or Stall end
// it with their status, whatever the handler returns.
func StreamServerInterceptor(in *retrytest.Injector, methods ...string) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if in == nil {
			return errNil
		}
		if !picked(methods, info.FullMethod) {
			return handler(srv, ss)
		}
		f, ok := in.Next(ss.Context())
		if !ok {
			return handler(srv, ss)
		}
		if err := unsupported(f, true, true); err != nil {
			return err
		}
		if !f.Partial {
			if err, own := before(ss.Context(), in, f); err != nil {
				if md := pushback(f); own && md != nil {
					ss.SetTrailer(md)
				}
				return err
			}
			return handler(srv, ss)
		}
		cs := &cutServerStream{ServerStream: ss, in: in, f: f, left: f.After}
		err := handler(srv, cs)
		if !cs.struck {
			cs.strike()
		}
		if cs.err != nil {
			return cs.err
		}
		return err
	}
}

// cutServerStream sends a handler's first After messages, then strikes.
type cutServerStream struct {
	grpc.ServerStream
	in     *retrytest.Injector
	f      retrytest.Fault
	left   int   // messages still to send before the fault strikes
	struck bool  // the fault has struck
	err    error // the status it ended the stream with
}

// SendMsg sends m, unless the fault strikes first.
func (s *cutServerStream) SendMsg(m any) error {
	if !s.struck && s.left == 0 {
		s.strike()
	}
	if s.err != nil {
		return s.err
	}
	if !s.struck {
		s.left--
	}
	return s.ServerStream.SendMsg(m)
}

// strike waits the fault's Latency or Stall and ends the stream with its
// status, unless the fault is a pause alone.
func (s *cutServerStream) strike() {
	s.struck = true
	err, own := before(s.Context(), s.in, s.f)
	s.err = err
	if md := pushback(s.f); own && md != nil {
		s.SetTrailer(md)
	}
}

// StreamClientInterceptor returns a client interceptor that gives each
// stream of the given methods (none means every method) the fault in
// decides on. Latency delays opening it, and Stall holds NewStream until
// the context ends or in is closed. Err opens no stream: the stream returned
// fails its first RecvMsg with Err, with no header, and its Trailer carries
// the Hint as pushback, as a server's refusal would. With Partial, the
// stream is opened and its first After messages received, and then Err,
// Stall or Latency strike at the next RecvMsg or at the end of the stream.
// Put it after retrygrpc's interceptor, so that each attempt meets the
// faults.
func StreamClientInterceptor(in *retrytest.Injector, methods ...string) grpc.StreamClientInterceptor {
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		if in == nil {
			return nil, errNil
		}
		if !picked(methods, method) {
			return streamer(ctx, desc, cc, method, opts...)
		}
		f, ok := in.Next(ctx)
		if !ok {
			return streamer(ctx, desc, cc, method, opts...)
		}
		if err := unsupported(f, false, true); err != nil {
			return nil, err
		}
		if !f.Partial {
			switch err, own := before(ctx, in, f); {
			case err == nil:
				return streamer(ctx, desc, cc, method, opts...)
			case own:
				return &refusedStream{ctx: ctx, err: err, trailer: pushback(f)}, nil
			default:
				return nil, err
			}
		}
		sctx, cancel := context.WithCancel(ctx)
		cs, err := streamer(sctx, desc, cc, method, opts...)
		if err != nil {
			cancel()
			return nil, err
		}
		return &cutClientStream{ClientStream: cs, in: in, f: f, ctx: sctx, cancel: cancel, left: f.After}, nil
	}
}

// refusedStream is a stream that a server refused before it sent anything.
type refusedStream struct {
	ctx     context.Context
	err     error
	trailer metadata.MD
}

func (s *refusedStream) Header() (metadata.MD, error) { return nil, nil }
func (s *refusedStream) Trailer() metadata.MD         { return s.trailer }
func (s *refusedStream) CloseSend() error             { return nil }
func (s *refusedStream) Context() context.Context     { return s.ctx }
func (s *refusedStream) SendMsg(any) error            { return io.EOF }
func (s *refusedStream) RecvMsg(any) error            { return s.err }

// cutClientStream receives a stream's first After messages, then strikes.
type cutClientStream struct {
	grpc.ClientStream
	in      *retrytest.Injector
	f       retrytest.Fault
	ctx     context.Context // the stream's own, which cancel ends
	cancel  context.CancelFunc
	left    int         // messages still to receive before the fault strikes
	struck  bool        // the fault has struck
	err     error       // the status it ended the stream with
	trailer metadata.MD // the pushback of that status
}

// RecvMsg receives into m, unless the fault strikes first.
func (s *cutClientStream) RecvMsg(m any) error {
	if s.err != nil {
		return s.err
	}
	if !s.struck && s.left == 0 {
		if s.strike(); s.err != nil {
			return s.err
		}
	}
	err := s.ClientStream.RecvMsg(m)
	switch {
	case err == nil:
		if !s.struck {
			s.left--
		}
		return nil
	case err == io.EOF && !s.struck:
		if s.strike(); s.err != nil {
			return s.err
		}
	}
	s.cancel()
	return err
}

// strike waits the fault's Latency or Stall and ends the stream with its
// status, unless the fault is a pause alone.
func (s *cutClientStream) strike() {
	s.struck = true
	err, own := before(s.ctx, s.in, s.f)
	if err == nil {
		return
	}
	s.err = err
	if own {
		s.trailer = pushback(s.f)
	}
	s.cancel()
}

// Trailer returns the pushback of the fault's status, or the stream's own
// trailer.
func (s *cutClientStream) Trailer() metadata.MD {
	if s.trailer != nil {
		return s.trailer
	}
	return s.ClientStream.Trailer()
}
