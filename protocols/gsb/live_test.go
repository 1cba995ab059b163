package gsb_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"lfccheck/model"
	"lfccheck/protocols/gsb"
)

// Broadcast copies the payload: every sender reuses one buffer for all its
// messages, writing the next message into it as soon as Broadcast
// returns (while other nodes may not have delivered the previous one yet),
// and every node still delivers every message with its own bytes.
func TestBroadcastCopiesPayload(t *testing.T) {
	const nodes, messages = 4, 200
	var mu sync.Mutex
	bad, total := 0, 0
	var first []string
	g, err := gsb.StartLive(context.Background(), gsb.LiveOptions{Config: gsb.Config(nodes, 2, 1, 64), Messages: messages,
		OnDeliver: func(n model.NodeID, d gsb.Delivery) {
			mu.Lock()
			defer mu.Unlock()
			total++
			if want := fmt.Sprintf("message %d of node %d", d.K, d.From); string(d.Payload) != want {
				if bad < 5 {
					first = append(first, fmt.Sprintf("node %d: delivery %d (%d.%d) has payload %q, want %q", n, d.Seq, d.From, d.K, d.Payload, want))
				}
				bad++
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, nodes)
	for s := 0; s < nodes; s++ {
		wg.Add(1)
		go func(s model.NodeID) {
			defer wg.Done()
			buf := make([]byte, 0, 32)
			for k := 1; k <= messages; k++ {
				buf = fmt.Appendf(buf[:0], "message %d of node %d", k, s)
				if err := g.Broadcast(s, buf); err != nil {
					errs <- err
					return
				}
			}
		}(model.NodeID(s))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if _, err := g.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range first {
		t.Error(f)
	}
	if bad > 0 || total != nodes*nodes*messages {
		t.Fatalf("%d of %d deliveries with another message's payload (want %d deliveries)", bad, total, nodes*nodes*messages)
	}
}
