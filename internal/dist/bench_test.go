package dist

import (
	"fmt"
	"testing"

	"lfccheck/explore"
	"lfccheck/properties"
	"lfccheck/protocols/mcast"
)

// BenchmarkDistributed reports states/s and bytes sent per state of the
// distributed search on a mid-size claim, MCAST on a binary tree, P=3 C=1
// K=2 (171,461 states), with 1 and 2 worker processes (the others are the
// test binary started again), and with 2 workers in this process (each
// with its own checker and gRPC server on loopback), beside explore.BFS
// with one worker.
func BenchmarkDistributed(b *testing.B) {
	cfg := mcast.Config("binary", 3, 1, 2)
	b.Run("mcast-binary-3n-k2/bfs", func(b *testing.B) {
		var states int64
		var sec float64
		for b.Loop() {
			ck, err := properties.Build(cfg)
			if err != nil {
				b.Fatal(err)
			}
			r, err := explore.BFS(ck, explore.Options{Workers: 1})
			if err != nil || r.Verdict != explore.Pass {
				b.Fatalf("%s %v", r.Verdict, err)
			}
			states += r.Stats.States
			sec += r.Stats.Elapsed.Seconds()
		}
		b.ReportMetric(float64(states)/sec, "states/s")
	})
	for _, c := range []struct {
		n     int
		procs bool
	}{{1, true}, {2, true}, {2, false}} {
		name := fmt.Sprintf("mcast-binary-3n-k2/processes=%d", c.n)
		if !c.procs {
			name = fmt.Sprintf("mcast-binary-3n-k2/in-process=%d", c.n)
		}
		b.Run(name, func(b *testing.B) {
			var states, sent int64
			var sec float64
			for b.Loop() {
				var r explore.Result
				var info Info
				if c.procs {
					r, info = runProcesses(b, c.n)
				} else {
					r, info, _ = runLocal(b, cfg, c.n, explore.Options{})
				}
				if r.Verdict != explore.Pass {
					b.Fatalf("%s: %s", r.Verdict, r.Reason)
				}
				states += r.Stats.States
				sent += info.BytesSent
				sec += r.Stats.Elapsed.Seconds()
			}
			b.ReportMetric(float64(states)/sec, "states/s")
			b.ReportMetric(float64(sent)/float64(states), "bytes-sent/state")
		})
	}
}
