package intr

import (
	"fmt"

	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols/ucast"
)

// Config is an INTR configuration: nodes NIs, credits C, and the unicast
// flows (node 0 sends count packets to node 1 when flows is empty).
func Config(nodes, credits int, flows ...ucast.Flow) model.Config {
	p := ucast.Defaults()
	p.Credits = credits
	p.Flows = flows
	if len(flows) == 0 {
		p.Flows = []ucast.Flow{{Src: 0, Dst: 1, Count: 2}}
	}
	return model.Config{Protocol: "intr", Nodes: nodes, Params: p}
}

// maxPackets bounds the packets one host receives: the counters are bytes.
const maxPackets = 200

// New builds INTR for a resolved configuration.
func New(cfg model.Config) (*Machine, error) {
	if err := cfg.Params.(*ucast.Params).NoHostLibrary("intr"); err != nil {
		return nil, err
	}
	u, err := ucast.New(cfg)
	if err != nil {
		return nil, err
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
	m := &Machine{Machine: u, variant: cfg.Variant, mask: 0xff}
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
	Params:    ucast.WithoutHostLibrary(ucast.ParamSpecs()),
	NewParams: func() model.Params { return ucast.Defaults() },
	Variants: []model.Variant{
		{Name: Correct, Doc: "the watchdog of Fig. 4.16, with the signal handler of §3.7"},
		{Name: NoRecheck, Doc: "the signal handler polls without re-checking the interrupt flag (race 1)",
			Catches: "no-async-upcall-disabled", Example: Config(2, 1)},
		{Name: CancelWhenDisabled, Doc: "the watchdog cancels instead of restarting when it finds interrupts disabled (race 2)",
			Catches: "no-lost-interrupt", Example: Config(2, 1)},
		{Name: CancelOnProgress, Doc: "the watchdog cancels instead of restarting when the host processed some but not all packets",
			Catches: "timer-running", Example: Config(2, 1)},
		{Name: TwoDMA, Doc: "the NI fetches the counter and the flag in two DMA transfers instead of one",
			Catches: "no-progress-interrupt", Example: Config(2, 1)},
		{Name: NarrowCounter, Doc: "nr_pkts_processed and last_processed are 2-bit counters: '>' fails when they wrap",
			Catches: "no-progress-interrupt", Example: Config(2, 1, ucast.Flow{Src: 0, Dst: 1, Count: 5})},
	},
	Properties: []model.Property{Deadlock, ucast.CreditConservation, ucast.PoolBound, properties.FIFO, ucast.ExactlyOnce,
		NoAsyncUpcallDisabled, TimerRunning, NoProgressInterrupt, NoLostInterrupt, Race1, Race2},
	Stutter: true,
	New:     func(cfg model.Config) (model.Machine, error) { return New(cfg) },
	Claims: []model.Claim{
		{Name: "P=2 C=1 flow=0:1:2", Config: Config(2, 1), Expect: "pass", Ref: "§4.4",
			Doc: "the watchdog raises no needless interrupt and loses none; both races of §3.7 are reachable and harmless"},
		{Name: "P=2 C=1 flow=0:1:3", Config: Config(2, 1, ucast.Flow{Src: 0, Dst: 1, Count: 3}), Expect: "pass", Ref: "§4.4",
			Doc: "the same with three packets: the pool and the host buffer fill"},
		{Name: "P=3 C=1 flows=0:2:1,1:2:1", Config: Config(3, 1, ucast.Flow{Src: 0, Dst: 2, Count: 1}, ucast.Flow{Src: 1, Dst: 2, Count: 1}),
			Expect: "pass", Ref: "§4.4", Doc: "two senders, one receiving host"},
	},
}

// onlyToggles reports whether the only actions enabled in w are the
// clients' interrupt toggles (and nothing at all is the same).
func onlyToggles(w *model.World) bool {
	for _, a := range w.Enabled(nil) {
		if k := w.Sys.Kinds[a.Kind].Name; k != "enable" && k != "disable" {
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
