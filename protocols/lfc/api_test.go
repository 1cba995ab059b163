package lfc_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"lfccheck/protocols/lfc"
)

// A handler that panics in Upcall mode stops its cluster instead of the
// process: Close, and every call after it, returns a *HandlerPanic with
// the panic's value and stack.
func TestUpcallHandlerPanicStopsCluster(t *testing.T) {
	c, err := lfc.Start(lfc.Options{Nodes: 2, Handler: func(node int, p lfc.Packet) {
		if string(p.Payload) == "bad" {
			panic("boom")
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Node(0).Send(1, []byte("ok")); err != nil {
		t.Fatal(err)
	}
	if err := c.Node(0).Send(1, []byte("bad")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var hp *lfc.HandlerPanic
	if err := c.Drain(ctx); !errors.As(err, &hp) {
		t.Fatalf("Drain: %v, want a *HandlerPanic", err)
	}
	for i := 0; i < 2; i++ {
		rep, err := c.Close()
		hp = nil
		if !errors.As(err, &hp) {
			t.Fatalf("Close #%d: %v, want a *HandlerPanic", i+1, err)
		}
		if hp.Value != "boom" || hp.Node != 1 || hp.From != 0 || !strings.Contains(string(hp.Stack), "TestUpcallHandlerPanicStopsCluster") {
			t.Fatalf("panic %+v, stack:\n%s", hp, hp.Stack)
		}
		if rep.Delivered != 1 || len(rep.InFlight) != 1 {
			t.Fatalf("report %s: want 1 delivery and the panicked packet in flight", rep)
		}
	}
	if err := c.Node(0).Send(1, []byte("after")); !errors.As(err, &hp) {
		t.Fatalf("Send after the panic: %v", err)
	}
	if _, err := c.Node(1).Poll(); !errors.As(err, &hp) {
		t.Fatalf("Poll after the panic: %v", err)
	}
}

// In Polling mode a panicking handler makes Poll return the panic as an
// error; the packet is never handed to a handler again with its payload
// gone, and the Report does not count it as delivered.
func TestPollingHandlerPanicLosesNothing(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	c, err := lfc.Start(lfc.Options{Nodes: 2, Mode: lfc.Polling, Handler: func(node int, p lfc.Packet) {
		mu.Lock()
		seen = append(seen, string(p.Payload))
		first := len(seen) == 1
		mu.Unlock()
		if first {
			panic(errors.New("boom"))
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Node(0).Send(1, []byte("data")); err != nil {
		t.Fatal(err)
	}
	// poll calls Poll as a program that recovers panics would.
	poll := func() (ok bool, err error, panicked any) {
		defer func() { panicked = recover() }()
		ok, err = c.Node(1).Poll()
		return
	}
	deadline := time.Now().Add(time.Minute)
	var first error
	for first == nil && time.Now().Before(deadline) {
		ok, err, p := poll()
		switch {
		case p != nil:
			first = errors.New("Poll panicked")
		case err != nil:
			first = err
		case !ok:
			time.Sleep(time.Millisecond)
		}
	}
	var hp *lfc.HandlerPanic
	if !errors.As(first, &hp) {
		t.Errorf("Poll: %v, want a *HandlerPanic", first)
	}
	// The program goes on polling: nothing is delivered empty.
	for i := 0; i < 3; i++ {
		ok, err, p := poll()
		if ok || p != nil || !errors.As(err, &hp) {
			t.Errorf("Poll after the panic: %v %v %v, want the *HandlerPanic", ok, err, p)
		}
	}
	mu.Lock()
	for _, s := range seen {
		if s != "data" {
			t.Errorf("a handler got payload %q, want %q", s, "data")
		}
	}
	mu.Unlock()
	rep, err := c.Close()
	if !errors.As(err, &hp) || !errors.Is(err, hp.Value.(error)) {
		t.Fatalf("Close: %v, want the *HandlerPanic", err)
	}
	if rep.Delivered != 0 || len(rep.InFlight) != 1 {
		t.Fatalf("report %s: want no delivery, one in flight", rep)
	}
}

// A nested upcall that panics stops the cluster too: the waiting call of
// the handler it nests in returns the panic.
func TestNestedHandlerPanic(t *testing.T) {
	sendErr := make(chan error, 1)
	var c *lfc.Cluster
	c, err := lfc.Start(lfc.Options{Nodes: 2, Credits: 1, Handler: func(node int, p lfc.Packet) {
		switch string(p.Payload) {
		case "request": // on node 1: sends until the cluster stops, so
			// that "boom" reaches a handler only nested in a Send
			var err error
			for end := time.Now().Add(time.Minute); err == nil && time.Now().Before(end); {
				err = c.Node(1).Send(0, []byte("x"))
			}
			sendErr <- err
		case "x": // on node 0
			c.Node(0).Send(1, []byte("boom"))
		case "boom": // on node 1, nested in the Send above
			panic("nested boom")
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Node(0).Send(1, []byte("request")); err != nil {
		t.Fatal(err)
	}
	var hp *lfc.HandlerPanic
	select {
	case err := <-sendErr:
		if !errors.As(err, &hp) {
			t.Errorf("the handler's Send: %v, want the *HandlerPanic", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the handler's sends did not return")
	}
	if _, err := c.Close(); !errors.As(err, &hp) || hp.Value != "nested boom" || !strings.Contains(string(hp.Stack), ").nest(") {
		t.Fatalf("Close: %v, want the nested *HandlerPanic", err)
	}
}

// CloseContext returns when its context ends, even while a handler
// blocks; the cluster is stopped meanwhile, and Close returns once the
// handler has.
func TestCloseContextBoundsBlockedHandler(t *testing.T) {
	entered, release := make(chan bool, 1), make(chan bool)
	c, err := lfc.Start(lfc.Options{Nodes: 2, Handler: func(node int, p lfc.Packet) {
		entered <- true
		<-release
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Node(0).Send(1, []byte("x")); err != nil {
		t.Fatal(err)
	}
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	rep, err := c.CloseContext(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || rep == nil {
		t.Fatalf("CloseContext: %v %v, want the deadline's error and a report", rep, err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("CloseContext took %v", d)
	}
	if err := c.Node(0).Send(1, []byte("y")); !errors.Is(err, lfc.ErrClosed) {
		t.Fatalf("Send after CloseContext: %v, want ErrClosed", err)
	}
	close(release)
	if _, err := c.Close(); err != nil {
		t.Fatalf("Close once the handler returned: %v", err)
	}
}

// Every call after Close returns ErrClosed, so a poll loop ends.
func TestPollAfterCloseReturnsErrClosed(t *testing.T) {
	c, err := lfc.Start(lfc.Options{Nodes: 2, Mode: lfc.Polling, Handler: func(int, lfc.Packet) {}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Close(); err != nil {
		t.Fatal(err)
	}
	n := c.Node(1)
	if ok, err := n.Poll(); ok || !errors.Is(err, lfc.ErrClosed) {
		t.Errorf("Poll: %v %v, want ErrClosed", ok, err)
	}
	if k, err := n.PollAll(); k != 0 || !errors.Is(err, lfc.ErrClosed) {
		t.Errorf("PollAll: %v %v, want ErrClosed", k, err)
	}
	if ok, err := n.PollContext(context.Background()); ok || !errors.Is(err, lfc.ErrClosed) {
		t.Errorf("PollContext: %v %v, want ErrClosed", ok, err)
	}
	if err := n.Send(0, nil); !errors.Is(err, lfc.ErrClosed) {
		t.Errorf("Send: %v, want ErrClosed", err)
	}
	if _, err := n.FetchAndAdd(); !errors.Is(err, lfc.ErrClosed) {
		t.Errorf("FetchAndAdd: %v, want ErrClosed", err)
	}
	if err := c.Drain(context.Background()); !errors.Is(err, lfc.ErrClosed) {
		t.Errorf("Drain: %v, want ErrClosed", err)
	}
}

// PollContext waits for a packet instead of busy-polling: it returns once
// the handler ran, when its context ends, or when the cluster closes.
func TestPollContext(t *testing.T) {
	got := make(chan string, 4)
	c, err := lfc.Start(lfc.Options{Nodes: 2, Mode: lfc.Polling, Handler: func(node int, p lfc.Packet) {
		got <- string(p.Payload)
	}})
	if err != nil {
		t.Fatal(err)
	}
	n := c.Node(1)
	short, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if ok, err := n.PollContext(short); ok || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("PollContext with nothing to receive: %v %v, want the deadline's error", ok, err)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		c.Node(0).Send(1, []byte("late"))
	}()
	ctx, cancel2 := context.WithTimeout(context.Background(), time.Minute)
	defer cancel2()
	if ok, err := n.PollContext(ctx); !ok || err != nil {
		t.Fatalf("PollContext: %v %v", ok, err)
	}
	if s := <-got; s != "late" {
		t.Fatalf("got %q", s)
	}
	res := make(chan error, 1)
	go func() {
		_, err := n.PollContext(ctx)
		res <- err
	}()
	time.Sleep(20 * time.Millisecond)
	if _, err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-res:
		if !errors.Is(err, lfc.ErrClosed) {
			t.Fatalf("PollContext waiting at Close: %v, want ErrClosed", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("PollContext did not return at Close")
	}
}

// The misuse errors are sentinels that errors.Is recognizes.
func TestSentinelErrors(t *testing.T) {
	kept := make(chan *lfc.Kept, 4)
	keepErr := make(chan error, 4)
	c, err := lfc.Start(lfc.Options{Nodes: 3, MaxPayload: 4, HostBuffers: 4, Keep: 1, Handler: func(node int, p lfc.Packet) {
		if node != 1 {
			return
		}
		k, err := p.Keep()
		if err != nil {
			keepErr <- err
			return
		}
		kept <- k
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Node(0).Send(1, []byte("12345")); !errors.Is(err, lfc.ErrPayloadTooLarge) {
		t.Errorf("Send of 5 bytes: %v, want ErrPayloadTooLarge", err)
	}
	if err := c.Node(0).Multicast("nope", nil); !errors.Is(err, lfc.ErrUnknownGroup) {
		t.Errorf("Multicast to no group: %v, want ErrUnknownGroup", err)
	}
	for i := 0; i < 2; i++ {
		if err := c.Node(0).Send(1, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	k := <-kept
	if err := <-keepErr; !errors.Is(err, lfc.ErrKeepLimit) {
		t.Errorf("a second Keep: %v, want ErrKeepLimit", err)
	}
	if err := k.Free(); err != nil {
		t.Fatal(err)
	}
	if err := k.Free(); !errors.Is(err, lfc.ErrDoubleFree) {
		t.Errorf("a second Free: %v, want ErrDoubleFree", err)
	}
}

// Report.String names the kept packets.
func TestReportStringKept(t *testing.T) {
	r := &lfc.Report{Sent: 3, Delivered: 3, Kept: 2}
	if s := r.String(); !strings.Contains(s, "2 kept") {
		t.Fatalf("%q does not say 2 kept", s)
	}
}

// The zero RecordMode is RecordOff, the documented default; RecordOff's
// former value 2 still means off.
func TestRecordOffIsTheZeroValue(t *testing.T) {
	var opt lfc.Options
	if opt.Record != lfc.RecordOff || lfc.RecordOff.String() != "off" {
		t.Fatalf("the zero value is %v, RecordOff is %v", opt.Record, lfc.RecordOff)
	}
	for _, m := range []lfc.RecordMode{lfc.RecordOff, lfc.RecordMode(2)} {
		c, err := lfc.Start(lfc.Options{Nodes: 2, Record: m, Handler: func(int, lfc.Packet) {}})
		if err != nil {
			t.Fatalf("%v: %v", m, err)
		}
		rep, err := c.Close()
		if err != nil || rep.Checked != 0 {
			t.Fatalf("%v: %v, %d checked", m, err, rep.Checked)
		}
		if _, err := c.Recording(); err == nil {
			t.Fatalf("%v: a recording", m)
		}
	}
}
