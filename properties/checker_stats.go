package properties

import (
	"sync/atomic"

	"lfccheck/model"
)

// newStatVals returns n zero statistics on cache lines of their own:
// every worker adds to its own at each transition, and two workers'
// small slices allocated side by side would otherwise share a line that
// both cores keep taking from each other.
func newStatVals(n int) []atomic.Int64 {
	const pad = 8 // 64 bytes of int64s
	return make([]atomic.Int64, pad+n+pad)[pad : pad+n : pad+n]
}

// stubbornCounts is the number of counts the stubborn-set reduction
// keeps among the checker's statistics (StubbornCounts): states expanded
// with fewer steps than enabled, and steps left out.
const stubbornCounts = 2

// newCounts gives c statistics of its own, all zero: one per Def.Stats
// entry and, with stubborn tables, the stubborn-set counts after them.
// They are the counts of explore.Counter, so every search that collects
// a model's statistics (the workers' sums, a checkpoint, the workers of
// a distributed search) collects the stubborn-set counts with them.
func (c *Checker) newCounts() {
	n := 0
	if c.Def != nil {
		n = len(c.Def.Stats)
	}
	if c.stb == nil {
		c.statVals = newStatVals(n)
		return
	}
	c.statVals = newStatVals(n + stubbornCounts)
	c.stb.counts = (*[stubbornCounts]atomic.Int64)(c.statVals[n:])
}

// StatValue is a statistic's value after a search.
type StatValue struct {
	Name  string `json:"name"`
	Doc   string `json:"doc"`
	Value int64  `json:"value"`
}

// Statistics returns the protocol's statistics (Def.Stats) as gathered so
// far.
func (c *Checker) Statistics() []StatValue {
	var out []StatValue
	if c.Def == nil {
		return nil
	}
	for i, s := range c.Def.Stats {
		if c.statOn[i] {
			out = append(out, StatValue{Name: s.Name, Doc: s.Doc, Value: c.statVals[i].Load()})
		}
	}
	return out
}

// stateStats updates the state statistics (maxima) with w.
func (c *Checker) stateStats(w *model.World) {
	if c.Def != nil {
		for i, s := range c.Def.Stats {
			if s.State == nil || !c.statOn[i] {
				continue
			}
			v := s.State(w)
			for old := c.statVals[i].Load(); v > old && !c.statVals[i].CompareAndSwap(old, v); old = c.statVals[i].Load() {
			}
		}
	}
}

// Counts implements explore.Counter: the statistics counted by this
// checker (shared with the checker it was forked from, except for
// NewWorker's and NewReplayer's forks): the protocol's (Def.Stats), then
// the stubborn-set counts (StubbornCounts) when it has stubborn tables.
func (c *Checker) Counts(dst []int64) []int64 {
	for i := range c.statVals {
		dst = append(dst, c.statVals[i].Load())
	}
	return dst
}

// ResetCounts implements explore.Counter.
func (c *Checker) ResetCounts() {
	for i := range c.statVals {
		c.statVals[i].Store(0)
	}
}

// CountMax implements explore.Counter: state statistics are maxima, step
// statistics and the stubborn-set counts sums.
func (c *Checker) CountMax() []bool {
	var m []bool
	if c.Def != nil {
		for _, s := range c.Def.Stats {
			m = append(m, s.State != nil)
		}
	}
	if c.stb != nil {
		m = append(m, make([]bool, stubbornCounts)...)
	}
	return m
}

// SetCounts implements explore.Counter.
func (c *Checker) SetCounts(v []int64) {
	for i := range v {
		c.statVals[i].Store(v[i])
	}
}
