// Package hrx models H_rx, the retransmitting point-to-point protocol of
// the thesis's chapter 8 that runs on the host (§8.2.2, §8.2.4-§8.2.6):
// the go-back-N protocol of I_rx (protocols/irx) with the host, not the
// NI, keeping the sequence numbers, the send windows, the timers and the
// retransmissions. It runs on irx's machine at the host level
// (irx.Host): the window arithmetic, acknowledgements and timers are the
// same code; what differs is where a packet is handled.
//
// # The protocol
//
// A host sends to each destination through a send window of W packets
// with sequence numbers modulo seq-mod (at least W+1) and piggybacked
// cumulative acknowledgements, as in I_rx. The NI is a plain engine: it
// stores every packet that arrives, data or acknowledgement, new or
// duplicate, in a free receive buffer (the pool is shared by all
// senders, §8.2.6) and drops it when every buffer is taken; it knows no
// sequence numbers and sends no NACKs (NACKs are I_rx's, §8.2.2). The
// host handles the packets in the buffers in arrival order when it
// polls, freeing each buffer: it accepts a data packet only if it
// carries the next expected number and drops any other (a duplicate or
// a packet after a gap) after it has taken its buffer. The receiving
// host's acknowledgement timer answers every data packet; the sending
// host's retransmission timer, the only thing behind a packet the NI
// dropped or a link lost, resends every unacknowledged packet.
//
// # Actions
//
//   - host N send: the host's next packet, transmitted if the window is
//     open (else it waits on the host).
//   - deliver I->J: the NI stores the packet in a free buffer or drops
//     it.
//   - host N poll: the host handles its oldest buffered packet.
//   - host N ack-timer, host N timeout: the timers, as in I_rx.
//   - lose, duplicate and corrupt with --faults.
//
// # Modelling choices
//
//   - The receive buffers are one pool per node that a packet holds from
//     its arrival at the NI until the host has handled it: the NI's
//     buffers and the host buffers it copies them into (Table 8.3's IRB
//     and HRB) are merged, and the copy to the host and the host's
//     handling of the packet are one step. A node drops a packet when
//     the pool is full.
//   - The timers are I_rx's choices (protocols/irx), moved to the host:
//     time is not modelled, the acknowledgement timer may expire
//     whenever it runs, and one retransmission timer per host resends
//     the unacknowledged packets of every destination. I_rx's
//     retransmission timer is longer than any round trip: it expires
//     only while no packet is on a link from or to its NI, whose NI
//     handles a packet as it arrives. At the host level a packet's
//     trip ends when the host handles it, so by default (--timer
//     round-trip) H_rx's timer expires only while no packet from or to
//     the host is on a link or waits in a receive buffer for a host to
//     handle it (model.ActionKind.Quiet and model.Holder). That is the
//     thesis's usual setting: the polling watchdog (§3.7, §4.4)
//     interrupts a host that has handled none of its packets for an
//     interrupt delay (INTD, 70 µs in §8.5.1) far shorter than the
//     timer's granularity (TGRAN, 5000 µs) - a choice, since nothing
//     in §8.2.2 ties the two timers.
//     --timer links keeps I_rx's rule as it stands, links only: the
//     timer may then expire while packets wait for a host that polls
//     late (interrupts disabled, or a host that handles one packet per
//     watchdog period, which the client-progress check of §4.4 does not
//     interrupt).
//   - Hosts keep polling (weak fairness for poll).
//   - The host sends its flows round-robin; half-window
//     acknowledgements and send buffer pools are not modelled (as in
//     I_rx).
//
// # Livelocks: what the checks find
//
// Go-back-N at the host level drops a packet only after it has taken a
// receive buffer, and acknowledgements need buffers as data does. The
// weak fairness the liveness check grants (every link delivers, every
// host polls, every timer that stays due expires) does not exclude
// schedules that repeat in step with the timers, and the checks find
// three such livelocks, suite claims that fail eventual-delivery with a
// fair loop (not hidden: real properties of the protocol as §8.2.2
// describes it, with nothing in it that breaks such a cycle; real timing
// jitter makes each unlikely to last, which a model without time cannot
// show):
//
//   - P=3, a ring of one packet each (0->1, 1->2, 2->0), one receive
//     buffer per node, reliable links: every host's acknowledgement
//     reaches its sender while the sender's one buffer holds a
//     retransmission from its own sender, and is dropped; every sender
//     times out and retransmits again. I_rx, whose NI handles an
//     acknowledgement without a buffer, passes the same configuration;
//     H_rx passes it with two buffers.
//   - P=3, two senders of two packets to one receiver with one buffer,
//     after one loss: each sender's second packet, after a gap, takes
//     the buffer just before the other sender's first packet arrives,
//     so the packets the host waits for are dropped in turn for ever.
//   - P=2 with --timer links: the timer expires while the previous
//     round's copy of a later packet waits in the one buffer, and the
//     packet the host waits for finds the buffer full every round: a
//     stale retransmitted copy keeps taking the receive buffer. With
//     --timer round-trip it cannot: a copy is made only when the timer
//     expires, which waits until the copies before it have been handled.
//
// Every other configuration the suite and the tests check passes, at
// P=2 and at P=3, with a loss and a duplicate allowed.
package hrx

import (
	"lfccheck/model"
	"lfccheck/protocols/irx"
)

// New builds H_rx for a resolved configuration.
func New(cfg model.Config) (model.Machine, error) { return irx.NewAt(cfg, irx.Host) }
