package lfc_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"lfccheck/protocols/lfc"
)

// Unicast with upcalls: the handler runs for every packet as soon as the
// NI has copied it to a host buffer.
func ExampleNode_Send() {
	got := make(chan string, 3)
	c, err := lfc.Start(lfc.Options{Nodes: 2, Handler: func(node int, p lfc.Packet) {
		got <- fmt.Sprintf("node %d got %q from %d (#%d)", node, p.Payload, p.From, p.Seq)
	}})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	for _, s := range []string{"hello", "world", "!"} {
		if err := c.Node(0).Send(1, []byte(s)); err != nil {
			panic(err)
		}
	}
	for i := 0; i < 3; i++ {
		fmt.Println(<-got)
	}
	// Output:
	// node 1 got "hello" from 0 (#1)
	// node 1 got "world" from 0 (#2)
	// node 1 got "!" from 0 (#3)
}

// Multicast on the node's spanning tree of the broadcast group: every
// other node gets the packet, forwarded NI to NI along a binary tree.
func ExampleNode_Multicast() {
	var mu sync.Mutex
	var lines []string
	c, err := lfc.Start(lfc.Options{Nodes: 8, Tree: "binary", Handler: func(node int, p lfc.Packet) {
		mu.Lock()
		lines = append(lines, fmt.Sprintf("node %d: %s", node, p.Payload))
		mu.Unlock()
	}})
	if err != nil {
		panic(err)
	}
	if err := c.Node(3).Multicast("", []byte("news from 3")); err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Drain(ctx); err != nil {
		panic(err)
	}
	rep, _ := c.Close()
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	fmt.Println(rep.Sent, "packet sent,", rep.Delivered, "deliveries")
	// Output:
	// node 0: news from 3
	// node 1: news from 3
	// node 2: news from 3
	// node 4: news from 3
	// node 5: news from 3
	// node 6: news from 3
	// node 7: news from 3
	// 1 packet sent, 7 deliveries
}

// Polling: packets wait in host buffers until the program polls; Poll
// runs the handler in the caller's goroutine for at most one packet
// (lfc_poll). With two host buffers and
// two credits, a receiver that does not poll holds up its senders, whose
// Send calls block: nothing is lost.
func ExampleNode_Poll() {
	var got []string
	c, err := lfc.Start(lfc.Options{Nodes: 2, Credits: 2, HostBuffers: 2, Mode: lfc.Polling,
		Handler: func(node int, p lfc.Packet) { got = append(got, string(p.Payload)) }})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	done := make(chan bool)
	go func() {
		for i := 1; i <= 10; i++ {
			c.Node(0).Send(1, []byte(fmt.Sprint("m", i)))
		}
		done <- true
	}()
	for len(got) < 10 {
		if ok, err := c.Node(1).Poll(); err != nil {
			panic(err)
		} else if !ok {
			time.Sleep(time.Millisecond)
		}
	}
	<-done
	fmt.Println(got)
	// Output:
	// [m1 m2 m3 m4 m5 m6 m7 m8 m9 m10]
}

// A recording cluster's run is a model execution: Check replays it
// through the model with every property of the protocol (credit
// conservation, FIFO, exactly-once, ...), and TraceFile writes it for
// `lfccheck replay`.
func ExampleCluster_Recording() {
	c, err := lfc.Start(lfc.Options{Nodes: 4, Credits: 1, HostBuffers: 1, Record: lfc.RecordOn,
		Handler: func(int, lfc.Packet) {}})
	if err != nil {
		panic(err)
	}
	for i := 0; i < 4; i++ {
		if err := c.Node(i).Multicast("", []byte("x")); err != nil {
			panic(err)
		}
		if err := c.Node(i).Send((i+1)%4, []byte("y")); err != nil {
			panic(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Drain(ctx); err != nil {
		panic(err)
	}
	c.Close()
	rec, err := c.Recording()
	if err != nil {
		panic(err)
	}
	v, err := rec.Check()
	fmt.Println("accepted by the model:", err == nil, "violation:", v)
	fmt.Println(rec.Config.Describe())
	// Output:
	// accepted by the model: true violation: <nil>
	// mcast (correct) nodes=4 credits=1 tree=binary work=4 nodes refresh=1 host-buffers=1 send-buffers=4 drain=on
}

// Keeping a packet past its upcall (lfc_upcall returning nonzero) and
// freeing it later (lfc_packet_free): until then it holds a host buffer
// and its payload stays valid.
func ExamplePacket_Keep() {
	kept := make(chan *lfc.Kept, 1)
	var payload []byte
	c, err := lfc.Start(lfc.Options{Nodes: 2, HostBuffers: 2, Keep: 1, Handler: func(node int, p lfc.Packet) {
		if k, err := p.Keep(); err == nil {
			payload = p.Payload
			kept <- k
		}
	}})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	c.Node(0).Send(1, []byte("keep me"))
	k := <-kept
	fmt.Printf("kept %q\n", payload)
	fmt.Println("freed:", k.Free() == nil)
	// Output:
	// kept "keep me"
	// freed: true
}

// Fetch-and-add on the variable of NI 0 (lfc_fetch_and_add): every call
// gets the value before its increment; the server's own calls are local.
func ExampleNode_FetchAndAdd() {
	c, err := lfc.Start(lfc.Options{Nodes: 3, Server: 0, Handler: func(int, lfc.Packet) {}})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	for _, node := range []int{1, 2, 0, 1} {
		v, err := c.Node(node).FetchAndAdd()
		if err != nil {
			panic(err)
		}
		fmt.Printf("node %d got %d\n", node, v)
	}
	// Output:
	// node 1 got 0
	// node 2 got 1
	// node 0 got 2
	// node 1 got 3
}

// A cluster that checks itself while it runs: the online monitor replays
// every step through the model (every property after every step, the
// very packet of every delivery), keeping no history, so a stream of any
// length is checked: here 70,000 packets, past the wrap of the sequence
// numbers at 65,535.
func ExampleCluster_Conformance() {
	c, err := lfc.Start(lfc.Options{Nodes: 2, Record: lfc.RecordMonitor, Handler: func(int, lfc.Packet) {}})
	if err != nil {
		panic(err)
	}
	for k := 0; k < 70000; k++ {
		if err := c.Node(0).Send(1, []byte("x")); err != nil {
			panic(err)
		}
	}
	if err := c.Drain(context.Background()); err != nil {
		panic(err)
	}
	fmt.Println("conforms so far:", c.Conformance() == nil)
	r, err := c.Close() // waits for the monitor
	if err != nil {
		panic(err) // a *lfc.ConformanceError naming the step
	}
	fmt.Println("sent:", r.Sent, "every step checked:", r.Checked == r.Steps)
	// Output:
	// conforms so far: true
	// sent: 70000 every step checked: true
}

// Receiving with a context: PollContext waits for a packet (no busy
// polling) and returns once its handler ran, when the context ends, or
// with ErrClosed once the cluster is closed. A handler that panics stops
// the cluster, and Close returns the panic as a *HandlerPanic; CloseContext
// bounds the wait for handlers still running.
func ExampleNode_PollContext() {
	c, err := lfc.Start(lfc.Options{Nodes: 2, Mode: lfc.Polling, Handler: func(node int, p lfc.Packet) {
		if string(p.Payload) == "bad" {
			panic("cannot handle " + string(p.Payload))
		}
		fmt.Printf("node %d got %q\n", node, p.Payload)
	}})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() {
		c.Node(0).Send(1, []byte("hello"))
		c.Node(0).Send(1, []byte("bad"))
	}()
	for {
		if _, err := c.Node(1).PollContext(ctx); err != nil {
			var hp *lfc.HandlerPanic
			fmt.Println("poll:", errors.As(err, &hp), hp.Value)
			break
		}
	}
	_, err = c.CloseContext(ctx)
	var hp *lfc.HandlerPanic
	fmt.Println("close:", errors.As(err, &hp), hp.Value)
	err = c.Node(0).Send(1, []byte("more"))
	fmt.Println("after the panic, a send:", errors.As(err, &hp))
	// Output:
	// node 1 got "hello"
	// poll: true cannot handle bad
	// close: true cannot handle bad
	// after the panic, a send: true
}

// Misuse errors are sentinels for errors.Is.
func ExampleErrPayloadTooLarge() {
	c, err := lfc.Start(lfc.Options{Nodes: 2, MaxPayload: 4, Handler: func(int, lfc.Packet) {}})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	err = c.Node(0).Send(1, []byte("too long"))
	fmt.Println(errors.Is(err, lfc.ErrPayloadTooLarge))
	err = c.Node(0).Multicast("no such group", nil)
	fmt.Println(errors.Is(err, lfc.ErrUnknownGroup))
	// Output:
	// true
	// true
}
