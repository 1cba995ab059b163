package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// timing matches what differs from run to run: durations, rates, heap
// sizes, and what the distributed search's work sharing changes.
var timing = regexp.MustCompile(`\d+\.\d+s\b|\d+ states/s|heap [\d.]+ [KMGT]?i?B|[\d.]+ bytes sent per state \([\d.]+ [KMGT]?i?B in all\)|sent sets [\d.]+ [KMGT]?i?B|\d+ states expanded by a worker that does not own them \(\d+ left to the worker that reached them first, \d+ taken|probability about [\d.e+-]+|\d+ workers?|visited set [\d.]+ [KMGT]?i?B \([\d.]+ bytes/state\)|"(workers|store_bytes|peak_heap_bytes|elapsed_s|states_per_s)": [\d.e+-]+`)

func normalize(s string) string {
	return strings.Join(strings.Fields(timing.ReplaceAllString(s, "#")), " ")
}

// TestREADMECommands runs every "$ ..." command in the code blocks of the
// README and of docs/*.md
// with the lfccheck binary built from this tree, in a scratch directory
// that sees the repository's examples, and compares the output the
// documents show with the real output line by line (see matchShown).
func TestREADMECommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every README example, about a minute")
	}
	// The README and every document under docs/: commands shown anywhere
	// are run.
	files, _ := filepath.Glob("../../docs/*.md")
	files = append([]string{"../../README.md"}, files...)
	var readme []byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		readme = append(append(readme, data...), '\n')
	}
	bin := t.TempDir()
	buildCLI(t, bin)
	work := t.TempDir()
	root, _ := filepath.Abs("../..")
	os.Symlink(filepath.Join(root, "examples"), filepath.Join(work, "examples"))
	os.Symlink(filepath.Join(root, "protocols"), filepath.Join(work, "protocols"))
	os.Symlink(filepath.Join(root, "docs"), filepath.Join(work, "docs"))
	type example struct {
		cmd  string
		want []string
	}
	var exs []example
	in, cur := false, -1
	for _, line := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(line, "```") {
			in, cur = !in, -1
			continue
		}
		if !in {
			continue
		}
		if c, ok := strings.CutPrefix(line, "$ "); ok {
			exs = append(exs, example{cmd: c})
			cur = len(exs) - 1
		} else if cur >= 0 && !strings.HasPrefix(line, "progress: ") {
			// Progress lines go to stderr and vary from run to run.
			exs[cur].want = append(exs[cur].want, line)
		}
	}
	if len(exs) < 10 {
		t.Fatalf("found only %d README examples", len(exs))
	}
	type cost struct {
		cmd  string
		user time.Duration
	}
	var costs []cost
	suiteRuns := 0
	for _, ex := range exs {
		if strings.HasPrefix(ex.cmd, "lfccheck serve ") {
			// A server runs until interrupted: see serveExample.
			out := serveExample(t, filepath.Join(bin, "lfccheck"), work, ex.cmd)
			if err := matchShown(ex.want, out); err != nil {
				t.Errorf("$ %s\n%v\n--- output:\n%s", ex.cmd, err, out)
			}
			continue
		}
		cmd := exec.Command("bash", "-c", ex.cmd)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
		out, _ := cmd.Output()
		if err := matchShown(ex.want, string(out)); err != nil {
			t.Errorf("$ %s\n%v\n--- output:\n%s", ex.cmd, err, out)
		}
		if ex.cmd == "lfccheck -q" {
			// The whole built-in suite: TestSuiteRunsAsExpected leaves
			// it to this test outside -short (one run, not two).
			suiteRuns++
			checkSuite(t, cmd.ProcessState.ExitCode(), string(out))
		}
		if cmd.ProcessState != nil {
			costs = append(costs, cost{ex.cmd, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()})
		}
	}
	if suiteRuns != 1 {
		t.Errorf("want exactly one \"$ lfccheck -q\" example (outside -short the suite is checked there only), found %d", suiteRuns)
	}
	// The costliest commands (CPU time, children included), for whoever
	// keeps this test's time in check: go test -v -run TestREADMECommands.
	slices.SortFunc(costs, func(a, b cost) int { return int(b.user - a.user) })
	var total time.Duration
	for _, c := range costs {
		total += c.user
	}
	t.Logf("%d commands, %s of CPU", len(costs), total.Round(time.Millisecond))
	for _, c := range costs[:min(12, len(costs))] {
		t.Logf("%8s  %s", c.user.Round(time.Millisecond), c.cmd)
	}
}

// serveExample runs a documented 'lfccheck serve' command (plain
// arguments, no shell) on a free loopback port, reads its output up to the
// line with the URL, interrupts it as Ctrl-C does and checks that it stops
// with exit 0. It returns the output before the interrupt, with the free
// port's URL written as the default address's, as the document shows it.
func serveExample(t *testing.T, bin, dir, line string) string {
	t.Helper()
	args := strings.Fields(line)[1:]
	if !slices.Contains(args, "--addr") {
		args = append(args, "--addr", "127.0.0.1:0")
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var out []string
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`)
	timeout := time.After(60 * time.Second)
read:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				break read
			}
			if !strings.HasPrefix(l, "open http://") {
				out = append(out, l)
				continue
			}
			out = append(out, url.ReplaceAllString(l, "http://127.0.0.1:8080/"))
			cmd.Process.Signal(os.Interrupt)
			var rest []string
			for l := range lines {
				rest = append(rest, l)
			}
			if err := cmd.Wait(); err != nil || strings.Join(rest, "\n") != "stopped" {
				t.Errorf("$ %s: after an interrupt: %v, output %q, stderr %q", line, err, rest, stderr.String())
			}
			return strings.Join(out, "\n") + "\n"
		case <-timeout:
			cmd.Process.Kill()
			break read
		}
	}
	cmd.Wait()
	t.Errorf("$ %s: no URL printed; stderr %q", line, stderr.String())
	return strings.Join(out, "\n") + "\n"
}

// matchShown compares the output lines a document shows with the real
// output, line by line: a line "..." stands for any number of omitted
// lines, and is the only way to leave lines out, also at the end;
// durations, rates, heap and store sizes and the number of workers, which
// is the machine's number of CPUs, may differ.
func matchShown(want []string, out string) error {
	got := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for len(want) > 0 && strings.TrimSpace(want[len(want)-1]) == "" {
		want = want[:len(want)-1]
	}
	i, skip := 0, false
	for _, w := range want {
		nw := normalize(w)
		if nw == "..." {
			skip = true
			continue
		}
		if skip {
			for i < len(got) && normalize(got[i]) != nw {
				i++
			}
		}
		switch {
		case i == len(got):
			return fmt.Errorf("the document shows a line the command does not print (in that order):\n%s", w)
		case normalize(got[i]) != nw:
			return fmt.Errorf("output line %d differs from the document's:\n  shown:   %s\n  printed: %s", i+1, w, got[i])
		}
		i++
		skip = false
	}
	if !skip && i < len(got) && len(want) > 0 {
		return fmt.Errorf("the command prints %d lines more than the document shows, from line %d: %s (end the block with ... to elide them)", len(got)-i, i+1, got[i])
	}
	return nil
}

// TestMatchShown: a document's shown output cannot drop lines without
// "...", reorder them, or stop early.
func TestMatchShown(t *testing.T) {
	out := "a\nb 0.12s\nc\nd\n"
	for _, c := range []struct {
		want []string
		ok   bool
	}{
		{[]string{"a", "b 9.99s", "c", "d"}, true},
		{[]string{"a", "...", "d"}, true},
		{[]string{"a", "..."}, true},
		{[]string{"...", "c", "d", ""}, true},
		{[]string{"a", "c", "d"}, false},      // b dropped without ...
		{[]string{"a", "b 0.1s", "c"}, false}, // d dropped at the end
		{[]string{"b 0.1s", "a", "..."}, false},
		{[]string{"a", "...", "x"}, false},
	} {
		if err := matchShown(c.want, out); (err == nil) != c.ok {
			t.Errorf("%q: %v, want ok=%v", c.want, err, c.ok)
		}
	}
}
