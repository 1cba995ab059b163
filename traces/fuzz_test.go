package traces_test

import (
	"testing"

	"lfccheck/traces"
)

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"format":"lfccheck-trace/1","config":{"protocol":"ucast","nodes":2,"credits":1,"packets":1},"actions":["host 0 launch","deliver 0->1"]}`))
	f.Add([]byte(`{"format":"lfccheck-trace/1","config":{"nodes":300},"actions":[]}`))
	f.Add([]byte(`{"format":`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, acts, err := traces.Parse(data)
		if err != nil {
			return
		}
		if len(acts) != len(file.Actions) {
			t.Fatalf("%d actions parsed from %d names", len(acts), len(file.Actions))
		}
		for i, a := range acts {
			if a.String() != file.Actions[i] && len(a.String()) == 0 {
				t.Fatalf("action %d lost", i)
			}
		}
		// A parsed trace survives a marshal/parse round trip.
		if _, acts2, err := traces.Parse(traces.Marshal(file)); err != nil || len(acts2) != len(acts) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
