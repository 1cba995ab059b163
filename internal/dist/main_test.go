package dist

import (
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

// benchWorkerEnv, in a process started by BenchmarkDistributed, is
// "RANK PEERS": the test binary then runs as that worker of the benchmark's
// search.
const benchWorkerEnv = "LFCCHECK_DIST_BENCH_WORKER"

func TestMain(m *testing.M) {
	if s := os.Getenv(benchWorkerEnv); s != "" {
		rank, peers, _ := strings.Cut(s, " ")
		r, _ := strconv.Atoi(rank)
		ck, err := properties.Build(mcast.Config("binary", 3, 1, 2))
		if err == nil {
			_, _, err = Run(ck, Options{Rank: r, Peers: strings.Split(peers, ",")})
		}
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runProcesses runs the benchmark's search with rank 0 in this process and
// ranks 1..n-1 as processes of the test binary.
func runProcesses(b *testing.B, n int) (explore.Result, Info) {
	b.Helper()
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
		cmd.Env = append(os.Environ(), benchWorkerEnv+"="+strconv.Itoa(r)+" "+strings.Join(peers, ","))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	ck, err := properties.Build(mcast.Config("binary", 3, 1, 2))
	if err != nil {
		b.Fatal(err)
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
