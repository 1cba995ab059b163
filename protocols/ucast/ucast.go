// Package ucast implements UCAST, LFC's credit-based reliable FIFO unicast
// between NIs (thesis §4.1, Fig. 4.1–4.3), as pure event handlers over
// model.NI state.
//
// # The protocol
//
// Every NI holds, for each peer, send credits (initially C: one per receive
// buffer the peer reserves for it), a FIFO blocked-sends queue and a count of
// free credits owed to the peer. credit_send transmits when a credit is
// available and otherwise queues the descriptor; send_packet piggybacks all
// owed credits on the outgoing packet; accept_new_credits adds arriving
// credits and transmits blocked descriptors in FIFO order while credits last;
// releasing a receive buffer returns one credit to its sender, by an explicit
// CREDIT packet once CREDIT_REFRESH credits are owed (Fig. 4.3).
//
// # Modeling decisions
//
//   - A receive buffer is released right after its packet is copied to the
//     host (§3.5: "After this copy, the NI receive buffer is returned to its
//     pool"), in the same atomic step.
//   - CREDIT packets are real packets on the FIFO link, not stack variables
//     (Fig. 4.3 sends a stack variable asynchronously).
//   - Send packets return to the send pool when transmitted (§4.1.2).
//   - The credit to return goes to the buffer's immediate sender (its pool
//     partition), which for unicast is hdr.src of Fig. 4.3 and for MCAST the
//     tree parent of Fig. 4.7; the two agree whenever hdr.src is written by
//     send_packet, as it always is.
//
// # Invariants (checked by the properties package)
//
//  1. credit-conservation: for every ordered pair S->R, S's send credits for
//     R + data packets in flight S->R + R's occupied buffers from S + R's
//     free credits for S + credits travelling R->S equals C; no count is
//     negative.
//  2. pool-bound: R never holds more than C buffers from one sender S.
//  3. fifo: every host is delivered each sender's packets in send order.
//  4. exactly-once: every packet is delivered to its destination host once.
//  5. deadlock: a state with no enabled action has delivered and processed
//     every packet.
//
// # Broken variants
//
// Named variants break one rule each so tests can show the checker catches
// it (see Variants).
package ucast

import (
	"fmt"

	"lfccheck/model"
	"lfccheck/properties"
)

// Variant names.
const (
	Correct        = "correct"
	NoCreditCheck  = "no-credit-check"
	BlockedLIFO    = "blocked-lifo"
	NoCreditReturn = "no-credit-return"
)

// Properties are UCAST's properties, in checking order.
func Properties() []properties.Property {
	return []properties.Property{
		properties.Deadlock, properties.CreditConservation, properties.PoolBound,
		properties.FIFO, properties.ExactlyOnce,
	}
}

// Variants lists UCAST's variants, the correct one first.
func Variants() []model.VariantInfo {
	return []model.VariantInfo{
		{Name: Correct, Doc: "the protocol of Fig. 4.1-4.3"},
		{Name: NoCreditCheck, Doc: "credit_send transmits even with no credit left", Catches: "pool-bound",
			Example: model.Config{Nodes: 2, Credits: 1, Packets: 2}},
		{Name: BlockedLIFO, Doc: "accept_new_credits serves the blocked-sends queue newest first", Catches: "fifo",
			Example: model.Config{Nodes: 2, Credits: 1, Packets: 3}},
		{Name: NoCreditReturn, Doc: "event_packet_released forgets to return the credit", Catches: "credit-conservation",
			Example: model.Config{Nodes: 2, Credits: 1, Packets: 1}},
	}
}

// UCAST is the protocol with its runtime constants.
type UCAST struct {
	P       int
	C       int // initial send credits per peer
	Refresh int // CREDIT_REFRESH
	Variant string
	// ReturnTo, when set, names the NI a released buffer's credit goes to
	// (MCAST: the tree parent, Fig. 4.7); by default the buffer's sender.
	ReturnTo func(ni *model.NI, rb *model.RecvBuf) model.NodeID
}

// New builds UCAST for a configuration.
func New(cfg model.Config) (*UCAST, error) {
	u := &UCAST{P: cfg.Nodes, C: cfg.Credits, Refresh: cfg.Refresh, Variant: cfg.Variant}
	if u.Variant == "" {
		u.Variant = Correct
	}
	if u.Refresh == 0 {
		u.Refresh = model.DefaultRefresh(u.C)
	}
	for _, v := range Variants() {
		if v.Name == u.Variant {
			return u, nil
		}
	}
	return nil, fmt.Errorf("unknown ucast variant %q (see 'lfccheck list')", cfg.Variant)
}

// InitNI gives the NI C send credits for every peer.
func (u *UCAST) InitNI(ni *model.NI) {
	for p := range ni.PCB {
		if p != int(ni.ID) {
			ni.PCB[p].SendCredits = u.C
		}
	}
}

// Launch is event_unicast (Fig. 4.2) for the send packet just allocated.
func (u *UCAST) Launch(ni *model.NI, it model.WorkItem, out *model.Outbox) {
	sb := &ni.Send[len(ni.Send)-1]
	sb.Pkt.Tag = model.TagUnicast
	sb.Refs++
	u.CreditSend(ni, model.Desc{Dest: it.Dest, Pkt: sb.Pkt}, out)
}

// CreditSend is credit_send (Fig. 4.2).
func (u *UCAST) CreditSend(ni *model.NI, d model.Desc, out *model.Outbox) {
	pcb := &ni.PCB[d.Dest]
	if pcb.SendCredits > 0 {
		pcb.SendCredits--
		u.SendPacket(ni, d, out)
		return
	}
	if u.Variant == NoCreditCheck {
		u.SendPacket(ni, d, out)
		return
	}
	pcb.Blocked = append(pcb.Blocked, d)
}

// SendPacket is send_packet (Fig. 4.2): stamp the header, piggyback all owed
// credits, transmit, and account for the transmitted descriptor.
func (u *UCAST) SendPacket(ni *model.NI, d model.Desc, out *model.Outbox) {
	pcb := &ni.PCB[d.Dest]
	pkt := d.Pkt
	pkt.Src = ni.ID
	pkt.Credits = uint8(pcb.FreeCredits)
	pcb.FreeCredits = 0
	out.Transmit(d.Dest, pkt)
	if !pkt.Tag.IsData() {
		return
	}
	if d.Fwd {
		for i := range ni.Recv {
			rb := &ni.Recv[i]
			if rb.Pkt.SameData(pkt) && rb.Pending > 0 {
				rb.Pending--
				if rb.Pending == 0 && rb.Copied {
					u.Release(ni, i, out)
				}
				return
			}
		}
		return
	}
	for i := range ni.Send {
		if ni.Send[i].Pkt.SameData(pkt) {
			ni.Send[i].Refs--
			if ni.Send[i].Refs == 0 {
				ni.Send = append(ni.Send[:i], ni.Send[i+1:]...)
				out.SendFreed++
			}
			return
		}
	}
}

// Receive is event_packet_received (Fig. 4.3). Delivery to the host is the
// separate "ni N copy" action, so a UNICAST packet only waits in its buffer.
func (u *UCAST) Receive(ni *model.NI, pkt model.Packet, buf int, out *model.Outbox) {
	u.AcceptNewCredits(ni, pkt, out)
}

// AcceptNewCredits is accept_new_credits (Fig. 4.3).
func (u *UCAST) AcceptNewCredits(ni *model.NI, pkt model.Packet, out *model.Outbox) {
	pcb := &ni.PCB[pkt.Src]
	pcb.SendCredits += int(pkt.Credits)
	for len(pcb.Blocked) > 0 && pcb.SendCredits > 0 {
		var d model.Desc
		if u.Variant == BlockedLIFO {
			d = pcb.Blocked[len(pcb.Blocked)-1]
			pcb.Blocked = pcb.Blocked[:len(pcb.Blocked)-1]
		} else {
			d = pcb.Blocked[0]
			pcb.Blocked = append(pcb.Blocked[:0], pcb.Blocked[1:]...)
		}
		u.CreditSend(ni, d, out)
	}
}

// Copied releases the buffer once it is copied and has nothing left to
// forward.
func (u *UCAST) Copied(ni *model.NI, buf int, out *model.Outbox) {
	if ni.Recv[buf].Pending == 0 {
		u.Release(ni, buf, out)
	}
}

// Release is event_packet_released (Fig. 4.3, 4.7): free the buffer and
// return a credit to its immediate sender.
func (u *UCAST) Release(ni *model.NI, buf int, out *model.Outbox) {
	to := ni.Recv[buf].From
	if u.ReturnTo != nil {
		to = u.ReturnTo(ni, &ni.Recv[buf])
	}
	ni.Recv = append(ni.Recv[:buf], ni.Recv[buf+1:]...)
	if u.Variant == NoCreditReturn {
		return
	}
	u.ReturnCreditTo(ni, to, out)
}

// ReturnCreditTo is return_credit_to (Fig. 4.3).
func (u *UCAST) ReturnCreditTo(ni *model.NI, sender model.NodeID, out *model.Outbox) {
	pcb := &ni.PCB[sender]
	pcb.FreeCredits++
	if pcb.FreeCredits >= u.Refresh {
		u.SendPacket(ni, model.Desc{Dest: sender, Pkt: model.Packet{Tag: model.TagCredit, Origin: ni.ID}}, out)
	}
}
