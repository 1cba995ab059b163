package traces_test

import (
	"testing"

	"lfccheck/protocols"
	"lfccheck/traces"
)

// FuzzParse: parsing never panics; a parsed trace whose actions parse
// against its system survives a marshal/parse round trip, and every action
// prints back as the name it was parsed from.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"format":"lfccheck-trace/1","config":{"protocol":"ucast","nodes":2,"credits":1,"packets":1},"actions":["host 0 launch","deliver 0->1"]}`))
	f.Add([]byte(`{"format":"lfccheck-trace/1","config":{"protocol":"mcast","nodes":3,"credits":1,"packets":1,"tree":"chain"},"actions":["host 0 launch"]}`))
	f.Add([]byte(`{"format":"lfccheck-trace/1","config":{"nodes":300},"actions":[]}`))
	f.Add([]byte(`{"format":`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := traces.Parse(data)
		if err != nil {
			return
		}
		ck, err := protocols.Build(file.Config)
		if err != nil {
			return
		}
		acts, err := traces.ParseActions(ck.Sys, file.Actions)
		if err != nil {
			return
		}
		for i, a := range acts {
			if got := ck.Sys.ActionName(a); got != file.Actions[i] {
				t.Fatalf("action %d: %q prints back as %q", i, file.Actions[i], got)
			}
		}
		back, err := traces.Parse(traces.Marshal(file))
		if err != nil || len(back.Actions) != len(file.Actions) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
