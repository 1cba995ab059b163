package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"lfccheck/explore"
	"lfccheck/internal/dist"
	"lfccheck/properties"
)

// checkpointFlags are check's flags for checkpoints of long searches.
type checkpointFlags struct {
	dir, resume string
	every       time.Duration
}

func (c *checkpointFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.dir, "checkpoint", "", "keep a checkpoint of the breadth-first search in this directory (made if need be; it must not hold one), taken between two levels every --checkpoint-every, so that a search cut short can be continued with --resume; removed when the search ends with a verdict")
	fs.DurationVar(&c.every, "checkpoint-every", 30*time.Minute, "time between two checkpoints (--checkpoint, --resume)")
	fs.StringVar(&c.resume, "resume", "", "continue the search checkpointed in this directory, and go on checkpointing there: the same configuration, properties and reductions as the search that wrote it (limits, workers and outputs may differ)")
}

// apply validates the flags and sets opt's checkpoint options for checking
// ck with the search flags sf.
func (c *checkpointFlags) apply(fs *pflag.FlagSet, opt *explore.Options, ck *properties.Checker, sf *searchFlags, search string) error {
	switch {
	case fs.Changed("checkpoint") && c.dir == "", fs.Changed("resume") && c.resume == "":
		return usagef("--checkpoint and --resume need a directory (given: empty)")
	case c.dir == "" && c.resume == "":
		if fs.Changed("checkpoint-every") {
			return usagef("--checkpoint-every needs --checkpoint or --resume")
		}
		return nil
	case c.dir != "" && c.resume != "":
		return usagef("give --checkpoint DIR to start a search with checkpoints, or --resume DIR to continue one, not both")
	case search != "bfs":
		return usagef("checkpoints need the breadth-first search (--search bfs), not --search %s", search)
	case sf.fingerprint:
		return usagef("checkpoints need the exact store: drop --fingerprint")
	case c.every <= 0:
		return usagef("--checkpoint-every must be positive, got %v", c.every)
	}
	id, err := checkpointID(ck, sf, opt)
	if err != nil {
		return err
	}
	note, _ := json.Marshal(noteArgs(fs))
	opt.Checkpoint, opt.CheckpointEvery, opt.CheckpointID, opt.CheckpointNote = c.dir, c.every, id, string(note)
	opt.KeepCheckpoint = true // removed once the result is written (deliverCheckpoint)
	if c.resume != "" {
		opt.Checkpoint, opt.Resume = c.resume, true
	}
	return nil
}

// runFlags are check's flags that do not change what is searched: the
// limits, the outputs, the workers and the checkpoints themselves.
var runFlags = map[string]bool{"json": true, "trace-out": true, "svg": true, "html": true, "steps": true,
	"max-states": true, "max-depth": true, "timeout": true, "max-memory": true, "quiet": true,
	"progress-every": true, "workers": true, "checkpoint": true, "checkpoint-every": true, "resume": true}

// noteArgs are the flags a checkpoint notes: those that define the search
// and --checkpoint-every, which a resumed search keeps unless given again.
func noteArgs(fs *pflag.FlagSet) []string {
	args := searchArgs(fs)
	if fs.Changed("checkpoint-every") {
		args = append(args, "--checkpoint-every="+fs.Lookup("checkpoint-every").Value.String())
	}
	return args
}

// searchArgs returns the flags given that define the search (all but
// runFlags), as --name=value arguments in name order: what a checkpoint
// notes so that --resume alone can search the same.
func searchArgs(fs *pflag.FlagSet) []string {
	var args []string
	fs.Visit(func(f *pflag.Flag) {
		if runFlags[f.Name] {
			return
		}
		vals := []string{f.Value.String()}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			vals = sv.GetSlice()
		}
		if pv, ok := f.Value.(*paramFlag); ok && pv.spec.File {
			// A file named relative to here is found from anywhere.
			for i, v := range vals {
				if a, err := filepath.Abs(v); err == nil && v != "" {
					vals[i] = a
				}
			}
		}
		for _, v := range vals {
			args = append(args, "--"+f.Name+"="+v)
		}
	})
	return args
}

// storedArgs reads the flags noted in the checkpoint to resume.
func (c *checkpointFlags) storedArgs() ([]string, error) {
	h, err := explore.ReadCheckpoint(c.resume)
	if err != nil {
		return nil, usageError{err}
	}
	var args []string
	if err := json.Unmarshal([]byte(h.Note), &args); err != nil {
		return nil, usagef("%s: the checkpoint does not say which flags it was made with", c.resume)
	}
	for _, a := range args {
		if !strings.HasPrefix(a, "--") {
			return nil, usagef("%s: the checkpoint notes a malformed flag %q", c.resume, a)
		}
	}
	return args, nil
}

// checkpointIdentity is what a checkpoint must match to be resumed: the
// lfccheck program (a checkpoint holds its encodings and tables), the
// configuration, the properties and what changes the state space.
type checkpointIdentity struct {
	Program       string          `json:"program"`
	Config        json.RawMessage `json:"config"`
	Properties    []string        `json:"properties"`
	Reduction     bool            `json:"reduction"`
	Symmetry      bool            `json:"symmetry"`
	LivenessGraph bool            `json:"liveness_graph"`
	SleepSets     string          `json:"sleep_sets"`
	Frontier      bool            `json:"frontier,omitempty"`
	StubbornSets  bool            `json:"stubborn_sets,omitempty"`
}

func checkpointID(ck *properties.Checker, sf *searchFlags, opt *explore.Options) (string, error) {
	prog, err := programHash()
	if err != nil {
		return "", usagef("checkpoints: cannot identify the lfccheck program: %v", err)
	}
	// The properties as a set: every state before the checkpoint passed
	// all of them, so their order matters only from there on.
	c := ck.Sys.Cfg
	c.Properties = append([]string(nil), c.Properties...)
	sort.Strings(c.Properties)
	cfg, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	id := checkpointIdentity{Program: prog, Config: cfg, Reduction: ck.Reduce, Symmetry: ck.Symmetry,
		LivenessGraph: ck.LivenessGraph, SleepSets: sf.sleepSets, Frontier: opt.Frontier, StubbornSets: ck.Stubborn}
	for _, p := range ck.Props {
		id.Properties = append(id.Properties, p.Name)
	}
	sort.Strings(id.Properties)
	b, err := json.Marshal(id)
	return string(b), err
}

// programHash is the SHA-256 of the running executable (computed once).
func programHash() (string, error) {
	programHashOnce.Do(func() { programHashValue, programHashErr = hashProgram() })
	return programHashValue, programHashErr
}

var (
	programHashOnce  sync.Once
	programHashValue string
	programHashErr   error
)

func hashProgram() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	f, err := os.Open(exe)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// checkpointError words an explorer's checkpoint error for the command
// line: for another search's checkpoint, what differs.
func checkpointError(err error, dir string) error {
	var ce *explore.CheckpointError
	if !errors.As(err, &ce) {
		return err
	}
	if ce.Exists {
		return usagef("%v: continue it with --resume %s, or remove it", err, shellQuote(dir))
	}
	if ce.Have == "" {
		return usageError{err}
	}
	var have, want map[string]any
	if json.Unmarshal([]byte(ce.Have), &have) != nil || json.Unmarshal([]byte(ce.Want), &want) != nil {
		return usagef("%s holds the checkpoint of another search", dir)
	}
	diffs := jsonDiff("", have, want)
	if len(diffs) == 0 {
		diffs = []string{"the same flags, another initial state"}
	}
	return usagef("%s holds the checkpoint of another search: %s", dir, strings.Join(diffs, "; "))
}

// jsonDiff lists the fields of two decoded JSON objects that differ, as
// "NAME: A there, B here".
func jsonDiff(prefix string, have, want map[string]any) []string {
	keys := map[string]bool{}
	for k := range have {
		keys[k] = true
	}
	for k := range want {
		keys[k] = true
	}
	var names []string
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []string
	for _, k := range names {
		h, w := have[k], want[k]
		hm, ok1 := h.(map[string]any)
		wm, ok2 := w.(map[string]any)
		if ok1 && ok2 {
			out = append(out, jsonDiff(prefix+k+".", hm, wm)...)
			continue
		}
		hb, _ := json.Marshal(h)
		wb, _ := json.Marshal(w)
		if string(hb) == string(wb) {
			continue
		}
		if k == "program" && prefix == "" {
			out = append(out, "written by another lfccheck build")
			continue
		}
		out = append(out, fmt.Sprintf("%s%s %s there, %s here", prefix, k, hb, wb))
	}
	return out
}

// checkpointLine says where the search's checkpoint is, or that there is
// none.
func checkpointLine(c *explore.CheckpointInfo, verdict string) string {
	from := ""
	if c.Resumed {
		from = fmt.Sprintf("resumed at depth %d (%d states); ", c.ResumedDepth, c.ResumedStates)
	}
	if c.Restarted {
		from = "the search resumed met a state graph that is not layered and started again without sleep sets (see the sleep sets line), dropping that checkpoint; "
	}
	switch {
	case c.Lost:
		return fmt.Sprintf("checkpoint: %sthe checkpoint at depth %d is gone from %s (removed while the search ran): nothing can continue this search", from, c.Depth, c.Dir)
	case c.Kept:
		return fmt.Sprintf("checkpoint: %s%s holds the search at depth %d (%d states); continue it with 'lfccheck check --resume %s' (add limits, workers and outputs as needed)",
			from, c.Dir, c.Depth, c.States, shellQuote(c.Dir))
	case verdict == string(explore.Incomplete):
		return fmt.Sprintf("checkpoint: %snone in %s: the search stopped before its first checkpoint (see --checkpoint-every)", from, c.Dir)
	}
	return fmt.Sprintf("checkpoint: %s%d written to %s, removed: the search ended with a verdict", from, c.Written, c.Dir)
}

// checkpointMarks are the files that mark the directory of each kind of
// search's checkpoint, and how each is continued (DIR the directory).
var checkpointMarks = []struct{ file, kind, how string }{
	{explore.CheckpointFile, "a one-process search's checkpoint", "continue it with 'lfccheck check --resume DIR'"},
	{dist.MetaName, "a distributed search's checkpoint", "continue it with the same --distributed or --peers and --checkpoint DIR"},
	{explore.DiskManifest, "a disk search's files", "continue it with the same --disk-visited DIR"},
}

// otherCheckpoint refuses a checkpoint or disk directory that holds
// another kind of search's checkpoint than the search opt runs (which
// would pass it by, start again and mix its files with the others').
func otherCheckpoint(opt explore.Options, distributed bool) error {
	dir, mine := opt.Checkpoint, explore.CheckpointFile
	if distributed {
		mine = dist.MetaName
	}
	if opt.DiskDir != "" {
		dir, mine = opt.DiskDir, explore.DiskManifest
	}
	if dir == "" {
		return nil
	}
	for _, m := range checkpointMarks {
		if m.file != mine && explore.Present(dir, m.file) {
			return usagef("%s holds %s (%s), which this search cannot continue: %s, or remove it", dir, m.kind, m.file, strings.ReplaceAll(m.how, "DIR", shellQuote(dir)))
		}
	}
	return nil
}
