package model_test

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"testing"

	"lfccheck/model"
)

// The smallest protocol the kernel runs: a token travels round a ring of P
// nodes; a node that holds it may pass it on ("host N pass") until it has
// passed it K times. It shows what a model.Def needs (parameters, a node
// state that encodes, copies, describes and diffs itself, a machine with
// its action kinds and its receive handler, a property) and lets the
// kernel's tests run a protocol without any of lfccheck's.

var tokenTag = model.NewTag(model.TagInfo{Name: "TOKEN",
	Brief: func(p model.Packet) string { return fmt.Sprintf("t%d#%d", p.Origin, p.Seq) }})

type tokenParams struct{ K int }

func (p *tokenParams) Set(key, v string) error {
	if key != "passes" {
		return fmt.Errorf("token has no parameter %q", key)
	}
	k, err := model.ParseDecimal(v)
	if err != nil || k < 1 || k > 100 {
		return fmt.Errorf("passes must be in 1..100, got %q", v)
	}
	p.K = k
	return nil
}
func (p *tokenParams) Settings() []model.Setting {
	return []model.Setting{{Key: "passes", Value: strconv.Itoa(p.K)}}
}
func (p *tokenParams) Describe() string { return "passes=" + strconv.Itoa(p.K) }
func (p *tokenParams) Resolve(nodes int) (int, error) {
	if nodes == 0 {
		nodes = 3
	}
	return nodes, nil
}
func (p *tokenParams) Clone() model.Params { c := *p; return &c }

type tokenNode struct {
	ID     model.NodeID
	Has    bool
	Passed int
}

func (n *tokenNode) Encode(buf []byte) []byte {
	return binary.AppendUvarint(model.AppendBool(buf, n.Has), uint64(n.Passed))
}
func (n *tokenNode) Decode(d *model.Decoder) { n.Has, n.Passed = d.Bool(), int(d.Uvarint()) }
func (n *tokenNode) CopyFrom(src model.Node) { *n = *src.(*tokenNode) }
func (n *tokenNode) Describe() []string {
	return []string{fmt.Sprintf("node %d: token %v, passed %d", n.ID, n.Has, n.Passed)}
}
func (n *tokenNode) Diff(prev model.Node, ch func(what, from, to string)) {
	p := prev.(*tokenNode)
	ch(fmt.Sprintf("node %d token", n.ID), fmt.Sprint(p.Has), fmt.Sprint(n.Has))
	ch(fmt.Sprintf("node %d passed", n.ID), fmt.Sprint(p.Passed), fmt.Sprint(n.Passed))
}

type tokenMachine struct {
	P, K  int
	kinds []*model.ActionKind
}

func (m *tokenMachine) Kinds() []*model.ActionKind {
	if m.kinds == nil {
		m.kinds = []*model.ActionKind{
			{Name: "pass", Pattern: "host {node} pass", Owner: model.OwnerHost,
				Enabled: func(mn model.Node) bool { n := mn.(*tokenNode); return n.Has && n.Passed < m.K },
				Apply: func(mn model.Node, out *model.Outbox) {
					n := mn.(*tokenNode)
					n.Has = false
					n.Passed++
					out.Transmit((n.ID+1)%model.NodeID(m.P), model.Packet{Tag: tokenTag, Src: n.ID, Origin: n.ID, Seq: uint16(n.Passed)})
				}},
			model.Deliver,
		}
	}
	return m.kinds
}
func (m *tokenMachine) NewNode(id model.NodeID) model.Node { return &tokenNode{ID: id, Has: id == 0} }
func (m *tokenMachine) Receive(mn model.Node, _ model.NodeID, _ model.Packet, _ *model.Outbox) {
	mn.(*tokenNode).Has = true
}

// oneToken: exactly one token, held or on a link.
var oneToken = model.Property{Name: "one-token", Doc: "exactly one token is held or in flight",
	State: func(w *model.World) error {
		k := 0
		for _, n := range w.Nodes {
			if n.(*tokenNode).Has {
				k++
			}
		}
		for _, l := range w.Links {
			k += len(l)
		}
		if k != 1 {
			return fmt.Errorf("%d tokens", k)
		}
		return nil
	}}

var tokenDef = &model.Def{
	Name:       "token",
	Doc:        "a token round a ring (the kernel's toy protocol)",
	Params:     []model.ParamSpec{{Key: "passes", Doc: "times each node passes the token", Default: "1"}},
	NewParams:  func() model.Params { return &tokenParams{K: 1} },
	Variants:   []model.Variant{{Name: "correct"}},
	Properties: []model.Property{oneToken},
	Acyclic:    true,
	New: func(cfg model.Config) (model.Machine, error) {
		return &tokenMachine{P: cfg.Nodes, K: cfg.Params.(*tokenParams).K}, nil
	},
}

// TestToyProtocol runs the toy through the kernel alone: every reachable
// state by a breadth-first search over World.Enabled, Apply and Encode,
// checking its property in each. The ring's run is one line: the token
// is passed K times by each of the P nodes, each pass then delivered, so
// 2*K*P+1 states, and it ends at node 0 with every node done.
func TestToyProtocol(t *testing.T) {
	for _, c := range []struct{ p, k int }{{2, 1}, {3, 2}, {5, 3}} {
		params := tokenDef.NewParams()
		if err := params.Set("passes", strconv.Itoa(c.k)); err != nil {
			t.Fatal(err)
		}
		cfg := model.Config{Protocol: tokenDef.Name, Nodes: c.p, Params: params}
		m, err := tokenDef.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		sys, err := model.NewSystem(cfg, m)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		frontier := []*model.World{sys.Initial()}
		seen[string(frontier[0].Encode(nil))] = true
		var out model.Outbox
		var last *model.World
		for len(frontier) > 0 {
			w := frontier[0]
			frontier = frontier[1:]
			if err := oneToken.State(w); err != nil {
				t.Fatalf("P=%d K=%d: %v in\n%s", c.p, c.k, err, w.Format())
			}
			acts := w.Enabled(nil)
			if len(acts) == 0 {
				last = w
			}
			for _, a := range acts {
				next := w.Clone()
				if err := next.Apply(a, &out); err != nil {
					t.Fatalf("%s: %v", sys.ActionName(a), err)
				}
				if k := string(next.Encode(nil)); !seen[k] {
					seen[k] = true
					frontier = append(frontier, next)
				}
			}
		}
		if want := 2*c.k*c.p + 1; len(seen) != want {
			t.Errorf("P=%d K=%d: %d states, want %d", c.p, c.k, len(seen), want)
		}
		n0 := last.Nodes[0].(*tokenNode)
		if !n0.Has || n0.Passed != c.k {
			t.Errorf("P=%d K=%d: the run ends with %s", c.p, c.k, last.Format())
		}
	}
}
