package irx_test

import (
	"context"
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
