package ucast

import (
	"fmt"

	"lfccheck/model"
)

// WorkItem is one packet a host launches: Tag says which protocol handler
// takes it (UNICAST to Dest, or a tag of a protocol built on UCAST), Seq
// numbers it in its stream.
type WorkItem struct {
	Tag  model.Tag
	Dest model.NodeID
	Tree uint16
	Seq  uint16
}

type owedTo struct {
	dest   model.NodeID
	stream int
}

// Finish computes Expect from the workload and, for every item, the
// destinations dests gives it (UNICAST: its Dest). Call it after
// Compose.
func (m *Machine) Finish(dests func(src int, it WorkItem) []model.NodeID) {
	m.Streams = m.P + m.ExtraStreams
	m.Expect = make([][]int, m.P)
	for h := range m.Expect {
		m.Expect[h] = make([]int, m.Streams)
	}
	if m.Replies {
		m.ReplyBase = m.Streams
		m.Streams += m.P
		for h := range m.Expect {
			m.Expect[h] = append(m.Expect[h], make([]int, m.P)...)
		}
	}
	m.dests = dests
	m.owed = make([][][]owedTo, m.P)
	m.replyVia = map[[2]int]int{}
	for src := range m.Work {
		for i := range m.Work[src] {
			m.addOwed(src, m.Work[src][i])
		}
	}
}

// addOwed counts the deliveries the next item of src's workload owes,
// it, in Expect and owed.
func (m *Machine) addOwed(src int, it WorkItem) {
	var to []owedTo
	st := m.ext.PacketStream(model.Packet{Tag: it.Tag, Origin: model.NodeID(src), Tree: it.Tree})
	for _, d := range m.dests(src, it) {
		m.Expect[d][st]++
		to = append(to, owedTo{d, st})
		if m.Replies && it.Tag != TagFARequest {
			m.Expect[src][m.ReplyBase+int(d)]++
			if prev, ok := m.replyVia[[2]int{src, int(d)}]; ok && prev != st && m.ReplyErr == nil {
				m.ReplyErr = fmt.Errorf("reply=on: node %d sends requests to node %d in two streams (unicast and multicast, or two trees); replies are numbered like their requests, so give each node one way to reach each destination", src, d)
			}
			m.replyVia[[2]int{src, int(d)}] = st
		}
	}
	m.owed[src] = append(m.owed[src], to)
}

// AppendWork appends it to src's workload, as a program posting a send
// does while the machine runs (the in-process library, and a monitor
// replaying it), and counts what it owes in Expect. Only src's driver may
// call it, between steps: it touches src's workload and the counts of the
// streams src sends on.
func (m *Machine) AppendWork(src int, it WorkItem) {
	m.Work[src] = append(m.Work[src], it)
	m.addOwed(src, it)
}

// DropLaunched forgets the items of n's workload that its NI launched
// already, so that a long-running machine's workload does not grow with
// its history, and returns how many it dropped (n's launch index restarts
// at 0). Expect keeps counting them; AllDelivered no longer looks at
// them.
func (m *Machine) DropLaunched(n *Node) int {
	k, src := n.Next, int(n.ID)
	if k == 0 {
		return 0
	}
	m.Work[src] = append(m.Work[src][:0:0], m.Work[src][k:]...)
	m.owed[src] = append(m.owed[src][:0:0], m.owed[src][k:]...)
	n.Next = 0
	return k
}

// AllDelivered reports whether every packet launched so far in w has been
// delivered to (copied to) every destination host.
func (m *Machine) AllDelivered(w *model.World) bool {
	for src := range w.Nodes {
		n := m.NodeOf(w.Nodes[src])
		for i := 0; i < n.Next; i++ {
			seq := m.Work[src][i].Seq
			for _, o := range m.owed[src][i] {
				if !m.NodeOf(w.Nodes[o.dest]).Log[o.stream].Has(seq) {
					return false
				}
			}
		}
	}
	return true
}
