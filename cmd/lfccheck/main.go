// Command lfccheck model-checks the LFC network-interface protocols.
//
//	lfccheck                      run the built-in suite
//	lfccheck check [flags]        check one configuration
//	lfccheck list                 protocols, variants, properties
//	lfccheck replay FILE          re-execute a saved trace
//
// Exit codes: 0 every property holds over the complete state space (or, for
// the suite and replay, everything came out as expected); 1 a property is
// violated or an outcome differs from the expected one; 2 usage or input
// error; 3 the search was cut short by a limit.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
