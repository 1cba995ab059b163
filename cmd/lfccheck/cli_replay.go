package main

import (
	"fmt"

	"lfccheck/traces"
)

func runReplay(args []string, e env) (int, error) {
	fs := newFlags("replay", e)
	jsonOut := fs.Bool("json", false, "print the replay report as JSON")
	var pf pictureFlags
	pf.register(fs, "the replayed trace")
	for _, name := range []string{"svg", "html"} {
		fs.Lookup(name).Usage += "; to standard output, the report then goes to standard error"
	}
	if err := parseFlags(fs, args, "[--json] [--svg FILE] [--html FILE] [--steps FROM:TO] FILE"); err != nil {
		return 0, err
	}
	t, err := readTrace("replay", fs.Args(), &pf, e)
	if err != nil {
		return 0, err
	}
	path, file, ck, acts := t.path, t.file, t.ck, t.acts
	report := e.stdout
	if pf.svg == "-" || pf.html == "-" {
		report = e.stderr // the picture on standard output
	}
	if pf.window != nil {
		if _, err := (traces.Options{Steps: pf.window}).Resolve(len(acts)); err != nil {
			return 0, usagef("--steps: %v", err)
		}
	}
	o, err := traces.RunLasso(ck, acts, file.Loop())
	if err != nil {
		return 0, usagef("replay: %s: %v", path, err)
	}
	ok, why := traces.Reproduces(file, o)
	if *jsonOut {
		rep := struct {
			File       string   `json:"file"`
			Steps      int      `json:"steps"`
			Expected   string   `json:"expected_property"`
			Property   string   `json:"property"`
			Message    string   `json:"message,omitempty"`
			Step       int      `json:"violation_step,omitempty"`
			Reproduced bool     `json:"reproduced"`
			Difference string   `json:"difference,omitempty"`
			Actions    []string `json:"actions"`
			LoopStart  int      `json:"loop_start,omitempty"`
		}{File: path, Steps: len(o.Steps), Expected: file.Property, Reproduced: ok, Difference: why, Actions: file.Actions, LoopStart: file.LoopStart}
		if o.Violation != nil {
			rep.Property, rep.Message, rep.Step = o.Violation.Property, o.Violation.Message, o.ViolationStep
		}
		report.Write(marshalIndent(rep))
	} else {
		fmt.Fprintf(report, "replaying %s: %s, %d steps\n", path, ck.Sys.Cfg.Describe(), len(acts))
		traces.WriteText(report, o)
		switch {
		case ok && o.Live && o.Loop > 0:
			fmt.Fprintf(report, "reproduced: %s violated on a fair run that repeats steps %d-%d for ever, as recorded\n",
				o.Violation.Property, file.LoopStart, len(acts))
		case ok && o.Live:
			fmt.Fprintf(report, "reproduced: %s violated on a run that ends after step %d, as recorded\n", o.Violation.Property, len(acts))
		case ok && file.Property != "":
			fmt.Fprintf(report, "reproduced: %s violated at step %d, as recorded\n", o.Violation.Property, o.ViolationStep)
		case ok:
			fmt.Fprintf(report, "reproduced: all %d steps applied and no property was violated, as recorded\n", len(acts))
		default:
			fmt.Fprintf(report, "NOT reproduced: %s\n", why)
		}
	}
	if err := pf.write(ck.Sys, acts, o, e); err != nil {
		return 0, err
	}
	if ok {
		return exitPass, nil
	}
	return exitFail, nil
}
