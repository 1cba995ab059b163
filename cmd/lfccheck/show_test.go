package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestShowSteps: --steps draws a range of a saved trace, and standard
// error says what is left out and gives the command that draws the rest;
// a malformed range, one after the trace's end, or --steps without a
// picture is one usage error line, exit 2, and writes no file.
func TestShowSteps(t *testing.T) {
	dir := t.TempDir()
	tf := filepath.Join(dir, "chain.json")
	if code, _, errOut := runCLI("check", "--protocol", "mcast", "--tree", "chain", "--nodes", "4", "--credits", "1", "--packets", "1", "--trace-out", tf); code != 1 {
		t.Fatalf("check: exit %d %s", code, errOut)
	}
	page := filepath.Join(dir, "part.html")
	code, _, errOut := runCLI("show", "--steps", "10:16", "--html", page, tf)
	if code != 0 {
		t.Fatalf("show --steps 10:16: exit %d %s", code, errOut)
	}
	want := "lfccheck: --html: steps 10-16 of 16 shown; steps 1-9 left out; draw a range with: lfccheck show --steps FROM:TO --html " + page + " " + tf + "\n"
	if errOut != want {
		t.Fatalf("show --steps 10:16 says\n%q\nwant\n%q", errOut, want)
	}
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `id="row-10"`) || strings.Contains(string(data), `id="row-8"`) {
		t.Fatal("the page of steps 10-16 does not draw just them")
	}
	// The whole trace: nothing is left out, nothing said.
	if code, _, errOut := runCLI("show", "--steps", ":", "--svg", filepath.Join(dir, "all.svg"), tf); code != 0 || errOut != "" {
		t.Fatalf("show --steps ':': exit %d, stderr %q", code, errOut)
	}
	for _, args := range [][]string{
		{"--steps", "10-16", "--html"},
		{"--steps", "x:3", "--svg"},
		{"--steps", "9:3", "--html"},
		{"--steps", "17:20", "--html"},
		{"--steps", "3:4"},
	} {
		out := filepath.Join(dir, "bad.out")
		a := args
		if a[len(a)-1] != "3:4" {
			a = append(append([]string{}, a...), out)
		}
		code, stdout, errOut := runCLI(append(append([]string{"show"}, a...), tf)...)
		if code != 2 || stdout != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "--steps") {
			t.Errorf("show %v: exit %d, stdout %q, stderr %q; want exit 2 and one line naming --steps", args, code, stdout, errOut)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("show %v wrote %s", args, out)
			os.Remove(out)
		}
	}
	// replay draws too: the report on stdout, or on stderr when the
	// picture goes to stdout.
	svg := filepath.Join(dir, "replay.svg")
	code, stdout, errOut := runCLI("replay", "--svg", svg, tf)
	if code != 0 || !strings.Contains(stdout, "reproduced: deadlock violated at step 16") || errOut != "" {
		t.Fatalf("replay --svg: exit %d, stdout %.200q, stderr %q", code, stdout, errOut)
	}
	if data, err := os.ReadFile(svg); err != nil || !strings.Contains(string(data), `id="row-16"`) {
		t.Fatalf("replay --svg wrote no chart of 16 steps (%v)", err)
	}
	code, stdout, errOut = runCLI("replay", "--html", "-", "--steps", "5:", tf)
	if code != 0 || !strings.HasPrefix(stdout, "<!DOCTYPE html>") || !strings.Contains(errOut, "reproduced: deadlock violated at step 16") || !strings.Contains(errOut, "steps 5-16 of 16 shown") {
		t.Fatalf("replay --html -: exit %d, stdout %.100q, stderr %q", code, stdout, errOut)
	}
	if code, _, errOut := runCLI("replay", "--steps", "30:", "--html", filepath.Join(dir, "r.html"), tf); code != 2 || strings.Contains(errOut, "reproduced") {
		t.Fatalf("replay with a range after the end: exit %d, stderr %q", code, errOut)
	}
}
