package main

import (
	"fmt"

	"lfccheck/internal/fileio"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/traces"
)

// pictureFlags are the --svg and --html outputs of check and show, and
// the --steps they cover.
type pictureFlags struct {
	svg, html string
	steps     string
	window    *traces.Window // --steps, parsed by check
	// trace is the trace file the pictures come from (show's argument,
	// check's --trace-out), for the command that draws other steps.
	trace string
}

func (p *pictureFlags) register(fs interface {
	StringVar(*string, string, string, string)
}, what string) {
	fs.StringVar(&p.svg, "svg", "", "write "+what+" as an SVG sequence chart to this file ('-': standard output)")
	fs.StringVar(&p.html, "html", "", "write "+what+" as a self-contained HTML viewer to this file ('-': standard output)")
	fs.StringVar(&p.steps, "steps", "", fmt.Sprintf("the steps --svg and --html draw, FROM:TO (either side may be empty: from the first, to the last); default: the last %d, and the pictures and standard error say what is left out", traces.DefaultWindowSteps))
}

// outputs names the picture outputs for fileio.Distinct.
func (p *pictureFlags) outputs() []fileio.Named {
	return []fileio.Named{{Flag: "--svg", Path: p.svg}, {Flag: "--html", Path: p.html}}
}

// check validates the output paths before any work is done.
func (p *pictureFlags) check() error {
	for _, o := range []struct{ flag, path string }{{"--svg", p.svg}, {"--html", p.html}} {
		if o.path != "" {
			if err := fileio.CheckOutput(o.path); err != nil {
				return usagef("%s: %v", o.flag, err)
			}
		}
	}
	if p.svg == "-" && p.html == "-" {
		return usagef("--svg and --html cannot both go to standard output")
	}
	if p.steps != "" {
		if p.svg == "" && p.html == "" {
			return usagef("--steps chooses the steps of --svg and --html; give one of them")
		}
		w, err := traces.ParseSteps(p.steps)
		if err != nil {
			return usagef("--steps: %v", err)
		}
		p.window = &w
	}
	return nil
}

// rangeCommand is the command that draws steps FROM:TO into the file of
// flag.
func (p *pictureFlags) rangeCommand(flag, path string) string {
	out := "FILE"
	if path != "-" {
		out = shellQuote(path)
	}
	if p.trace == "" || p.trace == "-" {
		return fmt.Sprintf("lfccheck show --steps FROM:TO %s %s TRACE (save the trace with --trace-out TRACE)", flag, out)
	}
	return fmt.Sprintf("lfccheck show --steps FROM:TO %s %s %s", flag, out, shellQuote(p.trace))
}

// write renders the run of acts on sys and writes the requested pictures.
// A range of steps that starts after the trace's end is bad input, found
// before any picture is written.
func (p *pictureFlags) write(sys *model.System, acts []model.Action, o traces.Outcome, e env) error {
	if p.svg == "" && p.html == "" {
		return nil
	}
	opt := traces.Options{Steps: p.window}
	win, err := opt.Resolve(len(acts))
	if err != nil {
		return usagef("--steps: %v", err)
	}
	for _, out := range []struct {
		flag, path string
		render     func(*model.System, []model.Action, traces.Outcome, traces.Options) ([]byte, error)
	}{{"--svg", p.svg, traces.SVGWith}, {"--html", p.html, traces.HTMLWith}} {
		if out.path == "" {
			continue
		}
		opt.RangeCommand = p.rangeCommand(out.flag, out.path)
		data, err := out.render(sys, acts, o, opt)
		if err != nil {
			return fmt.Errorf("internal error: %s: %v", out.flag, err)
		}
		if err := fileio.WriteOutput(out.path, data, e.stdout); err != nil {
			return usagef("%s: %v", out.flag, err)
		}
		if note := opt.LeftOut(win, len(acts)); note != "" {
			fmt.Fprintf(e.stderr, "lfccheck: %s: %s\n", out.flag, note)
		}
	}
	return nil
}

// trace is a trace file read by readTrace: its path, contents, checker
// (built from its configuration) and actions.
type trace struct {
	path string
	file traces.File
	ck   *properties.Checker
	acts []model.Action
}

// readTrace reads the one trace file that command cmd (replay, show) was
// given in args, once the picture flags pf are checked and none of their
// outputs is that file. Every error is a usage error that names cmd.
func readTrace(cmd string, args []string, pf *pictureFlags, e env) (trace, error) {
	if len(args) != 1 {
		return trace{}, usagef("%s: want exactly one trace file, got %d arguments", cmd, len(args))
	}
	if err := pf.check(); err != nil {
		return trace{}, err
	}
	t := trace{path: args[0]}
	pf.trace = t.path
	if err := fileio.Distinct([]fileio.Named{{Flag: "the trace file", Path: t.path}}, pf.outputs()); err != nil {
		return trace{}, usageError{err}
	}
	data, err := e.readInput(t.path, maxInputBytes)
	if err != nil {
		return trace{}, usagef("%s: %v", cmd, err)
	}
	if t.file, err = traces.Parse(data); err != nil {
		return trace{}, usagef("%s: %s: %v", cmd, t.path, err)
	}
	if t.ck, err = properties.Build(t.file.Config); err != nil {
		return trace{}, usagef("%s: %s: config: %v", cmd, t.path, err)
	}
	if t.acts, err = traces.ParseActions(t.ck.Sys, t.file.Actions); err != nil {
		return trace{}, usagef("%s: %s: %v", cmd, t.path, err)
	}
	return t, nil
}

func runShow(args []string, e env) (int, error) {
	fs := newFlags("show", e)
	var pf pictureFlags
	pf.register(fs, "the trace")
	if err := parseFlags(fs, args, "[--svg FILE] [--html FILE] [--steps FROM:TO] TRACE"); err != nil {
		return 0, err
	}
	t, err := readTrace("show", fs.Args(), &pf, e)
	if err != nil {
		return 0, err
	}
	path, file, ck, acts := t.path, t.file, t.ck, t.acts
	var o traces.Outcome
	if pf.svg == "" && pf.html == "" {
		o, err = traces.RunLasso(ck, acts, file.Loop())
	} else {
		// the pictures show the changes of their window's steps only
		win, werr := traces.Options{Steps: pf.window}.Resolve(len(acts))
		if werr != nil {
			return 0, usagef("--steps: %v", werr)
		}
		o, err = traces.RunLassoWindow(ck, acts, file.Loop(), win)
	}
	if err != nil {
		return 0, usagef("show: %s: %v", path, err)
	}
	if pf.svg == "" && pf.html == "" {
		fmt.Fprintf(e.stdout, "%s: %s, %d steps\n", path, ck.Sys.Cfg.Describe(), len(acts))
		traces.WriteText(e.stdout, o)
		return exitPass, nil
	}
	if err := pf.write(ck.Sys, acts, o, e); err != nil {
		return 0, err
	}
	return exitPass, nil
}
