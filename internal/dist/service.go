package dist

import (
	"context"
	"fmt"
	"io"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// rawCodec passes messages through as bytes: every message of the service
// is a *[]byte that the package encodes itself.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	p, ok := v.(*[]byte)
	if !ok {
		return nil, fmt.Errorf("dist: cannot marshal %T", v)
	}
	return *p, nil
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	p, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("dist: cannot unmarshal into %T", v)
	}
	*p = append((*p)[:0], data...)
	return nil
}

func (rawCodec) Name() string { return "lfccheck-raw" }

const (
	serviceName = "lfccheck.dist.Worker"
	controlName = "/" + serviceName + "/Control"
	pushName    = "/" + serviceName + "/Push"
	// maxMsg bounds a message: batches are far smaller (batchBytes), but a
	// reply may carry a few lists.
	maxMsg = 64 << 20
	// window is gRPC's flow-control window of a stream and of a
	// connection (the default, 64 KiB and growing with its estimate of
	// the link's bandwidth-delay product, holds two batches at first, so
	// a sender waited on every pause of its owner); the read and write
	// buffers hold a batch with its framing.
	window  = 4 << 20
	bufSize = 256 << 10
)

// handler is what a worker serves.
type handler interface {
	control(ctx context.Context, req []byte) ([]byte, error)
	receive(batch []byte) error
}

var serviceDesc = grpc.ServiceDesc{
	ServiceName: serviceName,
	HandlerType: (*handler)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Control",
		Handler: func(srv any, ctx context.Context, decode func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			var req []byte
			if err := decode(&req); err != nil {
				return nil, err
			}
			rep, err := srv.(handler).control(ctx, req)
			if err != nil {
				return nil, err
			}
			return &rep, nil
		},
	}},
	Streams: []grpc.StreamDesc{{
		StreamName:    "Push",
		ClientStreams: true,
		Handler: func(srv any, st grpc.ServerStream) error {
			h := srv.(handler)
			var b []byte // (reused: receive keeps nothing of a batch)
			for {
				err := st.RecvMsg(&b)
				if err == io.EOF {
					ack := []byte{}
					return st.SendMsg(&ack)
				}
				if err != nil {
					return err
				}
				if err := h.receive(b); err != nil {
					return err
				}
			}
		},
	}},
}

func newServer(h handler) *grpc.Server {
	s := grpc.NewServer(grpc.ForceServerCodec(rawCodec{}), grpc.MaxRecvMsgSize(maxMsg), grpc.MaxSendMsgSize(maxMsg),
		grpc.InitialWindowSize(window), grpc.InitialConnWindowSize(2*window), grpc.ReadBufferSize(bufSize), grpc.WriteBufferSize(bufSize))
	s.RegisterService(&serviceDesc, h)
	return s
}

func dial(addr string) (*grpc.ClientConn, error) {
	return grpc.NewClient(addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(window), grpc.WithInitialConnWindowSize(2*window), grpc.WithReadBufferSize(bufSize), grpc.WithWriteBufferSize(bufSize),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{}), grpc.MaxCallRecvMsgSize(maxMsg), grpc.MaxCallSendMsgSize(maxMsg)))
}

// call invokes Control on conn; waitReady waits for the peer to come up
// (until ctx's deadline) instead of failing at once.
func call(ctx context.Context, conn *grpc.ClientConn, req []byte, waitReady bool) ([]byte, error) {
	var rep []byte
	err := conn.Invoke(ctx, controlName, &req, &rep, grpc.WaitForReady(waitReady))
	return rep, err
}

// pushStream is an open Push stream to one peer.
type pushStream struct {
	st grpc.ClientStream
}

func openPush(ctx context.Context, conn *grpc.ClientConn) (*pushStream, error) {
	st, err := conn.NewStream(ctx, &serviceDesc.Streams[0], pushName)
	if err != nil {
		return nil, err
	}
	return &pushStream{st: st}, nil
}

// send sends a batch (which must not be changed afterwards); it blocks
// while the peer's flow-control window is full.
func (p *pushStream) send(b []byte) error { return p.st.SendMsg(&b) }

// close ends the stream and waits until the peer has taken every batch.
func (p *pushStream) close() error {
	if err := p.st.CloseSend(); err != nil {
		return err
	}
	var ack []byte
	return p.st.RecvMsg(&ack)
}
