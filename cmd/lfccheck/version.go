package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// versionInfo identifies the running lfccheck: the module's version
// ("(devel)" for a build from a checkout), the version-control revision
// when the Go toolchain stamped one, the Go version and platform, and the
// build: the hash of the executable that checkpoints are tied to (a
// checkpoint resumes only in the build that wrote it). Field names are
// interface.
type versionInfo struct {
	Module   string `json:"module"`
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	Time     string `json:"revision_time,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
	Build    string `json:"build,omitempty"`
}

func version() versionInfo {
	v := versionInfo{Module: "lfccheck", Version: "(unknown)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Path != "" {
			v.Module = bi.Main.Path
		}
		if bi.Main.Version != "" {
			v.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Revision = s.Value
			case "vcs.time":
				v.Time = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	if h, err := programHash(); err == nil {
		v.Build = h
	}
	return v
}

func (v versionInfo) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", v.Module, v.Version)
	if v.Revision != "" {
		fmt.Fprintf(&b, ", revision %s", v.Revision)
		if v.Time != "" {
			fmt.Fprintf(&b, " of %s", v.Time)
		}
		if v.Modified {
			b.WriteString(" with local changes")
		}
	}
	fmt.Fprintf(&b, ", %s %s", v.Go, v.Platform)
	if v.Build != "" {
		fmt.Fprintf(&b, ", build %s (checkpoints resume only in this build)", v.Build)
	}
	return b.String()
}

func runVersion(args []string, e env) (int, error) {
	fs := newFlags("version", e)
	jsonOut := fs.Bool("json", false, "print the version as JSON")
	if err := parseNoArgs(fs, args, "[--json]   (also: lfccheck --version)"); err != nil {
		return 0, err
	}
	if *jsonOut {
		e.stdout.Write(marshalIndent(version()))
	} else {
		fmt.Fprintln(e.stdout, version())
	}
	return exitPass, nil
}
