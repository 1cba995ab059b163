package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"lfccheck/explore"
	"lfccheck/internal/dist"
	"lfccheck/model"
	"lfccheck/properties"
)

// The distributed search (check --distributed, --rank, --peers): see
// docs/distributed.md.

// distChildEnv, in a process started by check --distributed N, is its
// rank: the process is one of the local workers.
const distChildEnv = "LFCCHECK_DIST_CHILD"

// distListenPrefix starts the line a local worker prints with its address.
const distListenPrefix = "lfccheck-dist-listen "

// maxDistributed bounds --distributed and the number of --peers.
const maxDistributed = 256

type distFlags struct {
	local   int
	rank    int
	peers   string
	listen  string
	timeout time.Duration
	silence time.Duration
	// searchID identifies the search for the workers' hello (set by
	// check before run: checkpointID's identity).
	searchID string
	// tune holds the switches for measurements, from the environment
	// (tuneFromEnv).
	tune dist.Options
}

// The distributed search's switches for measurements, read by the command
// from its environment (which the local workers of --distributed inherit
// and a cluster's tasks are given) and passed to each worker as options.
const (
	distShareEnv    = "LFCCHECK_DIST_SHARE"    // 0: no worker takes states of a level from another (dist.Options.NoShare)
	distDelegateEnv = "LFCCHECK_DIST_DELEGATE" // 0: each worker expands the states it owns (dist.Options.NoDelegate)
	distPinEnv      = "LFCCHECK_DIST_PIN"      // 1: each local worker of --distributed bound to a CPU (dist.Options.PinCPU)
	distProfileEnv  = "LFCCHECK_DIST_PROFILE"  // DIR: each worker's CPU profile and timings (dist.Options.ProfileDir)
)

// tuneFromEnv reads the switches for measurements from the environment.
func tuneFromEnv() (dist.Options, error) {
	var o dist.Options
	share, err := onFromEnv(distShareEnv, "no sharing")
	if err != nil {
		return o, err
	}
	delegate, err := onFromEnv(distDelegateEnv, "each worker expands the states it owns")
	if err != nil {
		return o, err
	}
	o.NoShare, o.NoDelegate = !share, !delegate
	o.PinCPU = os.Getenv(distPinEnv) == "1"
	o.ProfileDir = os.Getenv(distProfileEnv)
	return o, nil
}

// onFromEnv reads a switch that is on unless the environment variable
// name is 0 (off, which means what off says); other values than 0 and 1
// are refused.
func onFromEnv(name, off string) (bool, error) {
	switch v := os.Getenv(name); v {
	case "", "1":
		return true, nil
	case "0":
		return false, nil
	default:
		return false, usagef("$%s is %q: give 0 (%s) or 1", name, v, off)
	}
}

// options are the options of this process's worker.
func (d *distFlags) options(rank int, peers []string, lis net.Listener, opt explore.Options, local bool) dist.Options {
	o := d.tune
	o.Rank, o.Peers, o.Listener, o.ConnectTimeout, o.PeerTimeout, o.SearchID, o.Search = rank, peers, lis, d.timeout, d.silence, d.searchID, opt
	o.PinCPU = o.PinCPU && local
	return o
}

func (d *distFlags) register(fs *pflag.FlagSet) {
	intVar(fs, &d.local, "distributed", 0, "search with this many worker processes on this machine (states divided among them by hash, over gRPC on loopback); the report adds the bytes sent per state")
	intVar(fs, &d.rank, "rank", 0, "with --peers: this process's rank in a distributed search (0 coordinates and prints the report; default: $SLURM_PROCID or $JOB_COMPLETION_INDEX)")
	fs.StringVar(&d.peers, "peers", "", "every worker's HOST:PORT by rank, comma-separated: this process is one worker of a distributed search over machines (docs/distributed.md)")
	fs.StringVar(&d.listen, "listen", "", "with --peers: the address to serve on (default: all interfaces, at the port of this rank's peer)")
	fs.DurationVar(&d.timeout, "connect-timeout", 30*time.Second, "with --peers or --distributed: how long to wait for the other workers to come up, in any order (and, on a worker, for the coordinator's hello) before giving up")
	fs.DurationVar(&d.silence, "peer-timeout", dist.DefaultPeerTimeout, "with --peers or --distributed: how long a worker may be silent during the search (stopped, overloaded, its machine lost) before the search ends with an error naming it")
}

func (d *distFlags) on(fs *pflag.FlagSet) bool {
	return fs.Changed("distributed") || d.peers != "" || fs.Changed("rank") || fs.Changed("listen")
}

// validate checks the flags and the search they would distribute.
func (d *distFlags) validate(fs *pflag.FlagSet, ck *properties.Checker, opt explore.Options, search string) error {
	switch {
	case fs.Changed("connect-timeout") && !fs.Changed("distributed") && d.peers == "":
		return usagef("--connect-timeout needs --distributed or --peers")
	case fs.Changed("peer-timeout") && !fs.Changed("distributed") && d.peers == "":
		return usagef("--peer-timeout needs --distributed or --peers")
	case fs.Changed("distributed") && (d.local < 1 || d.local > maxDistributed):
		return usagef("--distributed must be between 1 and %d, got %d", maxDistributed, d.local)
	case d.local != 0 && d.peers != "":
		return usagef("--distributed starts its workers on this machine: not with --peers")
	case d.peers == "" && (fs.Changed("rank") || fs.Changed("listen")):
		return usagef("--rank and --listen need --peers")
	case d.timeout <= 0:
		return usagef("--connect-timeout must be positive")
	case d.silence <= 0:
		return usagef("--peer-timeout must be positive, got %v", d.silence)
	case search != "":
		return usagef("the distributed search is breadth-first: not with --search %s", search)
	case fs.Changed("workers") && opt.Workers > 1:
		return usagef("each worker of a distributed search expands states on one goroutine: not with --workers %d", opt.Workers)
	case opt.Frontier:
		return usagef("--frontier is not distributed: not with --distributed or --peers")
	case opt.Resume:
		return usagef("a distributed search continues the checkpoint in its --checkpoint directory: give --checkpoint DIR, not --resume")
	}
	if ck.LivenessGraph {
		return usagef("the distributed search keeps no state graph: not with --liveness-graph")
	}
	var graph, others []string
	for i := range ck.Props {
		if p := &ck.Props[i]; p.Live != model.NotLive && !ck.OnEndStates(p) {
			graph = append(graph, p.Name)
		} else {
			others = append(others, "--property "+p.Name)
		}
	}
	if len(graph) > 0 {
		return usagef("the distributed search keeps no state graph, which %s checks on: leave it out with --property (%s)", strings.Join(graph, ", "), strings.Join(others, " "))
	}
	if err := dist.Check(ck, opt); err != nil {
		return usagef("%v", err)
	}
	var err error
	d.tune, err = tuneFromEnv()
	return err
}

// peerList parses --peers and the rank.
func (d *distFlags) peerList(fs *pflag.FlagSet) ([]string, int, string, error) {
	var peers []string
	for _, p := range strings.Split(d.peers, ",") {
		p = strings.TrimSpace(p)
		if _, port, err := net.SplitHostPort(p); err != nil || port == "" {
			return nil, 0, "", usagef("--peers: %q is not HOST:PORT", p)
		}
		peers = append(peers, p)
	}
	if len(peers) > maxDistributed {
		return nil, 0, "", usagef("--peers: %d workers, at most %d", len(peers), maxDistributed)
	}
	rank := d.rank
	if !fs.Changed("rank") {
		rank = -1
		for _, v := range []string{"SLURM_PROCID", "JOB_COMPLETION_INDEX"} {
			if s := os.Getenv(v); s != "" {
				r, err := model.ParseDecimal(s)
				if err != nil {
					return nil, 0, "", usagef("$%s is %q, not a rank: %v", v, s, err)
				}
				rank = r
				break
			}
		}
		if rank < 0 {
			return nil, 0, "", usagef("--peers needs --rank (or $SLURM_PROCID, $JOB_COMPLETION_INDEX)")
		}
	}
	if rank < 0 || rank >= len(peers) {
		return nil, 0, "", usagef("rank %d is not one of the %d peers", rank, len(peers))
	}
	listen := d.listen
	if listen == "" {
		_, port, _ := net.SplitHostPort(peers[rank])
		listen = ":" + port
	}
	return peers, rank, listen, nil
}

// run runs this process's part of the distributed search: on rank 0 the
// result to report (done false); on another worker, or a local worker
// process, done is true and code is the exit code.
func (d *distFlags) run(fs *pflag.FlagSet, args []string, ck *properties.Checker, opt explore.Options, e env) (res checked, done bool, code int, err error) {
	if s := os.Getenv(distChildEnv); s != "" && d.local > 0 {
		return checked{}, true, 0, d.child(ck, opt, s, e)
	}
	var (
		peers    []string
		rank     int
		lis      net.Listener
		children *localWorkers
	)
	if d.peers != "" {
		var listen string
		if peers, rank, listen, err = d.peerList(fs); err != nil {
			return checked{}, false, 0, err
		}
		if lis, err = net.Listen("tcp", listen); err != nil {
			return checked{}, false, 0, usagef("worker %d: %v", rank, err)
		}
	} else {
		if lis, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return checked{}, false, 0, err
		}
		children, err = startLocalWorkers(args, d.local, d.timeout)
		if err != nil {
			lis.Close()
			return checked{}, false, 0, err
		}
		defer children.stop()
		peers = append([]string{lis.Addr().String()}, children.addrs...)
		if err := children.sendPeers(peers); err != nil {
			lis.Close()
			return checked{}, false, 0, err
		}
	}
	o := d.options(rank, peers, lis, opt, children != nil)
	var info dist.Info
	if rank != 0 {
		if _, _, err := dist.Run(ck, o); err != nil {
			return checked{}, true, 0, usagef("%v", err)
		}
		return checked{}, true, exitPass, nil
	}
	res, err = checkResultOf(ck, opt, func() (explore.Result, *explore.HuntStats, error) {
		r, in, err := dist.Run(ck, o)
		info = in
		return r, nil, err
	})
	if err != nil {
		if children != nil {
			if cerr := children.failure(); cerr != nil {
				err = cerr
			}
		}
		return checked{}, false, 0, usagef("distributed search: %v", err)
	}
	if children != nil {
		children.wait()
	}
	res.json.Search, res.json.Workers = "bfs", 1
	res.json.Distributed = &info
	return res, false, 0, nil
}

// child is a worker process started by check --distributed: it prints its
// address, reads the peers from standard input, and ends when the search
// does or when standard input closes (the coordinator is gone).
func (d *distFlags) child(ck *properties.Checker, opt explore.Options, rankS string, e env) error {
	rank, err := strconv.Atoi(rankS)
	if err != nil || rank < 1 || rank >= d.local {
		return usagef("$%s is %q, not a worker's rank", distChildEnv, rankS)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return usagef("worker %d: %v", rank, err)
	}
	fmt.Fprintf(e.stdout, "%s%s\n", distListenPrefix, lis.Addr())
	in := bufio.NewReader(os.Stdin)
	line, err := in.ReadString('\n')
	if err != nil {
		return usagef("worker %d: no peers from the coordinator: %v", rank, err)
	}
	stop := make(chan struct{})
	go func() {
		io.Copy(io.Discard, in)
		close(stop)
	}()
	opt.Stop = stop
	peers := strings.Split(strings.TrimSpace(line), ",")
	_, _, err = dist.Run(ck, d.options(rank, peers, lis, opt, true))
	if err != nil {
		return usagef("%v", err)
	}
	return nil
}

// localWorkers are the worker processes of check --distributed.
type localWorkers struct {
	cmds   []*exec.Cmd
	stdins []io.WriteCloser
	addrs  []string
	stderr []*stderrBuffer
	exited []chan struct{}
	errs   []error
}

// distExe is the program started as the local workers.
var distExe = os.Executable

// distStarted, when a test sets it, is told the process id of every local
// worker started.
var distStarted func(pid int)

// startLocalWorkers starts ranks 1..n-1 as processes of this program with
// the same arguments, and reads their addresses.
func startLocalWorkers(checkArgs []string, n int, timeout time.Duration) (*localWorkers, error) {
	exe, err := distExe()
	if err != nil {
		return nil, err
	}
	args := append([]string{"check"}, checkArgs...)
	lw := &localWorkers{}
	for r := 1; r < n; r++ {
		cmd := exec.Command(exe, args...)
		cmd.Env = append(os.Environ(), distChildEnv+"="+strconv.Itoa(r))
		stdin, err := cmd.StdinPipe()
		if err != nil {
			lw.stop()
			return nil, err
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			lw.stop()
			return nil, err
		}
		buf := &stderrBuffer{}
		cmd.Stderr = buf
		if err := cmd.Start(); err != nil {
			lw.stop()
			return nil, fmt.Errorf("starting worker %d: %v", r, err)
		}
		if distStarted != nil {
			distStarted(cmd.Process.Pid)
		}
		exited := make(chan struct{})
		lw.cmds, lw.stdins, lw.stderr, lw.exited = append(lw.cmds, cmd), append(lw.stdins, stdin), append(lw.stderr, buf), append(lw.exited, exited)
		lw.errs = append(lw.errs, nil)
		addr := make(chan string, 1)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				if a, ok := strings.CutPrefix(sc.Text(), distListenPrefix); ok {
					addr <- a
				}
			}
			close(addr)
			io.Copy(io.Discard, stdout)
		}()
		i := len(lw.cmds) - 1
		go func() {
			lw.errs[i] = cmd.Wait()
			close(exited)
		}()
		select {
		case a, ok := <-addr:
			if !ok {
				<-exited
				lw.stop()
				return nil, fmt.Errorf("worker %d did not start: %s", r, lw.why(i))
			}
			lw.addrs = append(lw.addrs, a)
		case <-time.After(timeout):
			lw.stop()
			return nil, fmt.Errorf("worker %d did not start within %s", r, timeout)
		}
	}
	return lw, nil
}

// sendPeers gives every worker the peer list.
func (lw *localWorkers) sendPeers(peers []string) error {
	line := strings.Join(peers, ",") + "\n"
	for i, w := range lw.stdins {
		if _, err := io.WriteString(w, line); err != nil {
			return fmt.Errorf("worker %d: %v", i+1, err)
		}
	}
	return nil
}

// why says how worker i ended (after it did).
func (lw *localWorkers) why(i int) string {
	msg := strings.TrimSpace(lw.stderr[i].String())
	if j := strings.LastIndexByte(msg, '\n'); j >= 0 {
		msg = msg[j+1:]
	}
	msg = strings.TrimPrefix(msg, "lfccheck: ")
	st := "exited"
	if lw.errs[i] != nil {
		st = lw.errs[i].Error()
	}
	if msg == "" {
		return st
	}
	return st + ": " + msg
}

// failure names a worker that ended before the search did, if one did.
func (lw *localWorkers) failure() error {
	deadline := time.After(time.Second)
	for i := range lw.cmds {
		select {
		case <-lw.exited[i]:
			if lw.errs[i] != nil {
				return fmt.Errorf("worker %d (process %d) %s", i+1, lw.cmds[i].Process.Pid, lw.why(i))
			}
		case <-deadline:
			return nil
		}
	}
	return nil
}

// wait waits a little for the workers to end after the search.
func (lw *localWorkers) wait() {
	deadline := time.After(2 * time.Second)
	for i := range lw.cmds {
		select {
		case <-lw.exited[i]:
		case <-deadline:
			return
		}
	}
}

// stop ends every worker still running and waits for them: none is left
// behind.
func (lw *localWorkers) stop() {
	for i := range lw.cmds {
		lw.stdins[i].Close()
	}
	grace := time.After(time.Second) // (for all of them: a stopped one never ends by itself)
	for i, c := range lw.cmds {
		select {
		case <-lw.exited[i]:
			continue
		case <-grace:
		}
		_ = c.Process.Kill()
		<-lw.exited[i]
	}
}

// stderrBuffer is a buffer written by one goroutine and read by another.
type stderrBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *stderrBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 64<<10 {
		return len(p), nil
	}
	return l.b.Write(p)
}

func (l *stderrBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// huntName is the --search of a search that is not breadth-first, or "".
func huntName(h *explore.Hunt, search string) string {
	if h == nil {
		return ""
	}
	return search
}

// distLine is the report's line on a distributed search.
func distLine(d *dist.Info) string {
	s := fmt.Sprintf("distributed: %d worker processes, states owned by hash; %.1f bytes sent per state (%s in all); sent sets %s; %d states expanded by a worker that does not own them (%d left to the worker that reached them first, %d taken from a slower one)",
		d.Workers, d.BytesPerState, explore.FormatBytes(uint64(d.BytesSent)), explore.FormatBytes(uint64(d.SentSetBytes)), d.StatesLeft+d.StatesShared, d.StatesLeft, d.StatesShared)
	c := d.Checkpoint
	if c == nil {
		return s
	}
	s += "\ncheckpoint: "
	if c.Resumed {
		s += "resumed; "
	}
	s += fmt.Sprintf("%d written to %s", c.Written, c.Dir)
	if c.Lost {
		return s + fmt.Sprintf(", the newest at depth %d, gone (removed while the search ran): nothing can continue this search", c.Depth)
	}
	if c.Kept {
		return s + fmt.Sprintf(", the newest at depth %d: the same command continues it", c.Depth)
	}
	return s + ", removed: the search ended with a verdict"
}
