package panda

import (
	"fmt"
	"strconv"

	"lfccheck/model"
	"lfccheck/protocols/ucast"
)

// Limits of the parameters (the explorer's, not the thesis's).
const (
	MaxWindow  = 16 // W
	MaxCalls   = 8  // RPCs per client
	MaxPackets = 16 // packets of a request or a reply
)

// Params are Panda's parameters. Refresh 0 means the default, max(1,
// W/2); a zero given explicitly is refused.
type Params struct {
	Window         int `json:"window"`
	Refresh        int `json:"refresh,omitempty"`
	Calls          int `json:"calls"`
	RequestPackets int `json:"request_packets"`
	ReplyPackets   int `json:"reply_packets"`
}

// Defaults returns the default parameters: a window of two packets, one
// call per client, one-packet requests and three-packet replies (a reply
// larger than the window, so that its handler blocks).
func Defaults() *Params {
	return &Params{Window: 2, Calls: 1, RequestPackets: 1, ReplyPackets: 3}
}

// ParamSpecs declares the parameters.
func ParamSpecs() []model.ParamSpec {
	return []model.ParamSpec{
		{Key: "window", Default: "2",
			Doc: fmt.Sprintf("Panda's send window per ordered pair of hosts, W packets (1..%d): a host sends a data packet only with a window credit for its destination (§6.3)", MaxWindow)},
		{Key: "refresh", Default: "max(1, W/2)",
			Doc: "a receiver that owes this many window credits to a sender returns them in an explicit ACK message (1..W); fewer ride on its next data packet to that sender"},
		{Key: "calls", Default: "1",
			Doc: fmt.Sprintf("RPCs every client (node 1..P-1) makes to the server (node 0), one after the other (1..%d)", MaxCalls)},
		{Key: "request-packets", Default: "1",
			Doc: fmt.Sprintf("packets of a request message (1..%d)", MaxPackets)},
		{Key: "reply-packets", Default: "3",
			Doc: fmt.Sprintf("packets of the reply the server's handler sends from inside its upcall (1..%d)", MaxPackets)},
	}
}

// Set applies one setting.
func (p *Params) Set(key, v string) (err error) {
	switch key {
	case "window":
		p.Window, err = ucast.IntIn(v, 1, MaxWindow)
	case "refresh":
		p.Refresh, err = ucast.IntIn(v, 1, MaxWindow)
	case "calls":
		p.Calls, err = ucast.IntIn(v, 1, MaxCalls)
	case "request-packets":
		p.RequestPackets, err = ucast.IntIn(v, 1, MaxPackets)
	case "reply-packets":
		p.ReplyPackets, err = ucast.IntIn(v, 1, MaxPackets)
	default:
		return fmt.Errorf("panda has no parameter %q", key)
	}
	return err
}

// Settings returns the non-default parameters.
func (p *Params) Settings() []model.Setting {
	d := Defaults()
	var s []model.Setting
	add := func(key string, v, def int) {
		if v != def {
			s = append(s, model.Setting{Key: key, Value: strconv.Itoa(v)})
		}
	}
	add("window", p.Window, d.Window)
	add("refresh", p.Refresh, 0)
	add("calls", p.Calls, d.Calls)
	add("request-packets", p.RequestPackets, d.RequestPackets)
	add("reply-packets", p.ReplyPackets, d.ReplyPackets)
	return s
}

// RefreshOrDefault is the ACK threshold in use.
func (p *Params) RefreshOrDefault() int {
	if p.Refresh != 0 {
		return p.Refresh
	}
	return max(1, p.Window/2)
}

// Describe renders every parameter.
func (p *Params) Describe() string {
	return fmt.Sprintf("window=%d refresh=%d calls=%d request-packets=%d reply-packets=%d",
		p.Window, p.RefreshOrDefault(), p.Calls, p.RequestPackets, p.ReplyPackets)
}

// Resolve validates; the default node count is 2 (a server and one
// client).
func (p *Params) Resolve(nodes int) (int, error) {
	if nodes == 0 {
		nodes = 2
	}
	if p.Window < 1 || p.Window > MaxWindow {
		return 0, fmt.Errorf("window must be in 1..%d, got %d", MaxWindow, p.Window)
	}
	if r := p.RefreshOrDefault(); r > p.Window {
		return 0, fmt.Errorf("refresh %d exceeds the window %d: a receiver could owe a blocked sender every credit of its window and never return them", r, p.Window)
	}
	if p.Calls < 1 || p.Calls > MaxCalls {
		return 0, fmt.Errorf("calls must be in 1..%d, got %d", MaxCalls, p.Calls)
	}
	if p.RequestPackets < 1 || p.RequestPackets > MaxPackets || p.ReplyPackets < 1 || p.ReplyPackets > MaxPackets {
		return 0, fmt.Errorf("request-packets and reply-packets must be in 1..%d, got %d and %d", MaxPackets, p.RequestPackets, p.ReplyPackets)
	}
	return nodes, nil
}

// Clone returns a copy.
func (p *Params) Clone() model.Params { c := *p; return &c }

// Config is a configuration: nodes hosts (node 0 the server), window W,
// replies of reply packets, the other parameters at their defaults.
func Config(nodes, window, reply int) model.Config {
	p := Defaults()
	p.Window, p.ReplyPackets = window, reply
	return model.Config{Protocol: "panda", Nodes: nodes, Params: p}
}
