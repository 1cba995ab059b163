package main

import (
	"strconv"

	"github.com/spf13/pflag"

	"lfccheck/model"
)

// decimalFlag is every integer flag of lfccheck: plain decimal digits
// (model.ParseDecimal), so that --nodes 010 is an error instead of 8 (the
// octal reading of pflag's own integer flags) and --credits and --nodes
// read numbers alike. pflag names the flag in the error.
type decimalFlag struct {
	p64 *int64
	p   *int
}

func (d decimalFlag) String() string {
	if d.p64 != nil {
		return strconv.FormatInt(*d.p64, 10)
	}
	if d.p != nil {
		return strconv.Itoa(*d.p)
	}
	return "0"
}

func (d decimalFlag) Set(s string) error {
	n, err := model.ParseDecimal(s)
	if err != nil {
		return err
	}
	if d.p64 != nil {
		*d.p64 = int64(n)
	} else {
		*d.p = n
	}
	return nil
}

func (d decimalFlag) Type() string { return "int" }

// intVar defines an integer flag read by model.ParseDecimal.
func intVar(fs *pflag.FlagSet, p *int, name string, value int, usage string) {
	*p = value
	fs.Var(decimalFlag{p: p}, name, usage)
}

// int64Var defines a 64-bit integer flag read by model.ParseDecimal.
func int64Var(fs *pflag.FlagSet, p *int64, name string, value int64, usage string) {
	*p = value
	fs.Var(decimalFlag{p64: p}, name, usage)
}
