package irx_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"lfccheck/model"
	"lfccheck/model/live"
	"lfccheck/protocols/irx"
	"lfccheck/protocols/ucast"
)

// BenchmarkReliability compares N_rx (UCAST's credits over reliable links,
// LFC's protocol) with I_rx (go-back-N on the NI) over links losing 0%
// and 1% of the packets, on the same live runtime: every node streams K
// packets to every other node, for P = 2 and 4, N_rx with 8 credits per
// pair and I_rx with windows of 8 and 64, and the benchmark reports
// the packets delivered per second and the gap per packet (the LogP g of
// the thesis's Table 8.4, in the shape of its §8.2.6 comparison). Both
// protocols' handlers run in-process with goroutines and channels: the
// numbers compare the protocols' work per packet on this machine, not
// Myrinet's (docs/results.md).
func BenchmarkReliability(b *testing.B) {
	const packets = 1000 // per ordered pair and run
	for _, p := range []int{2, 4} {
		b.Run(fmt.Sprintf("protocol=nrx/loss=0/P=%d", p), func(b *testing.B) {
			bench(b, p, packets, func(ctx context.Context) (int, error) { return runNrx(ctx, p, packets) })
		})
		for _, w := range []int{8, 64} {
			for _, loss := range []float64{0, 0.01} {
				b.Run(fmt.Sprintf("protocol=irx/W=%d/loss=%g/P=%d", w, loss, p), func(b *testing.B) {
					bench(b, p, packets, func(ctx context.Context) (int, error) {
						opt := irx.LiveOptions{Nodes: p, Packets: packets, Window: w}
						if loss > 0 {
							opt.Faults = &live.Faults{Seed: 1, All: live.LinkFaults{Loss: loss}}
						}
						rep, err := irx.RunLive(ctx, opt)
						if err != nil {
							return 0, err
						}
						return rep.Delivered, nil
					})
				})
			}
		}
	}
}

func bench(b *testing.B, p, packets int, run func(context.Context) (int, error)) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	total := 0
	for b.Loop() {
		n, err := run(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if want := p * (p - 1) * packets; n != want {
			b.Fatalf("delivered %d packets, want %d", n, want)
		}
		total += n
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "packets/s")
	b.ReportMetric(b.Elapsed().Seconds()*1e6/float64(total), "µs/packet")
}

// runNrx runs UCAST on the live runtime with every node sending packets
// to every other, and returns the packets its hosts were handed. The
// workload is longer than a checked one (model.MaxStreamSeq per pair), so
// the machine is built from it directly.
func runNrx(ctx context.Context, p, packets int) (int, error) {
	cfg := ucast.Config(p, 8, 1)
	if _, err := cfg.Params.Resolve(p); err != nil {
		return 0, err
	}
	up := cfg.Params.(*ucast.Params)
	up.Packets = packets
	work := up.UnicastWork(p, make([][]ucast.WorkItem, p), true)
	sys, err := model.NewSystem(cfg, ucast.NewMachine(cfg, up, work))
	if err != nil {
		return 0, err
	}
	delivered := make([]int, p)
	_, err = live.RunWith(ctx, sys, live.Options{Forget: true,
		Deliver: func(h model.NodeID, _ model.Packet) { delivered[h]++ }})
	n := 0
	for _, d := range delivered {
		n += d
	}
	return n, err
}

// The benchmarks below are in the shape of the thesis's Figure 8.1 and
// Table 8.4 (§8.2.3) and of Figure 8.3's throughput (§8.2.4): N_rx
// (UCAST's credits over reliable links, LFC's protocol), H_rx (go-back-N
// on the host, protocols/hrx) and I_rx (go-back-N on the NI) between two
// nodes, each with a window of 8 (N_rx: 8 credits per pair) and 8 receive
// buffers (N_rx: 8 host buffers and 8 send packets). They run the
// protocols' checked handlers in-process: on the live runtime (one
// goroutine per node, channels as links, Go's timers) for latency, gap
// and throughput, and on a Stepper (every handler in one goroutine,
// timed one by one) for the overheads. The model's packets carry no
// payload: the benchmark carries it beside them, as protocols/lfc does,
// in one of 64 send packets per sender into which the sending client
// copies the message before it sends and out of which the receiving
// host copies it when the packet is delivered (the NI's send packets,
// which the retransmitting protocols keep for retransmission, §8.2.2).
// These are measurements of the model's handlers and Go's runtime on
// the machine that runs them, not of Myrinet (docs/results.md).

// The sizes of Figure 8.1's messages: 16 bytes to protocols/lfc's
// largest payload per packet (lfc.DefaultMaxPayload); every message is
// one packet.
var latencySizes = []int{16, 64, 256, 1024, 4096, 8192}

// benchProtocols are the three protocols in the thesis's order.
var benchProtocols = []string{"nrx", "hrx", "irx"}

const (
	benchWindow  = 8  // W, N_rx's credits per pair
	benchBuffers = 8  // receive buffers (N_rx: host buffers and send packets)
	benchSlots   = 64 // payload send packets per sender
)

// pair is a two-node system of one of the three protocols.
type pair struct {
	sys    *model.System
	timers map[string]time.Duration
	um     *ucast.Machine // N_rx: its workload, posted by the clients
	seq    [2]uint16      // N_rx: items posted per node
}

// newPair builds protocol proto on two nodes with the given flows; for
// N_rx with posted set, the workload starts empty and the clients post
// every send (as protocols/lfc does).
func newPair(proto string, flows []ucast.Flow, posted bool) (*pair, error) {
	pr := &pair{}
	switch proto {
	case "nrx":
		cfg := ucast.Config(2, benchWindow, 1)
		up := cfg.Params.(*ucast.Params)
		up.HostBuffers, up.SendBuffers = benchBuffers, benchBuffers
		if _, err := up.Resolve(2); err != nil {
			return nil, err
		}
		work := make([][]ucast.WorkItem, 2)
		if !posted {
			up.Flows = flows
			work = up.UnicastWork(2, work, false)
		}
		pr.um = ucast.NewMachine(cfg, up, work)
		pr.um.Finish(func(_ int, it ucast.WorkItem) []model.NodeID { return []model.NodeID{it.Dest} })
		sys, err := model.NewSystem(cfg, pr.um)
		if err != nil {
			return nil, err
		}
		pr.sys = sys
	case "hrx", "irx":
		lvl := irx.NI
		if proto == "hrx" {
			lvl = irx.Host
		}
		cfg := irx.FlowConfigAt(lvl, 2, benchWindow, benchBuffers, "", flows...)
		m, err := irx.NewAt(cfg, lvl)
		if err != nil {
			return nil, err
		}
		if pr.sys, err = model.NewSystem(cfg, m); err != nil {
			return nil, err
		}
		pr.timers = map[string]time.Duration{"ack-timer": 20 * time.Microsecond, "timeout": time.Millisecond}
	default:
		return nil, fmt.Errorf("no protocol %q", proto)
	}
	return pr, nil
}

// send makes c's node send its next message to the other node.
func (pr *pair) send(c *live.Client) bool {
	if pr.um == nil {
		return c.Do("send")
	}
	id := c.Node()
	pr.seq[id]++
	it := ucast.WorkItem{Tag: ucast.TagUnicast, Dest: 1 - id, Seq: pr.seq[id]}
	return c.Update(func(model.Node) { pr.um.AppendWork(int(id), it) })
}

// payloads are the messages' bytes beside the model's packets: each
// sender's send packets, the tokens of the free ones, each host's
// receive buffer, and what each host received so far.
type payloads struct {
	slot [2][benchSlots][]byte
	free [2]chan struct{}
	recv [2][]byte
	got  [2]chan struct{} // a delivery, for a waiting client (ping-pong)
	next [2]uint16        // per host: the stream number expected next
	n    [2]int           // per host: messages received
	bad  [2]error
	last time.Time // host 1's latest delivery (streams)
}

func newPayloads(size int) *payloads {
	pl := &payloads{}
	for h := range 2 {
		for i := range pl.slot[h] {
			pl.slot[h][i] = make([]byte, size)
		}
		pl.free[h] = make(chan struct{}, benchSlots)
		for range benchSlots {
			pl.free[h] <- struct{}{}
		}
		pl.recv[h] = make([]byte, size)
		pl.got[h] = make(chan struct{}, benchSlots)
		pl.next[h] = 1
	}
	return pl
}

// write copies msg into c's node's next send packet (k, from 0), waiting
// for a free one.
func (pl *payloads) write(ctx context.Context, id model.NodeID, k int, msg []byte) bool {
	select {
	case <-pl.free[id]:
	case <-ctx.Done():
		return false
	}
	copy(pl.slot[id][k%benchSlots], msg)
	return true
}

// deliver is the receiving host's side (live.Options.Deliver): it checks
// exactly-once FIFO and copies the payload out of its send packet.
func (pl *payloads) deliver(host model.NodeID, pkt model.Packet, signal bool) {
	from := 1 - host
	if pkt.Seq != pl.next[host] && pl.bad[host] == nil {
		pl.bad[host] = fmt.Errorf("host %d got message %d, expected %d", host, pkt.Seq, pl.next[host])
	}
	pl.next[host] = pkt.Seq + 1
	copy(pl.recv[host], pl.slot[from][int(pkt.Seq-1)%benchSlots])
	pl.free[from] <- struct{}{}
	pl.n[host]++
	if host == 1 {
		pl.last = time.Now()
	}
	if signal {
		pl.got[host] <- struct{}{}
	}
}

func (pl *payloads) err() error { return errors.Join(pl.bad[0], pl.bad[1]) }

// pingPong runs k round trips of size-byte messages between the two
// nodes on the live runtime and returns the one-way latency: half the
// mean round trip, timed by node 0's client.
func pingPong(ctx context.Context, proto string, size, k int) (time.Duration, error) {
	pr, err := newPair(proto, []ucast.Flow{{Src: 0, Dst: 1, Count: k}, {Src: 1, Dst: 0, Count: k}}, true)
	if err != nil {
		return 0, err
	}
	pl := newPayloads(size)
	msg := make([]byte, size)
	var elapsed time.Duration
	wait := func(ctx context.Context, h model.NodeID) bool {
		select {
		case <-pl.got[h]:
			return true
		case <-ctx.Done():
			return false
		}
	}
	_, err = live.RunWith(ctx, pr.sys, live.Options{Timers: pr.timers, Forget: true,
		Deliver: func(h model.NodeID, pkt model.Packet) { pl.deliver(h, pkt, true) },
		Client: func(ctx context.Context, c *live.Client) {
			id := c.Node()
			start := time.Now()
			for i := 0; i < k; i++ {
				if id == 1 && !wait(ctx, 1) || !pl.write(ctx, id, i, msg) || !pr.send(c) || id == 0 && !wait(ctx, 0) {
					return
				}
			}
			if id == 0 {
				elapsed = time.Since(start)
			}
		}})
	if err == nil {
		err = pl.err()
	}
	if err == nil && (pl.n[0] != k || pl.n[1] != k) {
		err = fmt.Errorf("%s: %d and %d messages delivered, want %d", proto, pl.n[0], pl.n[1], k)
	}
	return elapsed / time.Duration(2*k), err
}

// stream sends k size-byte messages back to back from node 0 to node 1
// on the live runtime and returns the time per message, from the first
// send to the last delivery.
func stream(ctx context.Context, proto string, size, k int) (time.Duration, error) {
	pr, err := newPair(proto, []ucast.Flow{{Src: 0, Dst: 1, Count: k}}, true)
	if err != nil {
		return 0, err
	}
	pl := newPayloads(size)
	msg := make([]byte, size)
	start := time.Now()
	_, err = live.RunWith(ctx, pr.sys, live.Options{Timers: pr.timers, Forget: true,
		Deliver: func(h model.NodeID, pkt model.Packet) { pl.deliver(h, pkt, false) },
		Client: func(ctx context.Context, c *live.Client) {
			for i := 0; c.Node() == 0 && i < k; i++ {
				if !pl.write(ctx, 0, i, msg) || !pr.send(c) {
					return
				}
			}
		}})
	if err == nil {
		err = pl.err()
	}
	if err == nil && pl.n[1] != k {
		err = fmt.Errorf("%s: %d messages delivered, want %d", proto, pl.n[1], k)
	}
	return pl.last.Sub(start) / time.Duration(k), err
}

// overheads streams k size-byte messages from node 0 to node 1 on a
// Stepper, timing every handler, and returns per message the time of
// the host's steps on the sender (o_s) and on the receiver (o_r), the
// receiver's copy of the payload included, and of the NI's steps on
// each (the model's ActionKind.Owner says whose a step is; deliveries
// are the NI's). Each step is the first enabled one in this order: a
// delivery or a step the runtime performs at once, the host's next send
// while fewer than W messages are undelivered, the acknowledgement
// timer; the retransmission timer is never needed.
func overheads(proto string, size, k int) (os, or, niS, niR time.Duration, err error) {
	pr, err := newPair(proto, []ucast.Flow{{Src: 0, Dst: 1, Count: k}}, false)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	sys := pr.sys
	s := live.NewStepper(sys)
	pl := newPayloads(size)
	msg := make([]byte, size)
	sent := 0
	rank := func(a model.Action) int {
		kd := sys.Kinds[a.Kind]
		switch {
		case kd == model.Deliver || kd.Live == model.LiveEager:
			return 0
		case kd.Live == model.LiveClient && sent-pl.n[1] < benchWindow:
			return 1
		case kd.Name == "ack-timer":
			return 2
		}
		return 3
	}
	var host, ni [2]time.Duration
	var timed [2][2]int // per node: the NI's and the host's timed intervals
	for {
		var best model.Action
		r := 4
		for _, a := range s.Enabled() {
			if x := rank(a); x < r {
				best, r = a, x
			}
		}
		if r > 2 {
			break
		}
		kd := sys.Kinds[best.Kind]
		sends := kd.Owner == model.OwnerHost && (kd.Name == "send" || kd.Name == "launch")
		t0 := time.Now()
		if sends {
			select {
			case <-pl.free[0]:
			default:
				return 0, 0, 0, 0, fmt.Errorf("%s: %d send packets in use", proto, benchSlots)
			}
			copy(pl.slot[0][sent%benchSlots], msg)
			sent++
		}
		rd, err := s.Step(best)
		if err != nil {
			return 0, 0, 0, 0, err
		}
		t1 := time.Now()
		for _, d := range rd.Deliveries {
			pl.deliver(d.Host, d.Pkt, false)
		}
		if kd.Owner == model.OwnerHost {
			host[best.Node] += t1.Sub(t0)
			timed[best.Node][1]++
		} else {
			ni[best.Node] += t1.Sub(t0)
			timed[best.Node][0]++
		}
		if len(rd.Deliveries) > 0 {
			host[1] += time.Since(t1)
			timed[1][1]++
		}
	}
	if err := pl.err(); err != nil || pl.n[1] != k {
		return 0, 0, 0, 0, fmt.Errorf("%s: %d of %d messages delivered (%v)", proto, pl.n[1], k, err)
	}
	// Less what reading the clock costs, per reading pair (calibrated
	// here: about as much as the smallest handlers).
	const pairs = 10000
	t := time.Now()
	for range pairs {
		_ = time.Since(time.Now())
	}
	clock := time.Since(t) / pairs
	sub := func(d time.Duration, n int) time.Duration { return max(d-time.Duration(n)*clock, 0) / time.Duration(k) }
	return sub(host[0], timed[0][1]), sub(host[1], timed[1][1]), sub(ni[0], timed[0][0]), sub(ni[1], timed[1][0]), nil
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// BenchmarkLatency is Figure 8.1: one-way latency (half a ping-pong's
// round trip between two nodes) by message size, every message in one
// packet, for N_rx, H_rx and I_rx on the live runtime.
func BenchmarkLatency(b *testing.B) {
	k := 500
	if testing.Short() {
		k = 100
	}
	for _, size := range latencySizes {
		for _, proto := range benchProtocols {
			b.Run(fmt.Sprintf("size=%d/protocol=%s", size, proto), func(b *testing.B) {
				var sum time.Duration
				n := 0
				for b.Loop() {
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					d, err := pingPong(ctx, proto, size, k)
					cancel()
					if err != nil {
						b.Fatal(err)
					}
					sum += d
					n++
				}
				b.ReportMetric(us(sum)/float64(n), "µs/one-way")
			})
		}
	}
}

// BenchmarkLogP is Table 8.4 for a 16-byte message, as far as it can be
// measured in-process: o_s and o_r are the CPU time of the host's
// handlers per message on the sender and the receiver (a Stepper
// streaming 2,000 messages; the NI's handlers are reported beside them);
// g is the time per message of 2,000 messages sent back to back on the
// live runtime (all nodes' work, two goroutines, Go's timers); latency is
// BenchmarkLatency's one-way latency, and L = latency - o_s - o_r.
func BenchmarkLogP(b *testing.B) {
	const size = 16
	k, rounds := 2000, 500
	if testing.Short() {
		k, rounds = 500, 100
	}
	for _, proto := range benchProtocols {
		b.Run("protocol="+proto, func(b *testing.B) {
			var os, or, niS, niR, g, lat time.Duration
			n := 0
			for b.Loop() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				s, r, ns, nr, err := overheads(proto, size, k)
				var gap, l time.Duration
				if err == nil {
					gap, err = stream(ctx, proto, size, k)
				}
				if err == nil {
					l, err = pingPong(ctx, proto, size, rounds)
				}
				cancel()
				if err != nil {
					b.Fatal(err)
				}
				os, or, niS, niR, g, lat = os+s, or+r, niS+ns, niR+nr, g+gap, lat+l
				n++
			}
			N := float64(n)
			b.ReportMetric(us(os)/N, "o_s-µs")
			b.ReportMetric(us(or)/N, "o_r-µs")
			b.ReportMetric(us(g)/N, "g-µs")
			b.ReportMetric(us(lat-os-or)/N, "L-µs")
			b.ReportMetric(us(lat)/N, "latency-µs")
			b.ReportMetric(us(niS)/N, "ni-send-µs")
			b.ReportMetric(us(niR)/N, "ni-recv-µs")
		})
	}
}

// BenchmarkThroughput is Figure 8.3 without the receiver's copy into a
// destination buffer of its own (the host copies the payload out of the
// send packet once, as LFC's clients do): one-way throughput of 1 KB and
// 2 KB packets streamed from node 0 to node 1 on the live runtime, W=8.
func BenchmarkThroughput(b *testing.B) {
	k := 4000
	if testing.Short() {
		k = 1000
	}
	for _, size := range []int{1024, 2048} {
		for _, proto := range benchProtocols {
			b.Run(fmt.Sprintf("packet=%d/protocol=%s", size, proto), func(b *testing.B) {
				var sum time.Duration
				n := 0
				for b.Loop() {
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					d, err := stream(ctx, proto, size, k)
					cancel()
					if err != nil {
						b.Fatal(err)
					}
					sum += d
					n++
				}
				per := sum / time.Duration(n)
				b.ReportMetric(float64(size)/per.Seconds()/1e6, "MB/s")
				b.ReportMetric(us(per), "µs/packet")
			})
		}
	}
}
