package model

import (
	"fmt"
	"strings"
)

// listOf renders xs as "[a b c]" using f for each element.
func listOf[T any](xs []T, f func(T) string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, x := range xs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f(x))
	}
	b.WriteByte(']')
	return b.String()
}

func pktList(ps []Packet) string { return listOf(ps, Packet.String) }

func descList(ds []Desc) string { return listOf(ds, func(d Desc) string { return d.Pkt.String() }) }

func sendList(ss []SendBuf) string {
	return listOf(ss, func(s SendBuf) string { return s.Pkt.String() })
}

func recvList(rs []RecvBuf) string {
	return listOf(rs, func(r RecvBuf) string {
		s := fmt.Sprintf("%s<%d", r.Pkt, r.From)
		if r.Copied {
			s += " copied"
		}
		if r.Pending > 0 {
			s += fmt.Sprintf(" fwd%d", r.Pending)
		}
		return s
	})
}

// Diff lists, one short line each, what differs between a and b: credits,
// blocked-sends queues, pools, host queues and links.
func Diff(a, b *World) []string {
	var out []string
	ch := func(what, x, y string) {
		if x != y {
			out = append(out, fmt.Sprintf("%s: %s -> %s", what, x, y))
		}
	}
	P := a.Sys.P
	for n := 0; n < P; n++ {
		x, y := &a.NIs[n], &b.NIs[n]
		for p := 0; p < P; p++ {
			if p == n {
				continue
			}
			ch(fmt.Sprintf("ni %d credits for %d", n, p), fmt.Sprint(x.PCB[p].SendCredits), fmt.Sprint(y.PCB[p].SendCredits))
			ch(fmt.Sprintf("ni %d owes %d", n, p), fmt.Sprint(x.PCB[p].FreeCredits), fmt.Sprint(y.PCB[p].FreeCredits))
			ch(fmt.Sprintf("ni %d blocked to %d", n, p), descList(x.PCB[p].Blocked), descList(y.PCB[p].Blocked))
		}
		ch(fmt.Sprintf("ni %d recv pool", n), recvList(x.Recv), recvList(y.Recv))
		ch(fmt.Sprintf("ni %d send pool", n), sendList(x.Send), sendList(y.Send))
		hx, hy := &a.Hosts[n], &b.Hosts[n]
		ch(fmt.Sprintf("host %d launched", n), fmt.Sprint(hx.Next), fmt.Sprint(hy.Next))
		ch(fmt.Sprintf("host %d queue", n), pktList(hx.Queue), pktList(hy.Queue))
	}
	for i := 0; i < P; i++ {
		for j := 0; j < P; j++ {
			if i != j {
				ch(fmt.Sprintf("link %d->%d", i, j), pktList(a.Links[i*P+j]), pktList(b.Links[i*P+j]))
			}
		}
	}
	return out
}

// Format renders the whole state, one line per NI, host and non-empty link.
// Packets print as u<origin>#<seq> (unicast), cr (credit), with +N for
// piggybacked credits; a receive buffer shows <S for its sender S.
func (w *World) Format() string {
	var b strings.Builder
	P := w.Sys.P
	for n := 0; n < P; n++ {
		ni := &w.NIs[n]
		fmt.Fprintf(&b, "ni %d:", n)
		for p := 0; p < P; p++ {
			if p == n {
				continue
			}
			pcb := &ni.PCB[p]
			fmt.Fprintf(&b, " [to %d: credits %d owes %d", p, pcb.SendCredits, pcb.FreeCredits)
			if len(pcb.Blocked) > 0 {
				fmt.Fprintf(&b, " blocked %s", descList(pcb.Blocked))
			}
			b.WriteByte(']')
		}
		fmt.Fprintf(&b, " recv %s send %s\n", recvList(ni.Recv), sendList(ni.Send))
		h := &w.Hosts[n]
		fmt.Fprintf(&b, "host %d: launched %d of %d, queue %s\n", n, h.Next, len(w.Sys.Work[n]), pktList(h.Queue))
	}
	for i := 0; i < P; i++ {
		for j := 0; j < P; j++ {
			if l := w.Links[i*P+j]; i != j && len(l) > 0 {
				fmt.Fprintf(&b, "link %d->%d: %s\n", i, j, pktList(l))
			}
		}
	}
	return b.String()
}
