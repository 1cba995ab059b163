package mcast

import (
	"lfccheck/model"
	"lfccheck/protocols/topology"
	"lfccheck/protocols/ucast"
)

// PartitionLoad rates how close the partitions parts are to a deadlock's
// in w: the heuristic of the deadlock search that lfccheck trees runs on a
// cycle of partitions that may fill. In a deadlock every partition "A at
// B" of some cycle holds packets that wait to be forwarded, A has sends to
// B blocked and no credit for B; so each partition counts the packets in
// its buffers with forwards pending, plus A's blocked sends to B, minus
// A's credits for B. (The packets held alone, forwarded or not, rate
// states where buffers fill and drain again as highly as those where they
// stay full, and the search wanders among them.)
//
// perms are renamings of node ids (the configuration's symmetries, without
// the identity): a search that stores one state per orbit stores w for
// every state it renames to, so the rating is the most over w and w
// renamed by each of them, which does not depend on which state of the
// orbit was stored.
func PartitionLoad(w *model.World, parts []topology.Partition, perms []model.Perm) int {
	load := func(p *model.Perm) int {
		n := 0
		for _, pt := range parts {
			from, at := pt.From, pt.At
			if p != nil {
				from, at = int(p.Node[from]), int(p.Node[at])
			}
			a, b := ucast.NodeAt(w, from), ucast.NodeAt(w, at)
			for i := range b.Recv {
				if rb := &b.Recv[i]; rb.From == model.NodeID(from) && rb.Chan == 0 && rb.Pending > 0 {
					n++
				}
			}
			n += len(a.PCB[at].Blocked) - a.PCB[at].SendCredits
		}
		return n
	}
	best := load(nil)
	for i := range perms {
		best = max(best, load(&perms[i]))
	}
	return best
}

// Feeds reports whether a packet of tree t can block in the partition
// "from at at": from is at's parent in t and at forwards (has children in
// t). Those are the trees whose packets a deadlock's cycle through the
// partition can hold there (see topology.Prove).
func (m *Machine) Feeds(t int, from, at int) bool {
	tr := &m.Topo.Trees[t]
	return tr.Parent[at] == from && len(tr.Children[at]) > 0
}

// WorkPrefix returns the first n[h] items of every host h's workload as
// explicit work lists (Params.Work): the workload of a configuration whose
// hosts launch only those. Each host launches its items in order, so a
// run of that configuration is a run of m's in which the other launches
// have not happened yet. Multicasts name their tree's group; streams are
// numbered as in m (a prefix of each stream is kept).
func (m *Machine) WorkPrefix(n []int) []Work {
	var out []Work
	for h, items := range m.Work {
		if h >= len(n) || n[h] <= 0 {
			continue
		}
		w := Work{Node: h}
		for _, it := range items[:min(n[h], len(items))] {
			var e WorkEntry
			switch it.Tag {
			case TagMulticast:
				e = WorkEntry{Multicast: true, Group: m.Topo.Groups[m.Topo.Trees[it.Tree].Group].Name}
			case ucast.TagFARequest:
				e = WorkEntry{FetchAdd: true}
			default:
				e = WorkEntry{Dest: int(it.Dest)}
			}
			if k := len(w.Items) - 1; k >= 0 && w.Items[k].FetchAdd == e.FetchAdd && w.Items[k].Multicast == e.Multicast &&
				w.Items[k].Group == e.Group && w.Items[k].Dest == e.Dest {
				w.Items[k].Count++
				continue
			}
			e.Count = 1
			w.Items = append(w.Items, e)
		}
		out = append(out, w)
	}
	return out
}

// WithWork returns a copy of p whose workload is work alone (it replaces
// packets, casts and flows), with p's credits, refresh, buffers and
// topology.
func (p *Params) WithWork(work []Work) *Params {
	c := p.Clone().(*Params)
	c.Params = ucast.Params{Credits: p.Credits, Packets: p.Packets, Refresh: p.Refresh, HostBuffers: p.HostBuffers, SendBuffers: p.SendBuffers,
		Reply: p.Reply, Drain: p.Drain, NoNestedUpcalls: p.NoNestedUpcalls}
	c.Casts, c.Work = nil, work
	return c
}
