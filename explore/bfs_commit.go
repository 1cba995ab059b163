package explore

// graphChunk is the part of the state graph that one chunk of parents
// records; slot values are resolved to ids when the level is committed.
type graphChunk struct {
	off  []int32
	to   []uint32
	code []uint32
	lab  []uint64
}

// commit gives the level's new states their ids, in the order of their
// smallest (parent, successor index), and records their parents; lo is the
// first id of the level expanded (whose ids the parents are).
func (b *bfs) commit(lo int) {
	n := b.lvl.len()
	width := max(b.hi-lo, 1)
	cnt := make([]uint32, width+1)
	for i := 0; i < n; i++ {
		cnt[int(b.lvl.at(uint32(i)).minKey>>32)-lo+1]++
	}
	for i := 1; i <= width; i++ {
		cnt[i] += cnt[i-1]
	}
	order := make([]uint32, n)
	for i := 0; i < n; i++ {
		p := int(b.lvl.at(uint32(i)).minKey>>32) - lo
		order[cnt[p]] = uint32(i)
		cnt[p]++
	}
	// Within a parent, order by successor index (few entries each).
	for i := 1; i < n; i++ {
		for j := i; j > 0; j-- {
			x, y := b.lvl.at(order[j-1]), b.lvl.at(order[j])
			if x.minKey>>32 != y.minKey>>32 || x.minKey < y.minKey {
				break
			}
			order[j-1], order[j] = order[j], order[j-1]
		}
	}
	var front []encRef
	b.frontKeys = b.frontKeys[:0]
	b.frontSleep = b.frontSleep[:0]
	for _, li := range order {
		e := b.lvl.at(li)
		id := uint32(b.n)
		b.n++
		if b.roots.keys != nil {
			b.keys.add(e.root)
		} else {
			b.keyCol.add(e.root)
		}
		b.parent.add(e.minKey >> 32)
		if !b.fp {
			b.frontKeys = append(b.frontKeys, e.root)
		}
		if b.sleep {
			b.frontSleep = append(b.frontSleep, e.sleep)
		}
		if b.search.g != nil {
			b.lvl.aux(li).id = id
		}
		if !b.opt.Frontier {
			b.roots.commit(e.root, li, id)
		}
		if b.fp {
			a := b.lvl.aux(li)
			front = append(front, encRef{a.encW, a.enc})
		}
	}
	if n > 0 {
		b.levels = append(b.levels, int64(n))
	}
	if b.fp {
		b.front = front
	}
	if b.opt.Frontier {
		b.roots.clear()
	}
	if b.chunkGraph != nil {
		g := b.search.g
		for c, gc := range b.chunkGraph {
			for i := range gc.lab {
				g.off.add(g.edges())
				end := len(gc.to)
				if i+1 < len(gc.off) {
					end = int(gc.off[i+1])
				}
				for e := int(gc.off[i]); e < end; e++ {
					v := gc.to[e]
					if v&lvlFlag != 0 {
						v = b.lvl.aux(v &^ lvlFlag).id
					} else {
						v--
					}
					g.addEdge(v, gc.code[e])
				}
				g.lab.add(gc.lab[i])
			}
			b.chunkGraph[c] = nil
		}
	}
}
