package protocols

import (
	"fmt"
	"testing"

	"lfccheck/explore"
	"lfccheck/model"
)

func TestSmoke(t *testing.T) {
	for _, c := range []model.Config{
		{Protocol: "ucast", Nodes: 2, Credits: 1, Packets: 1},
		{Protocol: "ucast", Nodes: 2, Credits: 1, Packets: 2},
		{Protocol: "ucast", Nodes: 3, Credits: 1, Packets: 1},
		{Protocol: "ucast", Nodes: 3, Credits: 1, Packets: 1, SendBuffers: 1},
		{Protocol: "ucast", Nodes: 3, Credits: 1, Packets: 2, SendBuffers: 1},
		{Protocol: "ucast", Nodes: 3, Credits: 1, Packets: 1, Properties: []string{"reduce"}},
		{Protocol: "ucast", Nodes: 3, Credits: 1, Packets: 2, Properties: []string{"reduce"}},
		{Protocol: "ucast", Nodes: 3, Credits: 1, Packets: 2, SendBuffers: 1, Properties: []string{"reduce"}},
		{Protocol: "ucast", Variant: "no-credit-check", Nodes: 2, Credits: 1, Packets: 2},
		{Protocol: "ucast", Variant: "blocked-lifo", Nodes: 2, Credits: 1, Packets: 3},
		{Protocol: "ucast", Variant: "no-credit-return", Nodes: 2, Credits: 1, Packets: 1},
	} {
		red := len(c.Properties) > 0
		c.Properties = nil
		ck, err := Build(c)
		ck.Reduce = red
		if err != nil {
			t.Fatal(err)
		}
		r, err := explore.BFS(ck, explore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println(c, r.Verdict, r.Violation, r.Stats.States, r.Stats.Transitions, r.Stats.Depth, r.Stats.Elapsed, len(r.Trace))
		for _, a := range r.Trace {
			fmt.Println("   ", ck.ActionName(a))
		}
	}
}
