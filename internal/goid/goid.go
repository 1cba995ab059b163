// Package goid tells which goroutine is running, so that a library can
// recognize a call made from inside one of its own callbacks (an upcall
// that calls back into the library) and answer it with an error or a
// nested upcall instead of waiting for itself.
//
// Go deliberately offers no goroutine identity; the runtime's own stack
// dump names the goroutine on its first line ("goroutine 17 [running]:"),
// and that is what ID reads. It costs about a microsecond, so callers ask
// only when a callback of theirs is running at all.
package goid

import (
	"runtime"
)

// ID returns the running goroutine's number (never 0).
func ID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	const prefix = "goroutine "
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		panic("goid: unexpected stack header " + string(b))
	}
	var id uint64
	for _, c := range b[len(prefix):] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	if id == 0 {
		panic("goid: no goroutine number in " + string(b))
	}
	return id
}
