package lfc

import (
	"errors"
	"fmt"

	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/ucast"
	"lfccheck/traces"
)

// Recording is a closed recording cluster's run as a model execution: the
// configuration (with every node's sends as its workload, MCAST's work
// parameter) and every step the nodes took, in a valid global order.
type Recording struct {
	Config  model.Config
	Actions []string // model action names, as trace files hold them
	// Arrived gives, for each delivery step of Actions, the identity of
	// the packet the live node received (zero for other steps): the
	// replay checks that the model delivers that very packet.
	Arrived []model.Packet

	// final is the live run's last state (nodes and links), which the
	// replay's last state must equal; nil: not compared.
	final *model.World
	// acts are the steps as the live system sys numbers them (a
	// cluster's recording; nil otherwise): while Actions is not rendered,
	// the replay uses them when its system numbers the kinds alike.
	acts []model.Action
	sys  *model.System
}

// Recording returns the run of a recording cluster (Options.Record), after
// Close.
func (c *Cluster) Recording() (*Recording, error) {
	r, err := c.recording()
	if err != nil {
		return nil, err
	}
	r.name()
	return r, nil
}

// name fills in the action names from the run's actions (which
// Cluster.recording keeps, to spare Close's replay the names).
func (r *Recording) name() {
	if r.Actions != nil || r.acts == nil {
		return
	}
	r.Actions = make([]string, len(r.acts))
	for i, a := range r.acts {
		r.Actions[i] = r.sys.ActionName(a)
	}
}

// recording is Recording without the action names: the actions as the
// live system numbers them.
func (c *Cluster) recording() (*Recording, error) {
	if !c.record {
		return nil, fmt.Errorf("lfc: the cluster does not record itself (Options.Record)")
	}
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if !closed {
		return nil, fmt.Errorf("lfc: Recording needs a closed cluster")
	}
	<-c.done
	cfg := c.cfg.Clone()
	p := cfg.Params.(*mcast.Params)
	p.Work = nil
	fa := false
	for _, n := range c.nodes {
		if len(n.work) > 0 {
			p.Work = append(p.Work, mcast.Work{Node: int(n.id), Items: append([]mcast.WorkEntry(nil), n.work...)})
		}
		for _, e := range n.work {
			fa = fa || e.FetchAdd
		}
	}
	if fa {
		p.Server = c.opt.Server
	}
	if p.Work == nil {
		p.Work = []mcast.Work{{Node: 0}} // nothing was sent
	}
	return &Recording{Config: cfg, Arrived: c.res.Arrived, final: c.res.Final, acts: c.res.Actions, sys: c.sys}, nil
}

// Check replays the recording through the model, checking every property
// of the protocol after every step, and, if the run ended with nothing
// left to do, the properties of end states. It returns the violation, if
// any, or an error when the model does not accept a step: then the
// runtime did something the model does not allow. (Trace files hold the
// same check with every step's changes: TraceFile and `lfccheck replay`.)
func (r *Recording) Check() (*properties.Violation, error) {
	v, _, err := r.verify()
	return v, err
}

// Statistics replays the recording through the model like Check and
// returns the protocol's statistics over the run: the quantities a search
// reports over the transitions it explores (lfccheck's "statistics:"
// lines), here over the steps of this one run. For RECOV they are Table
// 5.2's recoveries started (RC) and data packets sent on recovery channels
// (D), and the largest recovery tree; for MCAST the multicast packets NIs
// forwarded. A run that the model rejects or that violates a property
// gives an error.
func (r *Recording) Statistics() ([]properties.StatValue, error) {
	v, stats, err := r.verify()
	if err != nil {
		return nil, err
	}
	if v != nil {
		return nil, &ConformanceError{Recording: r, Violation: v}
	}
	return stats, nil
}

// verify replays the recording with every property (Check) and returns
// the protocol's statistics over it.
//
// Besides the model accepting every step, the replay checks the packets:
// every delivery must take off its link the very packet the live node
// received (its tag, origin, tree and number), and the replay must end in
// the live run's last state (every node's credits, pools, queues and
// stream logs, and the packets still on the links). A link that reordered,
// lost or duplicated a packet fails one of the two.
func (r *Recording) verify() (*properties.Violation, []properties.StatValue, error) {
	ck, acts, err := r.build()
	if err != nil {
		return nil, nil, err
	}
	if r.Arrived != nil && len(r.Arrived) != len(acts) {
		return nil, nil, fmt.Errorf("lfc: the recording has %d steps and %d arrivals", len(acts), len(r.Arrived))
	}
	check := func(i int, a model.Action, w *model.World, out *model.Outbox) error {
		if r.Arrived == nil || !out.Arrival {
			return nil
		}
		if live := r.Arrived[i]; !live.SameData(out.Arrived) {
			return fmt.Errorf("the live run delivered %s, but %s heads the model's link (a packet reordered, lost or duplicated on the link)", live, out.Arrived)
		}
		return nil
	}
	v, w, err := traces.VerifyObserved(ck, acts, check)
	var se *traces.StepError
	if errors.As(err, &se) && r.Arrived != nil && r.Arrived[se.Step-1] != (model.Packet{}) && ck.Sys.Kinds[acts[se.Step-1].Kind] == model.Deliver {
		if w := r.replayTo(ck, acts[:se.Step-1]); w != nil && len(w.Link(acts[se.Step-1].Peer, acts[se.Step-1].Node)) == 0 {
			se.Err = fmt.Errorf("the live run delivered %s, but the model's link is empty (a packet duplicated on the link)", r.Arrived[se.Step-1])
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("lfc: %w", err)
	}
	if v == nil && w != nil && r.final != nil {
		if err := sameEnd(w, r.final, nil, nil); err != nil {
			return nil, nil, fmt.Errorf("lfc: after the last step (%d): %v", len(acts), err)
		}
	}
	return v, ck.Statistics(), nil
}

// replayTo replays acts (which the model accepts) and returns the state
// they reach, or nil.
func (r *Recording) replayTo(ck *properties.Checker, acts []model.Action) *model.World {
	w := ck.Sys.Initial()
	var out model.Outbox
	for _, a := range acts {
		if w.Apply(a, &out) != nil {
			return nil
		}
	}
	return w
}

// sameEnd compares the replay's last state with the live run's: the
// packets on every link, and every node's UCAST state (the part both
// machines encode alike: the live machine offers fetch-and-add whether or
// not the run used it). modelBase and liveBase, when not nil, give per
// node how many launched items each side dropped from its workload
// (ucast.Machine.DropLaunched, at times of its own): the launch counts
// are compared, not the indexes.
func sameEnd(model_, live *model.World, modelBase, liveBase []int) error {
	P := len(live.Nodes)
	for l := range live.Links {
		m, g := model_.Links[l], live.Links[l]
		same := len(m) == len(g)
		for k := 0; same && k < len(m); k++ {
			same = m[k].SameData(g[k])
		}
		if !same {
			return fmt.Errorf("link %d->%d holds %v in the model and %v in the live run (a packet lost or duplicated on the link)", l/P, l%P, m, g)
		}
	}
	for i := range live.Nodes {
		m, g := ucastState(model_.Nodes[i], at(modelBase, i)), ucastState(live.Nodes[i], at(liveBase, i))
		if m != g {
			return fmt.Errorf("node %d's state differs: the model has %s, the live run %s", i, m, g)
		}
	}
	return nil
}

// ucastState renders n's UCAST state, with base items launched before
// its workload's first.
func ucastState(n model.Node, base int) string {
	u := n.(interface{ Base() *ucast.Node }).Base()
	return fmt.Sprint(u.PCB, u.Recv, u.Send, base+u.Next, u.Queue, u.Held, u.Up, u.Extra, u.Log, u.FA.Var, u.FA.Got)
}

func at(s []int, i int) int {
	if s == nil {
		return 0
	}
	return s[i]
}

func (r *Recording) build() (*properties.Checker, []model.Action, error) {
	ck, err := protocols.Build(r.Config)
	if err != nil {
		return nil, nil, fmt.Errorf("lfc: the recording's configuration: %v", err)
	}
	// The names are the recording (a program may change them); the live
	// steps stand in for them only while they are not rendered.
	if r.Actions == nil && r.acts != nil && sameKinds(ck.Sys, r.sys) {
		return ck, r.acts, nil
	}
	r.name()
	acts, err := traces.ParseActions(ck.Sys, r.Actions)
	if err != nil {
		return nil, nil, fmt.Errorf("lfc: the recording's actions: %v", err)
	}
	return ck, acts, nil
}

// TraceFile renders the recording as a trace file that `lfccheck replay`
// accepts (with the violation the model finds in it, if any).
func (r *Recording) TraceFile() ([]byte, error) {
	ck, acts, err := r.build()
	if err != nil {
		return nil, err
	}
	o, err := traces.Run(ck, acts)
	if err != nil {
		return nil, err
	}
	f := traces.NewFile(ck.Sys, acts, o)
	f.Steps = nil // the changes of every step: replay recomputes them
	return traces.Marshal(f), nil
}

// sameKinds reports whether a and b number the same action kinds alike.
func sameKinds(a, b *model.System) bool {
	if len(a.Kinds) != len(b.Kinds) || a.P != b.P {
		return false
	}
	for i := range a.Kinds {
		if a.Kinds[i].Name != b.Kinds[i].Name {
			return false
		}
	}
	return true
}
