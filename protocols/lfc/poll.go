package lfc

import (
	"context"
	"fmt"
	"runtime/debug"

	"lfccheck/internal/goid"
	"lfccheck/model"
	"lfccheck/protocols/mcast"
)

// Poll hands the oldest packet waiting in the node's host buffers to the
// handler, in the caller's goroutine (lfc_poll, which delivers at most
// one packet), and reports whether there was one. It works with
// interrupts enabled too (then it competes with the library's upcalls).
// From inside a handler it returns ErrInUpcall; after Close, ErrClosed;
// if the handler panics, the cluster stops and Poll returns the
// *HandlerPanic (see Options.Handler). To wait for a packet instead of
// polling in a loop, use PollContext.
func (n *Node) Poll() (bool, error) {
	if err := n.pollable(); err != nil {
		return false, err
	}
	return n.deliver(goid.ID())
}

// PollContext is Poll that waits for a packet: it hands the oldest
// waiting packet to the handler, in the caller's goroutine, as soon as
// there is one, and returns (true, nil) once the handler returned. It
// returns (false, err) when ctx ends first (err wraps ctx's error), when
// the cluster closes (ErrClosed) or stops after a handler's panic (the
// *HandlerPanic). From inside a handler it returns ErrInUpcall.
func (n *Node) PollContext(ctx context.Context) (bool, error) {
	if err := n.pollable(); err != nil {
		return false, err
	}
	c := n.c
	defer c.wakeOnEnd(ctx)()
	g := goid.ID()
	for {
		if err := ctx.Err(); err != nil {
			return false, fmt.Errorf("lfc: PollContext on node %d: %w", n.id, err)
		}
		c.mu.Lock()
		gen := c.gen
		c.mu.Unlock()
		ok, err := n.deliver(g)
		if ok || err != nil {
			return ok, err
		}
		// Nothing waited: wait for a step of the node that changes its
		// host queue (observe), the cluster's end or ctx's.
		c.mu.Lock()
		for c.gen == gen && !c.closed && ctx.Err() == nil {
			c.cond.Wait()
		}
		closed, cerr := c.closed, c.closedErr()
		c.mu.Unlock()
		if closed {
			return false, cerr
		}
	}
}

// DisableInterrupts stops the library's upcalls on the node
// (lfc_intr_disable): packets wait in host buffers until Poll, or until
// EnableInterrupts. An upcall already running finishes. Polling mode
// starts with interrupts disabled, Upcall mode with them enabled.
func (n *Node) DisableInterrupts() error {
	if n == nil {
		return ErrNoNode
	}
	// The upcall loop checks the flag under c.mu just before it hands a
	// packet to the handler (upcall): once it is down under c.mu, no
	// upcall starts, and none is waited for.
	n.c.mu.Lock()
	n.intr.Store(false)
	n.c.mu.Unlock()
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
	for {
		ok, err := n.deliver(g)
		if !ok || err != nil {
			return k, err
		}
		k++
	}
}

func (n *Node) pollable() error {
	if n == nil {
		return ErrNoNode
	}
	if u := n.c.upcallNode(); u != nil {
		return fmt.Errorf("lfc: Poll on node %d from the handler of node %d: %w", n.id, u.id, ErrInUpcall)
	}
	c := n.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.closedErr()
	}
	return nil
}

// upcall is deliver for the upcall loop: only while the node's
// interrupts are enabled, checked under c.mu just before the handler runs
// (DisableInterrupts sets the flag under it), so that no upcall starts
// once DisableInterrupts returned.
func (n *Node) upcall(g uint64) (bool, error) {
	n.poll.Lock()
	defer n.poll.Unlock()
	return n.deliverHead(g, true)
}

// deliver hands the oldest packet in the node's host buffers to the
// handler, on goroutine g (the caller), and frees its buffer; false when
// there is none. It returns the cluster's error once it is closed (a
// handler's panic included).
func (n *Node) deliver(g uint64) (bool, error) {
	n.poll.Lock()
	defer n.poll.Unlock()
	return n.deliverHead(g, false)
}

// deliverHead is deliver with n.poll held (by g, perhaps in a handler
// further up its stack: a nested upcall); with intr, only if the node's
// interrupts are enabled when the handler would start.
func (n *Node) deliverHead(g uint64, intr bool) (bool, error) {
	c := n.c
	var pkt model.Packet
	found := false
	if !n.lc.View(func(mn model.Node) {
		if q := c.um.NodeOf(mn).Queue; len(q) > 0 {
			pkt, found = q[0], true
		}
	}) {
		return false, c.stopErr()
	}
	if !found {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.closed {
			return false, c.closedErr()
		}
		return false, nil
	}
	k := key{pkt.Tag, pkt.Origin, uint16(n.id), pkt.Seq}
	group := ""
	if pkt.Tag == mcast.TagMulticast {
		k.to = pkt.Tree
		group = c.topo.Groups[c.topo.Trees[pkt.Tree].Group].Name
	}
	c.mu.Lock()
	if intr && !n.intr.Load() {
		c.mu.Unlock()
		return false, nil
	}
	pl := c.payloads[k]
	var data []byte
	if pl != nil {
		data = pl.data
	}
	c.mu.Unlock()
	d := &delivery{}
	p := Packet{From: int(pkt.Origin), Group: group, Seq: int(pkt.Seq), Payload: data, n: n, d: d}
	if hp := n.runHandler(g, d, p); hp != nil {
		// The handler did not finish: the packet is neither delivered
		// nor kept, and its payload stays with the cluster (the Report
		// lists it in flight). The cluster stops.
		c.mu.Lock()
		if d.state == 1 {
			n.kept--
		}
		d.state = 2
		c.mu.Unlock()
		if d.k != nil {
			close(d.k.landed)
		}
		c.fail(hp)
		return false, hp
	}
	c.mu.Lock()
	// The handler has had the payload: this destination no longer
	// needs the cluster's copy.
	if pl != nil {
		if pl.left--; pl.left == 0 {
			delete(c.payloads, k)
		}
	}
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
		return false, c.stopErr()
	}
	c.mu.Lock()
	c.handled++
	c.cond.Broadcast()
	c.mu.Unlock()
	return true, nil
}

// runHandler runs the handler on goroutine g for delivery d, keeping the
// bookkeeping of running handlers right even if it panics; a panic is
// recovered and returned.
func (n *Node) runHandler(g uint64, d *delivery, p Packet) (hp *HandlerPanic) {
	c := n.c
	n.stack = append(n.stack, d)
	prev := n.handlerG.Swap(g)
	c.upcalls.Add(1)
	defer func() {
		c.upcalls.Add(-1)
		n.handlerG.Store(prev)
		n.stack = n.stack[:len(n.stack)-1]
		if v := recover(); v != nil {
			hp = &HandlerPanic{Node: int(n.id), From: p.From, Seq: p.Seq, Group: p.Group, Value: v, Stack: debug.Stack()}
		}
	}()
	c.opt.Handler(int(n.id), p)
	return nil
}
