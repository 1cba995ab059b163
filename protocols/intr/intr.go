// Package intr implements INTR, LFC's polling watchdog (thesis §3.7, §4.4,
// Fig. 4.16), on UCAST's unicast, and registers it as the protocol "intr".
//
// # The modeled system
//
// Every node is UCAST's NI and host (package ucast) with, on the NI, the
// watchdog timer, nr_pkts_received and last_processed (Fig. 4.16), and on
// the host the interrupt-disabled flag that the client toggles without
// synchronizing with the NI, nr_pkts_processed, and a pending network
// signal. Data packets reach the host as in UCAST ("ni N copy" copies a
// received packet into a free host buffer); the host consumes them by
// polling (lfc_poll, at most one packet per poll, §3.7) or from the signal
// handler.
//
// # Actions and atomicity
//
//   - UCAST's "host H launch", "deliver I->J" and "ni N copy". The arrival
//     of a data packet destined for the host (in event_packet_received)
//     counts it in nr_pkts_received and starts the watchdog unless it runs
//     (§4.4: "INTR starts the watchdog timer each time a packet arrives and
//     the timer is not already running").
//   - "host H poll": lfc_poll finds a delivered packet and runs the upcall
//     for it: the packet is processed and nr_pkts_processed incremented
//     (UCAST's "host H process", which INTR replaces).
//   - "host H disable", "host H enable": the client toggles the flag in host
//     memory, with no communication with the NI (§3.7).
//   - "ni N timeout": the watchdog expires and event_watchdog_timeout (Fig.
//     4.16) runs to completion. It fetches the flag and the counter in one
//     DMA transfer; the host runs concurrently, but the values the handler
//     uses are one snapshot taken at the transfer and the handler reads the
//     host nothing else, so the step is equivalent to one taken at the
//     snapshot. Expiry is nondeterministic while the timer runs: the model
//     has no clock, so a timeout may come before or after any host step.
//   - "host H signal": the pending network signal is delivered and LFC's
//     signal handler runs: if the client has interrupts enabled it calls
//     lfc_poll once (one packet at most), otherwise it returns (§3.7).
//
// # INTR under MCAST
//
// With --cast (and --tree), the NIs run MCAST (package mcast) and the
// hosts receive multicast packets beside the --flow unicast ones. As Fig.
// 4.7 does, the arrival of a MULTICAST packet counts it in
// nr_pkts_received (and starts the watchdog) in the same step that
// forwards it to the NI's children; its buffer is released when it has
// been copied and forwarded. Variant unicast-count counts UNICAST packets
// only (Fig. 4.3's count, not extended): a multicast packet then starts no
// watchdog (timer-running fails).
//
// # Panda on the host (§6.2.1, §6.2.2)
//
// With --panda on, the free client (poll, disable, enable without
// fairness) is replaced by Panda over OpenThreads with one application
// thread:
//
//   - "host H lock" and "host H unlock": the thread takes Panda's lock
//     around an LFC call and releases it (§6.2.1); the LFC routine itself
//     is not a step of its own: inside it LFC logically disables
//     interrupts, so the signal handler would return at once, and the
//     window that matters is the one where the thread holds the lock with
//     interrupts still enabled. Unlock is weakly fair per thread; sends
//     stay "host H launch".
//   - "host H block": the thread blocks (it waits for a message); the
//     scheduler finds no runnable thread, disables interrupts and polls in
//     a tight loop (§6.2.2). No fairness: the thread may compute for ever.
//   - "host H poll" and "host H poll and wake": the scheduler's idle loop
//     polls (taking Panda's lock, so only while it is free); the upcall
//     may wake the thread, and then the scheduler re-enables interrupts and
//     schedules it (§6.2.2). Weakly fair together per host.
//   - "host H signal" is Panda's signal handler: it takes the lock (the
//     step waits while the thread holds it: with OpenThreads the handler
//     can block as a thread), runs LFC's handler, whose lfc_upcall releases
//     the lock around the client's handler and takes it again, and
//     releases the lock (§6.2.1's third measure).
//
// The interleaving of the handler with the thread is a modelling choice:
// OpenThreads runs upcalls that block in threads of their own (§6.2.3), so
// the model lets every step of either come first. Variant
// unlocked-signal is the order before the thesis's fix: LFC's handler
// runs without the lock, its lfc_upcall releases a lock that was never
// acquired (panda-lock fails in 5 steps, exactly the sentence of
// §6.2.1). Variant late-enable reverses §6.2.2's order on wake-up: the
// scheduler switches to the woken thread before re-enabling interrupts,
// and since it runs again only when the thread blocks, they stay off
// while the thread computes: packets that arrive meanwhile are never
// signalled (busy-delivery fails on a fair lasso).
//
// # Fairness (liveness)
//
// A host may compute for ever without polling, toggling its flag or
// sending (otherwise "no lost interrupt" would hold trivially): poll,
// enable, disable and launch get no fairness, and the protocol declares
// Stutter, so a run may stop for ever in any state where only those are
// enabled. The NI's timer expiry is weakly fair per NI ("timer N": a running
// watchdog eventually expires), and so are links, copies (per NI) and the
// delivery of a pending signal (per host: the operating system delivers
// it). No strong fairness is needed: each of these, once enabled, stays
// enabled until taken.
//
// # No ample action kind
//
// INTR's state graph has cycles (a host toggles its flag for ever), so an
// ample kind would need, besides commuting with every action, disabling
// none and being invisible to the properties, fairness with a class of
// its own (see the properties package's checker_reduction.go). No kind
// qualifies, so the ample-set reduction is off for INTR (its "reduction:"
// line says the protocol declares none):
//
//   - "host H poll", "host H enable", "host H disable" and "host H
//     launch" have no fairness: the runs where a host stops polling or
//     toggling are the ones no-lost-interrupt is about, and a reduction
//     taking these steps at once would lose them. Poll and the toggles
//     also change what no-lost-interrupt reads (unprocessed packets,
//     the flag), and poll what timer-running reads.
//   - "ni N timeout" sets the pending signal and stops the timer (read by
//     no-lost-interrupt and timer-running) and reads the host's flag and
//     counter, so it does not commute with poll or the toggles.
//   - "host H signal" clears the pending signal (no-lost-interrupt reads
//     it), pops the host queue (it can disable poll) and reads the flag.
//   - "ni N copy" changes nothing the properties read (a packet moves
//     from the NI to the host queue, unprocessed either way), but the
//     credit its release returns goes out on the link to the packet's
//     sender, and so may a data packet the host launches, or one the
//     delivery of a CREDIT unblocks: the two orders put them on the FIFO
//     link in different orders. (Declared ample in a test, it is caught
//     by the full-graph check of the declaration.)
//   - With Panda, "host H unlock" is invisible to busy-delivery but
//     enables the signal handler and the idle loop's poll (both fair and
//     not persistent: the thread can take the lock again first), and the
//     scheduler's poll and wake are visible.
//
// The INTR configuration (P=3, every node sending to every other)
// is therefore reduced by symmetry only (docs/results.md). What could
// qualify is a copy in some states only: one whose packet came from a
// node S that its NI has nothing left to send to (no launch to S left,
// none blocked) commutes with every step, since only the NI's sends to S
// share the link its credit takes, and no copy lies on a cycle (each
// moves a packet for good). The checker has no state-dependent ample
// condition: its ample kinds are ample wherever they are enabled.
//
// # Properties
//
//  1. no-async-upcall-disabled: the signal handler never runs an upcall
//     while the client has interrupts disabled (race 1 is harmless only
//     because the handler re-checks the flag).
//  2. timer-running: the watchdog runs whenever a packet for the host has
//     arrived and is not yet processed.
//  3. no-progress-interrupt: no interrupt is raised when the host processed
//     a packet between the NI's previous counter read and the read the
//     decision uses (a ghost records the progress at the read).
//  4. no-lost-interrupt (liveness, race 2): after a state where packets
//     wait unprocessed while interrupts are enabled, eventually the host is
//     interrupted (a signal is pending), has processed them, or has
//     disabled interrupts.
//  5. race-1 and race-2 (sometimes): both races of §3.7 are reachable: an
//     interrupt pending while the client has disabled interrupts; and the
//     NI having decided not to interrupt because interrupts were disabled
//     while the client has since enabled them and packets wait.
//  6. late-interrupt (sometimes): a signal is pending although the host
//     processed a packet since the NI read its counter: the NI decides on
//     a snapshot, so its interrupt may reach a host that has polled
//     meanwhile. A performance effect, reachable with the single DMA of
//     §4.4 as with two (variant two-dma), not a violation.
//  7. With Panda: panda-lock (its lock is released only by the context
//     holding it, §6.2.1) and the liveness property busy-delivery (per
//     host: while the thread runs and packets wait unprocessed, the host is
//     eventually interrupted, processes them, or the thread blocks and the
//     scheduler polls: §6.2.2's "interrupts whenever runnable threads
//     exist").
//  8. UCAST's credit-conservation, pool-bound, fifo and exactly-once, and
//     deadlock restated: hosts can always toggle their flags, so no state is
//     terminal; a state where nothing but toggling is possible must have
//     finished all work.
//
// # Thesis gaps and modelling choices
//
//   - §4.4 fetches the flag and the counter "using a single DMA transfer"
//     but gives no reason that makes two transfers wrong. Variant two-dma
//     reads the counter in the timeout step and the flag in a later "ni N
//     dma" step; every property holds (a suite row). Its only effect is an
//     interrupt raised on a counter the host has since overtaken, which
//     late-interrupt shows the single transfer has as well (the host polls
//     between the read and the signal). Earlier versions measured
//     no-progress-interrupt up to the decision instead of the read and
//     failed two-dma on it: a modelling artefact, now gone.
//   - §3.7 says the signal handler "invokes lfc_poll() to process pending
//     packets", while lfc_poll delivers at most one packet. The model's
//     handler polls once; packets left over are caught by the next timeouts
//     (the host made progress, so the next timeout restarts the timer and
//     the one after it interrupts again).
//   - Fig. 4.16 compares counters with ">". With a counter of limited width
//     (variant narrow-counter: 2 bits) the counter wraps and ">" reports no
//     progress after progress: an interrupt is raised although the host
//     processed packets. Comparing with "!=" would be right for any width
//     wider than the number of packets processed between two timeouts.
//   - nr_pkts_received counts packets when they arrive at the NI, not when
//     they are copied to the host: the timer starts on arrival (§4.4), and a
//     count of copies would let a timeout before the copy cancel the timer
//     while the packet still waits.
package intr

import (
	"encoding/binary"
	"fmt"

	"lfccheck/model"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/ucast"
)

// Variant names.
const (
	Correct            = "correct"
	NoRecheck          = "no-recheck"
	CancelWhenDisabled = "cancel-when-disabled"
	CancelOnProgress   = "cancel-on-progress"
	TwoDMA             = "two-dma"
	NarrowCounter      = "narrow-counter"
	UnicastCount       = "unicast-count"
	UnlockedSignal     = "unlocked-signal"
	LateEnable         = "late-enable"
)

// Holders of Panda's lock (Node.Lock).
const (
	lockFree    = 0
	lockThread  = 1
	lockHandler = 2
)

// noRead marks that no first DMA of variant two-dma is outstanding.
const noRead = 0xff

// Node is a node's state: UCAST's, plus INTR's NI and host state and two
// ghost flags the properties read.
type Node struct {
	ucast.Node
	// NI
	Received      uint8 // nr_pkts_received (modulo the counter width)
	LastProcessed uint8 // last_processed
	Timer         bool  // the watchdog runs
	ReadCount     uint8 // two-dma: the counter the first DMA read, or noRead
	SawDisabled   bool  // the last timeout held back because interrupts were off
	// host
	Disabled  bool  // the interrupt-status flag in host memory
	Processed uint8 // nr_pkts_processed (modulo the counter width)
	Signal    bool  // a network signal is pending
	// host, with Panda (§6.2.1, §6.2.2)
	Idle     bool  // every thread is blocked: the scheduler polls with interrupts disabled
	ThreadIn bool  // the application thread is inside Panda's bracket around an LFC call
	Lock     uint8 // the holder of Panda's lock: lockFree, lockThread or lockHandler
	// ghosts (history, for properties)
	Progressed        bool // the host processed a packet since the NI last read its counter
	ReadProgressed    bool // two-dma: Progressed as the first DMA found it
	BadUnlock         bool // Panda's lock was released by a context that did not hold it
	UpcallDisabled    bool // the signal handler ran an upcall with interrupts disabled
	ProgressInterrupt bool // an interrupt was raised although the host had made progress

	panda bool // configuration, not state: the host runs Panda
}

// Base returns the UCAST part.
func (n *Node) Base() *ucast.Node { return &n.Node }

func (n *Node) flags() []bool {
	return []bool{n.Timer, n.SawDisabled, n.Disabled, n.Signal, n.Progressed, n.UpcallDisabled, n.ProgressInterrupt,
		n.ReadProgressed, n.Idle, n.ThreadIn, n.BadUnlock}
}

// Encode appends the canonical encoding.
func (n *Node) Encode(buf []byte) []byte { return n.encodeOwn(n.Node.Encode(buf)) }

// encodeOwn appends the encoding of INTR's part of the node.
func (n *Node) encodeOwn(buf []byte) []byte {
	buf = append(buf, n.Received, n.LastProcessed, n.ReadCount, n.Processed, n.Lock)
	var f uint64
	for i, b := range n.flags() {
		if b {
			f |= 1 << i
		}
	}
	return binary.AppendUvarint(buf, f)
}

// Decode reads the encoding written by Encode.
func (n *Node) Decode(d *model.Decoder) {
	n.Node.Decode(d)
	n.decodeOwn(d)
}

// CodesRenamed implements model.RenamingCoder: INTR's part names no node,
// so UCAST's renaming coder with INTR's part appended covers the node.
func (n *Node) CodesRenamed(self model.Node) bool {
	_, ok := self.(*Node)
	return ok && n.M.AllowSymmetry
}

// EncodeRenamed implements model.RenamingCoder.
func (n *Node) EncodeRenamed(buf []byte, p, inv *model.Perm) []byte {
	return n.encodeOwn(n.Node.EncodeRenamed(buf, p, inv))
}

// DecodeRenamed implements model.RenamingCoder.
func (n *Node) DecodeRenamed(d *model.Decoder, from model.NodeID, p *model.Perm) {
	n.Node.DecodeRenamed(d, from, p)
	n.decodeOwn(d)
}

// decodeOwn reads INTR's part of the node.
func (n *Node) decodeOwn(d *model.Decoder) {
	n.Received, n.LastProcessed = d.Byte(), d.Byte()
	n.ReadCount, n.Processed, n.Lock = d.Byte(), d.Byte(), d.Byte()
	f := d.Uvarint()
	bit := func(i int) bool { return f&(1<<i) != 0 }
	n.Timer, n.SawDisabled, n.Disabled = bit(0), bit(1), bit(2)
	n.Signal, n.Progressed, n.UpcallDisabled, n.ProgressInterrupt = bit(3), bit(4), bit(5), bit(6)
	n.ReadProgressed, n.Idle, n.ThreadIn, n.BadUnlock = bit(7), bit(8), bit(9), bit(10)
}

// RenameFrom implements model.Renamable: UCAST's state renamed, and
// INTR's, which names no node, copied.
func (n *Node) RenameFrom(src model.Node, p *model.Perm) {
	s := src.(*Node)
	n.Node.RenameFrom(&s.Node, p)
	base := n.Node
	*n = *s
	n.Node = base
}

// CopyFrom makes n a deep copy of src, a *Node.
func (n *Node) CopyFrom(src model.Node) {
	s := src.(*Node)
	n.Node.CopyNode(&s.Node)
	base := n.Node
	*n = *s
	n.Node = base
}

func (n *Node) niLine() string {
	read := "-"
	if n.ReadCount != noRead {
		read = fmt.Sprint(n.ReadCount)
	}
	return fmt.Sprintf("intr ni %d: timer %s, received %d, last_processed %d, dma read %s", n.ID, onOff(n.Timer), n.Received, n.LastProcessed, read)
}

func (n *Node) hostLine() string {
	s := fmt.Sprintf("intr host %d: interrupts %s, processed %d, signal %s", n.ID, enabled(n.Disabled), n.Processed, pending(n.Signal))
	if n.panda {
		s += fmt.Sprintf("; panda: %s, thread %s, lock %s", sched(n.Idle), inOut(n.ThreadIn), holder(n.Lock))
	}
	return s
}

func sched(idle bool) string {
	if idle {
		return "all threads blocked (polling)"
	}
	return "thread running"
}

func inOut(in bool) string {
	if in {
		return "in an LFC call"
	}
	return "computing"
}

func holder(l uint8) string {
	switch l {
	case lockThread:
		return "held by the thread"
	case lockHandler:
		return "held by the signal handler"
	}
	return "free"
}

func onOff(b bool) string {
	if b {
		return "running"
	}
	return "stopped"
}

func enabled(disabled bool) string {
	if disabled {
		return "disabled"
	}
	return "enabled"
}

func pending(b bool) string {
	if b {
		return "pending"
	}
	return "none"
}

// Describe renders the node: UCAST's lines and INTR's NI and host lines.
func (n *Node) Describe() []string { return append(n.Node.Describe(), n.niLine(), n.hostLine()) }

// Diff reports what differs from prev, a *Node.
func (n *Node) Diff(prev model.Node, ch func(what, from, to string)) {
	p := prev.(*Node)
	n.Node.Diff(&p.Node, ch)
	ch(fmt.Sprintf("ni %d timer", n.ID), onOff(p.Timer), onOff(n.Timer))
	ch(fmt.Sprintf("ni %d received", n.ID), fmt.Sprint(p.Received), fmt.Sprint(n.Received))
	ch(fmt.Sprintf("ni %d last_processed", n.ID), fmt.Sprint(p.LastProcessed), fmt.Sprint(n.LastProcessed))
	ch(fmt.Sprintf("ni %d dma read", n.ID), readStr(p.ReadCount), readStr(n.ReadCount))
	ch(fmt.Sprintf("host %d interrupts", n.ID), enabled(p.Disabled), enabled(n.Disabled))
	ch(fmt.Sprintf("host %d processed", n.ID), fmt.Sprint(p.Processed), fmt.Sprint(n.Processed))
	ch(fmt.Sprintf("host %d signal", n.ID), pending(p.Signal), pending(n.Signal))
	if n.panda {
		ch(fmt.Sprintf("host %d scheduler", n.ID), sched(p.Idle), sched(n.Idle))
		ch(fmt.Sprintf("host %d thread", n.ID), inOut(p.ThreadIn), inOut(n.ThreadIn))
		ch(fmt.Sprintf("host %d panda lock", n.ID), holder(p.Lock), holder(n.Lock))
	}
	if n.BadUnlock && !p.BadUnlock {
		ch(fmt.Sprintf("host %d panda lock", n.ID), "-", "released by a context that did not hold it")
	}
	if n.UpcallDisabled && !p.UpcallDisabled {
		ch(fmt.Sprintf("host %d upcall from the signal handler", n.ID), "-", "with interrupts disabled")
	}
	if n.ProgressInterrupt && !p.ProgressInterrupt {
		ch(fmt.Sprintf("ni %d interrupt", n.ID), "-", "raised although the host made progress")
	}
}

func readStr(v uint8) string {
	if v == noRead {
		return "-"
	}
	return fmt.Sprint(v)
}

func node(n model.Node) *Node { return n.(*Node) }

// Machine is INTR on UCAST's machine.
type Machine struct {
	*ucast.Machine
	variant string
	mask    uint8 // counter width mask
	panda   bool  // every host runs Panda (§6.2.1, §6.2.2)
	kinds   []*model.ActionKind
}

// Kinds: UCAST's launch, deliver and copy, then poll, disable, enable,
// timeout, signal and, for two-dma, the second DMA's completion.
func (m *Machine) Kinds() []*model.ActionKind {
	if m.kinds != nil {
		return m.kinds
	}
	u := m.Machine.Kinds()
	launch := *u[0]
	launch.Live = model.LiveClient // the client sends on its own schedule
	m.kinds = []*model.ActionKind{&launch, u[1], u[2]}
	if m.panda {
		m.kinds = append(m.kinds, m.pandaKinds()...)
	} else {
		m.kinds = append(m.kinds,
			&model.ActionKind{Name: "poll", Pattern: "host {node} poll", Owner: model.OwnerHost, Live: model.LiveClient,
				Enabled: func(mn model.Node) bool { return len(node(mn).Queue) > 0 },
				Apply:   func(mn model.Node, _ *model.Outbox) { m.upcall(node(mn)) }},
			&model.ActionKind{Name: "disable", Pattern: "host {node} disable", Owner: model.OwnerHost, Live: model.LiveClient,
				Enabled: func(mn model.Node) bool { return !node(mn).Disabled },
				Apply:   func(mn model.Node, _ *model.Outbox) { node(mn).Disabled = true }},
			&model.ActionKind{Name: "enable", Pattern: "host {node} enable", Owner: model.OwnerHost, Live: model.LiveClient,
				Enabled: func(mn model.Node) bool { return node(mn).Disabled },
				Apply:   func(mn model.Node, _ *model.Outbox) { node(mn).Disabled = false }})
	}
	m.kinds = append(m.kinds,
		&model.ActionKind{Name: "timeout", Pattern: "ni {node} timeout", Owner: model.OwnerNI, Fair: model.Weak, FairClass: "timer {node}",
			Live:    model.LiveTimer,
			Enabled: func(mn model.Node) bool { n := node(mn); return n.Timer && n.ReadCount == noRead },
			Apply:   func(mn model.Node, _ *model.Outbox) { m.timeout(node(mn)) }},
		&model.ActionKind{Name: "signal", Pattern: "host {node} signal", Owner: model.OwnerHost, Fair: model.Weak,
			Enabled: func(mn model.Node) bool {
				n := node(mn)
				return n.Signal && (!m.panda || m.variant == UnlockedSignal || n.Lock == lockFree)
			},
			Apply: func(mn model.Node, _ *model.Outbox) { m.signal(node(mn)) }})
	if m.variant == TwoDMA {
		m.kinds = append(m.kinds, &model.ActionKind{Name: "dma", Pattern: "ni {node} dma", Owner: model.OwnerNI, Fair: model.Weak,
			Enabled: func(mn model.Node) bool { return node(mn).ReadCount != noRead },
			Apply: func(mn model.Node, _ *model.Outbox) {
				n := node(mn)
				proc := n.ReadCount
				n.ReadCount = noRead
				m.decide(n, proc, n.Disabled, n.ReadProgressed)
				n.ReadProgressed = false
			}})
	}
	return m.kinds
}

// NewNode builds node id in its initial state.
func (m *Machine) NewNode(id model.NodeID) model.Node {
	n := &Node{ReadCount: noRead, panda: m.panda}
	m.InitNode(&n.Node, id)
	return n
}

// Receive is event_packet_received: UCAST's handler, then a data packet
// for the host is counted and starts the watchdog unless it runs.
func (m *Machine) Receive(mn model.Node, from model.NodeID, pkt model.Packet, out *model.Outbox) {
	n := node(mn)
	m.Machine.Receive(mn, from, pkt, out)
	if pkt.Tag == ucast.TagUnicast || pkt.Tag == mcast.TagMulticast && m.variant != UnicastCount {
		n.Received = (n.Received + 1) & m.mask
		n.Timer = true
	}
}

// upcall processes the oldest delivered packet (lfc_poll finding one).
func (m *Machine) upcall(n *Node) {
	m.Process(&n.Node)
	n.Processed = (n.Processed + 1) & m.mask
	n.Progressed = true
}

// signal is LFC's signal handler: re-check the flag, then poll once.
// With Panda it is Panda's handler (§6.2.1): it takes Panda's lock (the
// step is enabled only while the lock is free: the handler waits for it),
// runs LFC's handler, whose upcall releases the lock around the client's
// handler and takes it again (lfc_upcall), and releases the lock. Variant
// unlocked-signal runs LFC's handler directly: lfc_upcall releases a lock
// the handler never took, takes it again, and nobody releases it.
func (m *Machine) signal(n *Node) {
	n.Signal = false
	locked := m.panda && m.variant != UnlockedSignal
	if locked {
		n.Lock = lockHandler
	}
	if n.Disabled && m.variant != NoRecheck {
		if locked {
			n.Lock = lockFree
		}
		return // race 1: the client disabled interrupts meanwhile
	}
	if len(n.Queue) > 0 {
		if n.Disabled {
			n.UpcallDisabled = true
		}
		if m.panda { // lfc_upcall: Panda releases its lock
			if n.Lock != lockHandler {
				n.BadUnlock = true
			}
			n.Lock = lockFree
		}
		m.upcall(n)
		if m.panda { // and takes it again before returning
			n.Lock = lockHandler
		}
	}
	if locked {
		n.Lock = lockFree
	}
}

// pandaKinds are the host's steps with Panda over OpenThreads (§6.2.1,
// §6.2.2), in place of the free client's poll, disable and enable.
func (m *Machine) pandaKinds() []*model.ActionKind {
	idlePoll := func(mn model.Node) bool { n := node(mn); return n.Idle && len(n.Queue) > 0 && n.Lock == lockFree }
	return []*model.ActionKind{
		{Name: "lock", Pattern: "host {node} lock", Owner: model.OwnerHost, Live: model.LiveClient,
			Enabled: func(mn model.Node) bool { n := node(mn); return !n.Idle && !n.ThreadIn && n.Lock == lockFree },
			Apply:   func(mn model.Node, _ *model.Outbox) { n := node(mn); n.ThreadIn, n.Lock = true, lockThread }},
		{Name: "unlock", Pattern: "host {node} unlock", Owner: model.OwnerHost, Fair: model.Weak, FairClass: "thread {node}", Live: model.LiveClient,
			Enabled: func(mn model.Node) bool { return node(mn).ThreadIn },
			Apply: func(mn model.Node, _ *model.Outbox) {
				n := node(mn)
				if n.Lock != lockThread {
					n.BadUnlock = true
				}
				n.ThreadIn, n.Lock = false, lockFree
			}},
		{Name: "block", Pattern: "host {node} block", Owner: model.OwnerHost, Live: model.LiveClient,
			Enabled: func(mn model.Node) bool { n := node(mn); return !n.Idle && !n.ThreadIn },
			Apply:   func(mn model.Node, _ *model.Outbox) { n := node(mn); n.Idle, n.Disabled = true, true }},
		{Name: "poll", Pattern: "host {node} poll", Owner: model.OwnerHost, Fair: model.Weak, FairClass: "scheduler {node}",
			Enabled: idlePoll,
			Apply:   func(mn model.Node, _ *model.Outbox) { m.upcall(node(mn)) }},
		{Name: "wake", Pattern: "host {node} poll and wake", Owner: model.OwnerHost, Fair: model.Weak, FairClass: "scheduler {node}",
			Enabled: idlePoll,
			Apply: func(mn model.Node, _ *model.Outbox) {
				n := node(mn)
				m.upcall(n)
				n.Idle = false
				if m.variant != LateEnable {
					n.Disabled = false // re-enable interrupts, then schedule the thread
				}
			}},
	}
}

// timeout is event_watchdog_timeout (Fig. 4.16). Variant two-dma reads the
// counter now and the flag in a second step.
func (m *Machine) timeout(n *Node) {
	if m.variant == TwoDMA {
		n.ReadCount = n.Processed
		n.ReadProgressed, n.Progressed = n.Progressed, false
		return
	}
	m.decide(n, n.Processed, n.Disabled, n.Progressed)
	n.Progressed = false
}

// greater is Fig. 4.16's ">" on counters of the configured width.
func greater(a, b uint8) bool { return a > b }

// decide is Fig. 4.16 after fetch_from_host, with the counter proc and
// flag disabled as read; progressed says whether the host processed a
// packet between the previous counter read and this one (a ghost).
func (m *Machine) decide(n *Node, proc uint8, disabled, progressed bool) {
	progress := greater(proc, n.LastProcessed)
	n.SawDisabled = false
	switch {
	case proc == n.Received:
		n.Timer = false // the client processed all packets
	case disabled && m.variant == CancelWhenDisabled:
		n.Timer = false
		n.SawDisabled = true
	case progress && m.variant == CancelOnProgress:
		n.Timer = false
	case disabled || progress:
		n.SawDisabled = disabled && !progress // restart; the timer keeps running
	default:
		n.Signal = true // send_interrupt_to_host, then restart
		if progressed {
			n.ProgressInterrupt = true
		}
	}
	n.LastProcessed = proc
}
