package lfc_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"lfccheck/protocols/lfc"
	"lfccheck/protocols/mcast"
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

// Mixed unicast and multicast traffic between 8 nodes, every node sending
// concurrently, in both delivery modes: every packet arrives once, in send
// order per sender and stream, with its payload, and the recording
// replays through the model.
func TestMixedTraffic(t *testing.T) {
	for _, mode := range []lfc.Mode{lfc.Upcall, lfc.Polling} {
		t.Run(fmt.Sprint("mode", mode), func(t *testing.T) {
			var col collector
			c, err := lfc.Start(lfc.Options{Nodes: 8, Credits: 2, HostBuffers: 2, SendBuffers: 2, Mode: mode, Handler: col.handler, Record: lfc.RecordOn})
			if err != nil {
				t.Fatal(err)
			}
			run(t, c, &col, 12, 3, mode)
		})
	}
}

// A recording is evidence only if the model can reject one: a recorded
// run with one delivery left out, or two steps of a node swapped, is not a
// model execution.
func TestTamperedRecordingIsRejected(t *testing.T) {
	var col collector
	c, err := lfc.Start(lfc.Options{Nodes: 4, Credits: 1, HostBuffers: 1, Handler: col.handler, Record: lfc.RecordOn})
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 3; k++ {
		if err := c.Node(0).Multicast("", []byte("x")); err != nil {
			t.Fatal(err)
		}
		if err := c.Node(1).Send(3, []byte("y")); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Close(); err != nil {
		t.Fatal(err)
	}
	rec, _ := c.Recording()
	first := -1
	for i, a := range rec.Actions {
		if strings.HasPrefix(a, "deliver ") {
			first = i
			break
		}
	}
	if first < 0 {
		t.Fatal("no delivery recorded")
	}
	dropped := *rec
	dropped.Actions = append(append([]string(nil), rec.Actions[:first]...), rec.Actions[first+1:]...)
	if v, err := dropped.Check(); err == nil && v == nil {
		t.Fatalf("a recording without %q is accepted", rec.Actions[first])
	}
	// Launching before the send packet exists: the first launch moved to
	// the end of the run.
	moved := *rec
	moved.Actions = append(append([]string(nil), rec.Actions[1:]...), rec.Actions[0])
	if _, err := moved.Check(); err == nil {
		t.Fatalf("a recording with %q moved to the end is accepted", rec.Actions[0])
	}
}

// A program that stops polling stalls its senders (flow control) instead
// of losing data: with its host buffers, its NI's receive buffers for the
// sender and the sender's send packets full, Send blocks; once it polls
// again everything arrives, in order. Closing a stalled cluster returns at
// once and reports what was in flight.
func TestFlowControlAndClose(t *testing.T) {
	var col collector
	c, err := lfc.Start(lfc.Options{Nodes: 2, Credits: 2, HostBuffers: 2, SendBuffers: 2, Mode: lfc.Polling, Handler: col.handler, Record: lfc.RecordOn})
	if err != nil {
		t.Fatal(err)
	}
	sent := make(chan int, 100)
	go func() {
		for k := 1; k <= 20; k++ {
			if err := c.Node(0).Send(1, []byte(fmt.Sprint(k))); err != nil {
				close(sent)
				return
			}
			sent <- k
		}
		close(sent)
	}()
	// Host buffers (2) + receive buffers (2 credits) + send packets (2):
	// at most 6 sends return before node 1 polls.
	returned := 0
	for timeout := time.After(200 * time.Millisecond); ; {
		select {
		case <-sent:
			returned++
			continue
		case <-timeout:
		}
		break
	}
	if returned > 6 || returned < 1 {
		t.Fatalf("%d sends returned while the receiver did not poll, want 1..6", returned)
	}
	got := 0
	for got < 20 {
		k, err := c.Node(1).PollAll()
		if err != nil {
			t.Fatal(err)
		}
		got += k
		select {
		case _, ok := <-sent:
			if !ok && got < 20 && returned < 20 {
				t.Fatal("sender stopped early")
			}
		default:
			time.Sleep(time.Millisecond)
		}
	}
	for i, p := range col.got[1] {
		if string(p.Payload) != fmt.Sprint(i+1) || p.Seq != i+1 {
			t.Fatalf("delivery %d: %+v", i, p)
		}
	}
	checkDrained(t, c)

	// Stall again and close mid-run.
	go func() {
		for k := 0; k < 10; k++ {
			if c.Node(0).Send(1, []byte("late")) != nil {
				return
			}
		}
	}()
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	rep, err := c.Close()
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v", d)
	}
	if len(rep.InFlight) == 0 || rep.Delivered != 20 {
		t.Fatalf("report after closing a stalled cluster: %s", rep)
	}
	t.Logf("closed: %s", rep)
	if err := c.Node(0).Send(1, nil); err != lfc.ErrClosed {
		t.Fatalf("Send after Close: %v", err)
	}
}

// checkDrained drains c within a minute.
func checkDrained(t *testing.T, c *lfc.Cluster) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Drain(ctx); err != nil {
		t.Fatal(err)
	}
}

// run drives every node of c sending k packets concurrently (every m-th a
// multicast on its broadcast tree, the others unicasts to the node
// dest(i, k) names), polling in Polling mode, drains, closes, and checks
// that every packet arrived once, in order per sender and stream, with
// its payload. It returns the number of deliveries.
func run(t *testing.T, c *lfc.Cluster, col *collector, k, m int, mode lfc.Mode) int {
	t.Helper()
	P := c.Nodes()
	dest := func(i, j int) int { return (i + 1 + (j*7)%(P-1)) % P }
	var wg sync.WaitGroup
	for i := 0; i < P; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 1; j <= k; j++ {
				msg := []byte(fmt.Sprintf("%d:%d", i, j))
				var err error
				if m > 0 && j%m == 0 {
					err = c.Node(i).Multicast("", msg)
				} else {
					err = c.Node(i).Send(dest(i, j), msg)
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		}(i)
	}
	stop := make(chan struct{})
	if mode == lfc.Polling {
		for i := 0; i < P; i++ {
			go func(i int) {
				for {
					select {
					case <-stop:
						return
					default:
					}
					if k, err := c.Node(i).PollAll(); errors.Is(err, lfc.ErrClosed) {
						return // Close came before stop
					} else if err != nil {
						t.Error(err)
						return
					} else if k == 0 {
						time.Sleep(50 * time.Microsecond)
					}
				}
			}(i)
		}
	}
	wg.Wait()
	checkDrained(t, c)
	close(stop)
	rep, err := c.Close()
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for j := 1; j <= k; j++ {
		if m > 0 && j%m == 0 {
			want += P * (P - 1)
		} else {
			want += P
		}
	}
	if rep.Sent != P*k || rep.Delivered != want || len(rep.InFlight) != 0 {
		t.Fatalf("report %s; want %d sent, %d deliveries", rep, P*k, want)
	}
	total := 0
	col.mu.Lock()
	defer col.mu.Unlock()
	for node, ps := range col.got {
		last := map[[2]int]int{}
		for _, p := range ps {
			var from, j int
			if _, err := fmt.Sscanf(string(p.Payload), "%d:%d", &from, &j); err != nil || from != p.From {
				t.Fatalf("node %d: payload %q from %d", node, p.Payload, p.From)
			}
			multi := m > 0 && j%m == 0
			if multi != (p.Group != "") || !multi && dest(from, j) != node {
				t.Fatalf("node %d: %q (group %q) is not for it", node, p.Payload, p.Group)
			}
			st := [2]int{from, 0}
			if multi {
				st[1] = 1
			}
			if j <= last[st] {
				t.Fatalf("node %d: %q after #%d of the same stream", node, p.Payload, last[st])
			}
			last[st] = j
		}
		total += len(ps)
	}
	if total != want {
		t.Fatalf("%d deliveries, want %d", total, want)
	}
	return total
}

// 64 nodes with mixed unicast and multicast traffic; the recording
// replays through the model with every property holding (Close checks it).
func TestSixtyFourNodesConform(t *testing.T) {
	k := 8
	if testing.Short() {
		k = 4
	}
	var col collector
	c, err := lfc.Start(lfc.Options{Nodes: 64, Credits: 2, HostBuffers: 4, Handler: col.handler, Record: lfc.RecordOn})
	if err != nil {
		t.Fatal(err)
	}
	n := run(t, c, &col, k, 4, lfc.Upcall)
	rec, _ := c.Recording()
	t.Logf("64 nodes: %d deliveries, %d recorded steps", n, len(rec.Actions))
}

// Load without recording: hundreds of thousands of packets between 64
// nodes (fewer under -short), in both delivery modes, arrive without loss
// or reordering.
func TestLoad(t *testing.T) {
	k := 2000
	if testing.Short() {
		k = 200
	}
	for _, c := range []struct {
		name string
		mode lfc.Mode
		tree string
		m    int
	}{{"upcall-unicast", lfc.Upcall, "binary", 0}, {"polling-mixed", lfc.Polling, "binomial", 50}} {
		t.Run(c.name, func(t *testing.T) {
			var col collector
			cl, err := lfc.Start(lfc.Options{Nodes: 64, Tree: c.tree, Mode: c.mode, Handler: col.handler, Record: lfc.RecordOff})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			n := run(t, cl, &col, k, c.m, c.mode)
			t.Logf("%s: %d packets sent, %d deliveries in %v", c.name, 64*k, n, time.Since(start))
		})
	}
}

// With a link delay, packets still arrive in order, once each, and the run
// is still a model execution.
func TestLinkDelay(t *testing.T) {
	var col collector
	c, err := lfc.Start(lfc.Options{Nodes: 5, Credits: 1, HostBuffers: 1, LinkDelay: 200 * time.Microsecond, Handler: col.handler, Record: lfc.RecordOn})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	run(t, c, &col, 10, 3, lfc.Upcall)
	if d := time.Since(start); d < 200*time.Microsecond {
		t.Fatalf("a run with a 200µs link delay took %v", d)
	}
	if _, err := lfc.Start(lfc.Options{Nodes: 2, LinkDelay: -1, Handler: col.handler}); err == nil {
		t.Fatal("a negative link delay is accepted")
	}
}

// RECOV as the cluster's protocol: chains with every node multicasting
// (which can deadlock under MCAST) complete, and the run replays through
// RECOV's model with every property. (Whether a recovery happened depends
// on the schedule; the test does not require one.)
func TestRecovChains(t *testing.T) {
	var col collector
	c, err := lfc.Start(lfc.Options{Nodes: 6, Protocol: "recov", Tree: "chain", Credits: 1, HostBuffers: 1, SendBuffers: 2, Handler: col.handler, Record: lfc.RecordOn})
	if err != nil {
		t.Fatal(err)
	}
	run(t, c, &col, 12, 2, lfc.Upcall)
	rec, _ := c.Recording()
	if rec.Config.Protocol != "recov" {
		t.Fatalf("recorded as %s", rec.Config.Protocol)
	}
}

// Kept packets hold host buffers until freed: with 2 host buffers and a
// program that keeps one packet, the NI copies into the other; a second
// Keep fails while the first is kept; after Free, and in the recording,
// the model agrees at every step.
func TestKeepAndFree(t *testing.T) {
	var mu sync.Mutex
	var kept []*lfc.Kept
	var keepErrs []error
	c, err := lfc.Start(lfc.Options{Nodes: 3, Credits: 1, HostBuffers: 2, Keep: 1, Record: lfc.RecordOn,
		Handler: func(node int, p lfc.Packet) {
			if node != 1 {
				return
			}
			k, err := p.Keep()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				keepErrs = append(keepErrs, err)
				return
			}
			kept = append(kept, k)
		}})
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 4; k++ {
		if err := c.Node(0).Send(1, []byte{byte(k)}); err != nil {
			t.Fatal(err)
		}
		if err := c.Node(2).Multicast("", nil); err != nil {
			t.Fatal(err)
		}
	}
	checkDrained(t, c)
	mu.Lock()
	if len(kept) != 1 || len(keepErrs) != 7 {
		t.Fatalf("%d kept, %d refused (%v); want 1 and 7", len(kept), len(keepErrs), keepErrs)
	}
	k := kept[0]
	mu.Unlock()
	if err := k.Free(); err != nil {
		t.Fatal(err)
	}
	if err := k.Free(); err == nil {
		t.Fatal("a packet freed twice")
	}
	if _, err := (lfc.Packet{}).Keep(); err == nil {
		t.Fatal("Keep of a packet the cluster did not deliver")
	}
	rep, err := c.Close()
	if err != nil || rep.Kept != 0 {
		t.Fatalf("%v %s, %d kept", err, rep, rep.Kept)
	}
	rec, _ := c.Recording()
	keeps, frees := 0, 0
	for _, a := range rec.Actions {
		switch a {
		case "host 1 keep":
			keeps++
		case "host 1 free":
			frees++
		}
	}
	if keeps != 1 || frees != 1 {
		t.Fatalf("recorded %d keeps, %d frees", keeps, frees)
	}
	if _, err := lfc.Start(lfc.Options{Nodes: 2, HostBuffers: 2, Keep: 2, Handler: func(int, lfc.Packet) {}}); err == nil {
		t.Fatal("keep = host buffers is accepted")
	}
}

// Fetch-and-add from every node, the server's own included, concurrently
// with traffic, under MCAST and RECOV: the values are 0..N-1, each node's
// increase, and the recording replays through the model (fa-values among
// its properties).
func TestFetchAndAdd(t *testing.T) {
	for _, proto := range []string{"mcast", "recov"} {
		t.Run(proto, func(t *testing.T) { testFetchAndAdd(t, proto) })
	}
}

func testFetchAndAdd(t *testing.T, proto string) {
	const P, K = 5, 6
	var col collector
	c, err := lfc.Start(lfc.Options{Nodes: P, Credits: 1, HostBuffers: 1, Server: 2, Protocol: proto, Handler: col.handler, Record: lfc.RecordOn})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	got := map[uint32]int{}
	var wg sync.WaitGroup
	for i := 0; i < P; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			last := -1
			for k := 0; k < K; k++ {
				v, err := c.Node(i).FetchAndAdd()
				if err != nil {
					t.Error(err)
					return
				}
				if int(v) <= last {
					t.Errorf("node %d got %d after %d", i, v, last)
				}
				last = int(v)
				mu.Lock()
				if h, dup := got[v]; dup {
					t.Errorf("value %d went to nodes %d and %d", v, h, i)
				}
				got[v] = i
				mu.Unlock()
				if err := c.Node(i).Multicast("", nil); err != nil {
					t.Error(err)
					return
				}
			}
		}(i)
	}
	wg.Wait()
	checkDrained(t, c)
	if _, err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for v := uint32(0); v < P*K; v++ {
		if _, ok := got[v]; !ok {
			t.Fatalf("value %d was never handed out: %v", v, got)
		}
	}
	rec, _ := c.Recording()
	if p := rec.Config.Params.(*mcast.Params); p.Server != 2 {
		t.Fatalf("recorded server %d", p.Server)
	}
}

// runNoIncrement starts a cluster of three nodes running the broken
// variant fa-no-increment (the server's NI increments its fetch-and-add
// variable only once), recording as rec says, and has nodes 1, 2 and 1
// fetch and add.
func runNoIncrement(t *testing.T, rec lfc.RecordMode) *lfc.Cluster {
	t.Helper()
	c, err := lfc.Start(lfc.Options{Nodes: 3, Variant: "fa-no-increment", Record: rec, Handler: func(int, lfc.Packet) {}})
	if err != nil {
		t.Fatal(err)
	}
	for _, node := range []int{1, 2, 1} {
		if _, err := c.Node(node).FetchAndAdd(); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// Conformance on Close: a recording cluster (RecordOn) checks its run
// against the model when it closes. A broken protocol variant run live
// (the server's NI increments its fetch-and-add variable only once) is
// caught there, by the property the checker names, and the run is a
// trace file for lfccheck replay. By default (and with RecordOff)
// nothing is recorded, in tests as in programs.
func TestConformanceOnClose(t *testing.T) {
	c := runNoIncrement(t, lfc.RecordOn)
	_, err := c.Close()
	var ce *lfc.ConformanceError
	if !errors.As(err, &ce) || ce.Violation == nil || ce.Violation.Property != "fa-values" {
		t.Fatalf("Close of a run of fa-no-increment: %v", err)
	}
	if _, err := ce.Recording.TraceFile(); err != nil {
		t.Fatal(err)
	}
	t.Log(err)
	for _, mode := range []lfc.RecordMode{0, lfc.RecordOff} {
		c, err = lfc.Start(lfc.Options{Nodes: 2, Record: mode, Handler: func(int, lfc.Packet) {}})
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		if _, err := c.Recording(); err == nil {
			t.Fatalf("a cluster with record mode %d has a recording", mode)
		}
	}
	if _, err := c.Recording(); err == nil {
		t.Fatal("a cluster with RecordOff has a recording")
	}
	if _, err := lfc.Start(lfc.Options{Nodes: 2, Variant: "nope", Handler: func(int, lfc.Packet) {}}); err == nil {
		t.Fatal("an unknown variant is accepted")
	}
}

// Groups from a topology file: a multicast reaches exactly the other
// members of the named group; a node outside the group cannot multicast
// to it; the recording (with RECOV, since these groups can deadlock under
// MCAST) conforms.
func TestTopologyGroups(t *testing.T) {
	topo, err := os.ReadFile("../../examples/overlap-small.topo")
	if err != nil {
		t.Fatal(err)
	}
	var col collector
	c, err := lfc.Start(lfc.Options{Nodes: 6, Protocol: "recov", Topology: string(topo), Credits: 1, HostBuffers: 1, Handler: col.handler, Record: lfc.RecordOn})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		node  int
		group string
	}{{0, "g1"}, {2, "g2"}, {4, "g3"}, {3, "g1"}, {5, ""}} {
		if err := c.Node(s.node).Multicast(s.group, []byte(fmt.Sprint(s.node))); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Node(1).Multicast("g1", nil); err == nil {
		t.Fatal("node 1 multicast to g1, of which it is not a member")
	}
	checkDrained(t, c)
	if _, err := c.Close(); err != nil {
		t.Fatal(err)
	}
	got := map[string][]int{}
	for node, ps := range col.got {
		for _, p := range ps {
			k := fmt.Sprintf("%d/%s", p.From, p.Group)
			got[k] = append(got[k], node)
		}
	}
	for k := range got {
		slices.Sort(got[k])
	}
	want := map[string][]int{"0/g1": {2, 3, 4}, "2/g2": {0, 4, 5}, "4/g3": {0, 1, 2}, "3/g1": {0, 2, 4}, "5/g2": {0, 2, 4}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("deliveries by sender/group: %v, want %v", got, want)
	}
}

// Bad options and calls get one clear error each, and nothing starts.
func TestBadOptionsAndCalls(t *testing.T) {
	h := func(int, lfc.Packet) {}
	for _, c := range []struct {
		opt  lfc.Options
		want string
	}{
		{lfc.Options{Nodes: 1, Handler: h}, "nodes must be in 2..64"},
		{lfc.Options{Nodes: 65, Handler: h}, "nodes must be in 2..64"},
		{lfc.Options{Nodes: 2}, "a handler is required"},
		{lfc.Options{Nodes: 2, Protocol: "ucast", Handler: h}, "protocol must be mcast or recov"},
		{lfc.Options{Nodes: 2, Credits: -1, Handler: h}, "credits must be in 1..64"},
		{lfc.Options{Nodes: 2, Tree: "bushy", Handler: h}, "unknown tree family"},
		{lfc.Options{Nodes: 2, Tree: "binary", Topology: "nodes 2", Handler: h}, "not both"},
		{lfc.Options{Nodes: 2, Topology: "nodes 2\ngroup g 0 5", Handler: h}, "topology"},
		{lfc.Options{Nodes: 2, Server: 2, Handler: h}, "server 2 out of range"},
		{lfc.Options{Nodes: 2, Mode: 7, Handler: h}, "unknown mode"},
		{lfc.Options{Nodes: 2, Record: 9, Handler: h}, "unknown record mode"},
		{lfc.Options{Nodes: 2, LinkDelay: -time.Second, Handler: h}, "link delay"},
	} {
		if _, err := lfc.Start(c.opt); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.opt, err, c.want)
		}
	}
	c, err := lfc.Start(lfc.Options{Nodes: 2, MaxPayload: 4, Handler: h})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, e := range []struct {
		err  error
		want string
	}{
		{c.Node(0).Send(1, []byte("12345")), "payload of 5 bytes, more than the 4"},
		{c.Node(0).Send(0, nil), "destination 0 is not another node"},
		{c.Node(0).Send(2, nil), "destination 2 is not another node"},
		{c.Node(0).Multicast("nog", nil), `no group "nog"`},
	} {
		if e.err == nil || !strings.Contains(e.err.Error(), e.want) {
			t.Errorf("got %v, want %q", e.err, e.want)
		}
	}
}

// Free right after Keep, in the handler itself, or at once from another
// goroutine (before the node has kept the packet): both free the buffer,
// and the run conforms.
func TestFreeSoonAfterKeep(t *testing.T) {
	kept := make(chan *lfc.Kept, 10)
	c, err := lfc.Start(lfc.Options{Nodes: 2, HostBuffers: 2, Keep: 1, Record: lfc.RecordOn, Handler: func(node int, p lfc.Packet) {
		k, err := p.Keep()
		if err != nil {
			t.Error(err)
			return
		}
		if p.Seq%2 == 1 {
			if err := k.Free(); err != nil {
				t.Error(err)
			}
			return
		}
		kept <- k
	}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 6; i++ {
		if err := c.Node(0).Send(1, nil); err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			if err := (<-kept).Free(); err != nil {
				t.Fatal(err)
			}
		}
	}
	checkDrained(t, c)
	rep, err := c.Close()
	if err != nil || rep.Kept != 0 || rep.Delivered != 6 {
		t.Fatalf("%v %s", err, rep)
	}
}

// A recording cluster's report carries the protocol's statistics over the
// run, as the model counts them on the recorded steps: a multicast on the
// binary tree of 8 nodes is sent on by the 5 tree edges that do not leave
// its root, whatever the schedule; RECOV's counts obey what every
// recovery does (it sends at least one packet on its channel, and its
// tree holds at least its owner). A cluster that does not record has none.
func TestStatistics(t *testing.T) {
	// multicasts starts a cluster, multicasts from each root in turn,
	// drains and closes it.
	multicasts := func(opt lfc.Options, roots ...int) (*lfc.Cluster, *lfc.Report, map[string]int64) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		opt.Handler = func(int, lfc.Packet) {}
		c, err := lfc.Start(opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, root := range roots {
			if err := c.Node(root).Multicast("", []byte("m")); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		rep, err := c.Close()
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]int64{}
		for _, s := range rep.Statistics {
			m[s.Name] = s.Value
		}
		return c, rep, m
	}
	if _, rep, _ := multicasts(lfc.Options{Nodes: 8, Tree: "binary", Record: lfc.RecordOff}, 3, 0); rep.Statistics != nil {
		t.Errorf("a cluster that does not record reported statistics: %s", rep)
	}
	c, rep, got := multicasts(lfc.Options{Nodes: 8, Tree: "binary", Record: lfc.RecordOn}, 3, 0)
	if got["forwarded-packets"] != 10 || !strings.Contains(rep.String(), "statistics: forwarded-packets 10") {
		t.Errorf("binary P=8, two multicasts: %s; want forwarded-packets 10", rep)
	}
	rec, err := c.Recording()
	if err != nil {
		t.Fatal(err)
	}
	if again, err := rec.Statistics(); err != nil || !slices.Equal(again, rep.Statistics) {
		t.Errorf("Recording.Statistics: %v %v; the report had %v", again, err, rep.Statistics)
	}

	var roots []int
	for i := 0; i < 6; i++ {
		roots = append(roots, i, i, i)
	}
	_, rep, got = multicasts(lfc.Options{Nodes: 6, Protocol: "recov", Tree: "chain", Credits: 1, HostBuffers: 1, SendBuffers: 2,
		Record: lfc.RecordOn}, roots...)
	rc, d, tree := got["recoveries"], got["channel-packets"], got["largest-recovery-tree"]
	if len(got) != 3 || d < rc || (rc > 0) != (tree > 0) || tree > 6 {
		t.Errorf("RECOV chain of 6: %s", rep)
	}
	t.Logf("RECOV chain of 6, 3 multicasts each: %s", rep)
}
