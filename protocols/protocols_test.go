package protocols_test

import (
	"go/build"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"lfccheck/model"
	"lfccheck/protocols"
)

// The generic packages import no protocol package and name no protocol
// and no packet tag, in any case (ucast, UCAST; unicast, UNICAST), and no
// protocol's header field in their (non-test) source: the hop byte's
// meaning is registered by the protocol that uses it (model.RegisterHop).
func TestGenericPackagesKnowNoProtocol(t *testing.T) {
	var names, tags []string
	for _, d := range protocols.All() {
		names = append(names, regexp.QuoteMeta(d.Name))
	}
	for _, tg := range model.RegisteredTags() {
		tags = append(tags, regexp.QuoteMeta(tg.Name))
	}
	// Field names are matched as written: "chan" is a Go keyword.
	fields := []string{"Chan", "Channel", "deadlock channel"}
	re := regexp.MustCompile(`(?i:\b(` + strings.Join(append(names, tags...), "|") + `)\b)|\b(` + strings.Join(fields, "|") + `)\b`)
	for _, dir := range []string{"model", "model/live", "explore", "properties", "traces"} {
		pkg, err := build.ImportDir(filepath.Join("..", dir), 0)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, imp := range pkg.Imports {
			if strings.HasPrefix(imp, "lfccheck/protocols") {
				t.Errorf("%s imports %s", dir, imp)
			}
		}
		for _, f := range pkg.GoFiles {
			src, err := os.ReadFile(filepath.Join("..", dir, f))
			if err != nil {
				t.Fatal(err)
			}
			if m := re.FindString(string(src)); m != "" {
				t.Errorf("%s/%s names %q", dir, f, m)
			}
		}
	}
	if len(names) < 5 || len(tags) < 5 {
		t.Fatalf("only %d protocol names and %d tags registered", len(names), len(tags))
	}
}
