package main

import (
	"path/filepath"
	"testing"
)

// A directory that holds one kind of search's checkpoint is refused by the
// others, with the way to continue it (issue 60, case 10: a one-process
// --checkpoint on a distributed checkpoint's directory started again and
// passed, mixing its files with the distributed ones; and the reverse).
func TestCheckpointKindsRefused(t *testing.T) {
	w := []string{"check", "--protocol", "mcast", "--tree", "binary", "--nodes", "3", "--credits", "1", "--packets", "1", "-q"}
	tmp := t.TempDir()
	dck, ock, dk := filepath.Join(tmp, "dist"), filepath.Join(tmp, "one"), filepath.Join(tmp, "disk")
	for _, args := range [][]string{
		{"--distributed", "2", "--checkpoint", dck},
		{"--checkpoint", ock},
		{"--disk-visited", dk},
	} {
		if code, _, errs := runCLI(append(append(w, "--max-depth", "5"), args...)...); code != exitIncomplete {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
	}
	dist := dck + " holds a distributed search's checkpoint (dist.json), which this search cannot continue: continue it with the same --distributed or --peers and --checkpoint " + dck + ", or remove it"
	one := ock + " holds a one-process search's checkpoint (search.ckpt), which this search cannot continue: continue it with 'lfccheck check --resume " + ock + "', or remove it"
	disk := dk + " holds a disk search's files (lfccheck-disk.json), which this search cannot continue: continue it with the same --disk-visited " + dk + ", or remove it"
	for _, c := range []struct {
		want string
		args []string
	}{
		{dist, []string{"--checkpoint", dck}},
		{dist, []string{"--resume", dck}},
		{dist, []string{"--disk-visited", dck}},
		{one, []string{"--distributed", "2", "--checkpoint", ock}},
		{one, []string{"--disk-visited", ock}},
		{disk, []string{"--checkpoint", dk}},
		{disk, []string{"--resume", dk}},
		{disk, []string{"--distributed", "2", "--checkpoint", dk}},
	} {
		usageFails(t, c.want, append(w, c.args...)...)
	}
	// Each continues its own.
	for _, args := range [][]string{
		{"--distributed", "2", "--checkpoint", dck},
		{"--resume", ock},
		{"--disk-visited", dk},
	} {
		if code, _, errs := runCLI(append(w, args...)...); code != exitPass {
			t.Errorf("%v: exit %d: %s", args, code, errs)
		}
	}
}
