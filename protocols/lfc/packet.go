package lfc

import (
	"fmt"
	"sync"
)

// Packet is a delivered packet.
type Packet struct {
	From    int    // the node whose program sent it
	Group   string // the multicast group; "" for a unicast packet
	Seq     int    // its number in its stream (per sender and destination, or per tree), from 1
	Payload []byte // the cluster's copy; valid until the handler returns, or until Free if kept

	n *Node
	d *delivery
}

// delivery is one handler call's keep state, guarded by c.mu (aside by
// the node's poll lock).
type delivery struct {
	state int   // 0: in the handler, 1: kept, 2: returned, not kept, 3: returned, kept, 4: kept and freed in the handler
	k     *Kept // when kept
	aside bool  // moved aside ("host H upcall") so that a drain could make nested upcalls
}

// Keep keeps the packet's host buffer after the handler returns (LFC's
// lfc_upcall returning nonzero): the payload stays valid until the
// returned Kept is freed. It fails when the node already keeps
// Options.Keep packets, or when called outside the handler or twice.
func (p Packet) Keep() (*Kept, error) {
	if p.d == nil {
		return nil, fmt.Errorf("lfc: Keep of a packet the cluster did not deliver")
	}
	c := p.n.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if p.d.state != 0 {
		return nil, fmt.Errorf("lfc: Keep outside the packet's handler, or twice")
	}
	if p.n.kept >= c.opt.Keep {
		return nil, fmt.Errorf("lfc: node %d already keeps %d packets (Options.Keep): %w", p.n.id, c.opt.Keep, ErrKeepLimit)
	}
	p.n.kept++
	p.d.state = 1
	p.d.k = &Kept{n: p.n, d: p.d, landed: make(chan struct{})}
	return p.d.k, nil
}

// Kept is a packet the program kept after its upcall.
type Kept struct {
	n      *Node
	d      *delivery
	landed chan struct{} // closed once the node has kept the packet
	freed  bool
	mu     sync.Mutex
}

// Free frees a kept packet's host buffer (lfc_packet_free). It may be
// called from any goroutine, the handler that kept the packet included
// (then the packet is simply not kept).
func (k *Kept) Free() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.freed {
		return fmt.Errorf("lfc: node %d: %w", k.n.id, ErrDoubleFree)
	}
	c := k.n.c
	c.mu.Lock()
	inHandler := k.d.state == 1
	if inHandler {
		k.d.state = 4
		k.n.kept--
	}
	c.mu.Unlock()
	if !inHandler {
		<-k.landed // the node's keep step is done (or the cluster closed)
		c.mu.Lock()
		closed, cerr := c.closed, c.closedErr()
		c.mu.Unlock()
		if closed || !k.n.lc.Do("free") {
			if !closed {
				cerr = c.stopErr()
			}
			return cerr
		}
		c.mu.Lock()
		k.n.kept--
		c.mu.Unlock()
	}
	k.freed = true
	return nil
}
