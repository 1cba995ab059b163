package lfc_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"lfccheck/protocols/lfc"
)

// BenchmarkUnicastLatency measures one-way latency (half a round trip of a
// ping-pong between two nodes) by payload size, in the terms of the
// thesis's Fig. 5.1 (null latency 11.6 µs on Myrinet).
func BenchmarkUnicastLatency(b *testing.B) {
	for _, size := range []int{0, 64, 1024, 8192} {
		b.Run(fmt.Sprintf("payload=%d", size), func(b *testing.B) {
			pong := make(chan struct{}, 1)
			var c *lfc.Cluster
			c, err := lfc.Start(lfc.Options{Nodes: 2, Handler: func(node int, p lfc.Packet) {
				if node == 1 {
					c.Node(1).Send(0, p.Payload)
				} else {
					pong <- struct{}{}
				}
			}})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			msg := make([]byte, size)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := c.Node(0).Send(1, msg); err != nil {
					b.Fatal(err)
				}
				<-pong
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/2, "µs/one-way")
		})
	}
}

// BenchmarkUnicastThroughput streams packets from node 0 to node 1 and
// reports the bandwidth by payload size (the thesis's Fig. 5.2).
func BenchmarkUnicastThroughput(b *testing.B) {
	for _, size := range []int{64, 1024, 8192} {
		b.Run(fmt.Sprintf("payload=%d", size), func(b *testing.B) {
			var got atomic.Int64
			c, err := lfc.Start(lfc.Options{Nodes: 2, Handler: func(int, lfc.Packet) { got.Add(1) }})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			msg := make([]byte, size)
			b.SetBytes(int64(size))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := c.Node(0).Send(1, msg); err != nil {
					b.Fatal(err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := c.Drain(ctx); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "packets/s")
		})
	}
}

// BenchmarkMulticastLatency measures the time from a multicast on node 0's
// tree of the broadcast group until the last member handled it, by tree
// family and P (the thesis's Fig. 5.5: 22 µs at 4 nodes, 72 µs at 64 on
// binary trees, growing with log P; chains grow linearly). Without a link
// delay an in-process run on a few cores costs the total work of the P-1
// deliveries, whatever the tree; with a link delay per hop the tree's
// depth shows. The delay is 1 ms because Go's timers on Linux wake about a
// millisecond late at best when the process is otherwise idle, so shorter
// delays all become ~1 ms.
func BenchmarkMulticastLatency(b *testing.B) {
	for _, delay := range []time.Duration{0, time.Millisecond} {
		for _, tree := range []string{"binary", "chain"} {
			for _, p := range []int{4, 8, 16, 32, 64} {
				multicastLatency(b, delay, tree, p)
			}
		}
	}
}

func multicastLatency(b *testing.B, delay time.Duration, tree string, p int) {
	// MCAST refuses chains (their buffer dependency graph has a cycle):
	// RECOV runs them.
	protocol := "mcast"
	if tree == "chain" {
		protocol = "recov"
	}
	b.Run(fmt.Sprintf("delay=%v/tree=%s/protocol=%s/P=%d", delay, tree, protocol, p), func(b *testing.B) {
		var left atomic.Int64
		done := make(chan struct{}, 1)
		c, err := lfc.Start(lfc.Options{Nodes: p, Tree: tree, Protocol: protocol, LinkDelay: delay, Handler: func(int, lfc.Packet) {
			if left.Add(-1) == 0 {
				done <- struct{}{}
			}
		}})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			left.Store(int64(p - 1))
			if err := c.Node(0).Multicast("", nil); err != nil {
				b.Fatal(err)
			}
			<-done
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/multicast")
	})
}

// BenchmarkFetchAndAdd measures the round trip of a fetch-and-add to
// another node's NI (the thesis's §5.1: about 20 µs on Myrinet).
func BenchmarkFetchAndAdd(b *testing.B) {
	c, err := lfc.Start(lfc.Options{Nodes: 2, Server: 1, Handler: func(int, lfc.Packet) {}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Node(0).FetchAndAdd(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/round-trip")
}

// BenchmarkRequestReply measures a request whose handler replies from its
// upcall (thesis §3.1.4), round trip, with the smallest window (one
// credit, one host buffer, one send packet), where replies wait and
// calls drain.
func BenchmarkRequestReply(b *testing.B) {
	done := make(chan struct{}, 1)
	var c *lfc.Cluster
	c, err := lfc.Start(lfc.Options{Nodes: 2, Credits: 1, HostBuffers: 1, SendBuffers: 1, Handler: func(node int, p lfc.Packet) {
		if node == 1 {
			if err := c.Node(1).Send(0, p.Payload); err != nil && err != lfc.ErrClosed {
				panic(err)
			}
			return
		}
		done <- struct{}{}
	}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	msg := make([]byte, 64)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := c.Node(0).Send(1, msg); err != nil {
			b.Fatal(err)
		}
		<-done
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/round-trip")
}

// BenchmarkConformance measures what checking a run against the model
// costs: a 4-node cluster in which every node sends K packets to every
// other node, from Start to Close, without recording (off), recording
// (record: Close replays the run through the model with every property
// and compares packet identities and the end state; K = 64, the model's
// limit per stream for a recording) and with the online monitor
// (monitor: the same checks while the cluster runs, no history kept).
func BenchmarkConformance(b *testing.B) {
	for _, tc := range []struct {
		name string
		rec  lfc.RecordMode
	}{{"off", lfc.RecordOff}, {"record", lfc.RecordOn}, {"monitor", lfc.RecordMonitor}} {
		rec := tc.rec
		b.Run(tc.name, func(b *testing.B) {
			const P, K = 4, 64
			for i := 0; i < b.N; i++ {
				c, err := lfc.Start(lfc.Options{Nodes: P, Record: rec, Handler: func(int, lfc.Packet) {}})
				if err != nil {
					b.Fatal(err)
				}
				errs := make(chan error, P)
				for n := 0; n < P; n++ {
					go func(n int) {
						for k := 0; k < K; k++ {
							for d := 1; d < P; d++ {
								if err := c.Node(n).Send((n+d)%P, nil); err != nil {
									errs <- err
									return
								}
							}
						}
						errs <- nil
					}(n)
				}
				for n := 0; n < P; n++ {
					if err := <-errs; err != nil {
						b.Fatal(err)
					}
				}
				if err := c.Drain(context.Background()); err != nil {
					b.Fatal(err)
				}
				if _, err := c.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*P*(P-1)*K)/b.Elapsed().Seconds(), "packets/s")
		})
	}
}

// BenchmarkStream sends b.N packets in one stream between two nodes (with
// the default benchtime, a million and more: the sequence numbers wrap
// many times), without checking and with the online monitor checking
// every step: the monitor's cost on a long run, whose memory stays flat.
func BenchmarkStream(b *testing.B) {
	for _, tc := range []struct {
		name string
		rec  lfc.RecordMode
	}{{"off", lfc.RecordOff}, {"monitor", lfc.RecordMonitor}} {
		b.Run(tc.name, func(b *testing.B) {
			c, err := lfc.Start(lfc.Options{Nodes: 2, Record: tc.rec, Handler: func(int, lfc.Packet) {}})
			if err != nil {
				b.Fatal(err)
			}
			buf := make([]byte, 8)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := c.Node(0).Send(1, buf); err != nil {
					b.Fatal(err)
				}
			}
			if err := c.Drain(context.Background()); err != nil {
				b.Fatal(err)
			}
			r, err := c.Close()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "packets/s")
			b.ReportMetric(float64(r.Checked)/float64(b.N), "checked-steps/packet")
		})
	}
}

// BenchmarkMonitorFetchAndAdd measures the online monitor's cost per
// operation on a mixed workload with one fetch-and-add in eight (the
// others unicasts), unchecked and checked (RecordMonitor), in ns/op.
// Run it at two lengths to see whether the cost per operation stays flat:
//
//	go test ./protocols/lfc -run '^$' -bench MonitorFetchAndAdd -benchtime 100000x
//	go test ./protocols/lfc -run '^$' -bench MonitorFetchAndAdd -benchtime 1000000x
func BenchmarkMonitorFetchAndAdd(b *testing.B) {
	for _, rec := range []lfc.RecordMode{0, lfc.RecordMonitor} {
		name := "unchecked"
		if rec == lfc.RecordMonitor {
			name = "checked"
		}
		b.Run(name, func(b *testing.B) {
			c, err := lfc.Start(lfc.Options{Nodes: 4, Record: rec, Handler: func(int, lfc.Packet) {}})
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				node := 1 + i%3
				if i%8 == 0 {
					_, err = c.Node(node).FetchAndAdd()
				} else {
					err = c.Node(node).Send((node+1)%4, nil)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			if err := c.Drain(ctx); err != nil {
				b.Fatal(err)
			}
			if _, err := c.Close(); err != nil { // waits for the monitor
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/op")
		})
	}
}
