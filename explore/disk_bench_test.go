package explore_test

import (
	"strings"
	"testing"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/protocols"
	"lfccheck/protocols/mcast"
)

// BenchmarkDiskSearch measures the disk search (Options.DiskDir) on a
// mid-size configuration, with the default run buffer (16 MiB, which
// holds a whole level of binary P=3 K=2) and with a buffer of 1 MiB
// (levels sorted in many runs): states/s, the peak heap per state (what
// the process held, with the model's tables and the Go runtime), the run
// buffers' memory per state, and the bytes on disk per state (the most at
// once) and written in all. Compare with BenchmarkExplore's cases of the
// same configurations. The keys=fingerprint cases keep 64-bit
// fingerprints in the visited set (Options.DiskFingerprint);
// key-bytes/state is what the visited set and the parent records took on
// disk at most (issue 32's target: 8), level-bytes/state what the levels
// and the runs took at most (the states of the two levels, not counted
// against the target). The binary P=4 cases are skipped with -short.
func BenchmarkDiskSearch(b *testing.B) {
	cases := []struct {
		name string
		cfg  model.Config
		run  int
		fp   bool
	}{
		{"mcast-binary-3n-c1-k2/runs=16MiB", mcast.Config("binary", 3, 1, 2), 0, false},
		{"mcast-binary-3n-c1-k2/runs=1MiB", mcast.Config("binary", 3, 1, 2), 1 << 20, false},
		{"mcast-binary-3n-c1-k2/runs=16MiB/keys=fingerprint", mcast.Config("binary", 3, 1, 2), 0, true},
		{"mcast-binary-4n-c1-k1/runs=16MiB", mcast.Config("binary", 4, 1, 1), 0, false},
		{"mcast-binary-4n-c1-k1/runs=1MiB", mcast.Config("binary", 4, 1, 1), 1 << 20, false},
		{"mcast-binary-4n-c1-k1/runs=16MiB/keys=fingerprint", mcast.Config("binary", 4, 1, 1), 0, true},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			if testing.Short() && strings.Contains(c.name, "-4n-") {
				b.Skip("a run of many seconds; without -short it runs")
			}
			var states, heap, buf, disk, written, keys, levels int64
			var secs float64
			for i := 0; i < b.N; i++ {
				ck, err := protocols.Build(c.cfg)
				if err != nil {
					b.Fatal(err)
				}
				r, err := explore.BFS(ck, explore.Options{DiskDir: b.TempDir(), DiskRunBytes: c.run, DiskFingerprint: c.fp})
				if err != nil || r.Verdict != explore.Pass {
					b.Fatalf("verdict %v err %v", r.Verdict, err)
				}
				states += r.Stats.States
				heap += int64(r.Stats.PeakHeapBytes)
				buf += r.Stats.StoreBytes
				disk += r.Disk.PeakBytes
				written += r.Disk.WrittenBytes
				keys += r.Disk.PeakKeyBytes
				levels += r.Disk.PeakLevelBytes
				secs += r.Stats.Elapsed.Seconds()
			}
			n := float64(states)
			b.ReportMetric(n/secs, "states/s")
			b.ReportMetric(float64(heap)/n, "heap-bytes/state")
			b.ReportMetric(float64(buf)/n, "buffer-bytes/state")
			b.ReportMetric(float64(disk)/n, "disk-bytes/state")
			b.ReportMetric(float64(written)/n, "written-bytes/state")
			b.ReportMetric(float64(keys)/n, "key-bytes/state")
			b.ReportMetric(float64(levels)/n, "level-bytes/state")
		})
	}
}
