package model

import (
	"fmt"
)

// Protocol is a set of pure NI event handlers. Handlers change only the NI
// they are given and the outbox; they do no I/O, read no clock, draw no
// random number and iterate no map, so every driver runs identical code.
type Protocol interface {
	// InitNI sets the protocol's initial state of a fresh NI.
	InitNI(ni *NI)
	// Launch handles a host's send request for the packet just allocated as
	// the last entry of ni.Send (event_unicast, event_multicast).
	Launch(ni *NI, item WorkItem, out *Outbox)
	// Receive handles the arrival of pkt (event_packet_received). For a data
	// packet, buf is the index in ni.Recv of the buffer it was received
	// into; for a control packet buf is -1.
	Receive(ni *NI, pkt Packet, buf int, out *Outbox)
	// Copied runs after the packet in ni.Recv[buf] was copied to the host.
	Copied(ni *NI, buf int, out *Outbox)
}

// VariantInfo describes a named protocol variant: what it breaks, which
// property must catch it, and a configuration in which it does.
type VariantInfo struct {
	Name    string
	Doc     string
	Catches string // property that must catch it; "" for the correct protocol
	Example Config // nodes, credits and packets where it is caught
}

// Flow is one entry of an explicit workload: Src sends Count packets to Dst.
type Flow struct {
	Src   int `json:"src"`
	Dst   int `json:"dst"`
	Count int `json:"count"`
}

// String renders a flow as SRC:DST:COUNT, the form --flow takes.
func (f Flow) String() string { return fmt.Sprintf("%d:%d:%d", f.Src, f.Dst, f.Count) }

// Config holds every parameter of a run. Its JSON form is part of the trace
// and result formats.
type Config struct {
	Protocol    string `json:"protocol"`
	Variant     string `json:"variant"`
	Nodes       int    `json:"nodes"`
	Credits     int    `json:"credits"`
	Packets     int    `json:"packets"`
	Refresh     int    `json:"refresh"`
	HostBuffers int    `json:"host_buffers"`
	SendBuffers int    `json:"send_buffers"`
	Flows       []Flow `json:"flows,omitempty"`
	// Multicast configuration (MCAST and later protocols): a built-in tree
	// family for the broadcast group, or an explicit topology, and the
	// multicast workload.
	Tree       string        `json:"tree,omitempty"`
	Topology   *TopologySpec `json:"topology,omitempty"`
	Casts      []Cast        `json:"casts,omitempty"`
	Properties []string      `json:"properties,omitempty"`
}

// Limits on sizes the model accepts.
const (
	MaxCredits     = 64
	MaxStreamPkts  = 64 // a StreamLog mask holds 64 sequence numbers
	MaxBuffers     = 255
	MaxWorkPerHost = 1 << 14
)

// DefaultRefresh is the credit refresh threshold used when none is given:
// half the window, at least 1 (the thesis's "half-window acknowledgement",
// §8.1).
func DefaultRefresh(credits int) int {
	if credits/2 < 1 {
		return 1
	}
	return credits / 2
}

// Normalize fills in defaults for zero-valued optional fields.
func (c *Config) Normalize() {
	if c.Variant == "" {
		c.Variant = "correct"
	}
	if c.Refresh == 0 {
		c.Refresh = DefaultRefresh(c.Credits)
	}
	if c.HostBuffers == 0 {
		c.HostBuffers = 1
	}
	if c.SendBuffers == 0 {
		c.SendBuffers = 2
	}
}

// Validate checks the sizes; each error names the parameter and the problem.
func (c *Config) Validate() error {
	if c.Nodes < 2 || c.Nodes > MaxNodes {
		return fmt.Errorf("nodes must be in 2..%d, got %d", MaxNodes, c.Nodes)
	}
	if c.Credits < 1 || c.Credits > MaxCredits {
		return fmt.Errorf("credits must be in 1..%d, got %d", MaxCredits, c.Credits)
	}
	if c.Refresh < 1 || c.Refresh > MaxCredits {
		return fmt.Errorf("refresh must be in 1..%d, got %d", MaxCredits, c.Refresh)
	}
	if c.HostBuffers < 1 || c.HostBuffers > MaxBuffers {
		return fmt.Errorf("host-buffers must be in 1..%d, got %d", MaxBuffers, c.HostBuffers)
	}
	if c.SendBuffers < 1 || c.SendBuffers > MaxBuffers {
		return fmt.Errorf("send-buffers must be in 1..%d, got %d", MaxBuffers, c.SendBuffers)
	}
	if c.Packets < 0 || c.Packets > MaxStreamPkts {
		return fmt.Errorf("packets must be in 0..%d, got %d", MaxStreamPkts, c.Packets)
	}
	per := map[[2]int]int{}
	for i, f := range c.Flows {
		if f.Src < 0 || f.Src >= c.Nodes || f.Dst < 0 || f.Dst >= c.Nodes {
			return fmt.Errorf("flow %d (%d->%d): node out of range 0..%d", i+1, f.Src, f.Dst, c.Nodes-1)
		}
		if f.Src == f.Dst {
			return fmt.Errorf("flow %d (%d->%d): a node cannot send to itself", i+1, f.Src, f.Dst)
		}
		if f.Count < 1 {
			return fmt.Errorf("flow %d (%d->%d): count must be at least 1, got %d", i+1, f.Src, f.Dst, f.Count)
		}
		per[[2]int{f.Src, f.Dst}] += f.Count
		if per[[2]int{f.Src, f.Dst}] > MaxStreamPkts {
			return fmt.Errorf("flow %d (%d->%d): more than %d packets for one pair", i+1, f.Src, f.Dst, MaxStreamPkts)
		}
	}
	return nil
}

// System is a protocol composed with a configuration and a workload: the
// static part of a model that World states refer to.
type System struct {
	Cfg   Config
	P     int
	Proto Protocol
	// Work lists, per host, the packets it launches in order.
	Work [][]WorkItem
	// Expect gives, per host and stream, how many packets it must receive.
	Expect [][]uint16
	// Topo is the multicast topology; nil for unicast-only protocols.
	Topo *Topology
}

// Streams is the number of FIFO streams a host tracks: one per unicast
// origin and one per multicast tree.
func (s *System) Streams() int {
	if s.Topo == nil {
		return s.P
	}
	return s.P + len(s.Topo.Trees)
}

// Stream gives the FIFO stream a data packet belongs to.
func (s *System) Stream(p Packet) int {
	if p.Tag == TagMulticast {
		return s.P + int(p.Tree)
	}
	return int(p.Origin)
}

// NewSystem composes a protocol and a topology (nil for unicast only) with
// a validated, normalized configuration.
//
// Without a topology the default workload has every node send Packets
// packets to every other node, round-robin over destinations. With one, the
// default has every member of every group multicast Packets packets on its
// own tree, round-robin over groups. Flows (unicast) and Casts (multicast)
// replace the default when either is given; each host launches its flows in
// the order listed, then its casts.
func NewSystem(cfg Config, proto Protocol, topo *Topology) (*System, error) {
	cfg.Normalize()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &System{Cfg: cfg, P: cfg.Nodes, Proto: proto, Topo: topo}
	s.Work = make([][]WorkItem, s.P)
	seq := make([]uint16, s.P*s.P)
	add := func(src, dst int) {
		seq[src*s.P+dst]++
		s.Work[src] = append(s.Work[src], WorkItem{Tag: TagUnicast, Dest: NodeID(dst), Seq: seq[src*s.P+dst]})
	}
	tseq := map[int]uint16{}
	cast := func(tree int) error {
		tseq[tree]++
		if tseq[tree] > MaxStreamPkts {
			return fmt.Errorf("more than %d packets multicast on the tree of %d", MaxStreamPkts, topo.Trees[tree].Root)
		}
		r := topo.Trees[tree].Root
		s.Work[r] = append(s.Work[r], WorkItem{Tag: TagMulticast, Tree: uint16(tree), Seq: tseq[tree]})
		return nil
	}
	switch {
	case len(cfg.Flows) > 0 || len(cfg.Casts) > 0:
		for _, f := range cfg.Flows {
			for k := 0; k < f.Count; k++ {
				add(f.Src, f.Dst)
			}
		}
		for i, c := range cfg.Casts {
			if topo == nil {
				return nil, fmt.Errorf("cast %d: protocol %s has no multicast", i+1, cfg.Protocol)
			}
			t, err := topo.castTree(c)
			if err != nil {
				return nil, fmt.Errorf("cast %d (%d:%d): %v", i+1, c.Root, c.Count, err)
			}
			for k := 0; k < c.Count; k++ {
				if err := cast(t); err != nil {
					return nil, err
				}
			}
		}
	case topo != nil:
		for k := 0; k < cfg.Packets; k++ {
			for t := range topo.Trees {
				if err := cast(t); err != nil {
					return nil, err
				}
			}
		}
	default:
		for k := 0; k < cfg.Packets; k++ {
			for src := 0; src < s.P; src++ {
				for d := 1; d < s.P; d++ {
					add(src, (src+d)%s.P)
				}
			}
		}
	}
	for h := range s.Work {
		if len(s.Work[h]) > MaxWorkPerHost {
			return nil, fmt.Errorf("host %d launches %d packets, more than %d", h, len(s.Work[h]), MaxWorkPerHost)
		}
	}
	s.Expect = make([][]uint16, s.P)
	for h := range s.Expect {
		s.Expect[h] = make([]uint16, s.Streams())
	}
	for src := range s.Work {
		for _, it := range s.Work[src] {
			st := s.Stream(Packet{Tag: it.Tag, Origin: NodeID(src), Tree: it.Tree})
			if it.Tag != TagMulticast {
				s.Expect[it.Dest][st]++
				continue
			}
			for _, m := range topo.Groups[topo.Trees[it.Tree].Group].Members {
				if int(m) != src {
					s.Expect[m][st]++
				}
			}
		}
	}
	return s, nil
}

// Initial builds the initial world state.
func (s *System) Initial() *World {
	w := &World{Sys: s}
	w.NIs = make([]NI, s.P)
	w.Hosts = make([]Host, s.P)
	w.Links = make([][]Packet, s.P*s.P)
	for i := range w.NIs {
		w.NIs[i] = s.NewNI(NodeID(i))
		w.Hosts[i].Log = make([]StreamLog, s.Streams())
	}
	return w
}

// NewNI builds NI id in its initial state.
func (s *System) NewNI(id NodeID) NI {
	ni := NI{ID: id, PCB: make([]PCB, s.P)}
	s.Proto.InitNI(&ni)
	return ni
}

// TotalPackets is the number of data packets the workload launches.
func (s *System) TotalPackets() int {
	n := 0
	for _, w := range s.Work {
		n += len(w)
	}
	return n
}
