package dist

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"lfccheck/explore"
	"lfccheck/properties"
	"lfccheck/protocols/mcast"
)

// benchWorkerEnv, in a process started by a benchmark (runProcesses), is
// "RANK PEERS P K": the test binary then runs as that worker of the
// benchmark's search, MCAST on a binary tree of P nodes, C=1, K packets.
const benchWorkerEnv = "LFCCHECK_DIST_BENCH_WORKER"

// benchClaim is the claim of a benchmark's search: MCAST on a binary tree
// of P nodes, one credit, K packets per node.
type benchClaim struct{ P, K int }

func (c benchClaim) build() (*properties.Checker, error) {
	return properties.Build(mcast.Config("binary", c.P, 1, c.K))
}

func TestMain(m *testing.M) {
	if s := os.Getenv(benchWorkerEnv); s != "" {
		f := strings.Fields(s)
		var n [3]int // rank, P, K
		err := fmt.Errorf("%s: want RANK PEERS P K (numbers, P and K at least 1), got %q", benchWorkerEnv, s)
		if len(f) == 4 {
			bad := false
			for i, x := range []string{f[0], f[2], f[3]} {
				v, aerr := strconv.Atoi(x)
				bad = bad || aerr != nil || v < 0 || (i > 0 && v < 1)
				n[i] = v
			}
			if !bad {
				err = nil
			}
		}
		r, c := n[0], benchClaim{P: n[1], K: n[2]}
		var ck *properties.Checker
		if err == nil {
			ck, err = c.build()
		}
		if err == nil {
			_, _, err = Run(ck, Options{Rank: r, Peers: strings.Split(f[1], ",")})
		}
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runProcesses runs the search of claim c with rank 0 in this process and
// ranks 1..n-1 as processes of the test binary.
func runProcesses(b *testing.B, n int, c benchClaim) (explore.Result, Info) {
	b.Helper()
	ck, err := c.build() // (before any worker starts: an error leaves none behind)
	if err != nil {
		b.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	peers := []string{lis.Addr().String()}
	for range n - 1 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		peers = append(peers, l.Addr().String())
		l.Close()
	}
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	var cmds []*exec.Cmd
	for r := 1; r < n; r++ {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d %s %d %d", benchWorkerEnv, r, strings.Join(peers, ","), c.P, c.K))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	r, info, err := Run(ck, Options{Rank: 0, Peers: peers, Listener: lis})
	for _, c := range cmds {
		if werr := c.Wait(); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		b.Fatal(err)
	}
	return r, info
}
