package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"time"

	"github.com/spf13/pflag"

	"lfccheck/explore"
	"lfccheck/internal/serve"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/traces"
)

// defaultServeAddr is where serve listens without --addr: loopback only.
const defaultServeAddr = "127.0.0.1:8080"

const serveSynopsis = `[configuration flags] [--addr HOST:PORT] [--trace FILE] [check limits]

An explorer of the configuration's state space in the browser, on a local
HTTP port: the initial state, every enabled action with the changes it
makes, back and forward, a path bar, the properties at the current state,
a path exported as a trace file 'lfccheck replay' accepts, saved traces
loaded to continue from any step, and the check of 'lfccheck check' run
from the page with its progress. It prints the URL to open and runs until
interrupted (Ctrl-C). The configuration flags are check's; the limit and
reduction flags apply to checks run from the page. See docs/checking.md,
"Exploring by hand".`

// runServe is 'lfccheck serve': the state-space explorer of one
// configuration in the browser (internal/serve).
func runServe(args []string, e env) (int, error) {
	var cf configFlags
	var sf searchFlags
	fs := newFlags("serve", e)
	before := flagNames(fs)
	cf.register(fs)
	configNames := newNames(before, flagNames(fs))
	addr := fs.String("addr", defaultServeAddr, "listen on this HOST:PORT (port 0: any free port); a host other than a loopback address needs --allow-remote")
	remote := fs.Bool("allow-remote", false, "allow --addr to name a non-loopback address: anyone who can reach it can explore and run checks on this machine")
	tracePath := fs.String("trace", "", "open this saved trace or counterexample (its configuration replaces the configuration flags, which must then be left out)")
	sf.register(fs, 0, false)
	fs.Lookup("progress-every").DefValue = "1s"
	fs.Lookup("progress-every").Usage = "how often a check run from the page reports its progress, e.g. 500ms"
	fs.MarkHidden("quiet") // the progress goes to the page
	sf.progress = time.Second
	if err := parseNoArgs(fs, args, serveSynopsis); err != nil {
		return 0, err
	}
	host, _, err := net.SplitHostPort(*addr)
	if err != nil {
		return 0, usagef("serve: --addr %q: want HOST:PORT, such as %s: %v", *addr, defaultServeAddr, err)
	}
	loopback := isLoopback(host)
	if !loopback && !*remote {
		return 0, usagef("serve: --addr %q is not a loopback address: anyone who reaches it could use the explorer; add --allow-remote to mean it", *addr)
	}
	opt := serve.Options{}
	if *tracePath != "" {
		for _, n := range configNames {
			if fs.Changed(n) {
				return 0, usagef("serve: --%s with --trace: the trace file carries its configuration", n)
			}
		}
		data, err := e.readInput(*tracePath, maxInputBytes)
		if err != nil {
			return 0, usagef("serve: %v", err)
		}
		f, err := traces.Parse(data)
		if err != nil {
			return 0, usagef("serve: %s: %v", *tracePath, err)
		}
		opt.Trace, opt.TraceName = &f, *tracePath
	} else {
		cfg, _, err := cf.config(fs, e)
		if err != nil {
			return 0, err
		}
		opt.Config = cfg
	}
	base, err := sf.options(e)
	if err != nil {
		return 0, err
	}
	opt.Check = func(ctx context.Context, cfg model.Config, progress io.Writer) (serve.CheckResult, error) {
		return serveCheck(ctx, cfg, progress, base, &sf)
	}
	if !loopback && host != "" {
		opt.Hosts = []string{host}
	}
	srv, err := serve.New(opt)
	if err != nil {
		if opt.Trace != nil {
			return 0, usagef("serve: %s: %v", *tracePath, err)
		}
		return 0, usagef("serve: %v", err)
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Err != nil {
			err = op.Err // without "listen tcp ADDR:", said already
		}
		return 0, usagef("serve: cannot listen on %s: %v", *addr, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if e.stop != nil {
		go func() {
			select {
			case <-e.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	what := srv.Describe()
	if opt.Trace != nil {
		what += fmt.Sprintf(", from %s (%d steps)", *tracePath, len(opt.Trace.Actions))
	}
	if !loopback {
		fmt.Fprintf(e.stderr, "lfccheck serve: WARNING: listening on %s, beyond this machine: anyone who reaches it can explore and run checks here\n", ln.Addr())
	}
	fmt.Fprintf(e.stdout, "lfccheck serve: %s\n", what)
	fmt.Fprintf(e.stdout, "open %s in a browser (Ctrl-C stops)\n", serveURL(ln.Addr()))
	if err := serve.Serve(ctx, ln, srv.Handler()); err != nil {
		return 0, usagef("serve: %v", err)
	}
	fmt.Fprintln(e.stdout, "stopped")
	return exitPass, nil
}

// serveCheck is the check a page starts: check's breadth-first search of
// cfg with the limits of serve's flags, its report as check prints it.
func serveCheck(ctx context.Context, cfg model.Config, progress io.Writer, base explore.Options, sf *searchFlags) (serve.CheckResult, error) {
	ck, err := properties.Build(cfg)
	if err != nil {
		return serve.CheckResult{}, err
	}
	sf.setUp(ck)
	opt := base
	stop := make(chan struct{})
	defer context.AfterFunc(ctx, func() { close(stop) })()
	opt.Stop = stop
	opt.Progress, opt.ProgressEvery = progress, sf.progress
	res, err := checkOne(ck, opt)
	if err != nil {
		return serve.CheckResult{}, err
	}
	var buf bytes.Buffer
	printCheck(&buf, res)
	j := res.json
	r := serve.CheckResult{Verdict: j.Verdict, Property: j.Property, Message: j.Message, Reason: j.Reason,
		States: j.States, Depth: j.Depth, ElapsedS: j.ElapsedS, StatesPerS: j.StatesPerS, Text: buf.String()}
	if res.file != nil {
		r.Actions, r.LoopStart = res.file.Actions, res.file.LoopStart
	}
	return r, nil
}

// isLoopback reports whether a listening host is a loopback address (or
// localhost); "" (every interface) is not.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serveURL is the URL to open for a listening address.
func serveURL(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "http://" + a.String() + "/"
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}

// flagNames lists the flags registered on fs.
func flagNames(fs *pflag.FlagSet) map[string]bool {
	m := map[string]bool{}
	fs.VisitAll(func(f *pflag.Flag) { m[f.Name] = true })
	return m
}

// newNames lists the names in after that are not in before.
func newNames(before, after map[string]bool) []string {
	var out []string
	for n := range after {
		if !before[n] {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}
