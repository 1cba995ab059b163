package topology

import (
	"bytes"
	"strings"
	"testing"
)

// Group names reach DOT output escaped: every quoted string is terminated
// and unescapes to the name.
func TestDOTEscapesNames(t *testing.T) {
	for _, name := range []string{`a"b`, `a\b`, `a\`, `"`, `x\"y`} {
		spec := &TopologySpec{Groups: []GroupSpec{{Name: name, Members: []int{0, 1, 2}}},
			Trees: []TreeSpec{{Group: name, Root: -1, Family: "chain"}}}
		topo, err := Build(spec, 3)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		WriteDOT(&b, topo)
		for _, line := range strings.Split(b.String(), "\n") {
			rest, ok := strings.CutPrefix(strings.TrimSpace(line), "label=")
			if !ok {
				continue
			}
			got, tail, err := unquoteDOT(rest)
			if err != nil || tail != ";" || !strings.HasSuffix(got, " in "+name) {
				t.Fatalf("name %q: line %q: %q %q %v", name, line, got, tail, err)
			}
		}
	}
}

// unquoteDOT reads one DOT double-quoted string at the start of s.
func unquoteDOT(s string) (string, string, error) {
	if !strings.HasPrefix(s, `"`) {
		return "", s, errNotQuoted
	}
	var out strings.Builder
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 == len(s) {
				return "", "", errNotQuoted
			}
			i++
			out.WriteByte(s[i])
		case '"':
			return out.String(), s[i+1:], nil
		default:
			out.WriteByte(s[i])
		}
	}
	return "", "", errNotQuoted
}

type dotErr string

func (e dotErr) Error() string { return string(e) }

const errNotQuoted = dotErr("unterminated quoted string")
