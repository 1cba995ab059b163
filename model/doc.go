// Package model is the generic kernel of lfccheck: node ids, packets and
// FIFO links, the step and outbox contract, the registry of protocols with
// their action kinds, packet tags, parameters, properties and claims, and
// the world state as a composition of protocol-defined node states with a
// canonical encoding. It names no protocol, no packet tag and no protocol
// field; protocols live in the protocols/... packages and register here.
//
// # The shape
//
// A system is P nodes, ids 0..P-1; a node is an NI and the host attached
// to it. One FIFO link per ordered pair (i, j) never drops, corrupts or
// reorders packets (thesis §3.2). A World is the P node states plus the
// links. Everything a protocol keeps (credits, pools, forwarding tables'
// dynamic state, watchdogs, interrupt flags, counters, hold-back queues, and
// history state for its properties) is in its node type, which implements
// Node: it encodes, decodes, copies, describes and diffs itself. The kernel
// owns only the links.
//
// All nondeterminism is an explicit Action of a registered ActionKind with
// a stable printed name ("deliver 2->3", "host 1 launch", "ni 0 copy"). The
// kernel defines one kind, Deliver: the packet at the head of link I->J
// arrives at NI J and the protocol's Receive handler runs to completion.
// Every other kind is the protocol's and is local to one node: whether it
// is enabled depends only on that node's state, and its effect changes only
// that node's state and the links out of it (through the Outbox). Kinds
// declare their owner (NI, host, link), which fairness and independence
// arguments use, and whether they may form an ample set on their own.
//
// This is the actor model of stateright or etcd raft's Ready: handlers are
// pure functions of a node's state and an event that append their effects
// (transmissions, host deliveries) to an Outbox. The explorer applies them
// to copies of worlds; the step-by-step driver (package traces) applies
// named actions one at a time; the live runtime (package live) runs each
// node in its own goroutine with the very same kinds and handler.
//
// # Why this shape
//
//   - Protocol state varies the most between LFC's protocols (credits,
//     forwarding counts, recovery channels, a watchdog, a sequencer), so
//     it belongs to them; a fixed state
//     layout in the kernel would need an edit per protocol.
//   - Node-local actions are what lets one goroutine own one node in the
//     live runtime, and what partial-order reductions and symmetry need to
//     reason about independence: actions at different nodes interact only
//     through links.
//   - Buffer allocation and host delivery are decided by the handlers
//     (the kernel never allocates a receive buffer), because some packets
//     (on a recovery channel, a fetch-and-add request) are handled by the
//     NI without one.
//   - The registry (Def) sits here, beside Config, because every generic
//     package must resolve a configuration (the traces package decodes
//     trace files naming a protocol) and model is the package all of them
//     import. Properties are therefore declared here too (Property); the
//     properties package supplies the kinds and the checker.
//
// # Configuration
//
// A Config is the protocol, variant, node count and property selection that
// every protocol has, plus the protocol's own Params. A protocol declares
// its parameters (ParamSpec): the command line registers a flag for each,
// scenarios and printed examples use the key=value form (Config.Settings,
// ParseSettings), and trace files the JSON form, in which the parameters are
// fields of the config object. A zero value given explicitly is an error,
// never a silent default.
//
// # Canonical encoding
//
// World.Encode writes, node by node, the node's encoding followed by the
// packets of its outgoing links (one segment per node). Two worlds are the
// same state exactly when their encodings are equal, in every run and
// process, so fingerprints and state counts reproduce. Node renaming for
// symmetry reduction is the optional interface Renamable (symmetry.go);
// nodes that also implement RenamingCoder encode and decode renamed
// states directly, without renaming a copy first (a search in the
// relative form renames every node it encodes or decodes).
package model
