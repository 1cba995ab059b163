package explore

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math/bits"
)

// The fingerprint mode of the disk search (Options.DiskFingerprint; see
// disk.go): the visited set holds 64-bit fingerprints of the states'
// canonical encodings instead of the encodings, as sorted files whose
// gaps are Rice-coded, and the parent records are bit-packed. Both file
// kinds are bit streams cut in blocks of diskBlock entries, each block
// headed by its own code parameters (chosen from the block's own values,
// so the writer needs no count in advance), the last byte padded with
// zero bits, then the CRC-32 (Castagnoli) of the bytes before it, as in
// the other files of the disk search.
//
// A visited file of n fingerprints: each block starts with k (6 bits),
// then each fingerprint's gap to the one before (to 0 for the file's
// first) in Rice code: gap>>k in unary (that many 1 bits, then a 0), then
// the low k bits. Sorted fingerprints of n states have gaps near 2^64/n,
// so an entry costs about log2(2^64/n)+2 bits: 43 for 6.6 million states.
//
// A parents file of level d+1 lists, for each of its states in order,
// the index p of its parent in level d (non-decreasing, since the states
// are numbered in the order of their first transition) and the index j
// of the transition among the parent's successors (the order the model's
// Successors visits them): each block starts with kp (6 bits) and wj (6
// bits), then per state the gap p-p' to the state before in Rice code
// with kp, and j in wj bits. A trace is rebuilt by reading the records
// back from the violating state to the initial state, then expanding the
// initial state forward and taking the j-th successor at each step: the
// encodings met are those the search stored (the level files), so the
// counterexample is exact whatever the fingerprints did.

// diskBlock is the number of entries of a block of a bit-coded file.
const diskBlock = 1024

// diskKeyA and diskKeyB are the fixed SipHash key of the fingerprints
// ("lfccheck" and "disk fp!" read as little-endian words): fingerprints,
// and so the files of a search cut short, are the same from one run and
// one process to the next.
const (
	diskKeyA = 0x6b6365686363666c
	diskKeyB = 0x217066206b736964
)

// fingerprintOf is the fingerprint the disk search uses: a variable so
// that a test can make fingerprints collide.
var fingerprintOf = diskFingerprint

// diskFingerprint is the 64-bit fingerprint of a state's canonical
// encoding in the fingerprint mode of the disk search: SipHash-2-4 with a
// fixed key.
func diskFingerprint(b []byte) uint64 { return sipHash24(diskKeyA, diskKeyB, b) }

// sipHash24 is SipHash-2-4 (Aumasson and Bernstein) of m under the key
// (k0, k1), written from the algorithm's description.
func sipHash24(k0, k1 uint64, m []byte) uint64 {
	v0 := k0 ^ 0x736f6d6570736575
	v1 := k1 ^ 0x646f72616e646f6d
	v2 := k0 ^ 0x6c7967656e657261
	v3 := k1 ^ 0x7465646279746573
	round := func() {
		v0 += v1
		v1 = bits.RotateLeft64(v1, 13)
		v1 ^= v0
		v0 = bits.RotateLeft64(v0, 32)
		v2 += v3
		v3 = bits.RotateLeft64(v3, 16)
		v3 ^= v2
		v0 += v3
		v3 = bits.RotateLeft64(v3, 21)
		v3 ^= v0
		v2 += v1
		v1 = bits.RotateLeft64(v1, 17)
		v1 ^= v2
		v2 = bits.RotateLeft64(v2, 32)
	}
	last := uint64(len(m)) << 56
	for len(m) >= 8 {
		w := binary.LittleEndian.Uint64(m)
		v3 ^= w
		round()
		round()
		v0 ^= w
		m = m[8:]
	}
	for i, c := range m {
		last |= uint64(c) << (8 * i)
	}
	v3 ^= last
	round()
	round()
	v0 ^= last
	v2 ^= 0xff
	round()
	round()
	round()
	round()
	return v0 ^ v1 ^ v2 ^ v3
}

// bitWriter writes a bit-coded file: bits least significant first, the
// CRC of the bytes at the end.
type bitWriter struct {
	fileOut
	acc uint64
	n   uint
	buf []byte
}

func createBits(path string) (*bitWriter, error) {
	f, err := createFile(path)
	if err != nil {
		return nil, err
	}
	return &bitWriter{fileOut: fileOut{f: f, w: bufio.NewWriterSize(f, 1<<16)}, buf: make([]byte, 0, 4096)}, nil
}

// put writes the low nb bits of v (nb <= 64).
func (w *bitWriter) put(v uint64, nb uint) {
	if nb > 32 {
		w.put(v&(1<<32-1), 32)
		w.put(v>>32, nb-32)
		return
	}
	if nb == 0 {
		return
	}
	w.acc |= (v & (1<<nb - 1)) << w.n
	w.n += nb
	for w.n >= 8 {
		w.buf = append(w.buf, byte(w.acc))
		w.acc >>= 8
		w.n -= 8
	}
	if len(w.buf) >= 4000 {
		w.flushBuf()
	}
}

// unary writes q 1 bits and a 0 bit.
func (w *bitWriter) unary(q uint64) {
	for q >= 32 {
		w.put(1<<32-1, 32)
		q -= 32
	}
	w.put(1<<q-1, uint(q)+1)
}

// rice writes g in Rice code with parameter k.
func (w *bitWriter) rice(g uint64, k uint) {
	w.unary(g >> k)
	w.put(g, k)
}

func (w *bitWriter) flushBuf() {
	w.write(w.buf)
	w.buf = w.buf[:0]
}

// close pads the last byte, writes the CRC, syncs when asked and closes;
// the meta's N is the caller's to set.
func (w *bitWriter) close(sync bool) (fileMeta, error) {
	if w.n > 0 {
		w.buf = append(w.buf, byte(w.acc))
		w.acc, w.n = 0, 0
	}
	w.flushBuf()
	return w.fileOut.close(sync)
}

// riceParam is the Rice parameter that codes the gaps gs in the fewest
// bits (tried around the logarithm of their mean).
func riceParam(gs []uint64, sum uint64) uint {
	if len(gs) == 0 {
		return 0
	}
	mean := sum / uint64(len(gs))
	k0 := max(bits.Len64(mean)-1, 0)
	best, bestBits := uint(0), uint64(1<<64-1)
	for k := max(k0-2, 0); k <= min(k0+1, 63); k++ {
		n := uint64(len(gs)) * uint64(k+1)
		for _, g := range gs {
			n += g >> uint(k)
		}
		if n < bestBits {
			best, bestBits = uint(k), n
		}
	}
	return best
}

// fpWriter writes a visited file of fingerprints in increasing order.
type fpWriter struct {
	*bitWriter
	n     int64
	prev  uint64
	block []uint64 // the gaps of the block being gathered
	sum   uint64
}

func createFPs(path string) (*fpWriter, error) {
	w, err := createBits(path)
	if err != nil {
		return nil, err
	}
	return &fpWriter{bitWriter: w, block: make([]uint64, 0, diskBlock)}, nil
}

// add appends fp, which must be greater than the fingerprint before.
func (w *fpWriter) add(fp uint64) {
	if w.n > 0 && fp <= w.prev {
		panic(fmt.Sprintf("explore: fingerprints out of order (%#x after %#x)", fp, w.prev))
	}
	g := fp - w.prev
	if w.n == 0 {
		g = fp
	}
	w.prev = fp
	w.n++
	w.block = append(w.block, g)
	w.sum += g
	if len(w.block) == diskBlock {
		w.flushBlock()
	}
}

func (w *fpWriter) flushBlock() {
	if len(w.block) == 0 {
		return
	}
	k := riceParam(w.block, w.sum)
	w.put(uint64(k), 6)
	for _, g := range w.block {
		w.rice(g, k)
	}
	w.block, w.sum = w.block[:0], 0
}

func (w *fpWriter) close(sync bool) (fileMeta, error) {
	w.flushBlock()
	m, err := w.bitWriter.close(sync)
	m.N = w.n
	return m, err
}

// parentWriter writes a parents file: (parent index, successor index)
// per state, the parent indexes non-decreasing.
type parentWriter struct {
	*bitWriter
	n     int64
	prevP uint64
	ps    []uint64 // gaps of the parents of the block being gathered
	js    []uint32
	sum   uint64
}

func createParents(path string) (*parentWriter, error) {
	w, err := createBits(path)
	if err != nil {
		return nil, err
	}
	return &parentWriter{bitWriter: w, ps: make([]uint64, 0, diskBlock), js: make([]uint32, 0, diskBlock)}, nil
}

func (w *parentWriter) add(p uint64, j uint32) {
	if p < w.prevP {
		panic(fmt.Sprintf("explore: parent records out of order (%d after %d)", p, w.prevP))
	}
	w.ps = append(w.ps, p-w.prevP)
	w.sum += p - w.prevP
	w.js = append(w.js, j)
	w.prevP = p
	w.n++
	if len(w.ps) == diskBlock {
		w.flushBlock()
	}
}

func (w *parentWriter) flushBlock() {
	if len(w.ps) == 0 {
		return
	}
	k := riceParam(w.ps, w.sum)
	mj := uint32(0)
	for _, j := range w.js {
		mj = max(mj, j)
	}
	wj := uint(bits.Len32(mj))
	w.put(uint64(k), 6)
	w.put(uint64(wj), 6)
	for i, g := range w.ps {
		w.rice(g, k)
		w.put(uint64(w.js[i]), wj)
	}
	w.ps, w.js, w.sum = w.ps[:0], w.js[:0], 0
}

func (w *parentWriter) close(sync bool) (fileMeta, error) {
	w.flushBlock()
	m, err := w.bitWriter.close(sync)
	m.N = w.n
	return m, err
}

// bitReader reads a bit-coded file of a known size, checking its CRC at
// the end.
type bitReader struct {
	fileIn
	left  int64 // bytes of bits not yet read from the file
	chunk []byte
	pos   int
	acc   uint64
	n     uint
}

func openBits(path string, m fileMeta, bufSize int) (*bitReader, error) {
	f, err := openChecked(path, m, m.Bytes >= 4)
	if err != nil {
		return nil, err
	}
	return &bitReader{fileIn: fileIn{f: f, r: bufio.NewReaderSize(f, 16), path: path}, left: m.Bytes - 4, chunk: make([]byte, 0, bufSize)}, nil
}

func (r *bitReader) damaged(what string) error {
	return diskFileErr(r.path, "damaged (%s)", what)
}

// fill loads bytes until at least nb bits (nb <= 56) are at hand, or as
// many as the file has left.
func (r *bitReader) fill(nb uint) error {
	for r.n <= 56 {
		if r.pos == len(r.chunk) {
			if r.left == 0 {
				break
			}
			c := min(int64(cap(r.chunk)), r.left)
			r.chunk = r.chunk[:c]
			if _, err := io.ReadFull(r.r, r.chunk); err != nil {
				return diskFileErr(r.path, "cut short (%v)", err)
			}
			r.crc = crc32.Update(r.crc, crcTable, r.chunk)
			r.left -= c
			r.pos = 0
		}
		r.acc |= uint64(r.chunk[r.pos]) << r.n
		r.pos++
		r.n += 8
	}
	if r.n < nb {
		return r.damaged("a code runs past the end")
	}
	return nil
}

// get reads nb bits (nb <= 64).
func (r *bitReader) get(nb uint) (uint64, error) {
	if nb > 32 {
		lo, err := r.get(32)
		if err != nil {
			return 0, err
		}
		hi, err := r.get(nb - 32)
		return lo | hi<<32, err
	}
	if nb == 0 {
		return 0, nil
	}
	if r.n < nb {
		if err := r.fill(nb); err != nil {
			return 0, err
		}
	}
	v := r.acc & (1<<nb - 1)
	r.acc >>= nb
	r.n -= nb
	return v, nil
}

// unary reads a run of 1 bits and its closing 0, at most limit long.
func (r *bitReader) unary(limit uint64) (uint64, error) {
	q := uint64(0)
	for {
		if r.n == 0 {
			if err := r.fill(1); err != nil {
				return 0, err
			}
		}
		t := uint(bits.TrailingZeros64(^r.acc))
		if t < r.n {
			q += uint64(t)
			r.acc >>= t + 1
			r.n -= t + 1
			break
		}
		q += uint64(r.n)
		r.acc, r.n = 0, 0
		if q > limit {
			return 0, r.damaged("a run of bits too long")
		}
	}
	if q > limit {
		return 0, r.damaged("a run of bits too long")
	}
	return q, nil
}

// rice reads a Rice code with parameter k.
func (r *bitReader) rice(k uint) (uint64, error) {
	q, err := r.unary(1<<(64-k) - 1)
	if err != nil {
		return 0, err
	}
	lo, err := r.get(k)
	return q<<k | lo, err
}

// end checks that only the padding is left, then the CRC.
func (r *bitReader) end() error {
	if err := r.fill(0); err != nil {
		return err
	}
	if r.n >= 8 || r.acc != 0 || r.left != 0 || r.pos != len(r.chunk) {
		return r.damaged("bits after the last record")
	}
	return r.checkCRC()
}

// fpReader reads a visited file of fingerprints.
type fpReader struct {
	*bitReader
	n, i int64
	k    uint
	cur  uint64
	ok   bool // cur holds a fingerprint
}

func openFPs(path string, m fileMeta, bufSize int) (*fpReader, error) {
	r, err := openBits(path, m, bufSize)
	if err != nil {
		return nil, err
	}
	return &fpReader{bitReader: r, n: m.N}, nil
}

// head is the fingerprint read last (sortedIn).
func (r *fpReader) head() uint64 { return r.cur }

// next reads the next fingerprint into r.cur; false at the end, once the
// CRC is checked.
func (r *fpReader) next() (bool, error) {
	if r.i >= r.n {
		r.ok = false
		if r.i == r.n {
			r.i++
			return false, r.end()
		}
		return false, nil
	}
	if r.i%diskBlock == 0 {
		k, err := r.get(6)
		if err != nil {
			return false, err
		}
		r.k = uint(k)
	}
	g, err := r.rice(r.k)
	if err != nil {
		return false, err
	}
	if r.i > 0 && (g == 0 || r.cur+g < r.cur) {
		return false, r.damaged("fingerprints out of order")
	}
	r.cur += g
	r.i++
	r.ok = true
	return true, nil
}

// parentReader reads a parents file.
type parentReader struct {
	*bitReader
	n, i   int64
	kp, wj uint
	p      uint64
	j      uint32
}

func openParents(path string, m fileMeta) (*parentReader, error) {
	r, err := openBits(path, m, 1<<16)
	if err != nil {
		return nil, err
	}
	return &parentReader{bitReader: r, n: m.N}, nil
}

// next reads the next record into r.p and r.j; false at the end, once
// the CRC is checked.
func (r *parentReader) next() (bool, error) {
	if r.i == r.n {
		r.i++
		return false, r.end()
	}
	if r.i > r.n {
		return false, nil
	}
	if r.i%diskBlock == 0 {
		kp, err := r.get(6)
		if err != nil {
			return false, err
		}
		wj, err := r.get(6)
		if err != nil {
			return false, err
		}
		if wj > 32 {
			return false, r.damaged("a successor index of more than 32 bits")
		}
		r.kp, r.wj = uint(kp), uint(wj)
	}
	g, err := r.rice(r.kp)
	if err != nil {
		return false, err
	}
	j, err := r.get(r.wj)
	if err != nil {
		return false, err
	}
	if r.p+g < r.p || r.p+g >= 1<<32 {
		return false, r.damaged("a parent index out of range")
	}
	r.p += g
	r.j = uint32(j)
	r.i++
	return true, nil
}

// verifyBits reads a whole visited file (or parents file, with parents
// set) of the fingerprint mode and checks its count and CRC.
func verifyBits(path string, m fileMeta, parents bool) error {
	if parents {
		r, err := openParents(path, m)
		if err != nil {
			return err
		}
		defer r.close()
		for {
			ok, err := r.next()
			if err != nil || !ok {
				return err
			}
		}
	}
	r, err := openFPs(path, m, 1<<16)
	if err != nil {
		return err
	}
	defer r.close()
	for {
		ok, err := r.next()
		if err != nil || !ok {
			return err
		}
	}
}
