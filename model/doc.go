// Package model is the vocabulary of the modeled LFC system: node ids, packets
// and their tags, links, NI and host state, the world state with its canonical
// byte encoding, the actions that are the system's only source of
// nondeterminism, and the composition of a protocol with a workload into a
// System that the explorer can search and that the step-by-step and live
// drivers can run.
//
// # The modeled system (thesis §3.1–3.6, §4.1)
//
// P network interfaces (NIs), ids 0..P-1, each attached to one host. One FIFO
// link per ordered pair (i, j) never drops, corrupts or reorders packets
// (§3.2). Every NI has, per peer, a protocol control block (send credits, a
// FIFO blocked-sends queue, free credits; Fig. 4.1), a receive pool partitioned
// per immediate sender (at most C buffers each by the flow-control contract),
// and a bounded send pool (§3.5). Every host has a bounded pool of host receive
// buffers (§3.6): the NI copies a received data packet into a free one, and the
// host processes and frees it later.
//
// # Atomicity
//
// Each action is one atomic transition:
//
//   - "host H launch": host H takes a send packet from its NI's send pool and
//     launches the next item of its workload; the NI's send event handler
//     (event_unicast, event_multicast) runs in the same step. Merging the two
//     hides no interleaving: the launch has no effect other than appending to
//     the NI's FIFO send queue, so any schedule that delays the NI's handling
//     is equivalent to one that delays the launch itself.
//   - "deliver I->J": the packet at the head of link I->J arrives at NI J and
//     event_packet_received runs to completion (§3.3.4: NI handlers run to
//     completion, single-threaded).
//   - "ni N copy": NI N copies its oldest received, not yet copied data packet
//     into a free host receive buffer (the NI's host-DMA resource queue is
//     FIFO, §3.3.4, §3.5); if the buffer is then no longer needed (for MCAST:
//     all forwards transmitted) the packet-release handler runs in the same
//     step, as on DMA completion.
//   - "host H process": host H hands its oldest delivered packet to the client
//     (lfc_upcall) and frees the host buffer (§3.6, §3.7).
//
// Control packets (CREDIT) are handled on arrival and never occupy a pooled
// receive buffer (§3.4).
//
// # Canonical encoding
//
// World.Encode writes every field that distinguishes states, in a fixed
// order, keeping the order of every FIFO queue and link. Two worlds are the
// same state exactly when their encodings are equal, in every run and
// process, so fingerprints and state counts reproduce.
package model
