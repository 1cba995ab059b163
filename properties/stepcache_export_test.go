package properties

// VerifyStepCache makes c's step cache (and its forks') check every key
// against the node's state and every hit against the handler, and returns
// a function that reports the hits checked and the first mismatch ("" if
// none). Call it before the search.
func VerifyStepCache(c *Checker) func() (verified int64, mismatch string) {
	if c.scStats == nil {
		c.scStats = new(stepStats)
	}
	c.scStats.verify = true
	st := c.scStats
	return func() (int64, string) {
		if m := st.mismatch.Load(); m != nil {
			return st.verified.Load(), *m
		}
		return st.verified.Load(), ""
	}
}
