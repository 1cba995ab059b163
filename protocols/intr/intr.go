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
// # Properties
//
//  1. no-async-upcall-disabled: the signal handler never runs an upcall
//     while the client has interrupts disabled (race 1 is harmless only
//     because the handler re-checks the flag).
//  2. timer-running: the watchdog runs whenever a packet for the host has
//     arrived and is not yet processed.
//  3. no-progress-interrupt: no interrupt is raised when the host processed
//     a packet since the previous timeout.
//  4. no-lost-interrupt (liveness, race 2): after a state where packets
//     wait unprocessed while interrupts are enabled, eventually the host is
//     interrupted (a signal is pending), has processed them, or has
//     disabled interrupts.
//  5. race-1 and race-2 (sometimes): both races of §3.7 are reachable: an
//     interrupt pending while the client has disabled interrupts; and the
//     NI having decided not to interrupt because interrupts were disabled
//     while the client has since enabled them and packets wait.
//  6. UCAST's credit-conservation, pool-bound, fifo and exactly-once, and
//     deadlock restated: hosts can always toggle their flags, so no state is
//     terminal; a state where nothing but toggling is possible must have
//     finished all work.
//
// # Thesis gaps
//
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
	// ghosts (history, for properties)
	Progressed        bool // the host processed a packet since the NI's last timeout decision
	UpcallDisabled    bool // the signal handler ran an upcall with interrupts disabled
	ProgressInterrupt bool // an interrupt was raised although the host had made progress
}

// Base returns the UCAST part.
func (n *Node) Base() *ucast.Node { return &n.Node }

func (n *Node) flags() []bool {
	return []bool{n.Timer, n.SawDisabled, n.Disabled, n.Signal, n.Progressed, n.UpcallDisabled, n.ProgressInterrupt}
}

// Encode appends the canonical encoding.
func (n *Node) Encode(buf []byte) []byte {
	buf = n.Node.Encode(buf)
	buf = append(buf, n.Received, n.LastProcessed, n.ReadCount, n.Processed)
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
	n.Received, n.LastProcessed = d.Byte(), d.Byte()
	n.ReadCount, n.Processed = d.Byte(), d.Byte()
	f := d.Uvarint()
	bit := func(i int) bool { return f&(1<<i) != 0 }
	n.Timer, n.SawDisabled, n.Disabled = bit(0), bit(1), bit(2)
	n.Signal, n.Progressed, n.UpcallDisabled, n.ProgressInterrupt = bit(3), bit(4), bit(5), bit(6)
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
	return fmt.Sprintf("intr host %d: interrupts %s, processed %d, signal %s", n.ID, enabled(n.Disabled), n.Processed, pending(n.Signal))
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
	m.kinds = []*model.ActionKind{&launch, u[1], u[2],
		{Name: "poll", Pattern: "host {node} poll", Owner: model.OwnerHost, Live: model.LiveClient,
			Enabled: func(mn model.Node) bool { return len(node(mn).Queue) > 0 },
			Apply:   func(mn model.Node, _ *model.Outbox) { m.upcall(node(mn)) }},
		{Name: "disable", Pattern: "host {node} disable", Owner: model.OwnerHost, Live: model.LiveClient,
			Enabled: func(mn model.Node) bool { return !node(mn).Disabled },
			Apply:   func(mn model.Node, _ *model.Outbox) { node(mn).Disabled = true }},
		{Name: "enable", Pattern: "host {node} enable", Owner: model.OwnerHost, Live: model.LiveClient,
			Enabled: func(mn model.Node) bool { return node(mn).Disabled },
			Apply:   func(mn model.Node, _ *model.Outbox) { node(mn).Disabled = false }},
		{Name: "timeout", Pattern: "ni {node} timeout", Owner: model.OwnerNI, Fair: model.Weak, FairClass: "timer {node}",
			Live:    model.LiveTimer,
			Enabled: func(mn model.Node) bool { n := node(mn); return n.Timer && n.ReadCount == noRead },
			Apply:   func(mn model.Node, _ *model.Outbox) { m.timeout(node(mn)) }},
		{Name: "signal", Pattern: "host {node} signal", Owner: model.OwnerHost, Fair: model.Weak,
			Enabled: func(mn model.Node) bool { return node(mn).Signal },
			Apply:   func(mn model.Node, _ *model.Outbox) { m.signal(node(mn)) }},
	}
	if m.variant == TwoDMA {
		m.kinds = append(m.kinds, &model.ActionKind{Name: "dma", Pattern: "ni {node} dma", Owner: model.OwnerNI, Fair: model.Weak,
			Enabled: func(mn model.Node) bool { return node(mn).ReadCount != noRead },
			Apply: func(mn model.Node, _ *model.Outbox) {
				n := node(mn)
				proc := n.ReadCount
				n.ReadCount = noRead
				m.decide(n, proc, n.Disabled)
			}})
	}
	return m.kinds
}

// NewNode builds node id in its initial state.
func (m *Machine) NewNode(id model.NodeID) model.Node {
	n := &Node{ReadCount: noRead}
	m.InitNode(&n.Node, id)
	return n
}

// Receive is event_packet_received: UCAST's handler, then a data packet
// for the host is counted and starts the watchdog unless it runs.
func (m *Machine) Receive(mn model.Node, from model.NodeID, pkt model.Packet, out *model.Outbox) {
	n := node(mn)
	m.Machine.Receive(mn, from, pkt, out)
	if pkt.Tag == ucast.TagUnicast {
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
func (m *Machine) signal(n *Node) {
	n.Signal = false
	if n.Disabled && m.variant != NoRecheck {
		return // race 1: the client disabled interrupts meanwhile
	}
	if len(n.Queue) > 0 {
		if n.Disabled {
			n.UpcallDisabled = true
		}
		m.upcall(n)
	}
}

// timeout is event_watchdog_timeout (Fig. 4.16). Variant two-dma reads the
// counter now and the flag in a second step.
func (m *Machine) timeout(n *Node) {
	if m.variant == TwoDMA {
		n.ReadCount = n.Processed
		return
	}
	m.decide(n, n.Processed, n.Disabled)
}

// greater is Fig. 4.16's ">" on counters of the configured width.
func greater(a, b uint8) bool { return a > b }

// decide is Fig. 4.16 after fetch_from_host, with the counter proc and
// flag disabled as read.
func (m *Machine) decide(n *Node, proc uint8, disabled bool) {
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
		if n.Progressed {
			n.ProgressInterrupt = true
		}
	}
	n.LastProcessed = proc
	n.Progressed = false
}
