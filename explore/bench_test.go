package explore_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"lfccheck/explore"
	"lfccheck/internal/segsearch"
	"lfccheck/model"
	"lfccheck/protocols"
	"lfccheck/protocols/intr"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/topology"
	"lfccheck/protocols/ucast"
)

// BenchmarkExplore measures full searches of UCAST and MCAST
// configurations and reports states/s and bytes of search storage per
// state (the memory of the visited set, of the segments and subtrees it
// shares and of the level being expanded; the key and parent id of every
// state go to a temporary file and are not counted; bytes/state of a small
// run include the fixed chunks of the store's arrays); the liveness-graph cases check eventual-delivery on the recorded
// state graph and report its bytes per state too. The searches use the
// symmetry reduction where the configuration has one, except the
// no-symmetry case, which shows what it costs per state; the segments
// case is the search over segment ids (check --engine segments) on the
// space of --por off --sleep-sets off.
// intrRing is INTR on three nodes, each sending one packet to the next.
func intrRing() model.Config {
	p := intr.Defaults()
	p.Credits = 1
	p.Flows = []ucast.Flow{{Src: 0, Dst: 1, Count: 1}, {Src: 1, Dst: 2, Count: 1}, {Src: 2, Dst: 0, Count: 1}}
	return model.Config{Protocol: "intr", Nodes: 3, Params: p}
}

func BenchmarkExplore(b *testing.B) {
	cases := []struct {
		name     string
		cfg      model.Config
		fp       bool
		graph    bool
		nosym    bool
		workers  int
		frontier bool
		scc      bool // the on-the-fly liveness search (LiveDFS)
		segments bool // the search over segment ids (check --engine segments)
	}{
		{"ucast-3n-c1-k1/exact", ucast.Config(3, 1, 1), false, false, false, 0, false, false, false},
		{"ucast-3n-c1-k1/fingerprint", ucast.Config(3, 1, 1), true, false, false, 0, false, false, false},
		{"ucast-2n-c2-k4/exact", ucast.Config(2, 2, 4), false, false, false, 0, false, false, false},
		{"mcast-binary-3n-c1-k2/exact", mcast.Config("binary", 3, 1, 2), false, false, false, 0, false, false, false},
		{"mcast-binary-3n-c1-k2/no-symmetry", mcast.Config("binary", 3, 1, 2), false, false, true, 0, false, false, false},
		{"mcast-binary-3n-c1-k2/liveness-graph", mcast.Config("binary", 3, 1, 2), false, true, false, 0, false, false, false},
		// INTR's liveness properties on the graph, analysed on the pairs
		// of representatives and renamings, and on the real graph.
		{"intr-3n-ring/liveness-graph", intrRing(), false, true, false, 0, false, false, false},
		{"intr-3n-ring/liveness-graph/no-symmetry", intrRing(), false, true, true, 0, false, false, false},
		// The same without the graph: the on-the-fly search (its
		// graph-bytes are its per-state numbers, bits and stacks, and the
		// largest component it expanded again).
		{"intr-3n-ring/liveness-scc", intrRing(), false, true, true, 0, false, true, false},
		// Binary P=4 (the README's throughput figures), one worker and two.
		{"mcast-binary-4n-c1-k1/exact/workers=1", mcast.Config("binary", 4, 1, 1), false, false, false, 1, false, false, false},
		{"mcast-binary-4n-c1-k1/exact/workers=2", mcast.Config("binary", 4, 1, 1), false, false, false, 2, false, false, false},
		// A run of about a minute (6.8M orbits), for the speedup of two
		// workers over one: compare their states/s.
		{"mcast-binary-4n-c2-k1/exact/workers=1", mcast.Config("binary", 4, 2, 1), false, false, false, 1, false, false, false},
		{"mcast-binary-4n-c2-k1/exact/workers=2", mcast.Config("binary", 4, 2, 1), false, false, false, 2, false, false, false},
		// The frontier search keeps one level in the visited set: its
		// bytes/state are those of the tree store's shared segments.
		{"mcast-binary-4n-c1-k1/frontier/workers=1", mcast.Config("binary", 4, 1, 1), false, false, false, 1, true, false, false},
		{"mcast-binary-4n-c2-k1/frontier/workers=1", mcast.Config("binary", 4, 2, 1), false, false, false, 1, true, false, false},
		{"mcast-binary-4n-c2-k1/frontier/workers=2", mcast.Config("binary", 4, 2, 1), false, false, false, 2, true, false, false},
		// The search over segment ids (internal/segsearch, one worker),
		// which explores the space of --por off --sleep-sets off (808,510
		// states): its bytes/state are those of its visited set and parent
		// records, not of its memo and segment tables.
		{"mcast-binary-4n-c1-k1/segments/por-off", mcast.Config("binary", 4, 1, 1), false, false, false, 1, false, false, true},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			if testing.Short() && strings.Contains(c.name, "-c2-k1/") {
				// The minute-long runs: CI runs every benchmark once with
				// -short, and the smaller cases cover the same code.
				b.Skip("a minute-long run; without -short it runs")
			}
			if testing.Short() && strings.HasPrefix(c.name, "mcast-binary-4n-c1-k1/") && c.workers == 1 && !c.segments {
				// Ten seconds each: under -short binary P=4 runs on two
				// workers only (one worker and the frontier search are
				// covered by the tests; without -short they are timed).
				b.Skip("binary P=4 on one worker; without -short it runs")
			}
			var states, store, graph int64
			var secs float64
			for i := 0; i < b.N; i++ {
				ck, err := protocols.Build(c.cfg)
				if err != nil {
					b.Fatal(err)
				}
				ck.LivenessGraph = c.graph
				ck.Symmetry = ck.Symmetry && !c.nosym
				ck.OnTheFly = c.scc
				search := explore.BFS
				if c.scc {
					search = explore.LiveDFS
				}
				if c.segments {
					ck.Stubborn = false
					search = func(explore.Model, explore.Options) (explore.Result, error) {
						r, _, err := segsearch.Run(ck, explore.Options{})
						return r, err
					}
				}
				r, err := search(ck, explore.Options{Fingerprint: c.fp, Workers: c.workers, Frontier: c.frontier})
				if err != nil || r.Verdict != explore.Pass {
					b.Fatalf("verdict %v err %v", r.Verdict, err)
				}
				states += r.Stats.States
				store += r.Stats.StoreBytes
				graph += r.Stats.GraphBytes + r.Stats.ComponentBytes
				secs += r.Stats.Elapsed.Seconds()
			}
			b.ReportMetric(float64(states)/secs, "states/s")
			b.ReportMetric(float64(store)/float64(states), "bytes/state")
			if c.graph {
				b.ReportMetric(float64(graph)/float64(states), "graph-bytes/state")
			}
		})
	}
}

// BenchmarkMachine measures what the machine's cores give a loop of random
// read-modify-writes on a table private to each goroutine (no sharing at
// all): the ceiling for the search's speedup with more workers. Compare
// ops/s of goroutines=1 and goroutines=2.
func BenchmarkMachine(b *testing.B) {
	for _, kib := range []int{32, 2048, 16384, 65536, 262144} {
		for _, g := range []int{1, 2} {
			b.Run(fmt.Sprintf("private-%dKiB/goroutines=%d", kib, g), func(b *testing.B) {
				const ops = 20_000_000
				tabs := make([][]uint64, g)
				for i := range tabs {
					tabs[i] = make([]uint64, kib*1024/8)
					for j := range tabs[i] {
						tabs[i][j] = uint64(j) // fault the pages in before the timer
					}
				}
				b.ResetTimer()
				start := time.Now()
				for n := 0; n < b.N; n++ {
					var wg sync.WaitGroup
					for i := range g {
						wg.Add(1)
						go func() {
							defer wg.Done()
							t, x := tabs[i], uint64(i+1)*0x9e3779b97f4a7c15
							m := uint64(len(t) - 1)
							for range ops / g {
								x ^= x << 13
								x ^= x >> 7
								x ^= x << 17
								t[(x>>7)&m] += t[x&m]
							}
						}()
					}
					wg.Wait()
				}
				b.ReportMetric(float64(ops)*float64(b.N)/time.Since(start).Seconds(), "ops/s")
			})
		}
	}
}

// BenchmarkDFSMemory measures what a depth-first search holds per state
// at 16 nodes (a broadcast on binary trees, cut at 100,000 states): the
// peak heap per state, store included. The stack holds state ids (exact
// store) or action codes to generate states again from their parents
// (fingerprint store), never copies of pending successors.
func BenchmarkDFSMemory(b *testing.B) {
	for _, fp := range []bool{false, true} {
		name := "exact"
		if fp {
			name = "fingerprint"
		}
		b.Run("mcast-binary-16n/"+name, func(b *testing.B) {
			limit := int64(100000)
			if testing.Short() {
				limit = 20000 // CI runs every benchmark once
			}
			var states, heap int64
			var secs float64
			for i := 0; i < b.N; i++ {
				ck, err := protocols.Build(mcast.Config("binary", 16, 1, 1))
				if err != nil {
					b.Fatal(err)
				}
				r, err := explore.DFS(ck, explore.Options{Fingerprint: fp, MaxStates: limit}, explore.Hunt{})
				if err != nil || r.Verdict == explore.Fail {
					b.Fatalf("verdict %v err %v", r.Verdict, err)
				}
				states += r.Stats.States
				heap += int64(r.Stats.PeakHeapBytes)
				secs += r.Stats.Elapsed.Seconds()
			}
			b.ReportMetric(float64(states)/secs, "states/s")
			b.ReportMetric(float64(heap)/float64(states), "peak-heap-bytes/state")
		})
	}
}

// BenchmarkStubborn measures the stubborn-set reduction (deadlock only)
// with it on and off: states, transitions, states/s. Two multicast
// packets crossing binary trees of six nodes, where the steps of
// different nodes are mostly independent, and binary P=4 with every node
// casting one packet, where they are dense (the sets rarely leave much
// out, and sleep sets, off with them, saved more transitions).
func BenchmarkStubborn(b *testing.B) {
	two := mcast.Casts("binary", 6, 1, topology.Cast{Root: 0, Count: 1}, topology.Cast{Root: 3, Count: 1})
	dense := mcast.Config("binary", 4, 1, 1)
	for _, c := range []struct {
		name string
		cfg  model.Config
	}{{"binary-6n-casts-0-3", two}, {"binary-4n-all-casting", dense}} {
		for _, por := range []bool{true, false} {
			b.Run(fmt.Sprintf("%s/por=%v", c.name, por), func(b *testing.B) {
				if testing.Short() && c.cfg.Nodes == 4 {
					b.Skip("about 14 s for both; without -short it runs")
				}
				var states, trans int64
				var secs float64
				for i := 0; i < b.N; i++ {
					cfg := c.cfg
					cfg.Properties = []string{"deadlock"}
					ck, err := protocols.Build(cfg)
					if err != nil {
						b.Fatal(err)
					}
					if ck.Stubborn != por {
						if por {
							b.Fatalf("no stubborn sets: %s", ck.StubbornOff())
						}
						ck.Stubborn = false
					}
					r, err := explore.BFS(ck, explore.Options{})
					if err != nil || r.Verdict != explore.Pass {
						b.Fatalf("verdict %v err %v", r.Verdict, err)
					}
					states += r.Stats.States
					trans += r.Stats.Transitions
					secs += r.Stats.Elapsed.Seconds()
				}
				b.ReportMetric(float64(states)/float64(b.N), "states")
				b.ReportMetric(float64(trans)/float64(b.N), "transitions")
				b.ReportMetric(float64(states)/secs, "states/s")
			})
		}
	}
}

// BenchmarkAmpleWithCycles reports states/s and bytes/state (visited set,
// and the recorded state graph) for a liveness search on a state graph
// with cycles, with the ample-set reduction (host steps fused into the
// step before them, properties/checker_reduction.go) and without it:
// UCAST's credit-bounce variant at P=3, one packet from every node to
// every other, eventual-delivery and the safety properties the variant
// keeps (it passes: with one packet per pair and one credit no send
// waits for a credit to come back). Compare the states each stores.
func BenchmarkAmpleWithCycles(b *testing.B) {
	cfg := ucast.Config(3, 1, 1)
	cfg.Variant = ucast.CreditBounce
	cfg.Properties = []string{"deadlock", "pool-bound", "fifo", "exactly-once", "eventual-delivery"}
	for _, reduce := range []bool{true, false} {
		b.Run(fmt.Sprintf("ucast-credit-bounce-3n-k1/reduce=%v", reduce), func(b *testing.B) {
			var states, store, graph int64
			var secs float64
			for i := 0; i < b.N; i++ {
				ck, err := protocols.Build(cfg)
				if err != nil {
					b.Fatal(err)
				}
				if !ck.ReducesCycles() {
					b.Fatalf("the reduction with cycles is off: %s", ck.ReduceOff())
				}
				ck.Reduce = reduce
				r, err := explore.BFS(ck, explore.Options{})
				if err != nil || r.Verdict != explore.Pass {
					b.Fatalf("verdict %v err %v", r.Verdict, err)
				}
				states += r.Stats.States
				store += r.Stats.StoreBytes
				graph += r.Stats.GraphBytes
				secs += r.Stats.Elapsed.Seconds()
			}
			b.ReportMetric(float64(states)/float64(b.N), "states")
			b.ReportMetric(float64(states)/secs, "states/s")
			b.ReportMetric(float64(store)/float64(states), "bytes/state")
			b.ReportMetric(float64(graph)/float64(states), "graph-bytes/state")
		})
	}
}
