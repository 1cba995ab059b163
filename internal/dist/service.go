package dist

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/mem"
)

// rawCodec passes messages through as bytes: every message of the service
// is a *[]byte that the package encodes itself, or, for a batch of
// successors sent, a *pooledBatch, whose buffer goes back to its pool
// once gRPC has written it (so that a sender reuses its batch buffers
// instead of allocating one per batch).
type rawCodec struct{}

// pooledBatch is a batch to send whose buffer belongs to pool.
type pooledBatch struct {
	b    *[]byte
	pool mem.BufferPool
}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	switch p := v.(type) {
	case *[]byte:
		return mem.BufferSlice{mem.SliceBuffer(*p)}, nil
	case *pooledBatch:
		return mem.BufferSlice{mem.NewBuffer(p.b, p.pool)}, nil
	}
	return nil, fmt.Errorf("dist: cannot marshal %T", v)
}

// Unmarshal copies the message into *v, reusing its array when it is
// large enough.
func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	p, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("dist: cannot unmarshal into %T", v)
	}
	n := data.Len()
	if cap(*p) < n {
		*p = make([]byte, n)
	}
	*p = (*p)[:n]
	data.CopyTo(*p)
	return nil
}

// batchPool keeps a worker's free batch buffers (a mem.BufferPool: gRPC
// puts a buffer back once it has written the batch).
type batchPool struct {
	mu   sync.Mutex
	free []*[]byte
}

// batchFree bounds the buffers a batchPool keeps.
const batchFree = 16

// Get implements mem.BufferPool: a buffer of length n, with room for a
// batch.
func (p *batchPool) Get(n int) *[]byte {
	p.mu.Lock()
	if k := len(p.free); k > 0 {
		b := p.free[k-1]
		p.free = p.free[:k-1]
		p.mu.Unlock()
		if cap(*b) >= n {
			*b = (*b)[:n]
			return b
		}
	} else {
		p.mu.Unlock()
	}
	b := make([]byte, n, max(n, batchBytes+batchBytes/4))
	return &b
}

// Put implements mem.BufferPool.
func (p *batchPool) Put(b *[]byte) {
	p.mu.Lock()
	if len(p.free) < batchFree {
		*b = (*b)[:0]
		p.free = append(p.free, b)
	}
	p.mu.Unlock()
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
	// fromSearch refuses a stream of batches from outside the search.
	fromSearch(ctx context.Context) error
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
			if err := h.fromSearch(st.Context()); err != nil {
				return err
			}
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

// keepaliveTime is how long a connection may be idle before its side
// pings the other (gRPC's least); a ping unanswered within the peer
// timeout closes the connection.
const keepaliveTime = 10 * time.Second

func newServer(h handler, peerTimeout time.Duration) *grpc.Server {
	s := grpc.NewServer(grpc.ForceServerCodecV2(rawCodec{}), grpc.MaxRecvMsgSize(maxMsg), grpc.MaxSendMsgSize(maxMsg),
		grpc.InitialWindowSize(window), grpc.InitialConnWindowSize(2*window), grpc.ReadBufferSize(bufSize), grpc.WriteBufferSize(bufSize),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: keepaliveTime, Timeout: peerTimeout}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: keepaliveTime / 2, PermitWithoutStream: true}))
	s.RegisterService(&serviceDesc, h)
	return s
}

// dial makes the connection to a peer. Its calls carry the search's
// nonce (tag, once known); it pings the peer when idle, and retries a
// refused connection at least every second, so that the workers may
// start in any order.
func dial(addr string, peerTimeout time.Duration, tag func(context.Context) context.Context) (*grpc.ClientConn, error) {
	return grpc.NewClient(addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(window), grpc.WithInitialConnWindowSize(2*window), grpc.WithReadBufferSize(bufSize), grpc.WithWriteBufferSize(bufSize),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(rawCodec{}), grpc.MaxCallRecvMsgSize(maxMsg), grpc.MaxCallSendMsgSize(maxMsg)),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: keepaliveTime, Timeout: peerTimeout, PermitWithoutStream: true}),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
			MinConnectTimeout: 5 * time.Second}),
		grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			return invoker(tag(ctx), method, req, reply, cc, opts...)
		}),
		grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			return streamer(tag(ctx), desc, cc, method, opts...)
		}))
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

// send sends a batch, whose buffer is pool's and goes back to it once
// written (the caller must not touch it afterwards); it blocks while the
// peer's flow-control window is full.
func (p *pushStream) send(b []byte, pool *batchPool) error {
	return p.st.SendMsg(&pooledBatch{b: &b, pool: pool})
}

// close ends the stream and waits until the peer has taken every batch.
func (p *pushStream) close() error {
	if err := p.st.CloseSend(); err != nil {
		return err
	}
	var ack []byte
	return p.st.RecvMsg(&ack)
}
