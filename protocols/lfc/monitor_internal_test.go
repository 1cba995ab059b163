package lfc

import "testing"

// The monitor holds a window, not the history: after a stream of 100,000
// packets (20,000 with -short) its model's workload holds fewer than
// compactAt launched items plus what was never launched, and its queue is
// empty.
func TestMonitorMemoryStaysFlat(t *testing.T) {
	n := 100000
	if testing.Short() {
		n = 20000
	}
	c, err := Start(Options{Nodes: 2, Record: RecordMonitor, Handler: func(int, Packet) {}})
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < n; k++ {
		if err := c.Node(0).Send(1, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Close(); err != nil {
		t.Fatal(err)
	}
	m := c.mon
	if w := len(m.um.Work[0]); w > compactAt || m.base[0] < n-compactAt || len(m.queue) != 0 {
		t.Fatalf("after 100,000 sends the monitor's workload holds %d items (%d dropped), its queue %d steps", w, m.base[0], len(m.queue))
	}
}

// The per-caller check (fa-callers) catches a library that hands one
// value to two calls, as the old reply matching did: the monitor reports
// it at once (Conformance) and at Close, the recording cluster at Close.
func TestFACallersCatchesDuplicate(t *testing.T) {
	for _, rec := range []RecordMode{RecordMonitor, RecordOn} {
		c, err := Start(Options{Nodes: 2, Record: rec, Handler: func(int, Packet) {}})
		if err != nil {
			t.Fatal(err)
		}
		v, err := c.Node(1).FetchAndAdd()
		if err != nil {
			t.Fatal(err)
		}
		c.mu.Lock()
		c.faHanded(c.nodes[1], 1, v) // a second call handed the same value
		c.mu.Unlock()
		if rec == RecordMonitor {
			if ce, ok := c.Conformance().(*ConformanceError); !ok || ce.Violation == nil || ce.Violation.Property != FACallers {
				t.Fatalf("record %d: Conformance after a duplicate value: %v", rec, c.Conformance())
			}
		}
		_, err = c.Close()
		if ce, ok := err.(*ConformanceError); !ok || ce.Violation == nil || ce.Violation.Property != FACallers {
			t.Fatalf("record %d: Close after a duplicate value: %v", rec, err)
		}
		t.Log(err)
	}
}
