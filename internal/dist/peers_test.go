package dist

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"

	"lfccheck/explore"
	"lfccheck/properties"
	"lfccheck/protocols/mcast"
)

// chainDeadlock is a claim that fails (MCAST's chain deadlock, 575
// states): a search that stops at its initial state would pass it.
func chainDeadlock(t *testing.T) *properties.Checker {
	t.Helper()
	ck, err := properties.Build(mcast.Config("chain", 4, 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	return ck
}

// listenAll listens on every interface at a free port: 127.0.0.1 and
// 127.0.0.2 of that port then lead to one process, which checkPeers
// cannot see.
func listenAll(t *testing.T) (net.Listener, string) {
	t.Helper()
	l, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return l, port
}

// loopback2 skips the test where 127.0.0.2 does not reach this host.
func loopback2(t *testing.T, port string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", "127.0.0.2:"+port, time.Second)
	if err != nil {
		t.Skipf("127.0.0.2 does not reach a listener on every interface here: %v", err)
	}
	c.Close()
}

// loopbackListeners listens on n free loopback ports.
func loopbackListeners(t testing.TB, n int) ([]net.Listener, []string) {
	t.Helper()
	lis := make([]net.Listener, n)
	addr := make([]string, n)
	for i := range lis {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lis[i], addr[i] = l, l.Addr().String()
	}
	return lis, addr
}

// runRanks runs the workers given by their peer lists and listeners in
// this process (rank i with peers[i], listener lis[i]) and returns each
// one's error, and rank 0's result.
func runRanks(t *testing.T, peers [][]string, lis []net.Listener, timeout time.Duration) (explore.Result, []error) {
	t.Helper()
	n := len(lis)
	errs := make([]error, n)
	var res explore.Result
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r, _, err := Run(chainDeadlock(t), Options{Rank: i, Peers: peers[i], Listener: lis[i], ConnectTimeout: timeout, PeerTimeout: timeout})
			errs[i] = err
			if i == 0 {
				res = r
			}
		})
	}
	wg.Wait()
	return res, errs
}

// TestPeerLeadsBack: a peer entry that leads back to the coordinator (a
// second name of its address) is an error naming both entries, never a
// search of one worker that passes at its initial state. It did pass:
// the hello checked the number of workers and the initial state only.
func TestPeerLeadsBack(t *testing.T) {
	l, port := listenAll(t)
	loopback2(t, port)
	peers := []string{"127.0.0.1:" + port, "127.0.0.2:" + port}
	r, _, err := Run(chainDeadlock(t), Options{Rank: 0, Peers: peers, Listener: l, ConnectTimeout: 5 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "peer 1 (127.0.0.2:"+port+") leads back to the coordinator, worker 0 (127.0.0.1:"+port+")") {
		t.Fatalf("verdict %s, %d states, error %v", r.Verdict, r.Stats.States, err)
	}
}

// TestPeerOfAnotherRank: an entry that leads to the worker of another
// rank (two tasks given each other's ports, or one rank started twice) is
// an error before any state is searched, on every worker.
func TestPeerOfAnotherRank(t *testing.T) {
	lis, addr := loopbackListeners(t, 3)
	// Every worker's list names rank 2's address for rank 1 and rank 1's
	// for rank 2.
	peers := []string{addr[0], addr[2], addr[1]}
	_, errs := runRanks(t, [][]string{peers, peers, peers}, lis, 2*time.Second)
	want := "peer 1 (" + addr[2] + ") leads to the worker of rank 2"
	if errs[0] == nil || !strings.Contains(errs[0].Error(), want) {
		t.Fatalf("coordinator: %v, want %q", errs[0], want)
	}
	for r := 1; r < 3; r++ {
		if errs[r] == nil {
			t.Errorf("worker %d ended without an error", r)
		}
	}
}

// TestPeersDifferAcrossMachines: a worker whose list leads, for another
// rank, to another process than the coordinator's list (a name that
// resolves to another address on its machine) is an error, found when
// the workers check their connections before the search.
func TestPeersDifferAcrossMachines(t *testing.T) {
	l0, port0 := listenAll(t)
	loopback2(t, port0)
	lis := []net.Listener{l0, nil, nil}
	addr := []string{"127.0.0.1:" + port0, "", ""}
	for i := 1; i < 3; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lis[i], addr[i] = l, l.Addr().String()
	}
	// Worker 1 sees rank 2 at another name of rank 0's address.
	other := []string{addr[0], addr[1], "127.0.0.2:" + port0}
	_, errs := runRanks(t, [][]string{addr, other, addr}, lis, 5*time.Second)
	want := "worker 1: peer 2 (127.0.0.2:" + port0 + ") leads here to another process than the coordinator reached there"
	if errs[0] == nil || !strings.Contains(errs[0].Error(), want) {
		t.Fatalf("coordinator: %v, want %q", errs[0], want)
	}
}

// TestPeersOneAddress: two entries that are one address, as given or once
// resolved, are refused before anything is served.
func TestPeersOneAddress(t *testing.T) {
	for _, peers := range [][]string{
		{"127.0.0.1:7070", "127.0.0.1:7070"},
		{"127.0.0.1:7070", "localhost:7070"},
		{"127.0.0.1:7070", "127.0.0.1:7071", "127.0.0.1:7070"},
	} {
		start := time.Now()
		_, _, err := Run(chainDeadlock(t), Options{Rank: 1, Peers: peers, ConnectTimeout: time.Minute})
		if err == nil || !strings.Contains(err.Error(), "every worker needs an address of its own") {
			t.Errorf("%v: %v", peers, err)
		}
		if el := time.Since(start); el > 5*time.Second {
			t.Errorf("%v: took %s", peers, el)
		}
	}
}

// TestStartOrder: a worker started before the coordinator, well past
// gRPC's first reconnection delays, still takes part (it failed with
// "connection refused" on a push stream opened while its connection to
// the coordinator was backing off).
func TestStartOrder(t *testing.T) {
	lis, addr := loopbackListeners(t, 2)
	lis[0].Close() // (the coordinator's port refuses until it starts)
	want, err := explore.BFS(chainDeadlock(t), explore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, _, err := Run(chainDeadlock(t), Options{Rank: 1, Peers: addr, Listener: lis[1], ConnectTimeout: 20 * time.Second})
		errc <- err
	}()
	time.Sleep(3 * time.Second)
	l0, err := net.Listen("tcp", addr[0])
	if err != nil {
		t.Skipf("the coordinator's port was taken meanwhile: %v", err)
	}
	r, _, err := Run(chainDeadlock(t), Options{Rank: 0, Peers: addr, Listener: l0, ConnectTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("worker 1: %v", err)
	}
	if r.Verdict != want.Verdict || r.Stats.States != want.Stats.States || r.Stats.Transitions != want.Stats.Transitions {
		t.Fatalf("%s %d states %d transitions, want %s %d %d", r.Verdict, r.Stats.States, r.Stats.Transitions, want.Verdict, want.Stats.States, want.Stats.Transitions)
	}
}

// TestCallsFromOutside: a worker refuses commands and batches that do not
// carry its search's nonce; its hello and ping answer anyone, with who it
// is.
func TestCallsFromOutside(t *testing.T) {
	w := newWorker(chainDeadlock(t), 1, 2)
	w.nonce, w.search = 11, 22
	init, _ := w.m.Initial()
	w.initHash = explore.Hash(init)
	md := func(v string) context.Context {
		return metadata.NewIncomingContext(context.Background(), metadata.Pairs(searchKey, v))
	}
	for _, ctx := range []context.Context{context.Background(), md("21"), md("")} {
		if _, err := w.control(ctx, []byte{opStats}); err == nil || !strings.Contains(err.Error(), "from outside its search") {
			t.Errorf("stats without the search's nonce: %v", err)
		}
		if err := w.fromSearch(ctx); err == nil {
			t.Error("a stream of batches without the search's nonce: no error")
		}
	}
	if _, err := w.control(md("16"), []byte{opStats}); err != nil {
		t.Errorf("stats with the search's nonce: %v", err)
	}
	rep, err := w.control(context.Background(), []byte{opPing})
	if err != nil {
		t.Fatal(err)
	}
	if id, err := readIdentity(rep); err != nil || id != (identity{rank: 1, nonce: 11}) {
		t.Errorf("ping: %+v, %v", id, err)
	}
	// A hello for another rank is answered, but does not make its sender
	// the coordinator; a second coordinator is refused.
	h := func(rank, nonce uint64) []byte {
		var e enc
		e.u(2)
		e.u(w.initHash)
		e.u(w.idHash)
		e.u(rank)
		e.u(nonce)
		return append([]byte{opHello}, e.b...)
	}
	w.search = 0
	if _, err := w.control(context.Background(), h(0, 33)); err != nil || w.searchNonce() != 0 {
		t.Errorf("hello for rank 0: %v, coordinator %d", err, w.searchNonce())
	}
	if _, err := w.control(context.Background(), h(1, 33)); err != nil || w.searchNonce() != 33 {
		t.Errorf("hello for rank 1: %v, coordinator %d", err, w.searchNonce())
	}
	if _, err := w.control(context.Background(), h(1, 44)); err == nil || !strings.Contains(err.Error(), "another coordinator") {
		t.Errorf("a second coordinator: %v", err)
	}
	msg := h(1, 33)
	w.idHash++
	if _, err := w.control(context.Background(), msg); err == nil || !strings.Contains(err.Error(), "another configuration") {
		t.Errorf("another search: %v", err)
	}
}
