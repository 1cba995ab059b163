package explore_test

import (
	"testing"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/protocols"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/ucast"
)

// BenchmarkExplore measures full searches of UCAST configurations and
// reports states/s and bytes of search storage per state.
func BenchmarkExplore(b *testing.B) {
	cases := []struct {
		name string
		cfg  model.Config
		fp   bool
	}{
		{"ucast-3n-c1-k1/exact", ucast.Config(3, 1, 1), false},
		{"ucast-3n-c1-k1/fingerprint", ucast.Config(3, 1, 1), true},
		{"ucast-2n-c2-k4/exact", ucast.Config(2, 2, 4), false},
		{"mcast-binary-3n-c1-k2/exact", mcast.Config("binary", 3, 1, 2), false},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var states, store int64
			var secs float64
			for i := 0; i < b.N; i++ {
				ck, err := protocols.Build(c.cfg)
				if err != nil {
					b.Fatal(err)
				}
				r, err := explore.BFS(ck, explore.Options{Fingerprint: c.fp})
				if err != nil || r.Verdict != explore.Pass {
					b.Fatalf("verdict %v err %v", r.Verdict, err)
				}
				states += r.Stats.States
				store += r.Stats.StoreBytes
				secs += r.Stats.Elapsed.Seconds()
			}
			b.ReportMetric(float64(states)/secs, "states/s")
			b.ReportMetric(float64(store)/float64(states), "bytes/state")
		})
	}
}
