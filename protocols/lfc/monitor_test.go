package lfc_test

import (
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"lfccheck/model"
	"lfccheck/protocols/lfc"
)

// The online monitor (RecordMonitor) checks runs far past a recording's
// limits (64 packets a stream): mixed unicast and multicast between 16
// nodes, RECOV on chains, fetch-and-add, and request/reply with nested
// upcalls all conform, with every step checked.
func TestMonitorConforms(t *testing.T) {
	k := 300
	if testing.Short() {
		k = 100
	}
	for _, tc := range []struct {
		name string
		opt  lfc.Options
		m    int
	}{
		{"mcast-16-mixed", lfc.Options{Nodes: 16, Credits: 2, HostBuffers: 2}, 5},
		{"recov-chain", lfc.Options{Nodes: 6, Protocol: "recov", Tree: "chain", Credits: 1, HostBuffers: 1, SendBuffers: 2}, 3},
		{"polling", lfc.Options{Nodes: 4, Mode: lfc.Polling}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var col collector
			tc.opt.Handler, tc.opt.Record = col.handler, lfc.RecordMonitor
			c, err := lfc.Start(tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			run(t, c, &col, k, tc.m, tc.opt.Mode)
			checkedAll(t, c)
		})
	}
	t.Run("fetch-and-add", func(t *testing.T) {
		c, err := lfc.Start(lfc.Options{Nodes: 4, Credits: 1, HostBuffers: 1, Server: 1, Record: lfc.RecordMonitor, Handler: func(int, lfc.Packet) {}})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for i := 0; i < 4; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				for j := 0; j < k; j++ {
					if _, err := c.Node(i).FetchAndAdd(); err != nil {
						t.Error(err)
						return
					}
				}
			}(i)
		}
		wg.Wait()
		checkDrained(t, c)
		if _, err := c.Close(); err != nil {
			t.Fatal(err)
		}
		checkedAll(t, c)
	})
	t.Run("replies-nested", func(t *testing.T) {
		r := startReplies(t, lfc.Options{Nodes: 3, Credits: 1, HostBuffers: 1, SendBuffers: 1, Record: lfc.RecordMonitor})
		var wg sync.WaitGroup
		for i := 0; i < 3; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				if err := r.request(i, (i+1)%3, k); err != nil {
					t.Error(err)
				}
			}(i)
		}
		wg.Wait()
		r.finish(t, []int64{int64(k), int64(k), int64(k)})
		checkedAll(t, r.c)
	})
}

// checkedAll checks that c, closed, had every step checked by its monitor.
func checkedAll(t *testing.T, c *lfc.Cluster) {
	t.Helper()
	r, err := c.Close() // closed already: the report again
	if err != nil {
		t.Fatal(err)
	}
	if r.Checked != r.Steps || r.Steps == 0 {
		t.Fatalf("the monitor checked %d of %d steps", r.Checked, r.Steps)
	}
	t.Logf("%d steps checked", r.Checked)
}

// The monitor catches a broken protocol variant by the property the
// checker names, while the cluster runs (Conformance) and at Close, with
// the steps that led there.
func TestMonitorCatchesVariant(t *testing.T) {
	c := runNoIncrement(t, lfc.RecordMonitor)
	var ce *lfc.ConformanceError
	for deadline := time.Now().Add(10 * time.Second); !errors.As(c.Conformance(), &ce); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the running cluster's monitor reports nothing")
		}
	}
	_, err := c.Close()
	if !errors.As(err, &ce) || ce.Violation == nil || ce.Violation.Property != "fa-values" || len(ce.Recent) == 0 {
		t.Fatalf("Close of a monitored run of fa-no-increment: %v", err)
	}
	t.Logf("%v; the last steps: %s", err, strings.Join(ce.Recent, ", "))
}

// Past the wrap: in a stream of 70,000 packets, packet 66,000 (number
// 2,465 of the second round) overtakes its predecessor on the link; the
// monitor names that very step and packet.
func TestMonitorCatchesFaultAfterTheWrap(t *testing.T) {
	const n, k = 70000, 66000
	opt := lfc.WithTamper(lfc.Options{Nodes: 2, Record: lfc.RecordMonitor, Handler: func(int, lfc.Packet) {}},
		faultOn(k, func(p model.Packet, held *[]model.Packet) []model.Packet {
			*held = append(*held, p)
			return nil
		}))
	c, err := lfc.Start(opt)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	for j := 0; j < n; j++ {
		binary.LittleEndian.PutUint64(buf, uint64(j))
		if err := c.Node(0).Send(1, buf); err != nil {
			t.Fatal(err)
		}
	}
	checkDrained(t, c)
	_, err = c.Close()
	var ce *lfc.ConformanceError
	want := "u0#" + strconv.Itoa(int(model.SeqOf(k)))
	if !errors.As(err, &ce) || ce.Step == 0 || !strings.Contains(err.Error(), want) {
		t.Fatalf("a reordered packet after the wrap: %v (want step and %s)", err, want)
	}
	t.Log(err)
}
