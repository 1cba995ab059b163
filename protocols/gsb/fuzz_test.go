package gsb_test

import (
	"strconv"
	"strings"
	"testing"

	"lfccheck/model"
	"lfccheck/protocols/gsb"
)

// FuzzParseSenders: a senders list that parses holds node ids in range and
// prints back (comma-joined) to a list that parses to the same ids.
func FuzzParseSenders(f *testing.F) {
	for _, s := range []string{"0", "1,2,3", "0, 1", "", ",", "1,,2", "-1", "64", "63", "x", "1;2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids, err := gsb.ParseSenders(s)
		if err != nil {
			return
		}
		parts := make([]string, len(ids))
		for i, id := range ids {
			if id < 0 || id >= model.MaxNodes {
				t.Fatalf("%q: id %d out of range", s, id)
			}
			parts[i] = strconv.Itoa(id)
		}
		again, err := gsb.ParseSenders(strings.Join(parts, ","))
		if err != nil || len(again) != len(ids) {
			t.Fatalf("%q -> %v -> %v, %v", s, ids, again, err)
		}
		for i := range ids {
			if again[i] != ids[i] {
				t.Fatalf("%q -> %v -> %v", s, ids, again)
			}
		}
	})
}
