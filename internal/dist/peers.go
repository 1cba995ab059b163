package dist

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// The workers' identities. Every worker process draws a nonce when it
// starts (Run); the coordinator's is the search's. The coordinator's hello
// names the rank it means to reach, and a worker answers with its rank
// and its nonce: an address that leads back to the coordinator, to
// another rank, or to a worker already reached under another entry is an
// error before any state is searched. Then every worker checks its own
// connections against the nonces the coordinator reached (opPeers): a
// peer list that names other processes from another machine (a name that
// resolves differently there) is an error too. Every call after the hello
// carries the search's nonce, and a worker refuses calls and batches of
// another search.

// searchKey is the gRPC metadata key of the search's nonce.
const searchKey = "lfccheck-search"

// DefaultPeerTimeout is how long a worker may be silent (Options.PeerTimeout).
const DefaultPeerTimeout = 15 * time.Second

// newNonce draws a process's nonce (never 0, which means none).
func newNonce() uint64 {
	var b [8]byte
	for {
		if _, err := rand.Read(b[:]); err != nil {
			panic(err) // (crypto/rand does not fail on the systems Go supports)
		}
		if n := binary.LittleEndian.Uint64(b[:]); n != 0 {
			return n
		}
	}
}

// idHash is the hash of a search's identity (Options.SearchID).
func idHash(id string) uint64 {
	s := sha256.Sum256([]byte(id))
	return binary.LittleEndian.Uint64(s[:])
}

// identity is what a worker says of itself: its rank and nonce.
type identity struct {
	rank  int
	nonce uint64
}

func (id identity) append(e *enc) {
	e.u(uint64(id.rank))
	e.u(id.nonce)
}

func readIdentity(rep []byte) (identity, error) {
	d := dec{b: rep}
	id := identity{rank: int(d.u()), nonce: d.u()}
	if d.err != nil || len(d.b) != 0 {
		return identity{}, errors.New("a malformed answer: not a worker of lfccheck's distributed search?")
	}
	return id, nil
}

// peerCheckTime bounds the name lookups of checkPeers.
const peerCheckTime = 3 * time.Second

// checkPeers refuses a peer list in which two entries are one address
// once resolved (the same host and port, or names that resolve to one
// address): two workers cannot both serve there, and a worker would reach
// the other's address and so itself or the wrong rank. A name that does
// not resolve (yet: a scheduler's names may appear with their tasks) is
// left to the hello.
func checkPeers(peers []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), peerCheckTime)
	defer cancel()
	addrs := make([][]string, len(peers))
	var wg sync.WaitGroup
	for i, p := range peers {
		host, port, err := net.SplitHostPort(p)
		if err != nil {
			return fmt.Errorf("peer %d: %q is not HOST:PORT", i, p)
		}
		wg.Go(func() {
			ips, err := net.DefaultResolver.LookupHost(ctx, host)
			if err != nil {
				ips = []string{strings.ToLower(host)}
			}
			for _, ip := range ips {
				if a := net.ParseIP(ip); a != nil {
					ip = a.String()
				}
				addrs[i] = append(addrs[i], net.JoinHostPort(ip, port))
			}
		})
	}
	wg.Wait()
	first := map[string]int{}
	for i := range peers {
		for _, a := range addrs[i] {
			if j, dup := first[a]; dup && j != i {
				if peers[i] == peers[j] {
					return fmt.Errorf("peers %d and %d are both %s: every worker needs an address of its own", j, i, peers[i])
				}
				return fmt.Errorf("peers %d (%s) and %d (%s) are one address (%s): every worker needs an address of its own", j, peers[j], i, peers[i], a)
			}
			first[a] = i
		}
	}
	return nil
}

// helloCmd is the coordinator's hello to the worker of rank r.
func (c *coord) helloCmd(r int) []byte {
	var e enc
	e.u(uint64(len(c.peers)))
	e.u(c.w.initHash)
	e.u(c.w.idHash)
	e.u(uint64(r))
	e.u(c.w.nonce)
	return append([]byte{opHello}, e.b...)
}

// greet sends every worker the hello and checks who answers: each rank
// once, none of them the coordinator itself. Then every worker checks
// its connections to the others (opPeers). It waits for the workers to
// come up, in any order, within the connect timeout.
func (c *coord) greet(ctx context.Context, timeout time.Duration) error {
	n := len(c.peers)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ids := make([]identity, n)
	errs := make([]error, n)
	ids[0] = identity{rank: 0, nonce: c.w.nonce}
	var wg sync.WaitGroup
	for r := 1; r < n; r++ {
		wg.Go(func() {
			rep, err := call(ctx, c.conns[r], c.helloCmd(r), true)
			if err == nil {
				ids[r], err = readIdentity(rep)
			}
			errs[r] = err
		})
	}
	wg.Wait()
	for r := 1; r < n; r++ {
		if err := errs[r]; err != nil {
			msg := status.Convert(err).Message()
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				msg = fmt.Sprintf("no answer within %s (%s)", timeout, msg)
			}
			return fmt.Errorf("worker %d (%s): %s", r, c.peers[r], msg)
		}
	}
	for r := 1; r < n; r++ {
		id := ids[r]
		switch {
		case id.nonce == c.w.nonce:
			return fmt.Errorf("peer %d (%s) leads back to the coordinator, worker 0 (%s): is the peer list right, and does every worker serve at its own entry?", r, c.peers[r], c.peers[0])
		case id.rank != r:
			return fmt.Errorf("peer %d (%s) leads to the worker of rank %d (peer %s), not to rank %d: does every worker serve at its own entry?", r, c.peers[r], id.rank, c.peerName(id.rank), r)
		}
	}
	var e enc
	for _, id := range ids {
		e.u(id.nonce)
	}
	e.i(int64(timeout))
	_, err := c.each(ctx, append([]byte{opPeers}, e.b...))
	return err
}

// peerName is the entry of rank r, or "none" when r is out of range.
func (c *coord) peerName(r int) string {
	if r < 0 || r >= len(c.peers) {
		return fmt.Sprintf("none of the %d", len(c.peers))
	}
	return fmt.Sprintf("%d, %s", r, c.peers[r])
}

// hello takes the coordinator's hello: the same number of workers, the
// same search, this rank. It answers with this worker's identity; only a
// hello for this rank makes its sender the coordinator.
func (w *worker) hello(d *dec) ([]byte, error) {
	n, h, id, rank, nonce := d.u(), d.u(), d.u(), d.u(), d.u()
	switch {
	case d.err != nil:
		return nil, d.err
	case int(n) != w.n:
		return nil, fmt.Errorf("worker %d was started for %d workers, the coordinator has %d", w.rank, w.n, n)
	case h != w.initHash || id != w.idHash:
		return nil, fmt.Errorf("worker %d checks another configuration (another model, properties, reductions or lfccheck build)", w.rank)
	}
	if int(rank) == w.rank && nonce != w.nonce {
		w.idMu.Lock()
		prev := w.search
		if prev == 0 {
			w.search = nonce
		}
		w.idMu.Unlock()
		if prev != 0 && prev != nonce {
			return nil, fmt.Errorf("worker %d already works for another coordinator", w.rank)
		}
	}
	var e enc
	identity{rank: w.rank, nonce: w.nonce}.append(&e)
	return e.b, nil
}

// checkPeersCmd checks, on every worker, that its connection to each
// other rank reaches the process the coordinator reached (nonces by
// rank).
func (w *worker) checkPeersCmd(ctx context.Context, d *dec) error {
	nonces := make([]uint64, w.n)
	for i := range nonces {
		nonces[i] = d.u()
	}
	timeout := time.Duration(d.i())
	if d.err != nil {
		return d.err
	}
	if w.searchNonce() != nonces[0] || nonces[w.rank] != w.nonce {
		return fmt.Errorf("worker %d: the coordinator's list of workers does not name this one", w.rank)
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	errs := make([]error, w.n)
	var wg sync.WaitGroup
	for r := range w.n {
		if r == w.rank {
			continue
		}
		wg.Go(func() {
			rep, err := call(ctx, w.conns[r], []byte{opPing}, true)
			var id identity
			if err == nil {
				id, err = readIdentity(rep)
			}
			switch {
			case err != nil:
				errs[r] = fmt.Errorf("worker %d: worker %d (%s) does not answer: %s", w.rank, r, w.peers[r], status.Convert(err).Message())
			case id.nonce == w.nonce:
				errs[r] = fmt.Errorf("worker %d: peer %d (%s) leads back to this worker here: are the peers the same on every machine?", w.rank, r, w.peers[r])
			case id.nonce != nonces[r]:
				errs[r] = fmt.Errorf("worker %d: peer %d (%s) leads here to another process than the coordinator reached there (rank %d): are the peers the same on every machine?", w.rank, r, w.peers[r], id.rank)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil && parent.Err() != nil {
		return parent.Err() // (stopped because another worker failed)
	}
	return errors.Join(errs...)
}

// searchNonce is the nonce of the search this worker is part of (0 before
// the hello).
func (w *worker) searchNonce() uint64 {
	w.idMu.Lock()
	defer w.idMu.Unlock()
	return w.search
}

// direct marks the coordinator's calls of its own worker (coord.each).
type direct struct{}

// fromSearch refuses a call or batch of another search than this
// worker's: a gRPC call must carry the search's nonce (the coordinator's
// own calls of its worker are direct).
func (w *worker) fromSearch(ctx context.Context) error {
	if ctx.Value(direct{}) != nil {
		return nil
	}
	want := w.searchNonce()
	md, _ := metadata.FromIncomingContext(ctx)
	var got string
	if v := md.Get(searchKey); len(v) == 1 {
		got = v[0]
	}
	if want == 0 || got != searchTag(want) {
		return fmt.Errorf("worker %d: a call from outside its search (another coordinator, or no hello yet)", w.rank)
	}
	return nil
}

// outgoing adds the search's nonce to a call's context, once known.
func (w *worker) outgoing(ctx context.Context) context.Context {
	if s := w.searchNonce(); s != 0 {
		return metadata.AppendToOutgoingContext(ctx, searchKey, searchTag(s))
	}
	return ctx
}

// searchTag is a search nonce as the calls carry it (formatted per call
// or stream, which come per level or chunk, never per state).
func searchTag(nonce uint64) string { return strconv.FormatUint(nonce, 16) }

// peerLost is the error of a worker that has not answered for the peer
// timeout.
type peerLost struct {
	rank    int
	addr    string
	timeout time.Duration
	msg     string
}

func (e *peerLost) Error() string {
	return fmt.Sprintf("worker %d (%s) has not answered for %s (stopped, overloaded or its machine lost: --peer-timeout sets how long a worker may be silent): %s", e.rank, e.addr, e.timeout, e.msg)
}

// pingEvery is how often a silent peer is asked whether it is there.
func pingEvery(timeout time.Duration) time.Duration {
	return min(max(timeout/5, 10*time.Millisecond), time.Second)
}

// watch pings every other worker until ctx ends, and calls lost with
// the first that does not answer within timeout.
func (c *coord) watch(ctx context.Context, timeout time.Duration, lost func(error)) {
	for r := 1; r < len(c.peers); r++ {
		go func() {
			tick := time.NewTicker(pingEvery(timeout))
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				pctx, cancel := context.WithTimeout(ctx, timeout)
				_, err := call(pctx, c.conns[r], []byte{opPing}, true)
				cancel()
				if err != nil && ctx.Err() == nil {
					lost(&peerLost{rank: r, addr: c.peers[r], timeout: timeout, msg: status.Convert(err).Message()})
					return
				}
			}
		}()
	}
}
