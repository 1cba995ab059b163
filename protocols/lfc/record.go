package lfc

import (
	"fmt"

	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols"
	"lfccheck/protocols/mcast"
	"lfccheck/traces"
)

// Recording is a closed recording cluster's run as a model execution: the
// configuration (with every node's sends as its workload, MCAST's work
// parameter) and every step the nodes took, in a valid global order.
type Recording struct {
	Config  model.Config
	Actions []string // model action names, as trace files hold them
}

// Recording returns the run of a recording cluster (Options.Record), after
// Close.
func (c *Cluster) Recording() (*Recording, error) {
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
	r := &Recording{Config: cfg}
	for _, a := range c.res.Actions {
		r.Actions = append(r.Actions, c.sys.ActionName(a))
	}
	return r, nil
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
func (r *Recording) verify() (*properties.Violation, []properties.StatValue, error) {
	ck, acts, err := r.build()
	if err != nil {
		return nil, nil, err
	}
	v, err := traces.Verify(ck, acts)
	if err != nil {
		return nil, nil, fmt.Errorf("lfc: %v", err)
	}
	return v, ck.Statistics(), nil
}

func (r *Recording) build() (*properties.Checker, []model.Action, error) {
	ck, err := protocols.Build(r.Config)
	if err != nil {
		return nil, nil, fmt.Errorf("lfc: the recording's configuration: %v", err)
	}
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
