package explore

import (
	"encoding/binary"
	"fmt"
)

// The disk search's steps that differ in the fingerprint mode (see
// disk.go and disk_keys.go).

// diskMaxFPFiles is the number of visited files past which the
// fingerprint mode merges the two smallest.
const diskMaxFPFiles = 16

// visitedWriter is a visited file being written (exact or fingerprints).
type visitedWriter interface {
	close(sync bool) (fileMeta, error)
	abort()
}

// parentSink is a parents file being written: the transition (sequence
// key: parent index << 32 | successor index, and action code) that first
// reached each state of a level, in order.
type parentSink interface {
	add(seq uint64, code uint32)
	close(sync bool) (fileMeta, error)
	abort()
}

// fixedParents writes the exact mode's fixed records (parent index,
// action code).
type fixedParents struct{ *recWriter }

func (w fixedParents) add(seq uint64, code uint32) { w.addFixed(uint32(seq>>32), code) }

// packedParents writes the fingerprint mode's records (parent index,
// successor index), bit-packed.
type packedParents struct{ *parentWriter }

func (w packedParents) add(seq uint64, _ uint32) { w.parentWriter.add(seq>>32, uint32(seq)) }

func (d *diskSearch) createParents(name string) (parentSink, error) {
	if d.fp {
		w, err := createParents(d.path(name))
		if err != nil {
			return nil, err
		}
		return packedParents{w}, nil
	}
	w, err := createRecs(d.path(name), false)
	if err != nil {
		return nil, err
	}
	return fixedParents{w}, nil
}

func keysName(fp bool) string {
	if fp {
		return "fingerprint"
	}
	return "exact"
}

// verifyKeys reads a whole visited file (or parents file) and checks it.
func (d *diskSearch) verifyKeys(m fileMeta, parents bool) error {
	if d.fp {
		return verifyBits(d.path(m.Name), m, parents)
	}
	return verifyFile(d.path(m.Name), m, false, parents)
}

// fpBufSize is the read buffer of a visited file of fingerprints.
const fpBufSize = 1 << 16

// joinFP is join in the fingerprint mode: the runs of successors are
// sorted by fingerprint; a successor is new when its fingerprint is in no
// visited file and is not that of the successor before it (which is then
// another state: a collision, counted).
func (d *diskSearch) joinFP(succ, news *runBuf, vname string) (visitedWriter, int64, error) {
	ms, err := succ.merge()
	if err != nil {
		return nil, 0, err
	}
	defer ms.close()
	succ.release()
	var cs []*fpReader
	defer func() {
		for _, c := range cs {
			c.close()
		}
	}()
	for _, m := range d.man.Visited {
		r, err := openFPs(d.path(m.Name), m, fpBufSize)
		if err != nil {
			return nil, 0, err
		}
		cs = append(cs, r)
		if _, err := r.next(); err != nil {
			return nil, 0, err
		}
	}
	vw, err := createFPs(d.path(vname))
	if err != nil {
		return nil, 0, d.ioErr(err)
	}
	var (
		fresh int64
		prev  uint64
		first = true
	)
	for {
		ok, err := ms.next()
		if err != nil {
			vw.abort()
			return nil, 0, err
		}
		if !ok {
			break
		}
		key := ms.cur.enc
		if len(key) < 8 {
			vw.abort()
			return nil, 0, diskFileErr(d.path(succ.prefix), "damaged (a run record without its fingerprint)")
		}
		fp := binary.BigEndian.Uint64(key)
		if !first && fp == prev {
			// Equal keys were merged: this is another encoding.
			d.info.Collisions++
			continue
		}
		first, prev = false, fp
		seen := false
		for _, c := range cs {
			for c.ok && c.cur < fp {
				if _, err := c.next(); err != nil {
					vw.abort()
					return nil, 0, err
				}
			}
			if c.ok && c.cur == fp {
				seen = true
				break
			}
		}
		if seen {
			continue
		}
		fresh++
		vw.add(fp)
		if err := news.add(key[8:], ms.cur.seq, ms.cur.code); err != nil {
			vw.abort()
			return nil, 0, d.ioErr(err)
		}
	}
	if d.s().opt.Progress != nil {
		d.progress()
	}
	return vw, fresh, nil
}

// smallestTwo returns the indexes a < b of the two visited files with
// the fewest fingerprints.
func smallestTwo(v []fileMeta) (int, int) {
	a, b := 0, 1
	if v[b].N < v[a].N {
		a, b = b, a
	}
	for i := 2; i < len(v); i++ {
		switch {
		case v[i].N < v[a].N:
			a, b = i, a
		case v[i].N < v[b].N:
			b = i
		}
	}
	return min(a, b), max(a, b)
}

// mergeFPs merges two visited files of fingerprints (disjoint) into one.
func (d *diskSearch) mergeFPs(a, b fileMeta) (fileMeta, error) {
	open := func(path string, m fileMeta) (*fpReader, error) { return openFPs(path, m, fpBufSize) }
	return mergeSorted(d, a, b, ".fps", open, createFPs, cmpU64, "fingerprint")
}

// traceFP rebuilds the actions from the initial state to state i of
// level dep: the parent records give, level by level back to the initial
// state, the parent's index and the successor's; the initial state is
// then expanded forward, taking that successor at each step, which must
// end at the state the search expanded (d.vEnc).
func (d *diskSearch) traceFP(dep int, i uint64) ([]uint32, error) {
	js := make([]uint32, dep)
	for x := dep; x >= 1; x-- {
		m := d.man.Parents[x-1]
		if int64(i) >= m.N {
			return nil, diskFileErr(d.path(m.Name), "no parent record %d (of %d)", i, m.N)
		}
		r, err := openParents(d.path(m.Name), m)
		if err != nil {
			return nil, err
		}
		for k := uint64(0); k <= i; k++ {
			ok, err := r.next()
			if err == nil && !ok {
				err = diskFileErr(d.path(m.Name), "fewer records than written")
			}
			if err != nil {
				r.close()
				return nil, err
			}
		}
		r.close()
		js[x-1] = r.j
		i = r.p
		if int64(i) >= d.man.Levels[x-1] {
			return nil, diskFileErr(d.path(m.Name), "damaged (parent %d of a level of %d states)", i, d.man.Levels[x-1])
		}
	}
	enc, err := d.replay.Initial()
	if err != nil {
		return nil, fmt.Errorf("explore: rebuilding the trace: %w", err)
	}
	enc = append([]byte(nil), enc...)
	codes := make([]uint32, dep)
	var next []byte
	for x, j := range js {
		k, found := uint32(0), false
		d.replay.Successors(enc, func(c uint32, succ []byte, e error) bool {
			if k == j {
				found = true
				codes[x] = c
				next = append(next[:0], succ...)
				return false
			}
			k++
			return true
		})
		if !found {
			return nil, fmt.Errorf("explore: cannot rebuild the trace: state at depth %d has no successor %d", x, j)
		}
		enc, next = next, enc
	}
	if string(enc) != string(d.vEnc) {
		return nil, fmt.Errorf("explore: cannot rebuild the trace: the parent records lead to another state at depth %d", dep)
	}
	return codes, nil
}
