package irx

import (
	"fmt"
	"strconv"
	"strings"

	"lfccheck/model"
	"lfccheck/protocols/ucast"
)

// Params are I_rx's parameters.
type Params struct {
	// Window is W, the send window per destination (§8.2.2, §8.2.4).
	Window int `json:"window"`
	// SeqMod is the sequence number space: wire numbers are 0..SeqMod-1
	// (0: Window+1, the smallest that go-back-N allows).
	SeqMod int `json:"seq_mod,omitempty"`
	// RecvBuffers is the NI's receive buffers, shared by all senders
	// (§8.2.4, §8.2.6).
	RecvBuffers int `json:"recv_buffers"`
	// Packets is how many packets every host sends to every other host
	// when no flow is given.
	Packets int `json:"packets"`
	// Flows is an explicit workload instead.
	Flows []ucast.Flow `json:"flows,omitempty"`
	// Timer is when H_rx's retransmission timer may expire (the host
	// level only): TimerRoundTrip (""), once nothing from or to the host
	// is on a link or waits in a receive buffer for its host, or
	// TimerLinks, once nothing is on a link, while packets may still
	// wait for a host that polls late.
	Timer string `json:"timer,omitempty"`

	packetsGiven bool
	proto        string // the protocol's name in messages ("" is irx)
}

// Values of Params.Timer.
const (
	TimerRoundTrip = "round-trip"
	TimerLinks     = "links"
)

// Defaults returns the default parameters.
func Defaults() *Params { return &Params{Window: 2, RecvBuffers: 1, Packets: 2} }

// DefaultsFor returns the default parameters of the protocol named
// proto that runs on this package's machine (hrx), for its messages.
func DefaultsFor(proto string) *Params {
	p := Defaults()
	p.proto = proto
	return p
}

func (p *Params) name() string {
	if p.proto == "" {
		return "irx"
	}
	return p.proto
}

// ParamSpecs declares the parameters.
func ParamSpecs() []model.ParamSpec { return ParamSpecsAt(NI) }

// ParamSpecsAt declares the parameters of the protocol at level lvl.
func ParamSpecsAt(lvl Level) []model.ParamSpec {
	buffers := "NI receive buffers shared by all senders (§8.2.6)"
	if lvl == Host {
		buffers = "receive buffers shared by all senders: every packet that arrives (data or acknowledgement, new or duplicate) holds one until the host has handled it (§8.2.2, §8.2.6)"
	}
	specs := append(GBNSpecs("send window per destination, W: packets sent and not yet acknowledged (§8.2.2)", buffers, "1"),
		model.ParamSpec{Key: "packets", Doc: "packets each host sends to each other host, K (without flow)", Default: "2"},
		model.ParamSpec{Key: "flow", Doc: "an explicit workload SRC:DST:COUNT, repeatable (replaces packets)", Repeat: true})
	if lvl == Host {
		specs = append(specs, TimerSpec)
	}
	return specs
}

// gbn is the go-back-N parameters in p (the timer's only for hrx).
func (p *Params) gbn() GBNParams {
	g := GBNParams{Window: &p.Window, SeqMod: &p.SeqMod, RecvBuffers: &p.RecvBuffers}
	if p.proto == "hrx" {
		g.Timer = &p.Timer
	}
	return g
}

// Set applies one setting.
func (p *Params) Set(key, v string) error {
	if ok, err := p.gbn().Set(key, v); ok {
		return err
	}
	var err error
	switch key {
	case "packets":
		p.Packets, err = ucast.IntIn(v, 1, model.MaxStreamSeq)
		p.packetsGiven = err == nil
	case "flow":
		var f ucast.Flow
		if f, err = ucast.ParseFlow(v); err == nil {
			p.Flows = append(p.Flows, f)
		}
	default:
		return fmt.Errorf("%s has no parameter %q", p.name(), key)
	}
	return err
}

// Settings returns the non-default parameters.
func (p *Params) Settings() []model.Setting {
	d := Defaults()
	s := p.gbn().Settings(d.Window, d.RecvBuffers)
	if p.Packets != d.Packets {
		s = append(s, model.Setting{Key: "packets", Value: strconv.Itoa(p.Packets)})
	}
	for _, f := range p.Flows {
		s = append(s, model.Setting{Key: "flow", Value: f.String()})
	}
	return p.gbn().AppendTimer(s)
}

// Describe renders every parameter.
func (p *Params) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "window=%d seq-mod=%d recv-buffers=%d", p.Window, p.mod(), p.RecvBuffers)
	if len(p.Flows) > 0 {
		b.WriteString(" flows=" + ucast.Join(p.Flows))
	} else {
		fmt.Fprintf(&b, " packets=%d", p.Packets)
	}
	b.WriteString(p.gbn().TimerText())
	return b.String()
}

func (p *Params) mod() int { return p.gbn().Mod() }

// Resolve validates; the default node count is 2.
func (p *Params) Resolve(nodes int) (int, error) {
	if nodes == 0 {
		nodes = 2
	}
	if len(p.Flows) > 0 && p.packetsGiven {
		return 0, fmt.Errorf("give packets or flow, not both")
	}
	if err := p.gbn().Check(); err != nil {
		return 0, err
	}
	seen := map[[2]int]bool{}
	for _, f := range p.Flows {
		if f.Src >= nodes || f.Dst >= nodes || f.Src == f.Dst {
			return 0, fmt.Errorf("flow %s: want two different nodes in 0..%d", f, nodes-1)
		}
		if seen[[2]int{f.Src, f.Dst}] {
			return 0, fmt.Errorf("flow %s: a second flow from %d to %d", f, f.Src, f.Dst)
		}
		seen[[2]int{f.Src, f.Dst}] = true
	}
	return nodes, nil
}

// Clone returns a deep copy.
func (p *Params) Clone() model.Params {
	c := *p
	c.Flows = append([]ucast.Flow(nil), p.Flows...)
	return &c
}

// counts returns, per ordered pair s*P+d, how many packets s sends to d.
func (p *Params) counts(nodes int) []int {
	k := make([]int, nodes*nodes)
	if len(p.Flows) > 0 {
		for _, f := range p.Flows {
			k[f.Src*nodes+f.Dst] = f.Count
		}
		return k
	}
	for s := 0; s < nodes; s++ {
		for d := 0; d < nodes; d++ {
			if s != d {
				k[s*nodes+d] = p.Packets
			}
		}
	}
	return k
}
