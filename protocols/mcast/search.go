package mcast

import (
	"lfccheck/model"
	"lfccheck/model/topology"
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
