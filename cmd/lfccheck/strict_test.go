package main

import (
	"bufio"
	"slices"
	"strings"
	"testing"
)

// Every text flag of every command given with an empty value is refused,
// naming the flag: found from the help, so that a flag added later is
// covered. No flag of lfccheck gives "" a meaning.
func TestEmptyFlagValuesRefused(t *testing.T) {
	n := 0
	for _, f := range helpFlags(t, "string", "stringArray", "value", "file") {
		usageFails(t, f.flag+" is empty: give ", f.cmd, f.flag, "")
		usageFails(t, f.flag+" is empty: give ", f.cmd, f.flag+"=")
		n++
	}
	if n < 60 {
		t.Fatalf("found only %d text flags in the help", n)
	}
	// The cases of issue 60, with what they want; a repeated flag is
	// refused for any empty value.
	for _, c := range []struct {
		want string
		args []string
	}{
		{"--trace-out is empty: give a file name", []string{"check", "--trace-out", ""}},
		{"--svg is empty: give a file name", []string{"check", "--svg", ""}},
		{"--html is empty: give a file name", []string{"check", "--html="}},
		{"--peers is empty: give every worker's HOST:PORT", []string{"check", "--peers", ""}},
		{"--shard is empty: give I/N", []string{"check", "--search", "dfs", "--shard", ""}},
		{"--property is empty", []string{"check", "--property", "deadlock", "--property", ""}},
		{"--flow is empty", []string{"check", "--flow", "0:1:1", "--flow", ""}},
		{"--trace-out is empty: give a file name", []string{"trees", "--credits", "1", "--trace-out", ""}},
		{"--topology is empty: give a file name", []string{"trees", "--topology", ""}},
		{"--trace is empty: give a file name", []string{"serve", "--trace", ""}},
	} {
		usageFails(t, c.want, c.args...)
	}
	// A value that is not empty still reaches the flag's own checks.
	usageFails(t, `--peers: "x" is not HOST:PORT`, "check", "--peers", "x", "--rank", "0")
}

// A number with a leading zero or a sign is refused wherever a user
// writes one, with a line that says so: --shard, --steps and the rank
// from the environment.
func TestLeadingZerosRefused(t *testing.T) {
	usageFails(t, `--shard: "03/8": I has a leading zero; write 3/8`, "check", "--search", "dfs", "--shard", "03/8")
	usageFails(t, `--shard: "3/08": N has a leading zero; write 3/8`, "check", "--search", "dfs", "--shard", "3/08")
	usageFails(t, `--shard: "00/8": I has a leading zero; write 0/8`, "check", "--search", "dfs", "--shard", "00/8")
	usageFails(t, `--shard: "+3/8": I must be a number in 0..7, got "+3"`, "check", "--search", "dfs", "--shard", "+3/8")
	t.Setenv("JOB_COMPLETION_INDEX", "03")
	usageFails(t, `--shard: "env/8": I ($JOB_COMPLETION_INDEX "03") has a leading zero`, "check", "--search", "dfs", "--shard", "env/8")
	svg := t.TempDir() + "/c.svg"
	usageFails(t, `--steps: "010:016" is not a range FROM:TO of steps: "010" has a leading zero`, "check", "--svg", svg, "--steps", "010:016")
	usageFails(t, `--steps: "+3:" is not a range FROM:TO of steps: "+3" is not a decimal number`, "check", "--svg", svg, "--steps", "+3:")
	for _, v := range []string{"SLURM_PROCID", "JOB_COMPLETION_INDEX"} {
		t.Setenv("SLURM_PROCID", "")
		t.Setenv("JOB_COMPLETION_INDEX", "")
		t.Setenv(v, "01")
		usageFails(t, "$"+v+` is "01", not a rank: "01" has a leading zero`, "check", "--peers", "127.0.0.1:1,127.0.0.1:2", "--property", "deadlock", "--connect-timeout", "200ms")
		t.Setenv(v, "+1")
		usageFails(t, "$"+v+` is "+1", not a rank: "+1" is not a decimal number`, "check", "--peers", "127.0.0.1:1,127.0.0.1:2", "--property", "deadlock", "--connect-timeout", "200ms")
	}
}

// A flag that would do nothing with the others given is refused, one line
// each, rather than taken and ignored.
func TestIdleFlagsRefused(t *testing.T) {
	w := []string{"--nodes", "2", "--credits", "1", "--packets", "1"}
	for _, c := range []struct {
		want string
		args []string
	}{
		{"--connect-timeout needs --distributed or --peers", []string{"check", "--connect-timeout", "5s"}},
		{"--peer-timeout needs --distributed or --peers", []string{"check", "--peer-timeout", "5s"}},
		{"--progress-every sets how often progress lines are printed, and -q prints none", []string{"check", "-q", "--progress-every", "1s"}},
		{"--progress-every sets how often progress lines are printed, and -q prints none", []string{"sweep", "--protocol", "ucast", "-q", "--progress-every", "1s"}},
		{"--progress-every sets how often progress lines are printed, and -q prints none", []string{"suite", "-q", "--progress-every", "1s", "--max-states", "1"}},
		{"--workers is for the breadth-first search: --search dfs runs on one goroutine", []string{"check", "--search", "dfs", "--workers", "2"}},
		{"--sleep-sets on is for the breadth-first search: --search random has no sleep sets", []string{"check", "--search", "random", "--max-depth", "5", "--sleep-sets", "on"}},
		{"--liveness-graph checks liveness on the state graph of a breadth-first search: not with --search dfs", []string{"check", "--search", "dfs", "--property", "deadlock", "--liveness-graph"}},
	} {
		if c.args[0] == "check" || c.args[0] == "sweep" {
			c.args = append(c.args, w...)
		}
		usageFails(t, c.want, c.args...)
	}
	// What the search does anyway is not refused.
	for _, args := range [][]string{
		{"check", "--search", "dfs", "--workers", "1", "-q"},
		{"check", "--search", "dfs", "--sleep-sets", "off", "-q"},
		{"check", "--progress-every", "1s"},
	} {
		if code, _, errs := runCLI(append(args, w...)...); code != 0 {
			t.Errorf("%v: exit %d, %s", args, code, errs)
		}
	}
}

// helpFlag is a flag of a command, as its help lists it.
type helpFlag struct{ cmd, flag string }

// helpFlags lists the flags of every command whose help gives them one of
// the value types (pflag's words: "string", "int", ...), so that a test
// over them covers a flag added later.
func helpFlags(t *testing.T, types ...string) []helpFlag {
	t.Helper()
	var out []helpFlag
	for _, cmd := range commands {
		if cmd == "help" {
			continue
		}
		_, help, _ := runCLI(cmd, "--help")
		sc := bufio.NewScanner(strings.NewReader(help))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			for i := 0; i+1 < len(f); i++ {
				if strings.HasPrefix(f[i], "--") && slices.Contains(types, f[i+1]) {
					out = append(out, helpFlag{cmd, strings.TrimSuffix(f[i], ",")})
				}
			}
		}
	}
	return out
}
