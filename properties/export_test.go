package properties

import (
	"fmt"

	"lfccheck/model"
)

// SetSleepAllIndependent makes the sleep sets of checkers built from now
// on treat every two actions as independent, even actions of one node (a
// broken relation, for tests that must catch it), and returns the
// function that restores the real one.
func SetSleepAllIndependent(on bool) (restore func()) {
	old := sleepAllIndependent
	sleepAllIndependent = on
	return func() { sleepAllIndependent = old }
}

// CheckSleepTab checks c's sleep-set table: every tracked name has one
// bit and every bit one name, each node's mask holds exactly its names'
// bits, and each renaming maps a bit to the bit of the renamed name, or
// drops it exactly when that name is untracked. It returns the numbers of
// names tracked and in all, and the renamings that dropped a name.
func CheckSleepTab(c *Checker) (tracked, names, drops int, err error) {
	t := c.slp
	seen := map[int8]bool{}
	var byBit [sleepBits]int
	var masks = make([]uint64, len(t.node))
	for g, b := range t.bitOf {
		if b < 0 {
			continue
		}
		if seen[b] || int(b) >= sleepBits {
			return 0, 0, 0, fmt.Errorf("bit %d given twice or out of range", b)
		}
		seen[b] = true
		byBit[b] = g
		masks[g/t.per] |= 1 << b
	}
	if len(seen) != t.tracked {
		return 0, 0, 0, fmt.Errorf("%d bits, %d tracked", len(seen), t.tracked)
	}
	for n := range masks {
		if masks[n] != t.node[n] {
			return 0, 0, 0, fmt.Errorf("node %d: mask %x, want %x", n, t.node[n], masks[n])
		}
	}
	for h, r := range t.ren {
		p := c.sym[h]
		for b := 0; b < t.tracked; b++ {
			g := byBit[b]
			n, j := g/t.per, g%t.per
			to := int(p.Node[n]) * t.per
			if j < t.nk {
				to += j
			} else {
				peer := j - t.nk
				if peer >= n {
					peer++
				}
				to = t.name(int(p.Node[n]), int(p.Node[peer]))
			}
			if r[b] != t.bitOf[to] {
				return 0, 0, 0, fmt.Errorf("renaming %d maps bit %d (name %d) to %d, want %d (name %d)", h, b, g, r[b], t.bitOf[to], to)
			}
			if r[b] < 0 {
				drops++
			}
		}
	}
	return t.tracked, len(t.bitOf), drops, nil
}

// FromZero is the checker's renaming from node 0 to node j (nil for 0).
func (c *Checker) FromZero(j int) *model.Perm { return c.fromZero(j) }
