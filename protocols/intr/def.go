package intr

import (
	"fmt"

	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/topology"
	"lfccheck/protocols/ucast"
)

// Config is an INTR configuration: nodes NIs, credits C, and the unicast
// flows (node 0 sends count packets to node 1 when flows is empty).
func Config(nodes, credits int, flows ...ucast.Flow) model.Config {
	p := Defaults()
	p.Credits = credits
	p.Flows = flows
	if len(flows) == 0 {
		p.Flows = []ucast.Flow{{Src: 0, Dst: 1, Count: 2}}
	}
	return model.Config{Protocol: "intr", Nodes: nodes, Params: p}
}

// CastConfig is INTR under MCAST: nodes NIs with one credit, the casts on
// the tree family's broadcast trees and the flows beside them.
func CastConfig(tree string, nodes int, casts []topology.Cast, flows ...ucast.Flow) model.Config {
	p := Defaults()
	p.Credits = 1
	p.Tree, p.Casts, p.Flows = tree, casts, flows
	return model.Config{Protocol: "intr", Nodes: nodes, Params: p}
}

// PandaConfig is Config with Panda on every host (§6.2.1, §6.2.2).
func PandaConfig(nodes, credits int, flows ...ucast.Flow) model.Config {
	c := Config(nodes, credits, flows...)
	c.Params.(*Params).Panda = true
	return c
}

// maxPackets bounds the packets one host receives: the counters are bytes.
const maxPackets = 200

// New builds INTR for a resolved configuration: on UCAST's machine, or,
// with casts, on MCAST's (node renamings are not offered then). UCAST's
// renamings (rotations that map the flows onto themselves) rename INTR's
// nodes too: its own state names no node (Node.RenameFrom).
func New(cfg model.Config) (*Machine, error) {
	p := cfg.Params.(*Params)
	if err := p.NoHostLibrary("intr"); err != nil {
		return nil, err
	}
	var u *ucast.Machine
	if len(p.Casts) > 0 {
		mm, err := mcast.New(model.Config{Protocol: "mcast", Nodes: cfg.Nodes, Variant: mcast.Correct, Params: p.multicast()})
		if err != nil {
			return nil, err
		}
		f := mm.Features
		f.AllowSymmetry = false
		mm.Machine.Compose(mm, f)
		u = mm.Machine
	} else {
		var err error
		u, err = ucast.New(model.Config{Protocol: cfg.Protocol, Nodes: cfg.Nodes, Variant: cfg.Variant, Params: &p.Params})
		if err != nil {
			return nil, err
		}
	}
	for h := range u.Expect {
		n := 0
		for _, e := range u.Expect[h] {
			n += e
		}
		if n > maxPackets {
			return nil, fmt.Errorf("host %d receives %d packets; INTR's counters allow at most %d", h, n, maxPackets)
		}
	}
	m := &Machine{Machine: u, variant: cfg.Variant, mask: 0xff, panda: p.Panda}
	if cfg.Variant == NarrowCounter {
		m.mask = 3
	}
	return m, nil
}

func intrNode(w *model.World, i int) *Node { return w.Nodes[i].(*Node) }

// unprocessed counts the packets that have arrived at h's NI for its host
// and that the host has not processed: in NI receive buffers, not yet
// copied, or delivered and waiting in the host's queue.
func unprocessed(n *Node) int {
	k := len(n.Queue)
	for _, rb := range n.Recv {
		if !rb.Copied {
			k++
		}
	}
	return k
}

// Def is INTR's protocol definition.
var Def = &model.Def{
	Name:      "intr",
	Doc:       "polling watchdog: interrupts only when the host does not poll (thesis §3.7, §4.4)",
	Params:    ParamSpecs(),
	NewParams: func() model.Params { return Defaults() },
	Variants: []model.Variant{
		{Name: Correct, Doc: "the watchdog of Fig. 4.16, with the signal handler of §3.7"},
		{Name: NoRecheck, Doc: "the signal handler polls without re-checking the interrupt flag (race 1)",
			Catches: "no-async-upcall-disabled", Example: Config(2, 1)},
		{Name: CancelWhenDisabled, Doc: "the watchdog cancels instead of restarting when it finds interrupts disabled (race 2)",
			Catches: "no-lost-interrupt", Example: Config(2, 1)},
		{Name: CancelOnProgress, Doc: "the watchdog cancels instead of restarting when the host processed some but not all packets",
			Catches: "timer-running", Example: Config(2, 1)},
		{Name: TwoDMA, Doc: "the NI fetches the counter and the flag in two DMA transfers instead of one: harmless (the suite's row passes); the interrupts it raises after the host progressed between the two reads are late-interrupt's, which the single DMA has too"},
		{Name: NarrowCounter, Doc: "nr_pkts_processed and last_processed are 2-bit counters: '>' fails when they wrap",
			Catches: "no-progress-interrupt", Example: Config(2, 1, ucast.Flow{Src: 0, Dst: 1, Count: 5})},
		{Name: UnicastCount, Doc: "under MCAST, nr_pkts_received counts only UNICAST packets (Fig. 4.3), not MULTICAST ones (Fig. 4.7): a multicast packet starts no watchdog",
			Catches: "timer-running", Example: CastConfig("chain", 3, []topology.Cast{{Root: 0, Count: 1}})},
		{Name: UnlockedSignal, Doc: "Panda does not bracket LFC's signal handler with its lock (§6.2.1's atomicity hole): lfc_upcall releases a lock the handler never took",
			Catches: "panda-lock", Example: PandaConfig(2, 1, ucast.Flow{Src: 0, Dst: 1, Count: 1})},
		{Name: LateEnable, Doc: "the scheduler switches to a thread woken by an idle-loop upcall before re-enabling interrupts (§6.2.2's order reversed), so they stay off while the thread runs",
			Catches: "busy-delivery", Example: PandaConfig(2, 1)},
	},
	Properties: []model.Property{Deadlock, ucast.CreditConservation, ucast.PoolBound, properties.FIFO, ucast.ExactlyOnce,
		NoAsyncUpcallDisabled, TimerRunning, NoProgressInterrupt, NoLostInterrupt, PandaLock, BusyDelivery, Race1, Race2, LateInterrupt},
	Stutter: true,
	New:     func(cfg model.Config) (model.Machine, error) { return New(cfg) },
	Claims: []model.Claim{
		{Name: "P=2 C=1 flow=0:1:2", Config: Config(2, 1), Expect: "pass", Ref: "§4.4",
			Doc: "the watchdog raises no needless interrupt and loses none; both races of §3.7 are reachable and harmless"},
		{Name: "P=2 C=1 flow=0:1:3", Config: Config(2, 1, ucast.Flow{Src: 0, Dst: 1, Count: 3}), Expect: "pass", Ref: "§4.4",
			Doc: "the same with three packets: the pool and the host buffer fill"},
		{Name: "P=3 C=1 flows=0:2:1,1:2:1", Config: Config(3, 1, ucast.Flow{Src: 0, Dst: 2, Count: 1}, ucast.Flow{Src: 1, Dst: 2, Count: 1}),
			Expect: "pass", Ref: "§4.4", Doc: "two senders, one receiving host"},
		{Name: "two-dma P=2 C=1 flow=0:1:2", Config: twoDMA(), Expect: "pass", Ref: "§4.4, Fig. 4.16",
			Doc: "fetching the counter and the flag in two DMA transfers is harmless: the single transfer of §4.4 is an optimization; the interrupt raised after progress between the reads is a late interrupt (late-interrupt), as after a single read"},
		{Name: "mcast chain P=3 C=1, cast 0:1, flow 2:1:1", Config: CastConfig("chain", 3, []topology.Cast{{Root: 0, Count: 1}}, ucast.Flow{Src: 2, Dst: 1, Count: 1}),
			Expect: "pass", Ref: "§4.4, Fig. 4.7", Doc: "INTR under MCAST: multicast packets counted on arrival as Fig. 4.7 does, at an NI that forwards them too, beside unicast"},
		{Name: "panda P=2 C=1 flow=0:1:2", Config: PandaConfig(2, 1), Expect: "pass", Ref: "§6.2.1, §6.2.2",
			Doc: "Panda's lock around LFC calls and its signal handler, interrupts while the thread runs and polling when it is blocked: the lock is never released by a context that does not hold it, and a running thread's packets are always delivered"},
	},
}

// twoDMA is the default configuration in variant two-dma.
func twoDMA() model.Config {
	c := Config(2, 1)
	c.Variant = TwoDMA
	return c
}

// onlyToggles reports whether the only actions enabled in w are the
// clients' interrupt toggles, or with Panda the thread's lock, unlock and
// block (and nothing at all is the same).
func onlyToggles(w *model.World) bool {
	for _, a := range w.Enabled(nil) {
		switch w.Sys.Kinds[a.Kind].Name {
		case "enable", "disable", "lock", "unlock", "block":
		default:
			return false
		}
	}
	return true
}

// Deadlock, restated for INTR: clients can always toggle their interrupt
// flags, so no state is terminal; a state where nothing else is possible
// must be a proper end.
var Deadlock = model.Property{
	Name: "deadlock",
	Doc:  "no state where only interrupt toggles are enabled while packets remain undelivered, queued or in flight",
	State: func(w *model.World) error {
		if !onlyToggles(w) || ucast.Finished(w) {
			return nil
		}
		return fmt.Errorf("nothing but interrupt toggles is enabled, but %s", ucast.Remaining(w))
	},
}

// NoAsyncUpcallDisabled: the signal handler never runs an upcall while the
// client has interrupts disabled.
var NoAsyncUpcallDisabled = model.Property{
	Name: "no-async-upcall-disabled",
	Doc:  "the signal handler never runs an upcall while the client has interrupts disabled (race 1 is harmless)",
	Sees: []string{"poll", "disable", "enable", "signal"},
	State: func(w *model.World) error {
		for i := range w.Nodes {
			if intrNode(w, i).UpcallDisabled {
				return fmt.Errorf("host %d's signal handler ran an upcall with interrupts disabled", i)
			}
		}
		return nil
	},
}

// TimerRunning: the watchdog runs whenever a packet for the host has
// arrived and is not yet processed.
var TimerRunning = model.Property{
	Name: "timer-running",
	Doc:  "the watchdog runs whenever packets for the host have arrived and are not yet processed",
	Sees: []string{"poll"},
	State: func(w *model.World) error {
		for i := range w.Nodes {
			n := intrNode(w, i)
			if k := unprocessed(n); k > 0 && !n.Timer {
				return fmt.Errorf("ni %d's watchdog is stopped while %d packets for host %d are unprocessed", i, k, i)
			}
		}
		return nil
	},
}

// NoProgressInterrupt: no interrupt is raised when the host processed a
// packet since the previous timeout.
var NoProgressInterrupt = model.Property{
	Name: "no-progress-interrupt",
	Doc:  "no interrupt is raised when the host processed a packet since the previous timeout",
	Sees: []string{"poll"},
	State: func(w *model.World) error {
		for i := range w.Nodes {
			if intrNode(w, i).ProgressInterrupt {
				return fmt.Errorf("ni %d raised an interrupt although host %d processed a packet since the previous timeout", i, i)
			}
		}
		return nil
	},
}

// bad: packets wait unprocessed at h while interrupts are enabled and no
// signal is pending.
func bad(w *model.World, h int) bool {
	n := intrNode(w, h)
	return unprocessed(n) > 0 && !n.Disabled && !n.Signal
}

// NoLostInterrupt (race 2), per host: after a state where packets wait
// unprocessed while interrupts are enabled, eventually a signal is pending,
// the packets are processed, or interrupts are disabled.
var NoLostInterrupt = properties.LeadsToEach("no-lost-interrupt",
	"while packets wait unprocessed and interrupts are enabled, the host is eventually interrupted, processes them or disables interrupts (race 2 is harmless)",
	bad, func(w *model.World, h int) bool { return !bad(w, h) })

// PandaLock (§6.2.1): Panda's lock is released only by the context that
// holds it. lfc_upcall releases it around the client's handler, so a
// signal handler that runs LFC's handler without taking the lock first
// releases a lock it never acquired.
var PandaLock = model.Property{
	Name: "panda-lock",
	Doc:  "with Panda, its lock is released only by the context that holds it (§6.2.1: lfc_upcall releases it)",
	Sees: []string{"signal", "unlock"},
	State: func(w *model.World) error {
		for i := range w.Nodes {
			if intrNode(w, i).BadUnlock {
				return fmt.Errorf("host %d released Panda's lock from a context that did not hold it", i)
			}
		}
		return nil
	},
}

// busy: with Panda, the thread runs while packets wait unprocessed and no
// signal is pending.
func busy(w *model.World, h int) bool {
	n := intrNode(w, h)
	return n.panda && !n.Idle && unprocessed(n) > 0 && !n.Signal
}

// BusyDelivery (§6.2.2), per host: while the application thread runs
// (and so does not poll), packets that wait are eventually signalled,
// processed, or the thread blocks and the scheduler polls.
var BusyDelivery = properties.LeadsToEach("busy-delivery",
	"with Panda, while the thread runs and packets wait, the host is eventually interrupted, processes them or blocks (§6.2.2: interrupts whenever a thread is runnable)",
	busy, func(w *model.World, h int) bool { return !busy(w, h) })

// LateInterrupt is reachable: a network signal is pending although the
// host processed a packet since the NI read the counter that raised it.
// The NI decides on a snapshot, so the interrupt may reach a host that
// has meanwhile polled: a performance effect of any read, one DMA or two.
var LateInterrupt = model.Property{
	Name: "late-interrupt",
	Doc:  "reachable: a signal is pending although the host processed a packet since the NI read its counter (an interrupt arriving late; not a violation, the single DMA of §4.4 has it too)",
	Sometimes: func(w *model.World) bool {
		for i := range w.Nodes {
			if n := intrNode(w, i); n.Signal && n.Processed != n.LastProcessed {
				return true
			}
		}
		return false
	},
}

// Race1 is reachable: an interrupt is pending while the client has
// interrupts disabled (it disabled them after the NI read the flag).
var Race1 = model.Property{
	Name: "race-1",
	Doc:  "race 1 of §3.7 is reachable: a network signal is pending while the client has interrupts disabled",
	Sometimes: func(w *model.World) bool {
		for i := range w.Nodes {
			if n := intrNode(w, i); n.Signal && n.Disabled {
				return true
			}
		}
		return false
	},
}

// Race2 is reachable: the NI held an interrupt back because interrupts
// were disabled, the client has since enabled them, and packets wait.
var Race2 = model.Property{
	Name: "race-2",
	Doc:  "race 2 of §3.7 is reachable: the NI held an interrupt back for a disabled flag that the client has since re-enabled, with packets waiting",
	Sometimes: func(w *model.World) bool {
		for i := range w.Nodes {
			if n := intrNode(w, i); n.SawDisabled && !n.Disabled && unprocessed(n) > 0 {
				return true
			}
		}
		return false
	},
}
