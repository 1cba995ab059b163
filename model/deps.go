package model

// Dependencies is implemented by machines that tell the stubborn-set
// reduction (see the properties package) more about how their steps depend
// on each other than the kernel's node-local rule does. The kernel alone
// knows that steps of different nodes commute and that a delivery into a
// node waits for a send by the link's other end. What a node sends, and
// after which deliveries, is the protocol's: without this interface the
// reduction assumes that any delivery may lead a node to send anywhere,
// and that every delivery depends on every other step of its node.
//
// The search checks the answers as it runs: every step it explores must
// keep to Triggers and Pending, and wherever a delivery declared
// commuting is enabled beside other steps of its node, both orders of
// each pair must be possible and reach the same state. A declaration
// found wrong ends the search with an error; one wrong only in states the
// reduced search never visits is not found there, which is why tests
// check the declarations on every state of the full state graphs of the
// built-in claims of the protocols that declare them and of random
// configurations, and check the sets themselves for persistence.
type Dependencies interface {
	// Triggers returns, as a bit set of node ids, the nodes node at may
	// come to send to because of a delivery from node from, beyond those
	// in Pending: a delivery's step sends only to nodes in Triggers or
	// Pending, and after it at's own steps (with no other delivery) may
	// send only where they could before, or to Triggers. It depends on the
	// configuration alone.
	Triggers(from, at NodeID) uint64
	// Pending returns, as a bit set, the nodes that node n, in its present
	// state, may send to after some delivery whatever Triggers says (its
	// launches still to come, for one). No step of n may add to it but
	// what its Triggers names (a delivery from k may add Triggers(k, n)).
	Pending(n Node) uint64
	// Waiting reports whether a delivery on a commuting link may enable a
	// step of node n that is disabled in n's present state (a returned
	// resource that frees what a waiting step needs). When it reports
	// false, a commuting delivery must enable no step of n and leave
	// Waiting false.
	Waiting(n Node) bool
	// Commutes reports whether every delivery on the link from->at is
	// independent of every other step of node at: in every state where
	// both are enabled, each stays enabled after the other and the two
	// orders reach the same state. It depends on the configuration alone.
	// Where a checked property reads a node's states between its steps
	// (a step rule, an invariant of one node, a conserved sum), such a
	// delivery must also be invisible to it (see the properties package's
	// stubborn.go); the search checks that too.
	Commutes(from, at NodeID) bool
}
