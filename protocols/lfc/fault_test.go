package lfc_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"lfccheck/model"
	"lfccheck/protocols/lfc"
	"lfccheck/protocols/ucast"
)

// faultOn returns a tamper hook that applies f to the k-th UNICAST packet
// node 0 transmits to node 1 (k from 1), and passes everything else; f
// gets the packet and the next one on the link (for a reorder) through
// held.
func faultOn(k int, f func(p model.Packet, held *[]model.Packet) []model.Packet) func(from, to model.NodeID, p model.Packet) []model.Packet {
	n := 0
	var held []model.Packet
	return func(from, to model.NodeID, p model.Packet) []model.Packet {
		if from != 0 || to != 1 || p.Tag != ucast.TagUnicast {
			return []model.Packet{p}
		}
		n++
		switch {
		case n == k:
			return f(p, &held)
		case len(held) > 0:
			out := append([]model.Packet{p}, held...) // the held packet after this one
			held = nil
			return out
		}
		return []model.Packet{p}
	}
}

// A live link that reorders, loses or duplicates a packet breaks the
// network's guarantees (§3.2: Myrinet does neither); the recording
// cluster's conformance check, and the online monitor's, must report each
// as a *ConformanceError naming the step and the packet, and must not
// flag an honest run, or one whose packets are only late.
func TestConformanceCatchesLinkFaults(t *testing.T) {
	for _, mode := range []lfc.RecordMode{lfc.RecordOn, lfc.RecordMonitor} {
		t.Run(map[lfc.RecordMode]string{lfc.RecordOn: "record", lfc.RecordMonitor: "monitor"}[mode], func(t *testing.T) { linkFaults(t, mode) })
	}
}

func linkFaults(t *testing.T, mode lfc.RecordMode) {
	for _, tc := range []struct {
		name   string
		tamper func(from, to model.NodeID, p model.Packet) []model.Packet
		caught bool
	}{
		{"honest", nil, false},
		{"delay", faultOn(3, func(p model.Packet, _ *[]model.Packet) []model.Packet {
			time.Sleep(5 * time.Millisecond) // late, still in order
			return []model.Packet{p}
		}), false},
		{"reorder", faultOn(3, func(p model.Packet, held *[]model.Packet) []model.Packet {
			*held = append(*held, p) // sent after the next packet
			return nil
		}), true},
		{"drop", faultOn(3, func(model.Packet, *[]model.Packet) []model.Packet { return nil }), true},
		// The last packet lost: no later delivery shows it; the end
		// state does (the model still has it on the link).
		{"drop-last", faultOn(6, func(model.Packet, *[]model.Packet) []model.Packet { return nil }), true},
		{"duplicate", faultOn(3, func(p model.Packet, _ *[]model.Packet) []model.Packet { return []model.Packet{p, p} }), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := lfc.WithTamper(lfc.Options{Nodes: 2, Credits: 8, HostBuffers: 8, Record: mode, Handler: func(int, lfc.Packet) {}}, tc.tamper)
			c, err := lfc.Start(opt)
			if err != nil {
				t.Fatal(err)
			}
			for k := 0; k < 6; k++ {
				if err := c.Node(0).Send(1, []byte{byte(k)}); err != nil {
					t.Fatal(err)
				}
			}
			// A lost packet is never delivered: drain for a while only
			// (an honest run drains at once; the verdict is Close's).
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			drained := c.Drain(ctx)
			cancel()
			_, err = c.Close()
			var ce *lfc.ConformanceError
			if !tc.caught {
				if drained != nil || err != nil {
					t.Fatalf("an honest run: drain %v, close %v", drained, err)
				}
				return
			}
			if !errors.As(err, &ce) {
				t.Fatalf("a %s on the link is not caught: Close returned %v", tc.name, err)
			}
			if ce.Err == nil || (ce.Step == 0 && !strings.Contains(ce.Err.Error(), "after the last step")) || !strings.Contains(ce.Error(), "u0#") {
				t.Fatalf("the error names no step or packet: step %d, %v", ce.Step, ce)
			}
			if mode == lfc.RecordMonitor && (ce.Recording != nil || len(ce.Recent) == 0 || ce.Step > 0 && !strings.Contains(ce.Error(), ce.Recent[len(ce.Recent)-1])) {
				t.Fatalf("the monitor's error: recording %v, recent steps %q, %v", ce.Recording != nil, ce.Recent, ce)
			}
			t.Logf("step %d: %v (recent %q)", ce.Step, ce, ce.Recent)
		})
	}
}
