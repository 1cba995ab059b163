package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// timing matches what differs from run to run: durations, rates, heap
// sizes.
var timing = regexp.MustCompile(`\d+\.\d+s\b|\d+ states/s|heap [\d.]+ [KMGT]?i?B|probability about [\d.e+-]+|\d+ workers?|visited set [\d.]+ [KMGT]?i?B \([\d.]+ bytes/state\)|"(workers|store_bytes|peak_heap_bytes|elapsed_s|states_per_s)": [\d.e+-]+`)

func normalize(s string) string {
	return strings.Join(strings.Fields(timing.ReplaceAllString(s, "#")), " ")
}

// TestREADMECommands runs every "$ ..." command in the code blocks of the
// README and of docs/*.md
// with the lfccheck binary built from this tree, in a scratch directory
// that sees the repository's examples, and checks that every output line the
// README shows appears in the real output, in order ("..." stands for
// omitted lines; durations, rates, heap and store sizes and the number of
// workers, which is the machine's number of CPUs, may differ).
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
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "lfccheck"), ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
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
	for _, ex := range exs {
		cmd := exec.Command("bash", "-c", ex.cmd)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
		out, _ := cmd.Output()
		got := strings.Split(string(out), "\n")
		i := 0
		for _, w := range ex.want {
			nw := normalize(w)
			if nw == "" || nw == "..." {
				continue
			}
			for i < len(got) && normalize(got[i]) != nw {
				i++
			}
			if i == len(got) {
				t.Errorf("$ %s\nREADME shows a line the command does not print (in that order):\n%s\n--- output:\n%s", ex.cmd, w, out)
				break
			}
			i++
		}
	}
}
