package fa

import (
	"fmt"
	"strconv"

	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols/ucast"
)

// Params are fetch-and-add's parameters: UCAST's credits, refresh and send
// pool, the number of requests per process and the server.
type Params struct {
	ucast.Params
	Server int `json:"server"`
}

// Defaults returns the default parameters.
func Defaults() *Params { return &Params{Params: *ucast.Defaults()} }

// ParamSpecs declares the parameters.
func ParamSpecs() []model.ParamSpec {
	var specs []model.ParamSpec
	for _, s := range ucast.WithoutHostLibrary(ucast.ParamSpecs()) {
		switch s.Key {
		case "packets":
			s.Doc = "fetch-and-add requests every process but the server's issues, K"
		case "flow", "host-buffers":
			continue // no unicast workload; replies take no host buffer
		}
		specs = append(specs, s)
	}
	return append(specs, model.ParamSpec{Key: "server", Doc: "the NI whose variable every request increments", Default: "0"})
}

// Set applies one setting.
func (p *Params) Set(key, v string) error {
	switch key {
	case "server":
		n, err := ucast.IntIn(v, 0, model.MaxNodes-1)
		p.Server = n
		return err
	case "flow", "host-buffers":
		return fmt.Errorf("fa has no parameter %q", key)
	}
	return p.Params.Set(key, v)
}

// Settings returns the non-default parameters.
func (p *Params) Settings() []model.Setting {
	s := p.Params.Settings()
	if p.Server != 0 {
		s = append(s, model.Setting{Key: "server", Value: strconv.Itoa(p.Server)})
	}
	return s
}

// Describe renders every parameter.
func (p *Params) Describe() string {
	return fmt.Sprintf("credits=%d packets=%d server=%d refresh=%d send-buffers=%d", p.Credits, p.Packets, p.Server, p.Refresh, p.SendBuffers)
}

// Resolve validates; the default node count is 3.
func (p *Params) Resolve(nodes int) (int, error) {
	if nodes == 0 {
		nodes = 3
	}
	if len(p.Flows) > 0 {
		return 0, fmt.Errorf("fa takes no flows")
	}
	if p.Server < 0 || p.Server >= nodes {
		return 0, fmt.Errorf("server %d out of range 0..%d", p.Server, nodes-1)
	}
	if p.Packets == 0 {
		return 0, fmt.Errorf("packets is 0: no process issues a fetch-and-add request, so there is nothing to check")
	}
	return p.Params.Resolve(nodes)
}

// Clone returns a deep copy.
func (p *Params) Clone() model.Params {
	c := *p
	c.Params = *p.Params.CloneParams()
	return &c
}

// Config is a fetch-and-add configuration: nodes NIs, credits C, packets
// requests per client, server 0.
func Config(nodes, credits, packets int) model.Config {
	p := Defaults()
	p.Credits, p.Packets = credits, packets
	return model.Config{Protocol: "fa", Nodes: nodes, Params: p}
}

// New builds the machine for a resolved configuration.
func New(cfg model.Config) (*Machine, error) {
	p := cfg.Params.(*Params)
	if err := p.NoHostLibrary("fa"); err != nil {
		return nil, err
	}
	work := make([][]ucast.WorkItem, cfg.Nodes)
	for c := range work {
		if c == p.Server {
			continue
		}
		for k := 1; k <= p.Packets; k++ {
			work[c] = append(work[c], ucast.WorkItem{Tag: TagRequest, Dest: model.NodeID(p.Server), Seq: uint16(k)})
		}
	}
	u := ucast.NewMachine(cfg, &p.Params, work)
	m := &Machine{Machine: u, Server: model.NodeID(p.Server), variant: cfg.Variant}
	// fa encodes its fetch-and-add state itself (Node.Encode), so it does
	// not switch on ucast's FetchAdd; the server is for the properties.
	u.Compose(m, ucast.Features{Server: m.Server})
	u.Finish(func(int, ucast.WorkItem) []model.NodeID { return nil })
	return m, nil
}

// LaunchItem sends a request: it consumes a send credit toward the
// server, or waits for one.
func (m *Machine) LaunchItem(n *ucast.Node, it ucast.WorkItem, out *model.Outbox) {
	sb := &n.Send[len(n.Send)-1]
	sb.Refs++
	m.CreditSend(n, ucast.Desc{Dest: it.Dest, Pkt: sb.Pkt}, out)
}

// Def is fetch-and-add's protocol definition.
var Def = &model.Def{
	Name:      "fa",
	Doc:       "NI-level fetch-and-add on UCAST's credits (thesis §3.8)",
	Params:    ParamSpecs(),
	NewParams: func() model.Params { return Defaults() },
	Variants: append([]model.Variant{
		{Name: Correct, Doc: "the NI reads and increments the variable in one handler (§3.8)"}},
		ucast.FAVariants(Config(3, 1, 1), func(v string) string {
			if v == DropReply {
				return ucast.FAEventualReply.Name
			}
			return ucast.FAValues.Name
		})...),
	Properties: []model.Property{Deadlock, ucast.CreditConservation, ucast.PoolBound, ucast.FAValues,
		ucast.FAOneOutstanding, ucast.FAConcurrentRequests, ucast.FAEventualReply},
	Renamed: ucast.FARenamed,
	Acyclic: true,
	New:     func(cfg model.Config) (model.Machine, error) { return New(cfg) },
	Claims: []model.Claim{
		{Name: "P=3 C=1 K=2", Config: Config(3, 1, 2), Expect: "pass", Ref: "§3.8",
			Doc: "every request gets a distinct value; no increment is lost"},
		{Name: "P=4 C=1 K=2", Config: Config(4, 1, 2), Expect: "pass", Ref: "§3.8",
			Doc: "three clients race at the server; every request gets a distinct value"},
		{Name: "P=2 C=1 K=2", Config: Config(2, 1, 2), Expect: "fail concurrent-requests", Ref: "§3.8",
			Doc: "with one client there is no race: the reachability goal fails, so the other claims' goals are meaningful"},
	},
	Sweep: []model.Setting{{Key: "packets", Value: "1,2"}},
}

func faNode(w *model.World, i int) *Node { return w.Nodes[i].(*Node) }

// Deadlock: a state with no enabled action has every request answered.
var Deadlock = properties.Deadlock(func(w *model.World) error {
	reads := 0
	for i := range w.Nodes {
		reads += len(faNode(w, i).FA.Reads)
	}
	if ucast.Finished(w) && reads == 0 {
		return nil
	}
	if reads > 0 {
		return fmt.Errorf("%d reads not incremented; %s", reads, ucast.Remaining(w))
	}
	return fmt.Errorf("%s", ucast.Remaining(w))
}, ucast.ExplainCycle)
