package explore

import (
	"bytes"
	"errors"
	"fmt"
)

// failAt ends the search at the violation with key vk: a direct one
// (b.verr), or, with bad, the successor with that key violates an
// invariant.
func (b *bfs) failAt(vk uint64, bad bool) (Result, bool, error) {
	s := b.search
	vp, vi := int(vk>>32), uint32(vk)
	fresh := 0
	for i := 0; i < b.lvl.len(); i++ {
		if b.lvl.at(uint32(i)).minKey < vk {
			fresh++
		}
	}
	// Transitions and statistics before the violation: those of the whole
	// chunks before its parent's chunk, then those of its chunk's parents
	// up to it, counted again by expanding them (the violating transition
	// included, as a sequential search counts it).
	c := (vp - b.lo) / chunkStates
	t, sk := b.transBase, b.skipBase
	for i, n := range b.chunkTrans[:c] {
		t += n
		sk += b.chunkSkip[i]
	}
	b.fold(b.chunkCounts[:c])
	m := b.replay
	rct, _ := m.(Counter)
	if rct != nil {
		rct.ResetCounts()
	}
	if bad {
		b.verr = nil
	}
	for id := b.lo + c*chunkStates; id <= vp; id++ {
		i := uint32(0)
		visit := func(code uint32, succ []byte, err error) bool {
			if id == vp && i == vi {
				if bad {
					// Word the violation as in the state this transition
					// reaches.
					b.vcode, b.vhasCode, b.verr = code, true, m.(FreshChecker).CheckFresh()
				}
				return false
			}
			if succ != nil || err != nil || !b.sleep {
				t++
			} else {
				sk++ // left out by the sleep set
			}
			i++
			return true
		}
		var err error
		if b.sleep {
			err = m.(Sleeper).SuccessorsAsleep(b.ws[0].state(id), b.frontSleep[id-b.lo], visit)
		} else {
			err = m.Successors(b.ws[0].state(id), visit)
		}
		var pe PropertyError
		if err != nil && !errors.As(err, &pe) {
			return Result{}, true, err
		}
	}
	if bad && b.verr == nil {
		return Result{}, true, fmt.Errorf("explore: successor %d of state %d no longer violates an invariant", vi, vp)
	}
	if rct != nil && b.ctMain != nil {
		b.fold([][]int64{rct.Counts(nil)})
	}
	if b.vhasCode {
		t++
	}
	b.skipped.Store(sk)
	tr, err := b.path(uint32(vp))
	if err != nil {
		return Result{}, true, err
	}
	if b.vhasCode {
		tr = append(tr, b.vcode)
	}
	s.transitions = t
	b.pending, b.partial = fresh, true
	b.setCounts()
	r, err := s.fail(b.verr, tr)
	return r, true, err
}

// path rebuilds the actions from the initial state to state id.
func (b *bfs) path(id uint32) ([]uint32, error) {
	var ids []uint32
	for x := id; x != 0; {
		ids = append(ids, x)
		p, err := b.parent.at(int(x))
		if err != nil {
			return nil, err
		}
		x = uint32(p)
	}
	m := b.replay
	var enc, target, next []byte
	if b.fp {
		enc = append(enc, b.front0...)
	} else {
		k0, err := b.keyAt(0)
		if err != nil {
			return nil, err
		}
		var r treeRef
		b.tr.load(&r, k0)
		enc = r.enc
	}
	codes := make([]uint32, 0, len(ids))
	for i := len(ids) - 1; i >= 0; i-- {
		want, err := b.keyAt(int(ids[i]))
		if err != nil {
			return nil, err
		}
		if !b.fp {
			var r treeRef
			b.tr.load(&r, want)
			target = r.enc
		}
		found := false
		err = m.Successors(enc, func(code uint32, succ []byte, err error) bool {
			if err != nil {
				return true
			}
			if b.fp && Hash(succ) == want || !b.fp && bytes.Equal(succ, target) {
				codes = append(codes, code)
				next = append(next[:0], succ...)
				found = true
				return false
			}
			return true
		})
		if !found {
			return nil, fmt.Errorf("explore: cannot rebuild the trace: state %d is not a successor of its parent (%v)", ids[i], err)
		}
		enc, next = next, enc
	}
	return codes, nil
}
