package ucast

import (
	"math/bits"
	"sync"

	"lfccheck/model"
)

// The dependency declaration (model.Dependencies) of every protocol on the
// substrate, for the stubborn-set reduction. Data packets travel on the
// links of a static data graph: a host's launches go to the first hops of
// its work items (a unicast packet to its destination, a fetch-and-add
// request to the server, a protocol's own packets where its ItemHops
// says), the server's replies go back to its clients, and a packet that
// arrives at an NI goes on where the protocol's ForwardHops says (MCAST:
// the NI's children in the packet's tree). Every other packet is a
// CREDIT, which returns to a data packet's sender.
//
// Triggers(from, at), what a delivery from NI from may make NI at send to
// that it could not before: from itself (the credit of from's data, a
// blocked send to from that from's credit lets go, a fetch-and-add reply)
// and where at forwards what from sends (ForwardHops). Pending(n): the
// first hops of the launches n has still to make (a credit frees the send
// packet a blocked launch waits for; a reply lets a waiting process go
// on), and the senders of the buffers n holds with forwards still to
// transmit (a credit that lets the last one go releases the buffer, whose
// credit goes to its sender). Both shrink but by deliveries: a launch
// leaves the list, a buffer is taken only by an arriving packet, from its
// sender.
//
// A link that carries no data packet carries only CREDITs, and a CREDIT's
// delivery commutes with every other step of its NI: it adds credits and
// transmits the sends to its sender that waited for them, in their order;
// a launch or a forward to that NI in between finds the credit there or
// waits behind them, and either way the same packets leave in the same
// order with the same credits left. Protocols whose send without credit
// does more than wait (RECOV starts a recovery) or whose handlers reply
// (the host library), and every broken variant, declare no link commuting
// and every node a trigger: the reduction is off for them.
// The search checks all of this as it runs (see model.Dependencies).

// depTables is the data graph of a machine's configuration.
type depTables struct {
	data   []uint64   // per node: the NIs it may send data packets to
	origin []uint64   // per link from*P+at: the origins of the data packets on it
	hops   [][]uint64 // per node and work item: the first hops of that item and those after it
	all    bool       // every node may trigger sends to every node
}

// deps computes the data graph once (the configuration is fixed).
func (m *Machine) deps() *depTables {
	m.depOnce.Do(func() {
		P := m.P
		t := &depTables{data: make([]uint64, P), origin: make([]uint64, P*P), hops: make([][]uint64, P)}
		m.depTab = t
		// Broken variants change what a step sends or when (credits to
		// a packet's origin, sends without a credit, a LIFO blocked
		// queue): the argument below is the correct protocol's.
		if m.HostLibrary || m.Channels || m.Variant != Correct {
			t.all = true
			return
		}
		bit := func(n model.NodeID) uint64 { return 1 << uint(n) }
		for k := range P {
			t.hops[k] = make([]uint64, len(m.Work[k])+1)
			for i := len(m.Work[k]) - 1; i >= 0; i-- {
				it := m.Work[k][i]
				var h uint64
				switch {
				case it.Tag == TagUnicast:
					h = bit(it.Dest)
				case it.Tag == TagFARequest:
					if model.NodeID(k) != m.Server {
						h = bit(m.Server)
					}
				default:
					h = m.ext.ItemHops(model.NodeID(k), it)
				}
				t.hops[k][i] = h | t.hops[k][i+1]
			}
			t.data[k] |= t.hops[k][0]
			for ds := t.hops[k][0]; ds != 0; ds &= ds - 1 {
				t.origin[k*P+bits.TrailingZeros64(ds)] |= bit(model.NodeID(k))
			}
		}
		if m.FetchAdd {
			// Any process may ask (GSB's broadcasts do), and the server
			// answers each.
			for k := range P {
				if model.NodeID(k) != m.Server {
					t.data[k] |= bit(m.Server)
					t.data[m.Server] |= bit(model.NodeID(k))
					t.origin[k*P+int(m.Server)] |= bit(model.NodeID(k))
					t.origin[int(m.Server)*P+k] |= bit(m.Server)
				}
			}
		}
		for changed := true; changed; {
			changed = false
			for k := range P {
				for ds := t.data[k]; ds != 0; ds &= ds - 1 {
					j := bits.TrailingZeros64(ds)
					f := m.ext.ForwardHops(model.NodeID(j), model.NodeID(k))
					if t.data[j]|f != t.data[j] {
						t.data[j] |= f
						changed = true
					}
					for fs := f; fs != 0; fs &= fs - 1 {
						l := j*P + bits.TrailingZeros64(fs)
						if o := t.origin[k*P+j]; t.origin[l]|o != t.origin[l] {
							t.origin[l] |= o
							changed = true
						}
					}
				}
			}
		}
	})
	return m.depTab
}

// Triggers implements model.Dependencies (see above).
func (m *Machine) Triggers(from, at model.NodeID) uint64 {
	t := m.deps()
	if t.all {
		return ^uint64(0) >> uint(64-m.P)
	}
	// A data packet's credit may go to its origin rather than its sender
	// (CreditTo); both are named.
	return 1<<uint(from) | t.origin[int(from)*m.P+int(at)] | m.ext.ForwardHops(at, from)
}

// Pending implements model.Dependencies (see above).
func (m *Machine) Pending(n model.Node) uint64 {
	t := m.deps()
	if t.all {
		return ^uint64(0) >> uint(64-m.P)
	}
	u := m.NodeOf(n)
	p := t.hops[u.ID][min(u.Next, len(t.hops[u.ID])-1)]
	for i := range u.Recv {
		if u.Recv[i].Pending > 0 {
			p |= 1 << uint(m.ext.CreditTo(u, &u.Recv[i]))
		}
	}
	return p
}

// Waiting implements model.Dependencies: a CREDIT's arrival lets blocked
// sends go, which may free the send packet a launch waits for; it enables
// nothing else.
func (m *Machine) Waiting(n model.Node) bool {
	u := m.NodeOf(n)
	return m.deps().all || u.Next < len(m.Work[u.ID]) && !m.canLaunch(u)
}

// Commutes implements model.Dependencies: a link that carries no data
// packet, into an NI that sends no data packet to an NI it gets data
// packets from (else the credits a CREDIT's arrival releases and the NI's
// data could leave on one link in either order).
func (m *Machine) Commutes(from, at model.NodeID) bool {
	t := m.deps()
	if t.all || t.data[from]&(1<<uint(at)) != 0 {
		return false
	}
	for k := range m.P {
		if t.data[k]&(1<<uint(at)) != 0 && t.data[at]&(1<<uint(k)) != 0 {
			return false
		}
	}
	return true
}

// ItemHops is UCAST's: it has no work items of other tags.
func (m *Machine) ItemHops(model.NodeID, WorkItem) uint64 { return 0 }

// ForwardHops is UCAST's: an NI forwards nothing.
func (m *Machine) ForwardHops(_, _ model.NodeID) uint64 { return 0 }

var _ model.Dependencies = (*Machine)(nil)

// depState is the machine's lazily computed dependency tables.
type depState struct {
	depOnce sync.Once
	depTab  *depTables
}
