package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"lfccheck/explore"
	"lfccheck/properties"
)

// diskFlags is check's --disk-visited: the disk search (explore's
// Options.DiskDir), whose directory is also its checkpoint.
type diskFlags struct{ dir, keys string }

func (d *diskFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&d.dir, "disk-visited", "", "search breadth first with the visited set on disk in this directory (made if need be): sorted files of the states' exact encodings, duplicates found level by level, so that memory does not grow with the states stored (one worker, no sleep sets, no properties checked on the state graph); the directory is the checkpoint: a search cut short keeps its files there and the same command continues it from its last level")
	fs.StringVar(&d.keys, "disk-keys", "exact", "with --disk-visited, what its visited set holds: exact (the states' encodings: a pass is exact) or fingerprint (64-bit fingerprints of the encodings, Rice-coded, about 6 to 7 bytes per state on disk with the parent records: a pass then says how likely a state was missed because two shared a fingerprint; a violation found is always real)")
}

// on reports whether the disk search was asked for.
func (d *diskFlags) on(fs *pflag.FlagSet) bool { return fs.Changed("disk-visited") }

// validate refuses what the disk search cannot be combined with and sets
// opt for it.
func (d *diskFlags) validate(fs *pflag.FlagSet, opt *explore.Options, sf *searchFlags, hunt *explore.Hunt, search string, frontier, scc, distributed bool, cpf *checkpointFlags) error {
	if !d.on(fs) {
		if fs.Changed("disk-keys") {
			return usagef("--disk-keys says what --disk-visited keeps: give --disk-visited DIR too")
		}
		return nil
	}
	switch {
	case d.dir == "":
		return usagef("--disk-visited needs a directory (given: empty)")
	case d.keys != "exact" && d.keys != "fingerprint":
		return usagef("--disk-keys is exact or fingerprint (given: %q)", d.keys)
	case hunt != nil:
		return usagef("--disk-visited is a breadth-first search: not with --search %s", search)
	case sf.fingerprint:
		return usagef("--disk-visited keeps fingerprints with --disk-keys fingerprint: drop --fingerprint")
	case frontier:
		return usagef("--disk-visited is a search of its own: not with --frontier")
	case scc:
		return usagef("--disk-visited keeps no state graph: not with --liveness-search scc")
	case distributed:
		return usagef("--disk-visited runs in one process: not with --distributed or --peers")
	case cpf.dir != "" || cpf.resume != "":
		return usagef("--disk-visited keeps its files as the checkpoint (the same command continues a search cut short): not with --checkpoint or --resume")
	case fs.Changed("workers") && sf.workers > 1:
		return usagef("--disk-visited runs on one worker: not with --workers %d", sf.workers)
	}
	opt.DiskDir, opt.Workers, opt.DiskFingerprint = d.dir, 1, d.keys == "fingerprint"
	return nil
}

// fits says why the disk search cannot check ck, if it cannot (it keeps
// no state graph), and names the search for its files.
func (d *diskFlags) fits(fs *pflag.FlagSet, ck *properties.Checker, sf *searchFlags, opt *explore.Options) error {
	if !d.on(fs) {
		return nil
	}
	if err := needsNoGraph(ck, "--disk-visited"); err != nil {
		return err
	}
	id, err := checkpointID(ck, sf, opt)
	if err != nil {
		return err
	}
	opt.CheckpointID = id
	return nil
}

// diskLine describes the disk search's files.
func diskLine(d *explore.DiskInfo, states int64) string {
	from := ""
	if d.Resumed {
		from = fmt.Sprintf("resumed at depth %d; ", d.ResumedAt)
	}
	files := "files"
	if d.VisitedFiles == 1 {
		files = "file"
	}
	what := fmt.Sprintf("%speak %s on disk (the visited set and parents at most %s%s, the levels and runs at most %s), %s written, %d sorted runs (at most %s each in memory), %d %s of the visited set (%s keys)",
		from, explore.FormatBytes(uint64(d.PeakBytes)), explore.FormatBytes(uint64(d.PeakKeyBytes)), perState(d.PeakKeyBytes, states), explore.FormatBytes(uint64(d.PeakLevelBytes)),
		explore.FormatBytes(uint64(d.WrittenBytes)), d.Runs, explore.FormatBytes(uint64(d.RunBytes)), d.VisitedFiles, files, d.Keys)
	if d.Lost {
		return fmt.Sprintf("disk: %s; the level saved at depth %d is gone from %s (its manifest removed while the search ran): nothing can continue this search", what, d.SavedDepth, d.Dir)
	}
	if d.Kept {
		return fmt.Sprintf("disk: %s; %s holds the search at depth %d (%d states): the same command continues it", what, d.Dir, d.SavedDepth, d.SavedStates)
	}
	return fmt.Sprintf("disk: %s; the files in %s are removed", what, d.Dir)
}

// perState is ", N bytes/state" for b bytes over n states (none for 0).
func perState(b, n int64) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(", %.1f bytes/state", float64(b)/float64(n))
}

// diskPass is the verdict line's note on a pass of the disk search with
// fingerprints, which is not an exact proof.
func diskPass(d *explore.DiskInfo) string {
	if d.Collisions > 0 {
		return fmt.Sprintf("pass (fingerprints: every property holds over the states explored, but %s had the fingerprint of another state seen in the same level, so states were missed: search again with --disk-keys exact)", plural(d.Collisions, "state"))
	}
	return fmt.Sprintf("pass (fingerprints: every property holds over the states explored; the probability that a state was missed, two states sharing a fingerprint, is at most about %.1g)", d.OmissionProb)
}
