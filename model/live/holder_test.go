package live_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"lfccheck/model"
	"lfccheck/model/live"
)

// holdMachine is a two-node protocol whose node 1 keeps node 0's packet
// unhandled (model.Holder) until its client releases it, while node 0's
// retransmission timer, a Quiet kind, runs: the model's Quiet says the
// timer must not expire while node 1 holds the packet, with the links
// empty.
type holdMachine struct{ kinds []*model.ActionKind }

// notHolder is the same machine without the Holder method.
type notHolder struct{ m *holdMachine }

func (m notHolder) Kinds() []*model.ActionKind         { return m.m.Kinds() }
func (m notHolder) NewNode(id model.NodeID) model.Node { return m.m.NewNode(id) }
func (m notHolder) Receive(n model.Node, from model.NodeID, pkt model.Packet, out *model.Outbox) {
	m.m.Receive(n, from, pkt, out)
}

var (
	tagHoldData   = model.NewTag(model.TagInfo{Name: "HOLDTEST_DATA", Data: true})
	tagHoldAnswer = model.NewTag(model.TagInfo{Name: "HOLDTEST_ANSWER"})
)

type holdNode struct {
	ID                     model.NodeID
	Sent, Answered         bool
	Held, Fires, Delivered int
}

func (n *holdNode) Encode(buf []byte) []byte {
	return fmt.Appendf(buf, "%v%v%d%d%d;", n.Sent, n.Answered, n.Held, n.Fires, n.Delivered)
}
func (n *holdNode) Decode(*model.Decoder)                 { panic("not used") }
func (n *holdNode) CopyFrom(src model.Node)               { *n = *src.(*holdNode) }
func (n *holdNode) Describe() []string                    { return []string{string(n.Encode(nil))} }
func (n *holdNode) Diff(model.Node, func(_, _, _ string)) {}

func (m *holdMachine) NewNode(id model.NodeID) model.Node { return &holdNode{ID: id} }

func (m *holdMachine) Receive(mn model.Node, _ model.NodeID, pkt model.Packet, _ *model.Outbox) {
	n := mn.(*holdNode)
	if pkt.Tag == tagHoldData {
		n.Held++
	} else {
		n.Answered = true
	}
}

func (m *holdMachine) Holds(x model.Node, from model.NodeID) bool {
	return x.(*holdNode).Held > 0 && from == 0
}

func (m *holdMachine) Kinds() []*model.ActionKind {
	if m.kinds == nil {
		m.kinds = []*model.ActionKind{
			{Name: "send", Pattern: "host {node} send",
				Enabled: func(n model.Node) bool { x := n.(*holdNode); return x.ID == 0 && !x.Sent },
				Apply: func(n model.Node, out *model.Outbox) {
					n.(*holdNode).Sent = true
					out.Transmit(1, model.Packet{Tag: tagHoldData, Src: 0, Origin: 0, Seq: 1})
				}},
			model.Deliver,
			{Name: "release", Pattern: "host {node} release", Live: model.LiveClient,
				Enabled: func(n model.Node) bool { return n.(*holdNode).Held > 0 },
				Apply: func(n model.Node, out *model.Outbox) {
					x := n.(*holdNode)
					x.Held--
					x.Delivered++
					out.Transmit(0, model.Packet{Tag: tagHoldAnswer, Src: 1, Origin: 1})
				}},
			{Name: "timeout", Pattern: "host {node} timeout", Live: model.LiveTimer, Quiet: true,
				Enabled: func(n model.Node) bool { x := n.(*holdNode); return x.Sent && !x.Answered && x.Fires < 3 },
				Apply:   func(n model.Node, _ *model.Outbox) { n.(*holdNode).Fires++ }},
		}
	}
	return m.kinds
}

// holdRun runs machine m live: node 1's client releases the packet after
// hold, node 0's timer has a delay of timer.
func holdRun(t *testing.T, m model.Machine, hold, timer time.Duration) (*live.Result, *holdNode) {
	t.Helper()
	sys, err := model.NewSystem(model.Config{Protocol: "holdtest", Nodes: 2}, m)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := live.RunWith(ctx, sys, live.Options{
		Timers: map[string]time.Duration{"timeout": timer},
		Client: func(ctx context.Context, c *live.Client) {
			if c.Node() != 1 {
				return
			}
			// Wait for the packet, hold it, release it.
			for held := false; !held && ctx.Err() == nil; {
				c.View(func(n model.Node) { held = n.(*holdNode).Held > 0 })
				time.Sleep(100 * time.Microsecond)
			}
			time.Sleep(hold)
			c.Do("release")
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return res, res.Final.Nodes[0].(*holdNode)
}

// replay applies a live recording to the model world of machine m: an
// error wrapping model.ErrNotEnabled if the model does not allow a step.
func replay(m model.Machine, acts []model.Action) error {
	sys, err := model.NewSystem(model.Config{Protocol: "holdtest", Nodes: 2}, m)
	if err != nil {
		return err
	}
	w := sys.Initial()
	var out model.Outbox
	for i, a := range acts {
		if err := w.Apply(a, &out); err != nil {
			return fmt.Errorf("step %d: %w", i+1, err)
		}
	}
	return nil
}

// TestQuietHonoursHolder: the live runtime's Quiet kinds wait while
// another node holds the node's packet unhandled (model.Holder), as the
// model's World.Quiet says, so the recording replays through the model.
// The same machine without the Holder method lets the timer expire while
// the packet is held, and the model of the Holder machine rejects that
// recording: the check that the first run passes can fail.
func TestQuietHonoursHolder(t *testing.T) {
	const hold, timer = 40 * time.Millisecond, 2 * time.Millisecond
	hm := &holdMachine{}
	res, n0 := holdRun(t, hm, hold, timer)
	if n0.Fires != 0 || !n0.Answered {
		t.Fatalf("holder: node 0 timed out %d times (answered %v): the timer expired while node 1 held its packet", n0.Fires, n0.Answered)
	}
	if err := replay(hm, res.Actions); err != nil {
		t.Fatalf("holder: the model rejects the live recording: %v", err)
	}
	res, n0 = holdRun(t, notHolder{&holdMachine{}}, hold, timer)
	if n0.Fires == 0 {
		t.Fatalf("not a holder: the timer never expired in %v with a delay of %v", hold, timer)
	}
	if err := replay(hm, res.Actions); !errors.Is(err, model.ErrNotEnabled) {
		t.Fatalf("not a holder: the Holder model accepts a recording whose timer expired while the packet was held (err %v)", err)
	}
}
