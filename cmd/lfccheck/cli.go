package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"lfccheck/internal/fileio"
)

// Exit codes.
const (
	exitPass        = 0
	exitFail        = 1
	exitUsage       = 2
	exitIncomplete  = 3
	maxInputBytes   = 16 << 20 // trace files
	maxTopologySize = 1 << 20
)

// usageError is an error in the command line or input: exit code 2.
type usageError struct{ error }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// env is what a command needs from the process: its output streams and
// the interrupt channel (closed on SIGINT or SIGTERM).
type env struct {
	stdout, stderr io.Writer
	stop           <-chan struct{}
}

// errWriter remembers the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	if err != nil {
		e.err = err
	}
	return n, err
}

func run(args []string, stdout, stderr io.Writer) int {
	return runEnv(args, stdout, stderr, nil)
}

func runEnv(args []string, stdout, stderr io.Writer, stop <-chan struct{}) int {
	out := &errWriter{w: stdout}
	e := env{stdout: out, stderr: stderr, stop: stop}
	code, err := dispatch(args, e)
	if err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitPass
		}
		fmt.Fprintf(stderr, "lfccheck: %s\n", oneLine(err.Error()))
		return exitUsage
	}
	if out.err != nil {
		fmt.Fprintf(stderr, "lfccheck: writing standard output: %v\n", out.err)
		return exitUsage
	}
	return code
}

func oneLine(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "\n", "; ") }

var commands = []string{"suite", "check", "list", "replay", "show", "merge", "trees", "sweep", "serve", "version", "help"}

func dispatch(args []string, e env) (int, error) {
	cmd := "suite"
	if len(args) > 0 && args[0] == "--version" {
		args[0] = "version"
	}
	if len(args) > 0 && (!strings.HasPrefix(args[0], "-") || args[0] == "-h" || args[0] == "--help") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "suite":
		return runSuite(args, e)
	case "check":
		return runCheck(args, e)
	case "list":
		return runList(args, e)
	case "replay":
		return runReplay(args, e)
	case "show":
		return runShow(args, e)
	case "merge":
		return runMerge(args, e)
	case "trees":
		return runTrees(args, e)
	case "sweep":
		return runSweep(args, e)
	case "serve":
		return runServe(args, e)
	case "version":
		return runVersion(args, e)
	case "help", "-h", "--help":
		return runHelp(args, e)
	}
	return 0, usagef("unknown command %q (want %s; see 'lfccheck help')", cmd, strings.Join(commands, ", "))
}

// readInput reads an input file of at most max bytes; an interrupt ends
// the wait for a FIFO or device.
func (e env) readInput(path string, max int64) ([]byte, error) {
	return fileio.ReadCappedStop(path, max, e.stop)
}

// marshalPlain is json.Marshal without HTML escaping, so that action names
// stay readable ("deliver 0->1", not "deliver 0-\u003e1").
func marshalPlain(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func marshalIndent(v any) []byte {
	b, err := marshalPlain(v)
	if err != nil {
		panic("lfccheck: marshal: " + err.Error()) // plain data only
	}
	var buf bytes.Buffer
	json.Indent(&buf, b, "", "  ")
	buf.WriteByte('\n')
	return buf.Bytes()
}
