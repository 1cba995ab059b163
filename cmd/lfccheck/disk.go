package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"lfccheck/explore"
	"lfccheck/properties"
)

// diskFlags is check's --disk-visited: the disk search (explore's
// Options.DiskDir), whose directory is also its checkpoint.
type diskFlags struct{ dir string }

func (d *diskFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&d.dir, "disk-visited", "", "search breadth first with the visited set on disk in this directory (made if need be): sorted files of the states' exact encodings, duplicates found level by level, so that memory does not grow with the states stored (one worker, no sleep sets, no properties checked on the state graph); the directory is the checkpoint: a search cut short keeps its files there and the same command continues it from its last level")
}

// on reports whether the disk search was asked for.
func (d *diskFlags) on(fs *pflag.FlagSet) bool { return fs.Changed("disk-visited") }

// validate refuses what the disk search cannot be combined with and sets
// opt for it.
func (d *diskFlags) validate(fs *pflag.FlagSet, opt *explore.Options, sf *searchFlags, hunt *explore.Hunt, search string, frontier, scc, distributed bool, cpf *checkpointFlags) error {
	if !d.on(fs) {
		return nil
	}
	switch {
	case d.dir == "":
		return usagef("--disk-visited needs a directory (given: empty)")
	case hunt != nil:
		return usagef("--disk-visited is a breadth-first search: not with --search %s", search)
	case sf.fingerprint:
		return usagef("--disk-visited stores exact encodings: drop --fingerprint")
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
	opt.DiskDir, opt.Workers = d.dir, 1
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
func diskLine(d *explore.DiskInfo) string {
	from := ""
	if d.Resumed {
		from = fmt.Sprintf("resumed at depth %d; ", d.ResumedAt)
	}
	files := "files"
	if d.VisitedFiles == 1 {
		files = "file"
	}
	what := fmt.Sprintf("%speak %s on disk, %s written, %d sorted runs (at most %s each in memory), %d %s of the visited set",
		from, explore.FormatBytes(uint64(d.PeakBytes)), explore.FormatBytes(uint64(d.WrittenBytes)), d.Runs, explore.FormatBytes(uint64(d.RunBytes)), d.VisitedFiles, files)
	if d.Kept {
		return fmt.Sprintf("disk: %s; %s holds the search at depth %d (%d states): the same command continues it", what, d.Dir, d.SavedDepth, d.SavedStates)
	}
	return fmt.Sprintf("disk: %s; the files in %s are removed", what, d.Dir)
}
