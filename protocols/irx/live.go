package irx

import (
	"context"
	"errors"
	"fmt"
	"time"

	"lfccheck/model"
	"lfccheck/model/live"
	"lfccheck/protocols/ucast"
)

// LiveOptions configure a live I_rx cluster, or H_rx's (Level Host,
// protocols/hrx): the model's handlers on the live runtime (model/live),
// one goroutine per node, over links with the runtime's fault injector.
// Zero sizes take the defaults given.
type LiveOptions struct {
	// Level is who runs go-back-N: the NI (I_rx, the zero value) or the
	// host (H_rx: the NI stores whatever arrives in a shared receive
	// buffer and the host handles it; no NACKs).
	Level Level
	// Timer is H_rx's retransmission timer rule (TimerRoundTrip, the
	// default, or TimerLinks; Params.Timer); I_rx has none.
	Timer string
	Nodes int // P, 2..64 (default 2)
	// Packets is how many packets every node sends to every other node;
	// a node sends at most 65534 in all.
	Packets     int
	Window      int // W (default 8)
	RecvBuffers int // the NI's shared receive buffers (default 8)
	// Faults are the links' fault rates (nil: reliable links).
	Faults *live.Faults
	// AckDelay is the acknowledgement timer (default 20µs); Timeout is
	// the retransmission timer (default 1ms), which expires, as in the
	// model, only while no packet is on a link from or to its NI (for
	// H_rx with TimerRoundTrip: nor waits in another host's receive
	// buffers, model.Holder).
	AckDelay, Timeout time.Duration
}

// LiveReport is what a live I_rx (or H_rx) run did.
type LiveReport struct {
	Delivered int // packets handed to the hosts, each checked
	Steps     int // steps of all nodes (handlers, timers, sends, faults)
	Faults    live.FaultCounts
	Elapsed   time.Duration
}

// ErrConformance is wrapped by the error of a live run whose receivers
// saw a packet twice, out of order, or not at all.
var ErrConformance = errors.New("irx: live run broke exactly-once FIFO delivery")

// RunLive runs a live I_rx cluster until every node has sent its packets
// to every other and every packet is delivered and acknowledged, or until
// ctx ends. Every host checks, as packets reach it, that each sender's
// packets arrive exactly once and in order (their stream numbers count
// 1, 2, ...); the run then checks that every stream arrived in full and
// every packet was acknowledged, with nothing left in a buffer or on a
// link. A violation is an error wrapping ErrConformance.
func RunLive(ctx context.Context, opt LiveOptions) (*LiveReport, error) {
	if opt.Nodes == 0 {
		opt.Nodes = 2
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&opt.Window, 8)
	def(&opt.RecvBuffers, 8)
	if opt.AckDelay == 0 {
		opt.AckDelay = 20 * time.Microsecond
	}
	if opt.Timeout == 0 {
		opt.Timeout = time.Millisecond
	}
	switch {
	case opt.Nodes < 2 || opt.Nodes > model.MaxNodes:
		return nil, fmt.Errorf("irx: nodes must be in 2..%d, got %d", model.MaxNodes, opt.Nodes)
	case opt.Packets < 0 || opt.Packets*(opt.Nodes-1) > maxPackets:
		return nil, fmt.Errorf("irx: %d packets to each of %d nodes: a node sends at most %d", opt.Packets, opt.Nodes-1, maxPackets)
	case opt.Window < 1 || opt.Window > 1024 || opt.RecvBuffers < 1:
		return nil, fmt.Errorf("irx: window %d and receive buffers %d: want a window in 1..1024 and at least one buffer", opt.Window, opt.RecvBuffers)
	case opt.AckDelay < 0 || opt.Timeout < 0:
		return nil, fmt.Errorf("irx: negative timer")
	case opt.Level != NI && opt.Level != Host:
		return nil, fmt.Errorf("irx: level %d: want NI or Host", opt.Level)
	case opt.Level == NI && opt.Timer != "" || opt.Timer != "" && opt.Timer != TimerRoundTrip && opt.Timer != TimerLinks:
		return nil, fmt.Errorf("irx: timer %q: H_rx's is %s or %s, and I_rx has none", opt.Timer, TimerRoundTrip, TimerLinks)
	}
	name := opt.Level.Protocol()
	p := DefaultsFor(name)
	p.Window, p.RecvBuffers = opt.Window, opt.RecvBuffers
	if opt.Timer == TimerLinks {
		p.Timer = TimerLinks
	}
	for s := 0; s < opt.Nodes; s++ {
		for d := 0; d < opt.Nodes; d++ {
			if s != d && opt.Packets > 0 {
				p.Flows = append(p.Flows, ucast.Flow{Src: s, Dst: d, Count: opt.Packets})
			}
		}
	}
	if len(p.Flows) == 0 {
		return &LiveReport{}, nil
	}
	cfg := model.Config{Protocol: name, Nodes: opt.Nodes, Params: p}
	m, err := NewAt(cfg, opt.Level)
	if err != nil {
		return nil, err
	}
	sys, err := model.NewSystem(cfg, m)
	if err != nil {
		return nil, err
	}
	// Per receiver, per sender: the stream number expected next, and the
	// first violation (each row is touched by its receiver's goroutine
	// alone).
	P := opt.Nodes
	next := make([]uint16, P*P)
	for i := range next {
		next[i] = 1
	}
	bad := make([]error, P)
	delivered := make([]int, P)
	start := time.Now()
	res, err := live.RunWith(ctx, sys, live.Options{
		Timers: map[string]time.Duration{"ack-timer": opt.AckDelay, "timeout": opt.Timeout},
		Client: func(ctx context.Context, c *live.Client) {
			for ctx.Err() == nil && c.Do("send") {
			}
		},
		Forget: true,
		Faults: opt.Faults,
		Deliver: func(host model.NodeID, pkt model.Packet) {
			h := int(host)
			delivered[h]++
			k := h*P + int(pkt.Origin)
			if pkt.Seq != next[k] && bad[h] == nil {
				bad[h] = fmt.Errorf("%w: host %d got packet %d from %d, expected %d", ErrConformance, h, pkt.Seq, pkt.Origin, next[k])
			}
			next[k] = pkt.Seq + 1
		},
	})
	rep := &LiveReport{Elapsed: time.Since(start)}
	if res != nil {
		rep.Steps, rep.Faults = res.Steps, res.Faults
	}
	for _, d := range delivered {
		rep.Delivered += d
	}
	if err != nil {
		return rep, err
	}
	for _, e := range bad {
		if e != nil {
			return rep, e
		}
	}
	for h := 0; h < P; h++ {
		for s := 0; s < P; s++ {
			if s != h && int(next[h*P+s])-1 != opt.Packets {
				return rep, fmt.Errorf("%w: host %d got %d of %d packets from %d", ErrConformance, h, next[h*P+s]-1, opt.Packets, s)
			}
		}
	}
	if err := machine(res.Final).Remaining(res.Final); err != nil || !res.Final.LinksEmpty() {
		return rep, fmt.Errorf("%w: the run ended with work left: %v (%d packets on links)", ErrConformance, err, res.Final.InFlight())
	}
	return rep, nil
}
