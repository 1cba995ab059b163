package model_test

import (
	"testing"

	"lfccheck/model"
)

func TestParseDecimal(t *testing.T) {
	for s, want := range map[string]int{"0": 0, "7": 7, "10": 10, "65535": 65535} {
		if got, err := model.ParseDecimal(s); err != nil || got != want {
			t.Errorf("ParseDecimal(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "010", "00", "0x2", "0o7", "0b1", "+3", "-1", " 3", "3 ", "1_000", "1e3", "3.0", "99999999999999999999999"} {
		if got, err := model.ParseDecimal(s); err == nil {
			t.Errorf("ParseDecimal(%q) = %d, want an error", s, got)
		}
	}
}
