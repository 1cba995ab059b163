package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The fault-injection suite of the distributed search (issue 60): seeded
// runs of --distributed 2 and of --peers with three ranks on loopback,
// each process a real one (this test binary run as the command), with one
// fault each: a process killed with SIGKILL, stopped with SIGSTOP for good
// or for a while, a rank started late, junk written to the ranks' ports,
// aliased or duplicate peer entries, or a search killed and continued from
// its checkpoint. Every run must end with the one-process result or with
// exit 2 or 3, and every process not stopped for good must have exited
// within --timeout plus 10 s: never a wrong verdict, never a hang.
//
// go test runs a few of them (fewer with -short); all 100:
//
//	LFCCHECK_FAULT_RUNS=100 go test ./cmd/lfccheck -run TestDistributedFaultInjection -timeout 2h -v
//
// LFCCHECK_FAULT_SEED=N runs the one seed N (as a failure names it).
func TestDistributedFaultInjection(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("finds the workers of --distributed in /proc")
	}
	runs := 6
	if testing.Short() {
		runs = 2
	}
	if s := os.Getenv("LFCCHECK_FAULT_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("$LFCCHECK_FAULT_RUNS is %q: give a positive number of runs", s)
		}
		runs = n
	}
	seeds := make([]int64, runs)
	for i := range seeds {
		seeds[i] = int64(i + 1)
	}
	if s := os.Getenv("LFCCHECK_FAULT_SEED"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("$LFCCHECK_FAULT_SEED is %q: give a number", s)
		}
		seeds = []int64{n}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	claims := faultClaims
	if testing.Short() {
		claims = claims[:1]
	}
	want := make([]map[string]any, len(claims))
	for i, c := range claims {
		_, want[i] = distCheckJSON(t, c...)
	}
	for _, seed := range seeds {
		r := newFaultRun(seed, len(claims))
		t.Run(fmt.Sprintf("seed %d %s", seed, r), func(t *testing.T) {
			r.run(t, exe, claims[r.claim], want[r.claim])
		})
	}
}

// faultClaims are the configurations the runs search: a deadlock found at
// depth 11 (a wrong pass would show), and passes of about a second and of
// a few seconds (faults land in the middle of the search).
var faultClaims = [][]string{
	{"--protocol", "mcast", "--tree", "chain", "--nodes", "4", "--credits", "1", "--packets", "1"},
	{"--protocol", "ucast", "--nodes", "3", "--credits", "1", "--packets", "2"},
	{"--protocol", "mcast", "--nodes", "4", "--credits", "1", "--packets", "1"},
}

const (
	faultTimeout     = 8 * time.Second
	faultPeerTimeout = 3 * time.Second
	faultBound       = faultTimeout + 10*time.Second
)

// faultRun is one run: the search (--distributed 2, or --peers with three
// ranks), the fault, its target (a rank: 0 is the coordinator) and when it
// strikes.
type faultRun struct {
	seed   int64
	peers  bool
	claim  int
	fault  string
	target int
	frac   float64       // when: after the processes' start, this part of the one-process search's time (and 0.3 s)
	dur    time.Duration // how long a rank is stopped (stop-cont) or started late (delay)
}

var faultKinds = []string{"kill", "stop", "stop-cont", "delay", "junk", "alias", "duplicate", "kill-resume"}

func newFaultRun(seed int64, claims int) faultRun {
	rng := rand.New(rand.NewSource(seed))
	r := faultRun{seed: seed, peers: rng.Intn(2) == 0, claim: rng.Intn(claims)}
	r.fault = faultKinds[rng.Intn(len(faultKinds))]
	if !r.peers && (r.fault == "delay" || r.fault == "alias" || r.fault == "duplicate" || r.fault == "junk") {
		r.peers = true // (the local workers of --distributed have no addresses given)
	}
	r.target = rng.Intn(2)
	if r.peers {
		r.target = rng.Intn(3)
	}
	r.frac = rng.Float64() * 1.3
	r.dur = time.Duration(500+rng.Intn(4500)) * time.Millisecond
	return r
}

func (r faultRun) String() string {
	s := "distributed 2"
	if r.peers {
		s = "peers 3"
	}
	return fmt.Sprintf("%s claim %d %s rank %d at %.2f for %s", s, r.claim, r.fault, r.target, r.frac, r.dur)
}

// faultProc is a process of a run: started by the test (cmd), or a local
// worker of --distributed found in /proc (cmd nil), which the test can
// only watch.
type faultProc struct {
	cmd      *exec.Cmd
	pid      int
	out, err bytes.Buffer
	done     chan struct{}
	code     int
	started  time.Time
	ended    time.Duration // since started
	stopped  bool          // by the fault, for good
}

func startFaultProc(t *testing.T, exe string, args []string) *faultProc {
	t.Helper()
	p := &faultProc{cmd: exec.Command(exe, args...), done: make(chan struct{}), started: time.Now()}
	p.cmd.Env = append(os.Environ(), testMainEnv+"=1")
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.err
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.pid = p.cmd.Process.Pid
	go func() {
		p.cmd.Wait()
		p.code, p.ended = p.cmd.ProcessState.ExitCode(), time.Since(p.started)
		close(p.done)
	}()
	return p
}

// waitAll waits for every process not stopped for good, each at most
// faultBound from its start; it kills them all and fails if one is late.
func waitAll(t *testing.T, what string, procs []*faultProc) {
	t.Helper()
	for rank, p := range procs {
		if p == nil || p.stopped {
			continue
		}
		select {
		case <-p.done:
		case <-time.After(time.Until(p.started.Add(faultBound))):
			for _, q := range procs {
				if q != nil {
					q.kill()
				}
			}
			t.Fatalf("%s: rank %d still running %s after its start: a hang", what, rank, faultBound)
		}
	}
}

func (r faultRun) run(t *testing.T, exe string, claim []string, want map[string]any) {
	rng := rand.New(rand.NewSource(r.seed * 7919))
	base := append(append([]string{"check"}, claim...), "--json", "-q", "--timeout", faultTimeout.String(), "--peer-timeout", faultPeerTimeout.String())
	n := 2
	if r.peers {
		n = 3
	}
	var ports, addrs []string
	for range n {
		p := freePort(t)
		ports = append(ports, p)
		addrs = append(addrs, "127.0.0.1:"+p)
	}
	list := append([]string(nil), addrs...)
	switch r.fault {
	case "alias":
		list[(r.target+1)%n] = "localhost:" + ports[r.target]
	case "duplicate":
		list[(r.target+1)%n] = addrs[r.target]
	}
	ck := filepath.Join(t.TempDir(), "ck")
	argsOf := func(rank int) []string {
		a := append([]string(nil), base...)
		if r.peers {
			a = append(a, "--peers", strings.Join(list, ","), "--rank", strconv.Itoa(rank), "--listen", addrs[rank], "--connect-timeout", "5s")
		} else {
			a = append(a, "--distributed", "2", "--connect-timeout", "5s")
		}
		if r.fault == "kill-resume" {
			a = append(a, "--checkpoint", ck+strconv.Itoa(rank), "--checkpoint-every", "100ms")
		}
		return a
	}
	procs := make([]*faultProc, n)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for rank := range procs {
		if !r.peers && rank > 0 {
			break // (the coordinator starts its worker)
		}
		delay := time.Duration(0)
		if r.fault == "delay" && rank == r.target {
			delay = r.dur
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(delay)
			p := startFaultProc(t, exe, argsOf(rank))
			mu.Lock()
			procs[rank] = p
			mu.Unlock()
		}()
	}
	wg.Wait()
	if !r.peers {
		procs[1] = waitChild(procs[0])
	}
	// The fault.
	el, _ := want["elapsed_s"].(float64)
	time.Sleep(300*time.Millisecond + time.Duration(r.frac*el*1.5*float64(time.Second)))
	victim := procs[r.target]
	pid := 0
	if victim != nil {
		pid = victim.pid
	}
	switch r.fault {
	case "kill", "kill-resume":
		if pid != 0 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	case "stop":
		if pid != 0 && syscall.Kill(pid, syscall.SIGSTOP) == nil {
			victim.stopped = true
		}
	case "stop-cont":
		if pid != 0 && syscall.Kill(pid, syscall.SIGSTOP) == nil {
			time.Sleep(r.dur)
			syscall.Kill(pid, syscall.SIGCONT)
		}
	case "junk":
		for i := range 5 {
			if c, err := net.DialTimeout("tcp", addrs[(r.target+i)%n], time.Second); err == nil {
				junk := make([]byte, 1+rng.Intn(4096))
				rng.Read(junk)
				if i%2 == 1 {
					junk = append([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), junk...)
				}
				c.SetDeadline(time.Now().Add(time.Second))
				c.Write(junk)
				c.Close()
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	// Every process not stopped for good ends within the bound.
	waitAll(t, "the search", procs)
	for _, p := range procs {
		if p != nil && p.stopped {
			p.kill()
		}
	}
	if p := procs[0]; p.stopped || (r.target == 0 && r.fault == "kill") {
		return // (the coordinator itself is gone: its workers ended, which is all there is to see)
	}
	coord := procs[0]
	if r.fault == "kill-resume" {
		if r.target != 0 {
			r.outcome(t, "the search with a killed worker", coord, want)
		}
		// The same command again continues the checkpoints.
		for rank := range procs {
			if !r.peers && rank > 0 {
				break
			}
			procs[rank] = startFaultProc(t, exe, argsOf(rank))
		}
		if !r.peers {
			procs[1] = waitChild(procs[0])
		}
		waitAll(t, "resumed", procs)
		coord = procs[0]
	}
	r.outcome(t, "the search", coord, want)
}

// outcome checks the coordinator's result: the one-process verdict and
// counts, or exit 2 (one line on standard error), or exit 3 (a result
// marked incomplete).
func (r faultRun) outcome(t *testing.T, what string, p *faultProc, want map[string]any) {
	t.Helper()
	switch p.code {
	case exitPass, exitFail:
		var got map[string]any
		if err := json.Unmarshal(p.out.Bytes(), &got); err != nil {
			t.Fatalf("%s: exit %d, %v:\n%s%s", what, p.code, err, p.out.String(), p.err.String())
		}
		for _, k := range []string{"verdict", "property", "states", "transitions", "depth"} {
			if fmt.Sprint(got[k]) != fmt.Sprint(want[k]) {
				t.Fatalf("%s: WRONG RESULT: %s %v, one process gives %v (exit %d)\n%s", what, k, got[k], want[k], p.code, p.err.String())
			}
		}
		t.Logf("%s: %v, as one process (after %s)", what, got["verdict"], p.ended.Round(time.Millisecond))
	case exitUsage:
		if s := strings.TrimSpace(p.err.String()); s == "" || strings.Contains(s, "panic") {
			t.Fatalf("%s: exit 2 with standard error %q", what, s)
		}
		t.Logf("%s: exit 2 after %s: %s", what, p.ended.Round(time.Millisecond), lastLine(p.err.String()))
	case exitIncomplete:
		var got map[string]any
		if err := json.Unmarshal(p.out.Bytes(), &got); err != nil || got["verdict"] != "incomplete" {
			t.Fatalf("%s: exit 3 without an incomplete result (%v):\n%s%s", what, err, p.out.String(), p.err.String())
		}
		t.Logf("%s: exit 3 after %s: %v", what, p.ended.Round(time.Millisecond), got["reason"])
	default:
		t.Fatalf("%s: exit %d after %s:\n%s%s", what, p.code, p.ended, p.out.String(), p.err.String())
	}
}

func lastLine(s string) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return l[len(l)-1]
}

func (p *faultProc) kill() {
	if p.stopped {
		syscall.Kill(p.pid, syscall.SIGCONT)
	}
	if p.cmd != nil {
		p.cmd.Process.Kill()
		<-p.done
		return
	}
	syscall.Kill(p.pid, syscall.SIGKILL)
}

// waitChild finds the worker that the --distributed coordinator p starts
// (in /proc) and watches it (it is not this process's child: it cannot
// be waited for).
func waitChild(p *faultProc) *faultProc {
	for range 500 {
		if pid := childOf(p.pid); pid != 0 {
			c := &faultProc{pid: pid, done: make(chan struct{}), started: p.started}
			go func() {
				for alive(pid) {
					time.Sleep(20 * time.Millisecond)
				}
				c.ended = time.Since(c.started)
				close(c.done)
			}()
			return c
		}
		select {
		case <-p.done:
			return nil
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// childOf is a child process of pid, or 0.
func childOf(pid int) int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, s := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(s); err == nil {
				return c
			}
		}
	}
	return 0
}

// alive says whether process pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
