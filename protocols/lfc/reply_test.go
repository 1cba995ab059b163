package lfc_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lfccheck/protocols/lfc"
)

// replyCluster is a cluster whose handlers answer every request with a
// reply to its sender, from inside the upcall (thesis §3.1.4: a handler
// may send). Payloads are 'Q' or 'R' and a request number.
type replyCluster struct {
	c       *lfc.Cluster
	replies []atomic.Int64 // per node: replies received
	errs    chan error
}

func startReplies(t *testing.T, opt lfc.Options) *replyCluster {
	t.Helper()
	r := &replyCluster{replies: make([]atomic.Int64, opt.Nodes), errs: make(chan error, 1)}
	opt.Handler = func(node int, p lfc.Packet) {
		switch p.Payload[0] {
		case 'Q':
			msg := append([]byte{'R'}, p.Payload[1:]...)
			if err := r.c.Node(node).Send(p.From, msg); err != nil && !errors.Is(err, lfc.ErrClosed) {
				select {
				case r.errs <- fmt.Errorf("node %d replying to %d: %v", node, p.From, err):
				default:
				}
			}
		case 'R':
			r.replies[node].Add(1)
		}
	}
	c, err := lfc.Start(opt)
	if err != nil {
		t.Fatal(err)
	}
	r.c = c
	return r
}

// request sends n requests from node from to node to.
func (r *replyCluster) request(from, to, n int) error {
	msg := make([]byte, 9)
	msg[0] = 'Q'
	for k := 0; k < n; k++ {
		binary.LittleEndian.PutUint64(msg[1:], uint64(k))
		if err := r.c.Node(from).Send(to, msg); err != nil {
			return fmt.Errorf("node %d request %d to %d: %v", from, k, to, err)
		}
	}
	return nil
}

// finish waits (a minute at most) until every node got want replies, then
// drains and closes; a hang fails the test with the cluster's report.
func (r *replyCluster) finish(t *testing.T, want []int64) *lfc.Report {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		done := true
		for i := range want {
			done = done && r.replies[i].Load() >= want[i]
		}
		if done {
			break
		}
		select {
		case err := <-r.errs:
			t.Fatal(err)
		default:
		}
		if time.Now().After(deadline) {
			rep, _ := r.c.Close()
			got := make([]int64, len(want))
			for i := range got {
				got[i] = r.replies[i].Load()
			}
			t.Fatalf("replies %v after a minute, want %v: the cluster hangs (%s)", got, want, rep)
		}
		time.Sleep(time.Millisecond)
	}
	checkDrained(t, r.c)
	rep, err := r.c.Close()
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// Two nodes each send 10,000 requests to the other, and every handler
// replies from its upcall: the run completes, with default options and
// with the smallest sizes (one credit, one host buffer, one send packet),
// where waiting handlers would hold every buffer if calls did not drain.
func TestReplyFromUpcall(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 2000
	}
	for _, tc := range []struct {
		name string
		opt  lfc.Options
	}{
		{"defaults", lfc.Options{Nodes: 2}},
		{"C=1 H=1 S=1", lfc.Options{Nodes: 2, Credits: 1, HostBuffers: 1, SendBuffers: 1}},
		{"C=1 H=1 S=1 no nested upcalls", lfc.Options{Nodes: 2, Credits: 1, HostBuffers: 1, SendBuffers: 1, NoNestedUpcalls: true}},
		{"polling", lfc.Options{Nodes: 2, Credits: 1, HostBuffers: 1, SendBuffers: 1, Mode: lfc.Polling}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := startReplies(t, tc.opt)
			stop := make(chan struct{})
			var pollers sync.WaitGroup
			if tc.opt.Mode == lfc.Polling {
				for i := 0; i < 2; i++ {
					pollers.Add(1)
					go func(i int) {
						defer pollers.Done()
						for {
							select {
							case <-stop:
								return
							default:
							}
							if ok, err := r.c.Node(i).Poll(); errors.Is(err, lfc.ErrClosed) {
								return // finish closed the cluster
							} else if err != nil {
								t.Error(err)
								return
							} else if !ok {
								time.Sleep(20 * time.Microsecond)
							}
						}
					}(i)
				}
			}
			var wg sync.WaitGroup
			errs := make(chan error, 2)
			for i := 0; i < 2; i++ {
				wg.Add(1)
				go func(i int) { defer wg.Done(); errs <- r.request(i, 1-i, n) }(i)
			}
			wg.Wait()
			for i := 0; i < 2; i++ {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			rep := r.finish(t, []int64{int64(n), int64(n)})
			close(stop)
			pollers.Wait()
			if rep.Delivered != 4*n {
				t.Fatalf("%s; want %d deliveries", rep, 4*n)
			}
		})
	}
}

// Sixteen nodes in a ring: node i sends requests to i+1, which replies
// from its upcall; every node is requester and replier at once.
func TestReplyRing(t *testing.T) {
	const P = 16
	n := 500
	if testing.Short() {
		n = 100
	}
	r := startReplies(t, lfc.Options{Nodes: P, Credits: 1, HostBuffers: 1, SendBuffers: 1})
	var wg sync.WaitGroup
	errs := make(chan error, P)
	for i := 0; i < P; i++ {
		wg.Add(1)
		go func(i int) { defer wg.Done(); errs <- r.request(i, (i+1)%P, n) }(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	want := make([]int64, P)
	for i := range want {
		want[i] = int64(n)
	}
	r.finish(t, want)
}

// A recorded request/reply run is a model execution of LFC's host library:
// its drains and nested upcalls (whichever the schedule brings) are steps
// the model allows. TestNestedUpcallDrains forces both.
func TestReplyConforms(t *testing.T) {
	for _, nested := range []bool{true, false} {
		t.Run(fmt.Sprint("nested=", nested), func(t *testing.T) {
			r := startReplies(t, lfc.Options{Nodes: 3, Credits: 1, HostBuffers: 1, SendBuffers: 1, NoNestedUpcalls: !nested, Record: lfc.RecordOn})
			var wg sync.WaitGroup
			errs := make(chan error, 3)
			for i := 0; i < 3; i++ {
				wg.Add(1)
				go func(i int) { defer wg.Done(); errs <- r.request(i, (i+1)%3, 40) }(i)
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			r.finish(t, []int64{40, 40, 40})
			rec, err := r.c.Recording()
			if err != nil {
				t.Fatal(err)
			}
			kinds := stepKinds(rec)
			t.Logf("steps by kind: %v", kinds)
			if v, err := rec.Check(); v != nil || err != nil {
				t.Fatalf("the model rejects the run: %v %v", v, err)
			}

		})
	}
}

// Calls that would wait for the handler they are made from return
// ErrInUpcall instead of hanging; a nil node's calls return ErrNoNode.
func TestCallsFromHandler(t *testing.T) {
	for _, mode := range []lfc.Mode{lfc.Upcall, lfc.Polling} {
		t.Run(fmt.Sprint("mode", mode), func(t *testing.T) {
			results := make(chan string, 10)
			var c *lfc.Cluster
			c, err := lfc.Start(lfc.Options{Nodes: 3, Mode: mode, Handler: func(node int, p lfc.Packet) {
				if node != 1 {
					return // the reply of the last call below
				}
				report := func(what string, err error) {
					results <- fmt.Sprintf("%s: %v", what, errors.Is(err, lfc.ErrInUpcall))
				}
				_, err := c.Node(node).Poll()
				report("Poll", err)
				_, err = c.Node(node).PollAll()
				report("PollAll", err)
				report("Drain", c.Drain(context.Background()))
				_, err = c.Close()
				report("Close", err)
				report("Send on another node", c.Node(2).Send(0, nil))
				report("Send on its own node", c.Node(node).Send(0, nil))
			}})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Node(0).Send(1, []byte("x")); err != nil {
				t.Fatal(err)
			}
			if mode == lfc.Polling {
				go func() {
					for {
						if ok, err := c.Node(1).Poll(); ok || err != nil {
							return
						}
						time.Sleep(time.Millisecond)
					}
				}()
			}
			want := []string{"Poll: true", "PollAll: true", "Drain: true", "Close: true", "Send on another node: true", "Send on its own node: false"}
			for _, w := range want {
				select {
				case got := <-results:
					if got != w {
						t.Fatalf("from the handler, %s; want %s", got, w)
					}
				case <-time.After(time.Minute):
					t.Fatalf("no result for %q: a call from the handler hangs", w)
				}
			}
			if _, err := c.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
	c, err := lfc.Start(lfc.Options{Nodes: 2, Handler: func(int, lfc.Packet) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, i := range []int{-1, 2, 99} {
		n := c.Node(i)
		if n != nil {
			t.Fatalf("Node(%d) = %v, want nil", i, n)
		}
		if err := n.Send(0, nil); !errors.Is(err, lfc.ErrNoNode) {
			t.Fatalf("Send on Node(%d): %v", i, err)
		}
		if _, err := n.FetchAndAdd(); !errors.Is(err, lfc.ErrNoNode) {
			t.Fatalf("FetchAndAdd on Node(%d): %v", i, err)
		}
		if err := n.Multicast("", nil); !errors.Is(err, lfc.ErrNoNode) {
			t.Fatalf("Multicast on Node(%d): %v", i, err)
		}
		if _, err := n.Poll(); !errors.Is(err, lfc.ErrNoNode) {
			t.Fatalf("Poll on Node(%d): %v", i, err)
		}
	}
}

// A long-lived stream: sequence numbers wrap after 65,535, so one stream
// of 200,000 packets runs to the end, every packet delivered once and in
// order (checked by the payload's counter), numbered 1..65535 round; and
// the online monitor (RecordMonitor) checks every step of it against the
// model, whose sequence numbers wrap alike.
func TestLongStream(t *testing.T) {
	for _, mode := range []lfc.RecordMode{0, lfc.RecordMonitor} {
		t.Run(fmt.Sprint("record=", mode), func(t *testing.T) { longStream(t, mode) })
	}
}

func longStream(t *testing.T, mode lfc.RecordMode) {
	n := 200000
	if testing.Short() {
		n = 70000
	}
	var got, bad atomic.Int64
	var lastSeq atomic.Int64
	c, err := lfc.Start(lfc.Options{Nodes: 2, Record: mode, Handler: func(_ int, p lfc.Packet) {
		k := int64(binary.LittleEndian.Uint64(p.Payload))
		if k != got.Load() || int64(p.Seq) != k%65535+1 {
			bad.Add(1)
		}
		lastSeq.Store(int64(p.Seq))
		got.Add(1)
	}})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8) // reused for every send: Send copies it
	for k := 0; k < n; k++ {
		binary.LittleEndian.PutUint64(buf, uint64(k))
		if err := c.Node(0).Send(1, buf); err != nil {
			t.Fatalf("send %d: %v", k+1, err)
		}
	}
	checkDrained(t, c)
	r, err := c.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got.Load() != int64(n) || bad.Load() != 0 {
		t.Fatalf("%d of %d delivered, %d out of order or misnumbered", got.Load(), n, bad.Load())
	}
	if want := 0; mode == lfc.RecordMonitor {
		want = r.Steps
		if r.Checked != want || want < 4*n {
			t.Fatalf("the monitor checked %d of %d steps (%d packets)", r.Checked, r.Steps, n)
		}
	} else if r.Checked != 0 {
		t.Fatalf("an unmonitored cluster checked %d steps", r.Checked)
	}
}

// Every blocking call can be cancelled, and Close ends calls that are
// blocked: a receiver that never polls stalls its sender (flow control);
// SendContext returns the context's error, and Send returns ErrClosed
// when the cluster closes.
func TestCancelAndCloseBlocked(t *testing.T) {
	c, err := lfc.Start(lfc.Options{Nodes: 2, Credits: 1, HostBuffers: 1, SendBuffers: 1, Mode: lfc.Polling, Handler: func(int, lfc.Packet) {}})
	if err != nil {
		t.Fatal(err)
	}
	// Fill the window: node 1's host buffer, its receive buffer and node
	// 0's send packet take three sends; the fourth cannot launch.
	for k := 0; k < 3; k++ {
		if err := c.Node(0).Send(1, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	waiting := &waitSignal{Context: ctx, waited: make(chan struct{})}
	blocked := make(chan error, 1)
	go func() { blocked <- c.Node(0).SendContext(waiting, 1, []byte("x")) }()
	<-waiting.waited // posted, and waiting for the NI to take it
	cancel()
	expectErr(t, blocked, context.Canceled, "a cancelled SendContext")
	waiting = &waitSignal{Context: context.Background(), waited: make(chan struct{})}
	go func() { blocked <- c.Node(0).SendContext(waiting, 1, []byte("y")) }()
	<-waiting.waited
	rep, err := c.Close()
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sent != 5 {
		t.Fatalf("the report says %d packets posted; want 5 (3, the cancelled and the closed one)", rep.Sent)
	}
	expectErr(t, blocked, lfc.ErrClosed, "a Send blocked across Close")
	fctx, fcancel := context.WithCancel(context.Background())
	fcancel()
	c2, err := lfc.Start(lfc.Options{Nodes: 2, Handler: func(int, lfc.Packet) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, err := c2.Node(1).FetchAndAddContext(fctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("FetchAndAddContext with a cancelled context: %v", err)
	}
}

// MCAST on trees whose buffer dependency graph has a cycle (a chain) can
// deadlock: Start refuses it and names the cycle; RECOV runs it.
func TestCyclicTreesRefused(t *testing.T) {
	_, err := lfc.Start(lfc.Options{Nodes: 4, Tree: "chain", Handler: func(int, lfc.Packet) {}})
	if err == nil || !strings.Contains(err.Error(), "cycle") || !strings.Contains(err.Error(), "ni ") {
		t.Fatalf("MCAST on chains: %v", err)
	}
	t.Log(err)
	c, err := lfc.Start(lfc.Options{Nodes: 4, Tree: "chain", Protocol: "recov", Handler: func(int, lfc.Packet) {}})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}

// Interrupts switched at run time (lfc_intr_disable, lfc_intr_enable): no
// upcall runs on its own while a node's interrupts are disabled, Poll
// still delivers, and enabling them hands over the packets that waited
// (none is left unannounced, §3.7).
func TestInterruptsAtRunTime(t *testing.T) {
	var disabled atomic.Bool
	var polling atomic.Bool
	var got, bad atomic.Int64
	c, err := lfc.Start(lfc.Options{Nodes: 2, Handler: func(node int, p lfc.Packet) {
		if node == 1 && disabled.Load() && !polling.Load() {
			bad.Add(1)
		}
		got.Add(1)
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	disabled.Store(true)
	if err := c.Node(1).DisableInterrupts(); err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 5; k++ {
		if err := c.Node(0).Send(1, []byte{byte(k)}); err != nil {
			t.Fatal(err)
		}
	}
	polling.Store(true)
	for got.Load() == 0 {
		if _, err := c.Node(1).Poll(); err != nil {
			t.Fatal(err)
		}
	}
	polling.Store(false)
	if got.Load() != 1 {
		t.Fatalf("one Poll handed %d packets", got.Load())
	}
	disabled.Store(false)
	if err := c.Node(1).EnableInterrupts(); err != nil {
		t.Fatal(err)
	}
	checkDrained(t, c)
	if got.Load() != 5 || bad.Load() != 0 {
		t.Fatalf("%d delivered, %d upcalls while interrupts were disabled", got.Load(), bad.Load())
	}
	var none *lfc.Node
	if none.EnableInterrupts() == nil || none.DisableInterrupts() == nil {
		t.Fatal("a nil node's interrupt calls succeed")
	}
}

// Draining and nested upcalls, forced: node 1's send pool is full (its own
// sends to node 0, which does not poll, wait for credits), so its handler's
// reply to node 0's first request waits; node 0's second request then
// finds node 1's only host buffer held by that handler, and can reach a
// handler only if the waiting call drains (a buffer from host memory) and
// makes a nested upcall. The test lets node 0 poll only once that nested
// handler ran; the recording has drain, upcall and return steps, and the
// model accepts it.
func TestNestedUpcallDrains(t *testing.T) {
	nested := make(chan struct{})
	var entered atomic.Int64
	var c *lfc.Cluster
	c, err := lfc.Start(lfc.Options{Nodes: 2, Credits: 1, HostBuffers: 1, SendBuffers: 1, Record: lfc.RecordOn,
		Handler: func(node int, p lfc.Packet) {
			if node != 1 || p.Payload[0] != 'Q' {
				return
			}
			if entered.Add(1) == 2 {
				close(nested) // the second request's handler runs inside the first's Send
			}
			if err := c.Node(1).Send(0, []byte("R")); err != nil && !errors.Is(err, lfc.ErrClosed) {
				t.Error(err)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Node(0).DisableInterrupts(); err != nil {
		t.Fatal(err)
	}
	// Node 1 fills node 0's host buffer (D1), its receive buffer (D2) and
	// its own send packet (D3, waiting for a credit); D4 waits to launch.
	launched := make(chan error, 4)
	go func() {
		for k := 0; k < 4; k++ {
			launched <- c.Node(1).Send(0, []byte("D"))
		}
	}()
	for k := 0; k < 3; k++ {
		if err := <-launched; err != nil {
			t.Fatal(err)
		}
	}
	for k := 0; k < 2; k++ {
		if err := c.Node(0).Send(1, []byte("Q")); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-nested:
	case <-time.After(time.Minute):
		t.Fatal("the second request never reached a handler: the waiting reply did not drain and nest")
	}
	if err := c.Node(0).EnableInterrupts(); err != nil {
		t.Fatal(err)
	}
	if err := <-launched; err != nil {
		t.Fatal(err)
	}
	checkDrained(t, c)
	if _, err := c.Close(); err != nil {
		t.Fatal(err)
	}
	rec, err := c.Recording()
	if err != nil {
		t.Fatal(err)
	}
	kinds := stepKinds(rec)
	if kinds["drain"] == 0 || kinds["upcall"] == 0 || kinds["return"] == 0 {
		t.Fatalf("steps by kind: %v; want drains, upcalls and returns", kinds)
	}
}

// stepKinds counts a recording's steps by kind (the last word of each
// action, or the link of a delivery).
func stepKinds(rec *lfc.Recording) map[string]int {
	kinds := map[string]int{}
	for _, a := range rec.Actions {
		f := strings.Fields(a)
		kinds[f[len(f)-1]]++
	}
	return kinds
}

// waitSignal is a context that closes waited the first time a call waits
// on it (asks for its Done channel): the call has then done everything
// before its wait.
type waitSignal struct {
	context.Context
	waited chan struct{}
	once   sync.Once
}

func (w *waitSignal) Done() <-chan struct{} {
	w.once.Do(func() { close(w.waited) })
	return w.Context.Done()
}

// expectErr waits (a minute at most) for the error of the call named
// what on ch, which must be want.
func expectErr(t *testing.T, ch <-chan error, want error, what string) {
	t.Helper()
	select {
	case err := <-ch:
		if !errors.Is(err, want) {
			t.Fatalf("%s returned %v, want %v", what, err, want)
		}
	case <-time.After(time.Minute):
		t.Fatalf("%s does not return", what)
	}
}
