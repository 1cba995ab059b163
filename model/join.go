package model

import (
	"fmt"
	"strings"
)

// JoinStrings renders a list of values (flows, casts) separated by commas.
func JoinStrings[T fmt.Stringer](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = x.String()
	}
	return strings.Join(s, ",")
}
