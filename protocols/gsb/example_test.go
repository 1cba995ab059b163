package gsb_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"lfccheck/protocols/gsb"
)

// runGroup runs nodes in-process nodes, every one broadcasting messages
// ordered messages with a payload (reusing one buffer: Broadcast copies
// it), and returns each node's deliveries as "sender.k:payload" strings.
func runGroup(nodes, messages int) ([][]string, error) {
	cfg := gsb.Config(nodes, 2, 1, 255)
	got := make([][]string, nodes)
	// Ordered broadcast has no flow control: should held-back messages
	// ever fill a node's 255 host buffers, the group would stall, and the
	// deadline turns that into an error instead of a hang.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	g, err := gsb.StartLive(ctx, gsb.LiveOptions{Config: cfg,
		OnDeliver: func(n int, d gsb.Delivery) {
			got[n] = append(got[n], fmt.Sprintf("%d.%d:%s", d.From, d.K, d.Payload))
		}})
	if err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	errs := make(chan error, nodes)
	for s := 0; s < nodes; s++ {
		wg.Add(1)
		go func(s int) {
			defer wg.Done()
			var buf []byte
			for k := 1; k <= messages; k++ {
				buf = fmt.Appendf(buf[:0], "update %d of %d", k, s)
				if err := g.Broadcast(s, buf); err != nil {
					errs <- err
					return
				}
			}
		}(s)
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	if _, err := g.Close(); err != nil {
		return nil, err
	}
	return got, nil
}

// Eight in-process nodes broadcast 1,000 ordered messages each through the
// live runtime (binary broadcast trees, C=2, 255 host buffers); every node
// delivers the same 8,000 messages in the same order, each sender's in the
// order sent.
func ExampleStartLive() {
	got, err := runGroup(8, 1000)
	if err != nil {
		fmt.Println(err)
		return
	}
	same := true
	for n := range got {
		if len(got[n]) != len(got[0]) {
			same = false
			continue
		}
		for i := range got[n] {
			if got[n][i] != got[0][i] {
				same = false
			}
		}
	}
	fifo := true
	next := map[string]int{}
	for _, d := range got[0] {
		var from, k int
		fmt.Sscanf(d, "%d.%d:", &from, &k)
		if k != next[fmt.Sprint(from)]+1 {
			fifo = false
		}
		next[fmt.Sprint(from)] = k
	}
	fmt.Println("nodes:", len(got), "deliveries per node:", len(got[0]))
	fmt.Println("same sequence everywhere:", same, "sender order kept:", fifo)
	// Output:
	// nodes: 8 deliveries per node: 8000
	// same sequence everywhere: true sender order kept: true
}

// BenchmarkLiveGroup reports the throughput of the live group of the
// example: ordered messages delivered per second (each message counted
// once, though every node delivers it).
func BenchmarkLiveGroup(b *testing.B) {
	const nodes, messages = 8, 1000
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := runGroup(nodes, messages); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*nodes*messages)/time.Since(start).Seconds(), "msgs/s")
}
