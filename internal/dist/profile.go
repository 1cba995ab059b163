package dist

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"
)

// timing is where a worker's time goes; the durations are nanoseconds,
// added to from the search's goroutine (expand) and from gRPC's (receive).
type timing struct {
	expandWall atomic.Int64 // inside expand: the level's own states, sending, and waiting for the owners to take the batches
	loopWall   atomic.Int64 // of which expanding this worker's states (with the sends it blocks on)
	sendWall   atomic.Int64 // of which blocked in sending a batch (gRPC flow control, marshalling)
	closeWall  atomic.Int64 // of which waiting, after the last batch, until every owner has stored them
	recvWall   atomic.Int64 // storing the batches received (by expand between two states, or by gRPC's goroutines outside it)
	lockWall   atomic.Int64 // waiting for the store's lock (expand takes it per state, receive outside expand)
	expandCPU  atomic.Int64 // the process's CPU (user+sys) while inside expand
	levels     atomic.Int64
	batches    atomic.Int64 // batches received

	// Successors: those of this worker's states it owns itself, those
	// other workers own, of which those it sent (not sent before in the
	// level), and those it received (and how many of them were new to
	// this worker); of those stored, how many were new,
	// of the level being built already, or of an earlier level.
	succOwn, succPeer, succSent, succRecv, succRecvNew atomic.Int64
	succNew, succThisLevel, succOlder                  atomic.Int64

	steals, stolen atomic.Int64 // chunks of states taken from the others, and their states

	mu    sync.Mutex
	loops []time.Duration // per level: expanding this worker's states (as loopWall)
	ends  []time.Duration // per level: the whole of expand (as expandWall)
}

// level notes the times of one level's expansion.
func (t *timing) level(loop, all time.Duration) {
	t.mu.Lock()
	t.loops = append(t.loops, loop)
	t.ends = append(t.ends, all)
	t.mu.Unlock()
}

// profiler writes a worker's profile and timings (Options.ProfileDir):
// a CPU profile of its whole run to DIR/cpu-R.pprof and where its time
// went to DIR/times-R.txt (R its rank), for `go tool pprof`.
type profiler struct {
	dir   string
	rank  int
	start time.Time
	cpu0  time.Duration
	f     *os.File // nil: no CPU profile, for the reason why
	why   string
}

// startProfile starts the CPU profile of this worker in dir, if dir is
// not empty.
func startProfile(dir string, rank int) (*profiler, error) {
	if dir == "" {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("profile directory: %v", err)
	}
	name := filepath.Join(dir, fmt.Sprintf("cpu-%d.pprof", rank))
	f, err := os.Create(name)
	if err != nil {
		return nil, fmt.Errorf("profile directory: %v", err)
	}
	p := &profiler{dir: dir, rank: rank, start: time.Now(), cpu0: processCPU(), f: f}
	if err := pprof.StartCPUProfile(f); err != nil {
		// (One profile per process: workers run in one process in tests.)
		f.Close()
		os.Remove(name)
		p.f, p.why = nil, err.Error()
	}
	return p, nil
}

// stop ends the profile and writes the timings.
func (p *profiler) stop(t *timing, n int) {
	if p == nil {
		return
	}
	if p.f != nil {
		pprof.StopCPUProfile()
		p.f.Close()
	}
	wall := time.Since(p.start)
	cpu := processCPU() - p.cpu0
	user, sys := processUserSys()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	d := func(v int64) string { return fmt.Sprintf("%.3fs", time.Duration(v).Seconds()) }
	ew := t.expandWall.Load()
	s := fmt.Sprintf("rank: %d of %d\nwall: %.3fs\ncpu: %.3fs (user %.3fs, sys %.3fs, whole process)\n"+
		"expand: %s wall, %s cpu, %d levels\n  own states: %s (blocked sending: %s)\n  waiting for owners to store: %s\n"+
		"outside expand (barriers, coordinator, start): %s\nreceive: %s in %d batches\nstore lock waits: %s\n"+
		"gc: %d cycles, %.3fs paused, GOGC=%s\n",
		p.rank, n, wall.Seconds(), cpu.Seconds(), user.Seconds(), sys.Seconds(),
		d(ew), d(t.expandCPU.Load()), t.levels.Load(), d(t.loopWall.Load()), d(t.sendWall.Load()), d(t.closeWall.Load()),
		d(int64(wall)-ew), d(t.recvWall.Load()), t.batches.Load(), d(t.lockWall.Load()),
		ms.NumGC, time.Duration(ms.PauseTotalNs).Seconds(), os.Getenv("GOGC"))
	s += fmt.Sprintf("successors: %d own, %d of others (%d sent), %d received (%d new); stored: %d new, %d of the level being built, %d of earlier levels\n",
		t.succOwn.Load(), t.succPeer.Load(), t.succSent.Load(), t.succRecv.Load(), t.succRecvNew.Load(), t.succNew.Load(), t.succThisLevel.Load(), t.succOlder.Load())
	s += fmt.Sprintf("shared: %d states of the others expanded here, in %d chunks\n", t.stolen.Load(), t.steals.Load())
	t.mu.Lock()
	s += "per level, ms expanding own states / in expand:"
	for i := range t.loops {
		s += fmt.Sprintf(" %.1f/%.1f", float64(t.loops[i].Microseconds())/1000, float64(t.ends[i].Microseconds())/1000)
	}
	s += "\n"
	t.mu.Unlock()
	if p.f == nil {
		s += "cpu profile: not written: " + p.why + "\n"
	}
	_ = os.WriteFile(filepath.Join(p.dir, fmt.Sprintf("times-%d.txt", p.rank)), []byte(s), 0o644)
}

// processCPU is the CPU time (user and system) this process has used.
func processCPU() time.Duration {
	u, s := processUserSys()
	return u + s
}
