// Package checktest holds what the protocols' tests share.
package checktest

import (
	"testing"

	"lfccheck/explore"
	"lfccheck/internal/racebuild"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols"
)

// NotUnderRace skips t under the race detector: for tests whose work is
// a protocol's complete searches on one worker (the handlers run on one
// goroutine; what runs beside it, the explorer's limit checks, is watched
// by the explorer's own tests under -race), where the detector makes them
// 10-20 times slower and can see nothing new. They run without -race.
func NotUnderRace(t testing.TB) {
	t.Helper()
	if racebuild.Enabled {
		t.Skip("race detector: one-worker searches of the protocol only; the test runs without -race")
	}
}

// Search builds the checker for cfg, with every registered protocol
// known, and searches its state space completely; an error ends the test.
func Search(t testing.TB, cfg model.Config) (explore.Result, *properties.Checker) {
	t.Helper()
	ck, err := protocols.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := explore.BFS(ck, explore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r, ck
}

// Stats returns ck's statistics after a search, by name.
func Stats(ck *properties.Checker) map[string]int64 {
	m := map[string]int64{}
	for _, s := range ck.Statistics() {
		m[s.Name] = s.Value
	}
	return m
}
