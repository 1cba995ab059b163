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
	u.NodeOf = func(n model.Node) *ucast.Node { return &n.(*Node).Node }
	u.OnLaunch = func(n *ucast.Node, it ucast.WorkItem, out *model.Outbox) {
		sb := &n.Send[len(n.Send)-1]
		sb.Refs++
		u.CreditSend(n, ucast.Desc{Dest: it.Dest, Pkt: sb.Pkt}, out)
	}
	u.Finish(func(int, ucast.WorkItem) []model.NodeID { return nil })
	return m, nil
}

// Def is fetch-and-add's protocol definition.
var Def = &model.Def{
	Name:      "fa",
	Doc:       "NI-level fetch-and-add on UCAST's credits (thesis §3.8)",
	Params:    ParamSpecs(),
	NewParams: func() model.Params { return Defaults() },
	Variants: []model.Variant{
		{Name: Correct, Doc: "the NI reads and increments the variable in one handler (§3.8)"},
		{Name: SplitIncrement, Doc: "the NI reads the variable on arrival and increments it in a later step",
			Catches: "distinct-values", Example: Config(3, 1, 1)},
		{Name: DropReply, Doc: "the server's NI never sends the reply that carries value 1",
			Catches: "eventual-reply", Example: Config(3, 1, 1)},
	},
	Properties: []model.Property{Deadlock, ucast.CreditConservation, ucast.PoolBound, DistinctValues, Increasing,
		OneOutstanding, ConcurrentRequests, EventualReply},
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

// waiting reports whether some process waits for a reply.
func waiting(w *model.World) bool {
	for i := range w.Nodes {
		if faNode(w, i).Outstanding {
			return true
		}
	}
	return false
}

// EventualReply: once a process waits for a reply, a state comes where no
// process waits. With finite workloads and one outstanding request per
// process (§3.8) this says that every request is eventually answered.
// Links are weakly fair (the kernel's); so is split-increment's "ni N
// increment"; launches are not (a process may stop issuing requests).
var EventualReply = properties.LeadsTo("eventual-reply",
	"every request is eventually answered: after a process starts waiting, a state comes where none waits",
	waiting, func(w *model.World) bool { return !waiting(w) })

// Deadlock: a state with no enabled action has every request answered.
var Deadlock = properties.Deadlock(func(w *model.World) error {
	reads := 0
	for i := range w.Nodes {
		reads += len(faNode(w, i).Reads)
	}
	if ucast.Finished(w) && reads == 0 {
		return nil
	}
	if reads > 0 {
		return fmt.Errorf("%d reads not incremented; %s", reads, ucast.Remaining(w))
	}
	return fmt.Errorf("%s", ucast.Remaining(w))
}, ucast.ExplainCycle)

// DistinctValues: no value is handed out twice; at a proper end the values
// are 0..N-1 and the variable holds N.
var DistinctValues = model.Property{
	Name: "distinct-values",
	Doc:  "no two requests get the same value; at the end the values are 0..N-1 for N requests and the variable holds N",
	State: func(w *model.World) error {
		seen := map[uint32]int{}
		for i := range w.Nodes {
			for _, v := range faNode(w, i).Got {
				if h, dup := seen[v]; dup {
					return fmt.Errorf("value %d was handed to host %d and to host %d", v, h, i)
				}
				seen[v] = i
			}
		}
		return nil
	},
	Final: func(w *model.World) error {
		n := 0
		for i := range w.Nodes {
			n += len(faNode(w, i).Got)
		}
		m := w.Sys.M.(*Machine)
		if v := faNode(w, int(m.Server)).Var; v != uint32(n) {
			return fmt.Errorf("the variable holds %d after %d requests were answered", v, n)
		}
		return nil
	},
}

// Increasing: every process gets its values in increasing order.
var Increasing = model.Property{
	Name: "increasing",
	Doc:  "every process gets its values in increasing order",
	State: func(w *model.World) error {
		for i := range w.Nodes {
			g := faNode(w, i).Got
			for k := 1; k < len(g); k++ {
				if g[k] <= g[k-1] {
					return fmt.Errorf("host %d got %d after %d", i, g[k], g[k-1])
				}
			}
		}
		return nil
	},
}

// requests counts the requests of client c in the system: in its send
// pool, queued, on a link, read at the server, or answered on a link.
func requests(w *model.World, c int) int {
	n := 0
	for i := range w.Nodes {
		nd := faNode(w, i)
		for _, s := range nd.Send {
			if s.Pkt.Tag == TagRequest && int(s.Pkt.Origin) == c {
				n++
			}
		}
		for _, r := range nd.Reads {
			if int(r.Req.Origin) == c {
				n++
			}
		}
	}
	for _, l := range w.Links {
		for _, p := range l {
			if (p.Tag == TagRequest || p.Tag == TagReply) && int(p.Origin) == c {
				n++
			}
		}
	}
	return n
}

// OneOutstanding: every process has at most one request in the system,
// exactly while it waits for a reply.
var OneOutstanding = model.Property{
	Name: "one-outstanding",
	Doc:  "every process has at most one request in the system, exactly while it waits for a reply",
	State: func(w *model.World) error {
		for c := range w.Nodes {
			n, out := requests(w, c), faNode(w, c).Outstanding
			if n > 1 || (n == 1) != out {
				return fmt.Errorf("host %d has %d requests in the system, outstanding %v", c, n, out)
			}
		}
		return nil
	},
}

// ConcurrentRequests: some reachable state has requests of two processes
// in the system at once.
var ConcurrentRequests = model.Property{
	Name: "concurrent-requests",
	Doc:  "some state has requests of two processes in the system at once",
	Sometimes: func(w *model.World) bool {
		k := 0
		for c := range w.Nodes {
			if faNode(w, c).Outstanding {
				k++
			}
		}
		return k >= 2
	},
}
