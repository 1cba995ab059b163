package model

import (
	"fmt"
	"strconv"
)

// ParseDecimal is the one parser of every integer that a user writes: in a
// flag, a setting, a topology file, a cast or a flow. It accepts plain
// decimal digits only, so that a number means what it reads: no sign, no
// Go literal prefixes (0x, 0o, 0b), no underscores, no spaces, and no
// leading zero, which other tools read as octal (010 is 8 to strconv with
// base 0, 10 to Atoi). The errors name only the value; callers add where it
// came from.
func ParseDecimal(s string) (int, error) {
	if s == "" {
		return 0, fmt.Errorf("empty, want a decimal number")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("%q is not a decimal number (digits 0-9 only)", s)
		}
	}
	if len(s) > 1 && s[0] == '0' {
		return 0, fmt.Errorf("%q has a leading zero, which some tools read as octal: write it without", s)
	}
	n, err := strconv.ParseInt(s, 10, strconv.IntSize)
	if err != nil {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return int(n), nil
}
