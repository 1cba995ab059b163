package gsb_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"lfccheck/model"
	"lfccheck/protocols/gsb"
	"lfccheck/protocols/topology"
)

// Broadcast copies the payload: every sender reuses one buffer for all its
// messages, writing the next message into it as soon as Broadcast
// returns (while other nodes may not have delivered the previous one yet),
// and every node still delivers every message with its own bytes.
func TestBroadcastCopiesPayload(t *testing.T) {
	const nodes, messages = 4, 200
	g, err := gsb.StartLive(context.Background(), gsb.LiveOptions{Config: gsb.Config(nodes, 2, 1, 64)})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, nodes)
	for s := 0; s < nodes; s++ {
		wg.Add(1)
		go func(s int) {
			defer wg.Done()
			buf := make([]byte, 0, 32)
			for k := 1; k <= messages; k++ {
				buf = fmt.Appendf(buf[:0], "message %d of node %d", k, s)
				if err := g.Broadcast(s, buf); err != nil {
					errs <- err
					return
				}
			}
		}(s)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	res, err := g.Close()
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for n, ds := range res.Delivered {
		if len(ds) != nodes*messages {
			t.Fatalf("node %d delivered %d messages, want %d", n, len(ds), nodes*messages)
		}
		for _, d := range ds {
			if want := fmt.Sprintf("message %d of node %d", d.K, d.From); string(d.Payload) != want {
				if bad < 5 {
					t.Errorf("node %d: delivery %d (%d.%d) has payload %q, want %q", n, d.Seq, d.From, d.K, d.Payload, want)
				}
				bad++
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d deliveries with another message's payload", bad, nodes*nodes*messages)
	}
}

// Calls the group cannot serve return errors at once, without hanging and
// without broadcasting anything.
func TestLiveMisuseReturnsErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		opt  gsb.LiveOptions
		want string
	}{
		{"no configuration", gsb.LiveOptions{}, "needs a gsb configuration"},
		{"another protocol", gsb.LiveOptions{Config: model.Config{Protocol: "mcast", Nodes: 3, Params: gsb.Defaults()}}, "needs a gsb configuration"},
		{"casts", gsb.LiveOptions{Config: func() model.Config {
			cfg := gsb.Config(3, 1, 1, 4)
			cfg.Params.(*gsb.Params).Casts = []topology.Cast{{Root: 0, Count: 1}}
			return cfg
		}()}, "no casts"},
		{"negative messages", gsb.LiveOptions{Config: gsb.Config(3, 1, 1, 4), Messages: -1}, "messages must be in 0..65535"},
		{"more messages than 16-bit numbers", gsb.LiveOptions{Config: gsb.Config(3, 1, 1, 4), Messages: 65536}, "messages must be in 0..65535"},
	} {
		if g, err := gsb.StartLive(context.Background(), c.opt); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("StartLive with %s: got %v, want an error with %q", c.name, err, c.want)
			if g != nil {
				g.Close()
			}
		}
	}

	// Senders 1 and 2 of 3, at most 2 messages each.
	g, err := gsb.StartLive(context.Background(), gsb.LiveOptions{Config: gsb.Config(3, 1, 1, 8, 1, 2), Messages: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		node int
		want string
	}{
		{-1, "out of range 0..2"},
		{3, "out of range 0..2"},
		{0, "node 0 is not a sender"},
	} {
		if err := g.Broadcast(c.node, []byte("x")); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Broadcast from node %d: got %v, want an error with %q", c.node, err, c.want)
		}
	}
	for k := 1; k <= 2; k++ {
		if err := g.Broadcast(1, []byte("x")); err != nil {
			t.Fatalf("message %d of 2: %v", k, err)
		}
	}
	if err := g.Broadcast(1, []byte("x")); err == nil || !strings.Contains(err.Error(), "all 2 of its messages") {
		t.Errorf("a third message: got %v", err)
	}
	res, err := g.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(res.Broadcasts); got != "[0 2 0]" {
		t.Errorf("broadcasts %s, want [0 2 0]", got)
	}
	if err := g.Broadcast(2, []byte("x")); err != gsb.ErrClosed {
		t.Errorf("Broadcast after Close: got %v, want ErrClosed", err)
	}
	if err := g.BroadcastContext(context.Background(), 2, []byte("x")); err != gsb.ErrClosed {
		t.Errorf("BroadcastContext after Close: got %v, want ErrClosed", err)
	}
	if res2, err := g.Close(); res2 != res || err != nil {
		t.Errorf("second Close: %p %v, want the first's result %p and no error", res2, err, res)
	}
	if err := res.Check(); err != nil {
		t.Errorf("the model rejects the run: %v", err)
	}
}

// Broadcast and Close called from inside OnDeliver, which runs in a node's
// goroutine, would wait for that very goroutine: they return ErrInUpcall
// at once, the group stays open, and calls from other goroutines while an
// upcall runs are served as usual.
func TestCallsFromUpcallReturnErrInUpcall(t *testing.T) {
	var g *gsb.Group
	type upcallErrs struct{ broadcast, broadcastOther, broadcastCtx, close error }
	got := make(chan upcallErrs, 1)
	var once sync.Once
	g, err := gsb.StartLive(context.Background(), gsb.LiveOptions{Config: gsb.Config(3, 1, 1, 8),
		OnDeliver: func(node int, d gsb.Delivery) {
			if node != 2 {
				return
			}
			once.Do(func() {
				var e upcallErrs
				e.broadcast = g.Broadcast(2, []byte("from the upcall"))
				e.broadcastOther = g.Broadcast(1, []byte("from the upcall"))
				e.broadcastCtx = g.BroadcastContext(context.Background(), 2, nil)
				_, e.close = g.Close()
				got <- e
			})
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Broadcast(0, []byte("first")); err != nil {
		t.Fatal(err)
	}
	e := <-got
	for name, err := range map[string]error{"Broadcast(own node)": e.broadcast, "Broadcast(other node)": e.broadcastOther,
		"BroadcastContext": e.broadcastCtx, "Close": e.close} {
		if !errors.Is(err, gsb.ErrInUpcall) {
			t.Errorf("%s from OnDeliver: got %v, want ErrInUpcall", name, err)
		}
	}
	if err := g.Broadcast(1, []byte("second")); err != nil {
		t.Fatalf("the group is not usable after the upcall's calls: %v", err)
	}
	res, err := g.Close()
	if err != nil {
		t.Fatal(err)
	}
	for n, ds := range res.Delivered {
		if len(ds) != 2 || string(ds[0].Payload) != "first" || string(ds[1].Payload) != "second" {
			t.Errorf("node %d delivered %v, want first and second only", n, ds)
		}
	}
}

// blockedGroup starts a 3-node group whose node 2 blocks in OnDeliver on
// its first delivery until release is closed; it returns once node 2 is
// blocked there, having delivered node 0's message "first". The
// sequencer (0) and node 1 keep running.
func blockedGroup(t *testing.T) (g *gsb.Group, release chan struct{}) {
	t.Helper()
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	g, err := gsb.StartLive(context.Background(), gsb.LiveOptions{Config: gsb.Config(3, 2, 1, 8),
		OnDeliver: func(node int, d gsb.Delivery) {
			if node == 2 {
				once.Do(func() { close(entered); <-release })
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Broadcast(0, []byte("first")); err != nil {
		t.Fatal(err)
	}
	<-entered
	return g, release
}

// waitingCtx is a context that reports, by closing waiting, the first
// time its Done channel is asked for: BroadcastContext asks only once it
// has accepted the message and waits for its delivery.
type waitingCtx struct {
	context.Context
	once    sync.Once
	waiting chan struct{}
}

func (c *waitingCtx) Done() <-chan struct{} {
	c.once.Do(func() { close(c.waiting) })
	return c.Context.Done()
}

// BroadcastContext returns ctx's error when ctx ends before the message is
// delivered at its sender: here node 2's broadcast cannot be delivered
// while node 2 is blocked in OnDeliver. The accepted message is still
// delivered everywhere once node 2 goes on. Meanwhile node 1, which needs
// nothing from node 2, broadcasts as usual although an upcall is running.
func TestBroadcastContextCancelledWhileWaiting(t *testing.T) {
	g, release := blockedGroup(t)
	if err := g.Broadcast(1, []byte("second")); err != nil {
		t.Fatalf("node 1 while node 2 runs its upcall: %v", err)
	}
	parent, cancel := context.WithCancel(context.Background())
	ctx := &waitingCtx{Context: parent, waiting: make(chan struct{})}
	errc := make(chan error, 1)
	go func() { errc <- g.BroadcastContext(ctx, 2, []byte("third")) }()
	<-ctx.waiting
	cancel()
	err := <-errc
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "accepted") {
		t.Fatalf("BroadcastContext cancelled while waiting: got %v, want an accepted message and context.Canceled", err)
	}
	close(release)
	res, err := g.Close()
	if err != nil {
		t.Fatal(err)
	}
	for n, ds := range res.Delivered {
		var got []string
		for _, d := range ds {
			got = append(got, string(d.Payload))
		}
		if strings.Join(got, " ") != "first second third" {
			t.Errorf("node %d delivered %q, want first second third", n, got)
		}
	}
	if err := res.Check(); err != nil {
		t.Errorf("the model rejects the run: %v", err)
	}
}

// A context that has ended already refuses the broadcast: nothing is
// accepted.
func TestBroadcastContextEndedRefuses(t *testing.T) {
	g, err := gsb.StartLive(context.Background(), gsb.LiveOptions{Config: gsb.Config(3, 1, 1, 8)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.BroadcastContext(ctx, 1, []byte("never")); !errors.Is(err, context.Canceled) {
		t.Errorf("BroadcastContext with an ended context: got %v, want context.Canceled", err)
	}
	res, err := g.Close()
	if err != nil {
		t.Fatal(err)
	}
	for n := range res.Delivered {
		if res.Broadcasts[n] != 0 || len(res.Delivered[n]) != 0 {
			t.Errorf("node %d: %d broadcasts, %d deliveries, want none", n, res.Broadcasts[n], len(res.Delivered[n]))
		}
	}
}

// CloseContext with an ended context stops the run where it is instead of
// waiting for node 2's upcall to return, and says so; the run so far is
// returned (and the model accepts its steps, but not its unfinished end).
// StartLive's context ending does the same for Close.
func TestCloseStoppedByContext(t *testing.T) {
	g, release := blockedGroup(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	type closed struct {
		res *gsb.Result
		err error
	}
	done := make(chan closed, 1)
	go func() { r, err := g.CloseContext(ctx); done <- closed{r, err} }()
	// The run cannot end before node 2's goroutine returns from its upcall.
	close(release)
	c := <-done
	if !errors.Is(c.err, context.Canceled) || c.res == nil {
		t.Fatalf("CloseContext with an ended context: %v %v, want a result and context.Canceled", c.res, c.err)
	}
	if err := c.res.Check(); err == nil || !strings.Contains(err.Error(), "stopped") {
		t.Errorf("Check of a stopped run: got %v, want it reported as stopped", err)
	}
	if r, err := g.Close(); r != c.res || !errors.Is(err, context.Canceled) {
		t.Errorf("second Close: %p %v, want %p and the same error", r, err, c.res)
	}

	sctx, scancel := context.WithCancel(context.Background())
	g, err := gsb.StartLive(sctx, gsb.LiveOptions{Config: gsb.Config(3, 1, 1, 8)})
	if err != nil {
		t.Fatal(err)
	}
	scancel()
	if _, err := g.Close(); !errors.Is(err, context.Canceled) {
		t.Errorf("Close after StartLive's context ended: got %v, want context.Canceled", err)
	}
	if err := g.Broadcast(1, nil); err != gsb.ErrClosed {
		t.Errorf("Broadcast after Close: got %v, want ErrClosed", err)
	}
}

// An OnDeliver that panics stops the group instead of the process: the
// waiting Broadcast, later ones and Close return an error holding the
// panic's value and stack.
func TestOnDeliverPanicStopsGroup(t *testing.T) {
	g, err := gsb.StartLive(context.Background(), gsb.LiveOptions{Config: gsb.Config(3, 2, 1, 64),
		OnDeliver: func(node int, d gsb.Delivery) {
			if node == 2 && string(d.Payload) == "bad" {
				panic("boom")
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Broadcast(0, []byte("ok")); err != nil {
		t.Fatal(err)
	}
	var hp *gsb.HandlerPanic
	if err := g.Broadcast(2, []byte("bad")); !errors.As(err, &hp) {
		t.Fatalf("Broadcast of the message whose upcall panics: %v, want a *HandlerPanic", err)
	}
	if err := g.Broadcast(1, []byte("later")); !errors.As(err, &hp) {
		t.Fatalf("Broadcast after the panic: %v, want a *HandlerPanic", err)
	}
	for i := 0; i < 2; i++ {
		res, err := g.Close()
		hp = nil
		if !errors.As(err, &hp) || res == nil {
			t.Fatalf("Close #%d: %v, want a *HandlerPanic", i+1, err)
		}
		if hp.Value != "boom" || hp.Node != 2 || hp.From != 2 || !strings.Contains(string(hp.Stack), "TestOnDeliverPanicStopsGroup") {
			t.Fatalf("panic %+v", hp)
		}
	}
}
