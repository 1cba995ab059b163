package explore

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"time"

	"lfccheck/internal/fileio"
)

// writeCheckpoint takes a checkpoint before the level at depth, ids
// [lo, hi), is expanded.
func (b *bfs) writeCheckpoint(depth int) error {
	ck := b.ck
	t0 := time.Now()
	if err := b.keyCol.flush(); err != nil {
		return err
	}
	if err := b.parent.flush(); err != nil {
		return err
	}
	tmp := filepath.Join(ck.dir, CheckpointFile+".tmp")
	f, err := fileio.CreateRegular(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return err
	}
	w := &ckWriter{w: bufio.NewWriterSize(f, 1<<20)}
	b.encodeCheckpoint(w, depth)
	w.u32(w.crc) // the CRC of everything before it
	if err := w.flush(); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, filepath.Join(ck.dir, CheckpointFile)); err != nil {
		os.Remove(tmp)
		return err
	}
	if d, err := os.Open(ck.dir); err == nil {
		d.Sync()
		d.Close()
	}
	ck.last = time.Now()
	ck.info.Written++
	ck.info.Depth, ck.info.States = depth, int64(b.n)
	if p := b.opt.Progress; p != nil {
		fmt.Fprintf(p, "progress: checkpoint at depth %d (%d states) written to %s in %.1fs (%s)\n",
			depth, b.n, ck.dir, time.Since(t0).Seconds(), FormatBytes(uint64(w.n)))
	}
	return nil
}

func (b *bfs) encodeCheckpoint(w *ckWriter, depth int) {
	s := b.search
	w.raw([]byte(ckptMagic))
	w.str(b.ck.id)
	w.str(b.opt.CheckpointNote)
	for _, v := range []uint64{uint64(depth), uint64(b.n), uint64(b.lo), uint64(b.hi),
		uint64(b.trans.Load()), uint64(b.skipped.Load()), uint64(time.Since(s.start)), s.peak,
		uint64(btoi(b.sleep)), uint64(b.keyCol.n), uint64(b.parent.n),
		uint64(b.keyCol.crc), uint64(b.parent.crc), uint64(b.ck.made)} {
		w.u64(v)
	}
	w.str(b.sleepNote)
	w.u64(uint64(len(b.counts)))
	for _, v := range b.counts {
		w.u64(uint64(v))
	}
	var goals []string
	if gk, ok := s.m.(GoalKeeper); ok {
		goals = gk.Reached()
	}
	w.u64(uint64(len(goals)))
	for _, g := range goals {
		w.str(g)
	}
	w.u64s(int64s(b.levels))
	w.u64s(b.frontKeys)
	w.u64s(b.frontSleep)
	for i := range b.tr.leaves.sh {
		sh := &b.tr.leaves.sh[i]
		w.u32s(sh.slots)
		w.u64s(sh.hashes)
		w.u64s(sh.refs)
		w.u64(uint64(sh.ar.base))
		w.u64(uint64(sh.ar.bytes))
		w.u64(uint64(len(sh.ar.chunks)))
		for _, c := range sh.ar.chunks {
			w.u64(uint64(cap(c)))
			w.bytes(c)
		}
	}
	for i := range b.tr.pairs.sh {
		sh := &b.tr.pairs.sh[i]
		w.u32s(sh.slots)
		w.u64(uint64(cap(sh.keys)))
		w.u64s(sh.keys)
	}
	for i := range b.roots.sh {
		sh := &b.roots.sh[i]
		w.u64(uint64(sh.n))
		if sh.n == 0 {
			w.u64s(nil) // (a frontier search's, emptied at every level)
		} else {
			w.u64s(sh.slots)
		}
	}
}

// ckWriter writes a checkpoint, little-endian, with a running CRC-32.
type ckWriter struct {
	w   *bufio.Writer
	crc uint32
	n   int64
	err error
	buf []byte
}

func (w *ckWriter) raw(p []byte) {
	if w.err != nil {
		return
	}
	w.crc = crc32.Update(w.crc, crc32.IEEETable, p)
	w.n += int64(len(p))
	_, w.err = w.w.Write(p)
}

func (w *ckWriter) u64(v uint64) { w.raw(binary.LittleEndian.AppendUint64(w.buf[:0], v)) }
func (w *ckWriter) u32(v uint32) { w.raw(binary.LittleEndian.AppendUint32(w.buf[:0], v)) }

func (w *ckWriter) str(s string) {
	w.u64(uint64(len(s)))
	w.raw([]byte(s))
}

func (w *ckWriter) bytes(p []byte) {
	w.u64(uint64(len(p)))
	w.raw(p)
}

func (w *ckWriter) u64s(vs []uint64) {
	w.u64(uint64(len(vs)))
	for len(vs) > 0 {
		n := min(len(vs), 1<<14)
		b := w.buf[:0]
		for _, v := range vs[:n] {
			b = binary.LittleEndian.AppendUint64(b, v)
		}
		w.buf = b
		w.raw(b)
		vs = vs[n:]
	}
}

func (w *ckWriter) u32s(vs []uint32) {
	w.u64(uint64(len(vs)))
	for len(vs) > 0 {
		n := min(len(vs), 1<<15)
		b := w.buf[:0]
		for _, v := range vs[:n] {
			b = binary.LittleEndian.AppendUint32(b, v)
		}
		w.buf = b
		w.raw(b)
		vs = vs[n:]
	}
}

func (w *ckWriter) flush() error {
	if w.err != nil {
		return w.err
	}
	return w.w.Flush()
}

// int64s returns v as uint64s.
func int64s(v []int64) []uint64 {
	u := make([]uint64, len(v))
	for i, x := range v {
		u[i] = uint64(x)
	}
	return u
}
