package model

import (
	"fmt"
	"strconv"
	"strings"
)

// FaultKind is a kind of link fault (see Faults).
type FaultKind uint8

// Fault kinds.
const (
	// FaultLoss: the packet at the head of a link is lost instead of
	// delivered.
	FaultLoss FaultKind = iota + 1
	// FaultDup: the packet at the head of a link is duplicated: a copy
	// is put right behind it, so it arrives twice.
	FaultDup
	// FaultCorrupt: the packet at the head of a link arrives with a bad
	// CRC. The NI detects it and drops it, unless the machine is a
	// CorruptionHandler, which is told.
	FaultCorrupt
)

var faultNames = [...]string{FaultLoss: "loss", FaultDup: "dup", FaultCorrupt: "corrupt"}

func (k FaultKind) String() string {
	if int(k) < len(faultNames) && faultNames[k] != "" {
		return faultNames[k]
	}
	return "fault?" + strconv.Itoa(int(k))
}

// MaxFaultBudget bounds one budget of a Faults setting: every fault
// multiplies the state space, and a budget is one byte of the state.
const MaxFaultBudget = 16

// FaultBudget allows up to N faults of one kind: on every link (All),
// where links without a budget of their own share it, or on the link
// From->To alone.
type FaultBudget struct {
	Kind     FaultKind
	All      bool
	From, To NodeID
	N        int
}

func (b FaultBudget) String() string {
	if b.All {
		return fmt.Sprintf("%s:%d", b.Kind, b.N)
	}
	return fmt.Sprintf("%s@%d->%d:%d", b.Kind, b.From, b.To, b.N)
}

// Faults says which link faults a run may suffer, with a bound on each
// kind (per link or shared by all links), so that the state space stays
// finite: "loss:2,dup:1" allows two losses and one duplication on any
// links; "loss@0->1:1" one loss on link 0->1 only. A fault uses the
// budget of its kind and link if there is one, else its kind's budget
// for all links. The remaining budgets are part of the world state. The
// zero value (nil) is reliable links, LFC's assumption (thesis §3.2).
//
// Faults are actions of kernel kinds (FaultKinds): "lose I->J",
// "duplicate I->J", "corrupt I->J", enabled while link I->J holds a
// packet and a budget allows them. They have no fairness: a run need
// never suffer one. Since the budgets are finite, every infinite run has
// finitely many faults, after which the links are reliable again and
// Deliver's weak fairness holds: a link that keeps retransmitting
// eventually delivers (fair loss).
type Faults []FaultBudget

// ParseFaults reads the form Faults.String writes: budgets separated by
// commas, each KIND:N (every link) or KIND@I->J:N (link I->J), KIND one of
// loss, dup, corrupt, N in 1..MaxFaultBudget. Node ids are checked against
// the node count by Check. The budgets are returned in canonical order
// (kind, then all links before single links, by sender and receiver); a
// kind and link given twice is an error. "" and "none" are no faults.
func ParseFaults(s string) (Faults, error) {
	if s == "" || s == "none" {
		return nil, nil
	}
	var f Faults
	for _, item := range strings.Split(s, ",") {
		b, err := parseFaultBudget(item)
		if err != nil {
			return nil, err
		}
		for _, o := range f {
			if o.Kind == b.Kind && o.All == b.All && o.From == b.From && o.To == b.To {
				return nil, fmt.Errorf("fault budget %q given twice", b.String()[:strings.LastIndexByte(b.String(), ':')])
			}
		}
		f = append(f, b)
	}
	f.sort()
	return f, nil
}

func parseFaultBudget(item string) (FaultBudget, error) {
	var b FaultBudget
	head, num, ok := strings.Cut(item, ":")
	if !ok {
		return b, fmt.Errorf("fault %q: want KIND:N or KIND@I->J:N (KIND loss, dup or corrupt)", item)
	}
	kind, link, perLink := strings.Cut(head, "@")
	for k, name := range faultNames {
		if name != "" && name == kind {
			b.Kind = FaultKind(k)
		}
	}
	if b.Kind == 0 {
		return b, fmt.Errorf("fault %q: unknown fault kind %q (want loss, dup or corrupt)", item, kind)
	}
	n, err := ParseDecimal(num)
	if err != nil || n < 1 || n > MaxFaultBudget {
		return b, fmt.Errorf("fault %q: the bound must be a number in 1..%d, got %q", item, MaxFaultBudget, num)
	}
	b.N = n
	if !perLink {
		b.All = true
		return b, nil
	}
	from, to, ok := strings.Cut(link, "->")
	i, err1 := ParseDecimal(from)
	j, err2 := ParseDecimal(to)
	if !ok || err1 != nil || err2 != nil || i >= MaxNodes || j >= MaxNodes {
		return b, fmt.Errorf("fault %q: want a link I->J of node ids, got %q", item, link)
	}
	if i == j {
		return b, fmt.Errorf("fault %q: there is no link from node %d to itself", item, i)
	}
	b.From, b.To = NodeID(i), NodeID(j)
	return b, nil
}

func (f Faults) sort() {
	less := func(a, b FaultBudget) bool {
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.All != b.All {
			return a.All
		}
		if a.From != b.From {
			return a.From < b.From
		}
		return a.To < b.To
	}
	for i := 1; i < len(f); i++ {
		for j := i; j > 0 && less(f[j], f[j-1]); j-- {
			f[j], f[j-1] = f[j-1], f[j]
		}
	}
}

// String renders the budgets in the form ParseFaults reads ("" for none).
func (f Faults) String() string {
	var parts []string
	for _, b := range f {
		parts = append(parts, b.String())
	}
	return strings.Join(parts, ",")
}

// Check reports a link budget whose nodes are not below the node count p.
func (f Faults) Check(p int) error {
	for _, b := range f {
		if !b.All && (int(b.From) >= p || int(b.To) >= p) {
			return fmt.Errorf("fault %s: link %d->%d out of range for %d nodes (ids 0..%d)", b, b.From, b.To, p, p-1)
		}
	}
	return nil
}

// Clone returns a copy of f.
func (f Faults) Clone() Faults { return append(Faults(nil), f...) }

// Fault action kinds: the kernel's, like Deliver, added to a system's
// kinds (after the machine's) for each fault kind its configuration
// allows. An action of one names the link as Deliver does: Node is the
// receiver, Peer the sender.
var (
	Lose      = faultKind(FaultLoss, "lose", "lose {peer}->{node}")
	Duplicate = faultKind(FaultDup, "duplicate", "duplicate {peer}->{node}")
	Corrupt   = faultKind(FaultCorrupt, "corrupt", "corrupt {peer}->{node}")
)

func faultKind(f FaultKind, name, pattern string) *ActionKind {
	return &ActionKind{Name: name, Pattern: pattern, Owner: OwnerLink, fault: f,
		// Never enabled as a node's action: World.Enabled enumerates
		// faults per link, like deliveries, and code that asks a
		// node's kinds sees them disabled.
		Enabled: func(Node) bool { return false },
		Apply:   func(Node, *Outbox) { panic("model: a fault is applied by World.Apply") }}
}

// FaultKinds lists the fault action kinds in the order of FaultKind.
func FaultKinds() []*ActionKind { return []*ActionKind{Lose, Duplicate, Corrupt} }

// Fault returns the fault kind of a kernel fault action kind, or 0.
func (k *ActionKind) Fault() FaultKind { return k.fault }

// OnLink reports whether actions of the kind are enumerated per link
// (Deliver and the fault kinds) rather than per node.
func (k *ActionKind) OnLink() bool { return k == Deliver || k.fault != 0 }

// CorruptionHandler is implemented by machines that act on a corrupted
// packet (a CRC error the NI detects): Corrupted runs, with pkt as it was
// sent, instead of the packet being dropped silently.
type CorruptionHandler interface {
	Corrupted(n Node, from NodeID, pkt Packet, out *Outbox)
}

// faultTab is a system's fault budgets, resolved: per kind and link, the
// index of the budget a fault uses, or -1.
type faultTab struct {
	faults Faults
	budget [FaultCorrupt + 1][]int8 // per fault kind, per link from*P+to
	kind   []FaultKind              // per system kind index: its fault kind
}

func newFaultTab(f Faults, p int) *faultTab {
	t := &faultTab{faults: f.Clone()}
	for k := FaultLoss; k <= FaultCorrupt; k++ {
		t.budget[k] = make([]int8, p*p)
		for l := range t.budget[k] {
			t.budget[k][l] = -1
		}
		for bi, b := range f {
			if b.Kind == k && b.All {
				for l := range t.budget[k] {
					if l/p != l%p {
						t.budget[k][l] = int8(bi)
					}
				}
			}
		}
		for bi, b := range f {
			if b.Kind == k && !b.All {
				t.budget[k][int(b.From)*p+int(b.To)] = int8(bi)
			}
		}
	}
	return t
}

// Faults returns the system's fault budgets (nil: reliable links).
func (s *System) Faults() Faults {
	if s.faults == nil {
		return nil
	}
	return s.faults.faults
}

// FaultsLeft returns the budgets left in w, in the order of its system's
// Faults (nil without faults). The caller must not change it.
func (w *World) FaultsLeft() []uint8 { return w.Budget }

// faultEnabled reports whether a fault of kind f may hit link l now.
func (w *World) faultEnabled(f FaultKind, l int) bool {
	bi := w.Sys.faults.budget[f][l]
	return bi >= 0 && w.Budget[bi] > 0
}

// applyFault performs fault kind f on link l (nonempty, budget left).
func (w *World) applyFault(f FaultKind, a Action, l int, out *Outbox) {
	P := w.Sys.P
	w.Budget[w.Sys.faults.budget[f][l]]--
	w.noteChange(P + budgetLink(P))
	w.noteChange(P + l)
	pkt := w.Links[l][0]
	switch f {
	case FaultDup:
		w.Links[l] = append(w.Links[l], Packet{})
		copy(w.Links[l][1:], w.Links[l])
		w.Links[l][0] = pkt
		return
	case FaultCorrupt:
		if _, ok := w.Sys.M.(CorruptionHandler); ok {
			out.Arrived, out.Arrival = pkt, true
			if w.memo != nil {
				w.memo.Handle(w, a, pkt, out)
			} else {
				w.RunHandler(a, pkt, out)
			}
			w.noteChange(int(a.Node))
		}
	}
	copy(w.Links[l], w.Links[l][1:])
	w.Links[l] = w.Links[l][:len(w.Links[l])-1]
}

// budgetLink is the index of the link the budgets are noted as (World.Changed):
// node P-1's link to itself, which never holds a packet. The budgets are
// encoded at the end of node P-1's segment.
func budgetLink(p int) int { return p*p - 1 }

// UnreliableClaim is the claim that a protocol built on LFC's reliable
// links (thesis §3.2; a "careful" protocol, N_rx in §8.1) fails once one
// packet may be lost: cfg with faults loss:1 fails property expect. It
// shows the model's assumption rather than a bug.
func UnreliableClaim(name string, cfg Config, expect string) Claim {
	c := cfg.Clone()
	c.Faults = Faults{{Kind: FaultLoss, All: true, N: 1}}
	return Claim{Name: name + " faults=loss:1", Config: c, Expect: "fail " + expect, Ref: "§3.2, §8.1",
		Doc: "the protocol assumes reliable links (as LFC does): one lost packet breaks it"}
}
