package lfc_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"lfccheck/protocols/lfc"
)

// collector records what every node's handler got.
type collector struct {
	mu  sync.Mutex
	got map[int][]lfc.Packet // per receiving node
}

func (c *collector) handler(node int, p lfc.Packet) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.got == nil {
		c.got = map[int][]lfc.Packet{}
	}
	p.Payload = append([]byte(nil), p.Payload...)
	c.got[node] = append(c.got[node], p)
}

// checkRecording replays a closed recording cluster's run through the
// model: every step must be one the model allows, and no property may be
// violated.
func checkRecording(t *testing.T, c *lfc.Cluster) {
	t.Helper()
	rec, err := c.Recording()
	if err != nil {
		t.Fatal(err)
	}
	o, err := rec.Check()
	if err != nil {
		t.Fatalf("the model does not accept the recorded run: %v", err)
	}
	if o.Violation != nil {
		t.Fatalf("the recorded run violates %s: %s", o.Violation.Property, o.Violation.Message)
	}
}

// Mixed unicast and multicast traffic between 8 nodes, every node sending
// concurrently: every packet arrives once, in send order per sender and
// stream, with its payload, and the recording replays through the model.
func TestMixedTraffic(t *testing.T) {
	for _, mode := range []lfc.Mode{lfc.Upcall, lfc.Polling} {
		t.Run(fmt.Sprint("mode", mode), func(t *testing.T) {
			const P, K = 8, 12
			var col collector
			c, err := lfc.Start(lfc.Options{Nodes: P, Credits: 2, HostBuffers: 2, SendBuffers: 2, Mode: mode, Handler: col.handler, Record: true})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var wg sync.WaitGroup
			for i := 0; i < P; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					for k := 1; k <= K; k++ {
						msg := []byte(fmt.Sprintf("%d:%d", i, k))
						var err error
						if k%3 == 0 {
							err = c.Node(i).Multicast("", msg)
						} else {
							err = c.Node(i).Send((i+k)%P, msg)
							if (i+k)%P == i {
								err = c.Node(i).Send((i+1)%P, msg)
							}
						}
						if err != nil {
							t.Error(err)
							return
						}
					}
				}(i)
			}
			if mode == lfc.Polling {
				stop := make(chan struct{})
				for i := 0; i < P; i++ {
					go func(i int) {
						for {
							select {
							case <-stop:
								return
							default:
							}
							if c.Node(i).Poll() == 0 {
								time.Sleep(100 * time.Microsecond)
							}
						}
					}(i)
				}
				defer close(stop)
			}
			wg.Wait()
			if err := c.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			rep, err := c.Close()
			if err != nil {
				t.Fatal(err)
			}
			if rep.Sent != P*K || len(rep.InFlight) != 0 {
				t.Fatalf("report: %s", rep)
			}
			// Per receiver: from each sender, unicasts and multicasts each
			// in send order, payloads intact.
			total := 0
			for node, ps := range col.got {
				last := map[[2]int]int{}
				for _, p := range ps {
					var from, k int
					if _, err := fmt.Sscanf(string(p.Payload), "%d:%d", &from, &k); err != nil || from != p.From {
						t.Fatalf("node %d: payload %q from %d", node, p.Payload, p.From)
					}
					st := [2]int{from, 0}
					if p.Group != "" {
						st[1] = 1
					}
					if k <= last[st] {
						t.Fatalf("node %d: %q after #%d of the same stream", node, p.Payload, last[st])
					}
					last[st] = k
				}
				total += len(ps)
			}
			if want := P * (K/3*(P-1) + K - K/3); total != want || rep.Delivered != want {
				t.Fatalf("%d deliveries (report %d), want %d", total, rep.Delivered, want)
			}
			checkRecording(t, c)
		})
	}
}
