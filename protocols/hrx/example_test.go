package hrx_test

import (
	"context"
	"fmt"

	"lfccheck/model/live"
	"lfccheck/protocols/hrx"
	"lfccheck/protocols/irx"
)

// H_rx live: three hosts stream 1000 packets to each other over links
// that lose 1% of the packets and duplicate and corrupt some; the hosts
// run go-back-N and every host gets every packet once, in order.
func ExampleRunLive() {
	rep, err := hrx.RunLive(context.Background(), irx.LiveOptions{Nodes: 3, Packets: 1000,
		Faults: &live.Faults{Seed: 7, All: live.LinkFaults{Loss: 0.01, Dup: 0.005, Corrupt: 0.005}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("delivered exactly once, in order:", rep.Delivered, "packets; faults injected:", rep.Faults.Lost+rep.Faults.Duplicated+rep.Faults.Corrupted > 0)
	// Output: delivered exactly once, in order: 6000 packets; faults injected: true
}
