package lfc

import (
	"context"
	"fmt"

	"lfccheck/internal/goid"
	"lfccheck/model"
	"lfccheck/model/live"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/topology"
	"lfccheck/protocols/ucast"
)

// client is node's program on the live runtime: in Upcall mode it hands
// every delivered packet to the handler; in both modes it keeps the
// node's client interface open until Close.
func (c *Cluster) client(ctx context.Context, lc *live.Client) {
	n := c.nodes[lc.Node()]
	n.lc = lc
	c.ready.Done()
	g := goid.ID()
	for {
		// LFC's signal handler checks the interrupt flag before each
		// upcall (§3.7, race 1), and a node whose interrupts were just
		// enabled finds its waiting packets here (race 2: none is left
		// unannounced).
		for n.intr.Load() {
			if ok, err := n.upcall(g); !ok || err != nil {
				break
			}
		}
		select {
		case <-n.changed:
		case <-ctx.Done():
			return
		}
	}
}

// observe runs in node id's goroutine after each of its steps.
func (c *Cluster) observe(id model.NodeID, mn model.Node) {
	u := c.um.NodeOf(mn)
	n := c.nodes[id]
	c.mu.Lock()
	launched := n.launchBase + u.Next
	changed := n.launched != launched || n.queued != len(u.Queue) || len(n.values) != len(u.FA.Got)
	n.launched, n.queued = launched, len(u.Queue)
	for _, v := range u.FA.Got[len(n.values):] {
		n.values = append(n.values, v)
		c.faGot(v)
	}
	if changed {
		c.gen++
		c.cond.Broadcast()
	}
	c.mu.Unlock()
	select {
	case n.changed <- struct{}{}:
	default:
	}
}

// Send sends payload to node dest (lfc_send_alloc + lfc_ucast_launch):
// it returns once the packet is in the NI's hands, or with an error. It
// is SendContext without a deadline.
func (n *Node) Send(dest int, payload []byte) error {
	return n.SendContext(context.Background(), dest, payload)
}

// SendContext is Send that gives up when ctx ends, returning its error.
// A packet already posted to the NI when ctx ends is still sent (LFC
// cannot take a launched packet back); the error says only that the call
// stopped waiting.
func (n *Node) SendContext(ctx context.Context, dest int, payload []byte) error {
	own, err := n.enter(ctx, "Send")
	if err != nil {
		return err
	}
	if dest < 0 || dest >= len(n.c.nodes) || dest == int(n.id) {
		return fmt.Errorf("lfc: node %d: destination %d is not another node in 0..%d", n.id, dest, len(n.c.nodes)-1)
	}
	return n.post(ctx, own, mcast.WorkEntry{Dest: dest, Count: 1}, ucast.WorkItem{Tag: ucast.TagUnicast, Dest: model.NodeID(dest)}, dest, 1, payload)
}

// Multicast sends payload to every other member of group (lfc_mcast_launch)
// on the node's spanning tree of the group ("": the first group the node
// is a member of; with a tree family, the group of all nodes, which makes
// it lfc_bcast_launch). It returns once the packet is in the NI's hands,
// or with an error. It is MulticastContext without a deadline.
func (n *Node) Multicast(group string, payload []byte) error {
	return n.MulticastContext(context.Background(), group, payload)
}

// MulticastContext is Multicast that gives up when ctx ends (see
// SendContext).
func (n *Node) MulticastContext(ctx context.Context, group string, payload []byte) error {
	own, err := n.enter(ctx, "Multicast")
	if err != nil {
		return err
	}
	if group != "" && !n.c.hasGroup(group) {
		return fmt.Errorf("lfc: node %d: no group %q: %w", n.id, group, ErrUnknownGroup)
	}
	t, err := n.c.topo.CastTree(topology.Cast{Group: group, Root: int(n.id), Count: 1})
	if err != nil {
		return fmt.Errorf("lfc: node %d: %v", n.id, err)
	}
	dests := len(n.c.topo.Groups[n.c.topo.Trees[t].Group].Members) - 1
	return n.post(ctx, own, mcast.WorkEntry{Multicast: true, Group: group, Count: 1},
		ucast.WorkItem{Tag: mcast.TagMulticast, Tree: uint16(t)}, len(n.c.nodes)+t, dests, payload)
}

// FetchAndAdd increments the fetch-and-add variable on the server's NI
// (Options.Server) and returns the value it had (lfc_fetch_and_add, §3.8).
// The request travels on the server's credits like a unicast packet; the
// server's NI answers it at once. Concurrent calls on one node, from any
// goroutines and from handlers nested in another call's wait, each get
// their own request's value: a call takes a ticket when it posts its
// request, and the node's NI answers its requests in order, so the k-th
// value the node gets is the k-th ticket's. It is FetchAndAddContext
// without a deadline.
func (n *Node) FetchAndAdd() (uint32, error) {
	return n.FetchAndAddContext(context.Background())
}

// FetchAndAddContext is FetchAndAdd that gives up when ctx ends, returning
// its error. A request already sent is still answered: its value goes to
// no other call, and the Report counts it (Report.FetchAndAddAbandoned).
// A call whose value has arrived when it gives up returns the value.
func (n *Node) FetchAndAddContext(ctx context.Context) (uint32, error) {
	own, err := n.enter(ctx, "FetchAndAdd")
	if err != nil {
		return 0, err
	}
	c := n.c
	if !c.um.FetchAdd {
		return 0, fmt.Errorf("lfc: node %d: this cluster's protocol offers no fetch-and-add", n.id)
	}
	ticket := -1
	n.send.Lock()
	_, err = n.postLocked(mcast.WorkEntry{FetchAdd: true, Count: 1}, ucast.WorkItem{Tag: ucast.TagFARequest}, -1, 0, nil, &ticket)
	n.send.Unlock()
	if ticket < 0 {
		return 0, err // not posted
	}
	if err == nil {
		err = n.await(ctx, own, func() bool { return len(n.values) > ticket })
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, open := n.faOpen[ticket]; open {
		delete(n.faOpen, ticket)
		if ticket < len(n.values) {
			v := n.values[ticket]
			c.faHanded(n, ticket, v)
			return v, nil
		}
		n.faAbandoned = append(n.faAbandoned, ticket)
	}
	if err == nil {
		err = ErrClosed // Close took the ticket back
	}
	return 0, err
}

// post appends one item of stream to the node's workload and waits until
// the NI has taken it.
func (n *Node) post(ctx context.Context, own bool, e mcast.WorkEntry, it ucast.WorkItem, stream, dests int, payload []byte) error {
	n.send.Lock()
	want, err := n.postLocked(e, it, stream, dests, payload, nil)
	n.send.Unlock()
	if err != nil {
		return err
	}
	return n.await(ctx, own, func() bool { return n.launched >= want })
}

// postLocked appends one item to the node's workload (n.send held) and
// returns how many the node has posted with it. A fetch-and-add request
// takes the node's next ticket, which it sets *ticket to (under c.mu, in
// the order of the workload) once the item is posted.
func (n *Node) postLocked(e mcast.WorkEntry, it ucast.WorkItem, stream, dests int, payload []byte, ticket *int) (int, error) {
	c := n.c
	if len(payload) > c.opt.MaxPayload {
		return 0, fmt.Errorf("lfc: node %d: payload of %d bytes, more than the %d the cluster allows: %w", n.id, len(payload), c.opt.MaxPayload, ErrPayloadTooLarge)
	}
	c.mu.Lock()
	if c.closed {
		defer c.mu.Unlock()
		return 0, c.closedErr()
	}
	seq := n.seq[stream]%maxSeq + 1
	if c.record {
		if n.posted >= ucast.MaxWorkPerHost {
			c.mu.Unlock()
			return 0, fmt.Errorf("lfc: node %d: more than %d sends in a recorded run (the model's limit per host)", n.id, ucast.MaxWorkPerHost)
		}
		if n.seq[stream] >= model.MaxStreamSeq {
			c.mu.Unlock()
			return 0, fmt.Errorf("lfc: node %d: more than %d packets in one stream (%s) in a recorded run: the model's limit, which a recording cluster keeps", n.id, model.MaxStreamSeq, e)
		}
	}
	it.Seq = uint16(seq)
	k := key{it.Tag, n.id, uint16(it.Dest), it.Seq}
	if it.Tag == mcast.TagMulticast {
		k.to = it.Tree
	}
	if dests > 0 {
		if _, busy := c.payloads[k]; busy {
			c.mu.Unlock()
			return 0, fmt.Errorf("lfc: node %d: %d packets of one stream (%s) are undelivered: sequence number %d is still in use", n.id, maxSeq, e, seq)
		}
		c.payloads[k] = &stored{data: append([]byte(nil), payload...), left: dests}
	}
	n.seq[stream] = seq
	c.expected += dests
	n.posted++
	if ticket != nil {
		*ticket = n.faPosted
		n.faOpen[n.faPosted] = struct{}{}
		n.faPosted++
	}
	if c.mon != nil {
		c.mon.post(n.id, it)
	}
	if c.record {
		if l := len(n.work); l > 0 && sameEntry(n.work[l-1], e) {
			n.work[l-1].Count++
		} else {
			n.work = append(n.work, e)
		}
	}
	posted := n.posted
	c.mu.Unlock()
	ok := n.lc.Update(func(mn model.Node) {
		c.um.AppendWork(int(n.id), it)
		if u := c.um.NodeOf(mn); !c.record && u.Next >= compactAt {
			// Nothing replays this run from its start: the launched
			// items go, and the node's launch index restarts
			// (Node.launchBase keeps the count).
			k := c.um.DropLaunched(u)
			c.mu.Lock()
			n.launchBase += k
			c.mu.Unlock()
		}
	})
	if !ok {
		return 0, c.stopErr()
	}
	return posted, nil
}

func sameEntry(a, b mcast.WorkEntry) bool {
	return a.FetchAdd == b.FetchAdd && a.Multicast == b.Multicast && a.Dest == b.Dest && a.Group == b.Group
}

// await waits until done (read under c.mu) holds, the cluster closes or
// ctx ends. Meanwhile the node's goroutine drains (the model's "host H
// drain" is enabled while the node waits); a call from the node's own
// handler (own) also makes nested upcalls, unless they are off.
func (n *Node) await(ctx context.Context, own bool, done func() bool) error {
	c := n.c
	nested := own && c.um.Nested
	defer c.wakeOnEnd(ctx)()
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		switch {
		case done():
			return nil
		case c.closed:
			return c.closedErr()
		case ctx.Err() != nil:
			return fmt.Errorf("lfc: node %d: %w", n.id, ctx.Err())
		}
		if nested && len(n.stack) < maxNesting {
			behind := n.queued
			if d := n.stack[len(n.stack)-1]; !d.aside {
				behind-- // the waiting handler's own packet heads the queue
			}
			if behind > 0 {
				gen := c.gen
				c.mu.Unlock()
				progressed := n.nest()
				c.mu.Lock()
				if progressed || c.gen != gen {
					continue // something changed while c.mu was free
				}
			}
		}
		c.cond.Wait()
	}
}

// nest makes one nested upcall for a call of the innermost handler that
// waits: the handler's packet moves aside ("host H upcall", which the
// model allows only while the node waits), and the next packet's handler
// runs. It reports whether it handed a packet to a handler.
func (n *Node) nest() bool {
	d := n.stack[len(n.stack)-1]
	if !d.aside {
		if !n.lc.Do("upcall") {
			return false // no longer waiting, or closed
		}
		d.aside = true
	}
	ok, _ := n.deliverHead(n.handlerG.Load(), false)
	return ok // an error closed the cluster: the waiting call sees it
}

// hasGroup reports whether the cluster's topology has a group of that
// name.
func (c *Cluster) hasGroup(name string) bool {
	for _, g := range c.topo.Groups {
		if g.Name == name {
			return true
		}
	}
	return false
}
