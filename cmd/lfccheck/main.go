// Command lfccheck model-checks the LFC network-interface protocols.
//
//	lfccheck                      run the built-in suite
//	lfccheck check [flags]        check one configuration
//	lfccheck list                 protocols, parameters, variants, properties
//	lfccheck replay FILE          re-execute a saved trace
//	lfccheck trees [flags]        multicast trees and their static analysis
//	lfccheck sweep [flags]        a grid of sizes
//
// Exit codes ('lfccheck help exit-codes'): 0 every property holds over the
// complete state space (or, for the suite and replay, everything came out as
// expected); 1 a property is violated or an outcome differs from the
// expected one; 2 usage or input error; 3 the search was cut short by a
// limit or an interrupt (SIGINT, SIGTERM), which still prints the result so
// far.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan struct{})
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		close(stop)
		// A second signal ends the process at once.
		<-sig
		os.Exit(130)
	}()
	os.Exit(runEnv(os.Args[1:], os.Stdout, os.Stderr, stop))
}
