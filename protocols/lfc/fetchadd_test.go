package lfc_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lfccheck/protocols/lfc"
)

// faCalls runs perNode FetchAndAdd calls on every node of c, spread over
// g goroutines per node, and returns every value handed out; calls that
// do not all return within limit fail the test (Close then ends them).
func faCalls(t *testing.T, c *lfc.Cluster, g, perNode int, limit time.Duration) []uint32 {
	t.Helper()
	P := c.Nodes()
	var mu sync.Mutex
	var got []uint32
	var returned atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < P; i++ {
		for j := 0; j < g; j++ {
			calls := perNode / g
			if j < perNode%g {
				calls++
			}
			wg.Add(1)
			go func(i, calls int) {
				defer wg.Done()
				mine := make([]uint32, 0, calls)
				defer func() {
					mu.Lock()
					got = append(got, mine...)
					mu.Unlock()
				}()
				for k := 0; k < calls; k++ {
					v, err := c.Node(i).FetchAndAdd()
					if err != nil {
						if !errors.Is(err, lfc.ErrClosed) {
							t.Errorf("node %d: %v", i, err)
						}
						return
					}
					mine = append(mine, v)
					returned.Add(1)
				}
			}(i, calls)
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
		n := returned.Load()
		rep, _ := c.Close()
		<-done
		t.Fatalf("%d of %d FetchAndAdd calls returned in %v: the others hang (%s)", n, P*perNode, limit, rep)
	}
	return got
}

// exactly checks that vals are 0..len(vals)-1, each once.
func exactly(t *testing.T, vals []uint32, what string) {
	t.Helper()
	s := append([]uint32(nil), vals...)
	sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
	dups, missing := 0, 0
	seen := make(map[uint32]int, len(s))
	for _, v := range s {
		seen[v]++
		if seen[v] == 2 {
			dups++
		}
	}
	for v := 0; v < len(s); v++ {
		if seen[uint32(v)] == 0 {
			missing++
		}
	}
	if dups > 0 || missing > 0 {
		t.Fatalf("%s: %d values, %d of them handed out more than once, %d of 0..%d never", what, len(s), dups, missing, len(s)-1)
	}
}

// Eight nodes, four goroutines each, 10,000 FetchAndAdd calls per node
// (2,000 with -short): every call returns, and the values are exactly
// 0..N-1, none handed to two calls (concurrent calls on one node each get
// their own request's reply).
func TestFetchAndAddManyCallers(t *testing.T) {
	const P, G = 8, 4
	perNode := 10000
	if testing.Short() {
		perNode = 2000
	}
	c, err := lfc.Start(lfc.Options{Nodes: P, Handler: func(int, lfc.Packet) {}})
	if err != nil {
		t.Fatal(err)
	}
	got := faCalls(t, c, G, perNode, 5*time.Minute)
	rep, err := c.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != P*perNode {
		t.Fatalf("%d values for %d calls", len(got), P*perNode)
	}
	exactly(t, got, "32 callers")
	if len(rep.FetchAndAddAbandoned) != 0 || rep.FetchAndAddUnanswered != 0 {
		t.Fatalf("no call gave up, yet the report has abandoned values %v, %d unanswered", rep.FetchAndAddAbandoned, rep.FetchAndAddUnanswered)
	}
}

// The same with the online monitor, which checks which caller got which
// value: it finds every step and every call conforming.
func TestFetchAndAddManyCallersMonitored(t *testing.T) {
	const P, G, perNode = 8, 4, 200
	c, err := lfc.Start(lfc.Options{Nodes: P, Record: lfc.RecordMonitor, Handler: func(int, lfc.Packet) {}})
	if err != nil {
		t.Fatal(err)
	}
	got := faCalls(t, c, G, perNode, 2*time.Minute)
	if _, err := c.Close(); err != nil {
		t.Fatal(err)
	}
	exactly(t, got, "32 monitored callers")
	checkedAll(t, c)
}

// A request/reply server whose handler fetches and adds before it
// replies, with nested upcalls (the default): the server's FetchAndAdd
// waits for its reply (slow links), the requests that arrive meanwhile
// run nested inside that wait, each fetching and adding in turn, to the
// library's nesting bound (16), and replies to enclosing calls come while
// nested handlers run. Every request is answered and the values
// are 0..N-1: an inner call's wait never waits for an outer call.
func TestFetchAndAddNestedInHandler(t *testing.T) {
	const P, server, clients, perClient = 6, 1, 4, 40
	var c *lfc.Cluster
	var depth, deepest atomic.Int64
	var replies atomic.Int64
	var mu sync.Mutex
	var vals []uint32
	errs := make(chan error, 1)
	report := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	c, err := lfc.Start(lfc.Options{Nodes: P, Server: 0, LinkDelay: 2 * time.Millisecond, Handler: func(node int, p lfc.Packet) {
		switch {
		case node == server && p.Payload[0] == 'Q':
			d := depth.Add(1)
			defer depth.Add(-1)
			for {
				m := deepest.Load()
				if d <= m || deepest.CompareAndSwap(m, d) {
					break
				}
			}
			// Some work before the call: an enclosing call's reply may
			// come meanwhile, while that call waits under this handler.
			time.Sleep(500 * time.Microsecond)
			v, err := c.Node(node).FetchAndAdd()
			if err != nil {
				if !errors.Is(err, lfc.ErrClosed) {
					report(fmt.Errorf("FetchAndAdd at depth %d: %v", d, err))
				}
				return
			}
			mu.Lock()
			vals = append(vals, v)
			mu.Unlock()
			if err := c.Node(node).Send(p.From, []byte{'R'}); err != nil && !errors.Is(err, lfc.ErrClosed) {
				report(err)
			}
		case p.Payload[0] == 'R':
			replies.Add(1)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < clients; i++ {
		go func(from int) {
			for k := 0; k < perClient; k++ {
				if err := c.Node(from).Send(server, []byte{'Q'}); err != nil {
					if !errors.Is(err, lfc.ErrClosed) {
						report(err)
					}
					return
				}
			}
		}(2 + i)
	}
	deadline := time.Now().Add(time.Minute)
	for replies.Load() < clients*perClient {
		select {
		case err := <-errs:
			c.Close()
			t.Fatal(err)
		default:
		}
		if time.Now().After(deadline) {
			rep, _ := c.Close()
			t.Fatalf("%d of %d requests answered after a minute, nesting depth reached %d: the server stalls (%s)",
				replies.Load(), clients*perClient, deepest.Load(), rep)
		}
		time.Sleep(time.Millisecond)
	}
	checkDrained(t, c)
	if _, err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if d := deepest.Load(); d < 16 {
		t.Fatalf("handlers nested %d deep; the test wants the library's bound, 16", d)
	}
	exactly(t, vals, "the handlers' values")
	t.Logf("nesting depth %d", deepest.Load())
}

// A FetchAndAddContext that gives up before its reply: the next call on
// the node gets a value no other call got (its own request's: 1), and the
// abandoned call's value (0), which the NI sent all the same, is in the
// Report as abandoned, handed to nobody.
func TestFetchAndAddAbandoned(t *testing.T) {
	for _, rec := range []lfc.RecordMode{0, lfc.RecordMonitor, lfc.RecordOn} {
		t.Run(fmt.Sprint("record=", rec), func(t *testing.T) {
			c, err := lfc.Start(lfc.Options{Nodes: 2, Record: rec, LinkDelay: 20 * time.Millisecond, Handler: func(int, lfc.Packet) {}})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			waiting := &waitSignal{Context: ctx, waited: make(chan struct{})}
			gave := make(chan error, 1)
			go func() {
				v, err := c.Node(1).FetchAndAddContext(waiting)
				if err == nil {
					err = fmt.Errorf("got %d", v)
				}
				gave <- err
			}()
			<-waiting.waited // posted, waiting for the reply (40 ms away)
			cancel()
			expectErr(t, gave, context.Canceled, "a cancelled FetchAndAddContext")
			v, err := c.Node(1).FetchAndAdd()
			if err != nil {
				t.Fatal(err)
			}
			if v != 1 {
				t.Fatalf("the call after an abandoned one got %d, want 1 (0 is the abandoned request's)", v)
			}
			checkDrained(t, c)
			rep, err := c.Close()
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.FetchAndAddAbandoned) != 1 || rep.FetchAndAddAbandoned[0] != 0 || rep.FetchAndAddUnanswered != 0 {
				t.Fatalf("abandoned values %v, %d unanswered; want [0], 0", rep.FetchAndAddAbandoned, rep.FetchAndAddUnanswered)
			}
		})
	}
}
