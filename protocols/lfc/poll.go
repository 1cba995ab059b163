package lfc

import (
	"fmt"

	"lfccheck/internal/goid"
	"lfccheck/model"
	"lfccheck/protocols/mcast"
)

// Poll hands the oldest packet waiting in the node's host buffers to the
// handler, in the caller's goroutine (lfc_poll, which delivers at most
// one packet), and reports whether there was one. It works with
// interrupts enabled too (then it competes with the library's upcalls).
// From inside a handler it returns ErrInUpcall.
func (n *Node) Poll() (bool, error) {
	if err := n.pollable(); err != nil {
		return false, err
	}
	return n.deliver(goid.ID()), nil
}

// DisableInterrupts stops the library's upcalls on the node
// (lfc_intr_disable): packets wait in host buffers until Poll, or until
// EnableInterrupts. An upcall already running finishes. Polling mode
// starts with interrupts disabled, Upcall mode with them enabled.
func (n *Node) DisableInterrupts() error {
	if n == nil {
		return ErrNoNode
	}
	n.intr.Store(false)
	return nil
}

// EnableInterrupts resumes the library's upcalls on the node
// (lfc_intr_enable); packets that arrived meanwhile are handed to the
// handler at once (LFC's watchdog keeps interrupting for them, §3.7: no
// interrupt is lost).
func (n *Node) EnableInterrupts() error {
	if n == nil {
		return ErrNoNode
	}
	n.intr.Store(true)
	select {
	case n.changed <- struct{}{}:
	default:
	}
	return nil
}

// PollAll is Poll until no packet waits; it returns how many it handed.
func (n *Node) PollAll() (int, error) {
	if err := n.pollable(); err != nil {
		return 0, err
	}
	g := goid.ID()
	k := 0
	for n.deliver(g) {
		k++
	}
	return k, nil
}

func (n *Node) pollable() error {
	if n == nil {
		return ErrNoNode
	}
	if u := n.c.upcallNode(); u != nil {
		return fmt.Errorf("lfc: Poll on node %d from the handler of node %d: %w", n.id, u.id, ErrInUpcall)
	}
	return nil
}

// deliver hands the oldest packet in the node's host buffers to the
// handler, on goroutine g (the caller), and frees its buffer; false when
// there is none.
func (n *Node) deliver(g uint64) bool {
	n.poll.Lock()
	defer n.poll.Unlock()
	return n.deliverHead(g)
}

// deliverHead is deliver with n.poll held (by g, perhaps in a handler
// further up its stack: a nested upcall).
func (n *Node) deliverHead(g uint64) bool {
	c := n.c
	var pkt model.Packet
	found := false
	if !n.lc.View(func(mn model.Node) {
		if q := c.um.NodeOf(mn).Queue; len(q) > 0 {
			pkt, found = q[0], true
		}
	}) || !found {
		return false
	}
	k := key{pkt.Tag, pkt.Origin, uint16(n.id), pkt.Seq}
	group := ""
	if pkt.Tag == mcast.TagMulticast {
		k.to = pkt.Tree
		group = c.topo.Groups[c.topo.Trees[pkt.Tree].Group].Name
	}
	c.mu.Lock()
	pl := c.payloads[k]
	var data []byte
	if pl != nil {
		data = pl.data
		if pl.left--; pl.left == 0 {
			delete(c.payloads, k)
		}
	}
	c.mu.Unlock()
	d := &delivery{}
	n.runHandler(g, d, Packet{From: int(pkt.Origin), Group: group, Seq: int(pkt.Seq), Payload: data, n: n, d: d})
	c.mu.Lock()
	kept := d.state == 1
	if kept {
		d.state = 3
	} else if d.state == 0 {
		d.state = 2
	}
	c.mu.Unlock()
	// The handler ran while the packet was in its host buffer, as an
	// upcall does; now the buffer is freed or kept. Only this node's
	// handler goroutine takes packets from its host queue, so the head is
	// still pkt, unless a nested upcall moved it aside: then it is the
	// innermost packet aside.
	step := "process"
	switch {
	case d.aside:
		step = "return"
	case kept:
		step = "keep"
	}
	ok := n.lc.Do(step)
	if kept {
		close(d.k.landed)
	}
	if !ok {
		return false
	}
	c.mu.Lock()
	c.handled++
	c.cond.Broadcast()
	c.mu.Unlock()
	return true
}

// runHandler runs the handler on goroutine g for delivery d, keeping the
// bookkeeping of running handlers right even if it panics.
func (n *Node) runHandler(g uint64, d *delivery, p Packet) {
	c := n.c
	n.stack = append(n.stack, d)
	prev := n.handlerG.Swap(g)
	c.upcalls.Add(1)
	defer func() {
		c.upcalls.Add(-1)
		n.handlerG.Store(prev)
		n.stack = n.stack[:len(n.stack)-1]
	}()
	c.opt.Handler(int(n.id), p)
}
