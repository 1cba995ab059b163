package explore_test

import (
	"fmt"
	"strings"
	"testing"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/protocols"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/ucast"
)

// BenchmarkStepCache measures full searches with the step cache
// (properties.Checker.StepCache, --step-cache) on and off: states/s, the
// cache's hit rate and its bytes. MCAST on binary trees at P=4 with every
// node casting one packet (the README's throughput configuration), with
// one worker and two, and UCAST at P=3; with -short (CI), binary trees at
// P=3 with two packets a node stand in for P=4.
func BenchmarkStepCache(b *testing.B) {
	for _, c := range []struct {
		name    string
		cfg     model.Config
		workers int
	}{
		{"mcast-binary-4n-c1-k1/workers=1", mcast.Config("binary", 4, 1, 1), 1},
		{"mcast-binary-4n-c1-k1/workers=2", mcast.Config("binary", 4, 1, 1), 2},
		{"mcast-binary-3n-c1-k2/workers=1", mcast.Config("binary", 3, 1, 2), 1},
		{"ucast-3n-c1-k1/workers=1", ucast.Config(3, 1, 1), 1},
	} {
		for _, on := range []bool{true, false} {
			b.Run(fmt.Sprintf("%s/step-cache=%v", c.name, on), func(b *testing.B) {
				if testing.Short() && (c.workers > 1 || strings.HasPrefix(c.name, "mcast-binary-4n")) {
					b.Skip("CI runs every benchmark once with -short: one worker on binary P=3 covers the same code")
				}
				var states, hits, misses, bytes int64
				var secs float64
				for i := 0; i < b.N; i++ {
					ck, err := protocols.Build(c.cfg)
					if err != nil {
						b.Fatal(err)
					}
					if ck.StepCacheOff() != "" {
						b.Fatal(ck.StepCacheOff())
					}
					ck.StepCache = on
					r, err := explore.BFS(ck, explore.Options{Workers: c.workers})
					if err != nil || r.Verdict != explore.Pass {
						b.Fatalf("verdict %v err %v", r.Verdict, err)
					}
					h, m, by := ck.StepCacheCounts()
					states += r.Stats.States
					hits, misses, bytes = hits+h, misses+m, bytes+by
					secs += r.Stats.Elapsed.Seconds()
				}
				b.ReportMetric(float64(states)/secs, "states/s")
				if on {
					b.ReportMetric(float64(hits)/float64(max(1, hits+misses)), "hit-rate")
					b.ReportMetric(float64(bytes)/float64(b.N), "cache-bytes")
				}
			})
		}
	}
}
