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

// The generic packages import no protocol package and name no protocol and
// no packet tag in their (non-test) source.
func TestGenericPackagesKnowNoProtocol(t *testing.T) {
	var words []string
	for _, d := range protocols.All() {
		words = append(words, regexp.QuoteMeta(d.Name))
	}
	for _, tg := range model.RegisteredTags() {
		words = append(words, regexp.QuoteMeta(tg.Name))
	}
	re := regexp.MustCompile(`\b(` + strings.Join(words, "|") + `)\b`)
	for _, dir := range []string{"model", "model/live", "model/topology", "explore", "properties", "traces"} {
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
	if len(words) < 5 {
		t.Fatalf("only %d protocol names and tags registered", len(words))
	}
}
