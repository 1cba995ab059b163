package properties

// SetSleepAllIndependent makes the sleep sets of checkers built from now
// on treat every two actions as independent, even actions of one node (a
// broken relation, for tests that must catch it), and returns the
// function that restores the real one.
func SetSleepAllIndependent(on bool) (restore func()) {
	old := sleepAllIndependent
	sleepAllIndependent = on
	return func() { sleepAllIndependent = old }
}
