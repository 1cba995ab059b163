// Package checktest holds what the protocols' tests share.
package checktest

import (
	"testing"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols"
)

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
