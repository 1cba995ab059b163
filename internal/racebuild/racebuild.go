// Package racebuild tells tests whether the binary was built with the
// race detector (go test -race), which makes a search many times slower.
// CI runs the short tests under it for what it is for: the explorer's
// workers, the live runtime, the library's goroutines and the monitor.
// Tests that compare results of long single-threaded searches (logic,
// not concurrency) take a smaller, deterministic part of their cases
// when Enabled, and say so; run without -race, they run in full.
package racebuild
