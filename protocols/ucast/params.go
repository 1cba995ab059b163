package ucast

import (
	"fmt"
	"strconv"
	"strings"

	"lfccheck/model"
)

// Limits on sizes UCAST accepts.
const (
	MaxCredits     = 64
	MaxBuffers     = 255
	MaxWorkPerHost = 1 << 14
)

// Flow is one entry of an explicit unicast workload: Src sends Count
// packets to Dst.
type Flow struct {
	Src   int `json:"src"`
	Dst   int `json:"dst"`
	Count int `json:"count"`
}

// String renders a flow as SRC:DST:COUNT, the form --flow takes.
func (f Flow) String() string { return fmt.Sprintf("%d:%d:%d", f.Src, f.Dst, f.Count) }

// ParseFlow reads SRC:DST:COUNT.
func ParseFlow(s string) (Flow, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return Flow{}, fmt.Errorf("flow %q: want SRC:DST:COUNT", s)
	}
	var v [3]int
	for i, p := range parts {
		n, err := model.ParseDecimal(p)
		if err != nil {
			return Flow{}, fmt.Errorf("flow %q: %q is not a number", s, p)
		}
		v[i] = n
	}
	if v[2] < 1 || v[2] > model.MaxStreamSeq {
		return Flow{}, fmt.Errorf("flow %q: count must be in 1..%d", s, model.MaxStreamSeq)
	}
	return Flow{Src: v[0], Dst: v[1], Count: v[2]}, nil
}

// Join renders a list of flows or casts separated by commas.
func Join[T fmt.Stringer](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = x.String()
	}
	return strings.Join(s, ",")
}

// Params are UCAST's parameters. Protocols built on UCAST embed them.
type Params struct {
	Credits     int    `json:"credits"`
	Packets     int    `json:"packets"`
	Refresh     int    `json:"refresh"` // 0: derived from Credits
	HostBuffers int    `json:"host_buffers"`
	SendBuffers int    `json:"send_buffers"`
	Flows       []Flow `json:"flows,omitempty"`
	// Reply makes every packet of the workload a request: the upcall that
	// handles it at a destination sends a reply to its origin before it
	// returns (§3.1.4, §6.2.3). It turns on LFC's host library (Drain).
	Reply bool `json:"reply,omitempty"`
	// Drain models LFC's host library (§3.1.4, §3.6): upcalls are steps
	// of their own, and a routine that waits for a resource drains the
	// network, taking host receive buffers from the pool when the NI
	// needs them.
	Drain bool `json:"drain,omitempty"`
	// NoNestedUpcalls is upcalls_allowed = 0 (Table 3.1): draining makes
	// no upcalls. Only with Drain or Reply.
	NoNestedUpcalls bool `json:"no_nested_upcalls,omitempty"`

	packetsGiven bool
}

// HostLibrary reports whether the configuration models LFC's host
// library (Drain, or Reply, which implies it).
func (p *Params) HostLibrary() bool { return p.Drain || p.Reply }

// Defaults returns UCAST's default parameters.
func Defaults() *Params { return &Params{Credits: 1, Packets: 1, HostBuffers: 1, SendBuffers: 2} }

// ParamSpecs declares UCAST's parameters.
func ParamSpecs() []model.ParamSpec {
	return []model.ParamSpec{
		{Key: "credits", Doc: "send credits per ordered pair, C (receive buffers per sender)", Default: "1"},
		{Key: "packets", Doc: "packets every node sends to every other node, K", Default: "1"},
		{Key: "refresh", Doc: "CREDIT_REFRESH threshold (default max(1, C/2))"},
		{Key: "host-buffers", Doc: "host receive buffers per host", Default: "1"},
		{Key: "send-buffers", Doc: "NI send pool size per NI", Default: "2"},
		{Key: "flow", Doc: "explicit unicast workload entry SRC:DST:COUNT, repeatable (replaces --packets)", Repeat: true},
		{Key: "reply", Doc: "on: every packet is a request whose upcall replies to its sender before returning (implies drain=on)", Default: "off"},
		{Key: "drain", Doc: "on: LFC's host library: upcalls are steps, and a routine waiting for a resource drains the network, adding host buffers", Default: "off"},
		{Key: "upcalls-allowed", Doc: "with drain or reply: off makes draining add buffers only, without nested upcalls (upcalls_allowed = 0)", Default: "on"},
	}
}

// IntIn parses a number in lo..hi.
func IntIn(v string, lo, hi int) (int, error) {
	n, err := model.ParseDecimal(v)
	if err != nil {
		return 0, err
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("must be in %d..%d, got %d", lo, hi, n)
	}
	return n, nil
}

// Set applies one setting.
func (p *Params) Set(key, v string) (err error) {
	switch key {
	case "credits":
		p.Credits, err = IntIn(v, 1, MaxCredits)
	case "packets":
		p.Packets, err = IntIn(v, 0, model.MaxStreamSeq)
		p.packetsGiven = true
	case "refresh":
		p.Refresh, err = IntIn(v, 1, MaxCredits)
	case "host-buffers":
		p.HostBuffers, err = IntIn(v, 1, MaxBuffers)
	case "send-buffers":
		p.SendBuffers, err = IntIn(v, 1, MaxBuffers)
	case "reply":
		p.Reply, err = OnOff(v)
	case "drain":
		p.Drain, err = OnOff(v)
	case "upcalls-allowed":
		var on bool
		on, err = OnOff(v)
		p.NoNestedUpcalls = !on
	case "flow":
		var f Flow
		if f, err = ParseFlow(v); err == nil {
			p.Flows = append(p.Flows, f)
		}
	default:
		err = fmt.Errorf("unknown parameter %q", key)
	}
	return err
}

// HostLibraryKey reports whether key is one of the parameters of LFC's
// host library (reply, drain, upcalls-allowed), which only UCAST, MCAST
// and RECOV model.
func HostLibraryKey(key string) bool {
	return key == "reply" || key == "drain" || key == "upcalls-allowed"
}

// WithoutHostLibrary returns specs without the host library's parameters.
func WithoutHostLibrary(specs []model.ParamSpec) []model.ParamSpec {
	var out []model.ParamSpec
	for _, s := range specs {
		if !HostLibraryKey(s.Key) {
			out = append(out, s)
		}
	}
	return out
}

// NoHostLibrary returns an error when p sets the host library's
// parameters, for protocols that do not model it.
func (p *Params) NoHostLibrary(protocol string) error {
	if p.HostLibrary() || p.NoNestedUpcalls {
		return fmt.Errorf("%s does not model LFC's host library: reply, drain and upcalls-allowed are for ucast, mcast and recov", protocol)
	}
	return nil
}

// OnOff parses on or off.
func OnOff(v string) (bool, error) {
	switch v {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, fmt.Errorf("want on or off, got %q", v)
}

// PacketsGiven reports whether packets was set explicitly with Set.
func (p *Params) PacketsGiven() bool { return p.packetsGiven }

// Settings returns the non-default parameters.
func (p *Params) Settings() []model.Setting {
	d := Defaults()
	var s []model.Setting
	add := func(k string, v, def int) {
		if v != def {
			s = append(s, model.Setting{Key: k, Value: strconv.Itoa(v)})
		}
	}
	add("credits", p.Credits, d.Credits)
	if len(p.Flows) == 0 || p.packetsGiven {
		add("packets", p.Packets, d.Packets)
	}
	if p.Refresh != DefaultRefresh(p.Credits) {
		add("refresh", p.Refresh, 0)
	}
	add("host-buffers", p.HostBuffers, d.HostBuffers)
	add("send-buffers", p.SendBuffers, d.SendBuffers)
	for _, f := range p.Flows {
		s = append(s, model.Setting{Key: "flow", Value: f.String()})
	}
	for _, b := range []struct {
		key string
		on  bool
	}{{"reply", p.Reply}, {"drain", p.Drain}, {"upcalls-allowed", !p.NoNestedUpcalls}} {
		if b.on != (b.key == "upcalls-allowed") {
			s = append(s, model.Setting{Key: b.key, Value: map[bool]string{true: "on", false: "off"}[b.on]})
		}
	}
	return s
}

// Describe renders every parameter.
func (p *Params) Describe() string {
	work := fmt.Sprintf("packets=%d", p.Packets)
	if len(p.Flows) > 0 {
		work = "flows=" + Join(p.Flows)
	}
	return fmt.Sprintf("credits=%d %s %s", p.Credits, work, p.DescribeBuffers())
}

// DescribeBuffers renders refresh and the buffer sizes (and the host
// library's settings, when it is modeled).
func (p *Params) DescribeBuffers() string {
	s := fmt.Sprintf("refresh=%d host-buffers=%d send-buffers=%d", p.Refresh, p.HostBuffers, p.SendBuffers)
	if p.Reply {
		s += " reply=on"
	}
	if p.Drain {
		s += " drain=on"
	}
	if p.NoNestedUpcalls {
		s += " upcalls-allowed=off"
	}
	return s
}

// DefaultRefresh is the credit refresh threshold used when none is given:
// half the window, at least 1.
func DefaultRefresh(credits int) int {
	if credits/2 < 1 {
		return 1
	}
	return credits / 2
}

// Resolve fills in the refresh threshold and validates; UCAST's default
// node count is 3.
func (p *Params) Resolve(nodes int) (int, error) {
	if nodes == 0 {
		nodes = 3
	}
	if p.Refresh == 0 {
		p.Refresh = DefaultRefresh(p.Credits)
	}
	if err := p.Validate(nodes); err != nil {
		return 0, err
	}
	if p.packetsGiven && len(p.Flows) > 0 {
		return 0, fmt.Errorf("give packets or flows, not both: flows replace the all-to-all workload of packets")
	}
	if len(p.Flows) == 0 && p.Packets == 0 {
		return 0, fmt.Errorf("packets is 0 and no flow is given: nothing to send")
	}
	return nodes, nil
}

// Validate checks the sizes and flows for a system of nodes nodes.
func (p *Params) Validate(nodes int) error {
	if p.Credits < 1 || p.Credits > MaxCredits {
		return fmt.Errorf("credits must be in 1..%d, got %d", MaxCredits, p.Credits)
	}
	if p.Refresh < 1 || p.Refresh > MaxCredits {
		return fmt.Errorf("refresh must be in 1..%d, got %d", MaxCredits, p.Refresh)
	}
	if p.HostBuffers < 1 || p.HostBuffers > MaxBuffers {
		return fmt.Errorf("host-buffers must be in 1..%d, got %d", MaxBuffers, p.HostBuffers)
	}
	if p.SendBuffers < 1 || p.SendBuffers > MaxBuffers {
		return fmt.Errorf("send-buffers must be in 1..%d, got %d", MaxBuffers, p.SendBuffers)
	}
	if p.Packets < 0 || p.Packets > model.MaxStreamSeq {
		return fmt.Errorf("packets must be in 0..%d, got %d", model.MaxStreamSeq, p.Packets)
	}
	if p.NoNestedUpcalls && !p.HostLibrary() {
		return fmt.Errorf("upcalls-allowed=off needs drain=on or reply=on: without LFC's host library nothing drains")
	}
	per := map[[2]int]int{}
	for i, f := range p.Flows {
		if f.Src < 0 || f.Src >= nodes || f.Dst < 0 || f.Dst >= nodes {
			return fmt.Errorf("flow %d (%d->%d): node out of range 0..%d", i+1, f.Src, f.Dst, nodes-1)
		}
		if f.Src == f.Dst {
			return fmt.Errorf("flow %d (%d->%d): a node cannot send to itself", i+1, f.Src, f.Dst)
		}
		if f.Count < 1 {
			return fmt.Errorf("flow %d (%d->%d): count must be at least 1, got %d", i+1, f.Src, f.Dst, f.Count)
		}
		per[[2]int{f.Src, f.Dst}] += f.Count
		if per[[2]int{f.Src, f.Dst}] > model.MaxStreamSeq {
			return fmt.Errorf("flow %d (%d->%d): more than %d packets for one pair", i+1, f.Src, f.Dst, model.MaxStreamSeq)
		}
	}
	return nil
}

// Clone returns a deep copy.
func (p *Params) Clone() model.Params { return p.CloneParams() }

// CloneParams returns a deep copy as *Params.
func (p *Params) CloneParams() *Params {
	c := *p
	c.Flows = append([]Flow(nil), p.Flows...)
	return &c
}

// UnicastWork builds the unicast workload: the flows in order, or else
// every node sending Packets packets to every other node, round-robin over
// destinations. seq numbers the packets per ordered pair.
func (p *Params) UnicastWork(nodes int, work [][]WorkItem, allToAll bool) [][]WorkItem {
	seq := make([]uint16, nodes*nodes)
	add := func(src, dst int) {
		seq[src*nodes+dst]++
		work[src] = append(work[src], WorkItem{Tag: TagUnicast, Dest: model.NodeID(dst), Seq: seq[src*nodes+dst]})
	}
	for _, f := range p.Flows {
		for k := 0; k < f.Count; k++ {
			add(f.Src, f.Dst)
		}
	}
	if allToAll {
		for k := 0; k < p.Packets; k++ {
			for src := 0; src < nodes; src++ {
				for d := 1; d < nodes; d++ {
					add(src, (src+d)%nodes)
				}
			}
		}
	}
	return work
}

// CheckWork rejects workloads too large for one host.
func CheckWork(work [][]WorkItem) error {
	for h := range work {
		if len(work[h]) > MaxWorkPerHost {
			return fmt.Errorf("host %d launches %d packets, more than %d", h, len(work[h]), MaxWorkPerHost)
		}
	}
	return nil
}
