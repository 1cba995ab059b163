package explore

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"

	"lfccheck/internal/fileio"
)

// Files of the disk search (see disk.go). Every file is a sequence of
// records followed by the CRC-32 (Castagnoli) of the bytes before it; a
// reader is told how many records to expect (by the manifest, or by the
// search that wrote a temporary run) and checks the CRC at the end, so
// that a file cut short, lengthened or altered is an error (a resumed
// search reads every file it resumes from once, and checks it, before it
// uses any state of it). A record is the encoding of a state,
// front-coded: the length of the prefix it shares with the encoding
// before (uvarint), the length of the rest (uvarint) and the rest
// (sorted encodings share long prefixes); in the runs of successors, the
// transition that reached it follows: its sequence key (parent index <<
// 32 | successor index, 8 bytes) and its action code (4 bytes). Parent
// files hold fixed 8-byte records (parent index, action code) read by
// position to rebuild traces. (The fingerprint mode's visited and parent
// files are bit streams: see disk_keys.go.)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// diskSync makes the files a manifest names, and the manifest, durable
// (fsync) before the manifest names them; a variable for tests, which
// turn it off to run faster.
var diskSync = true

// maxDiskRecord bounds the length of a stored encoding: a longer one in a
// file means the file is damaged.
const maxDiskRecord = 1 << 24

// drec is a record: a state's encoding and, in runs of successors, the
// transition that reached it.
type drec struct {
	enc  []byte
	seq  uint64
	code uint32
}

// fileOut is a file of the disk search being written (of records or
// of bits): the bytes written and their CRC.
type fileOut struct {
	f     *os.File
	w     *bufio.Writer
	crc   uint32
	bytes int64
}

func (w *fileOut) write(b []byte) {
	w.crc = crc32.Update(w.crc, crcTable, b)
	w.w.Write(b)
	w.bytes += int64(len(b))
}

// writeCRC writes the CRC of the bytes written before.
func (w *fileOut) writeCRC() {
	var c [4]byte
	binary.LittleEndian.PutUint32(c[:], w.crc)
	w.w.Write(c[:])
}

// close writes the CRC, flushes, syncs when asked (files a manifest will
// name) and closes the file; the meta's N is the caller's to set.
func (w *fileOut) close(sync bool) (fileMeta, error) {
	w.writeCRC()
	err := w.w.Flush()
	if err == nil && sync && diskSync {
		err = w.f.Sync()
	}
	if e := w.f.Close(); err == nil {
		err = e
	}
	return fileMeta{Name: filepath.Base(w.f.Name()), Bytes: w.bytes + 4, CRC: w.crc}, err
}

// abort closes and removes a file being written.
func (w *fileOut) abort() {
	w.f.Close()
	os.Remove(w.f.Name())
}

// recWriter writes records to a file, counting them and their CRC.
type recWriter struct {
	fileOut
	n       int64
	withSeq bool
	buf     []byte
	prev    []byte // the encoding of the record before
}

func createRecs(path string, withSeq bool) (*recWriter, error) {
	f, err := createFile(path)
	if err != nil {
		return nil, err
	}
	return &recWriter{fileOut: fileOut{f: f, w: bufio.NewWriterSize(f, 1<<18)}, withSeq: withSeq}, nil
}

// runIOBuf is the buffer size of a sorted run's reader or writer for runs
// of at most limit bytes: many runs are open at once when they are merged.
func runIOBuf(limit int) int { return min(1<<18, max(4096, limit/8)) }

func (w *recWriter) add(r drec) {
	k := 0
	for k < len(r.enc) && k < len(w.prev) && r.enc[k] == w.prev[k] {
		k++
	}
	w.buf = binary.AppendUvarint(w.buf[:0], uint64(k))
	w.buf = binary.AppendUvarint(w.buf, uint64(len(r.enc)-k))
	w.buf = append(w.buf, r.enc[k:]...)
	w.prev = append(w.prev[:0], r.enc...)
	if w.withSeq {
		w.buf = binary.LittleEndian.AppendUint64(w.buf, r.seq)
		w.buf = binary.LittleEndian.AppendUint32(w.buf, r.code)
	}
	w.write(w.buf)
	w.n++
}

// addFixed writes a parent record.
func (w *recWriter) addFixed(parent, code uint32) {
	w.buf = binary.LittleEndian.AppendUint32(w.buf[:0], parent)
	w.buf = binary.LittleEndian.AppendUint32(w.buf, code)
	w.write(w.buf)
	w.n++
}

// finish writes the CRC of a run written to a shared writer and
// describes it.
func (w *recWriter) finish(name string, off int64) fileMeta {
	w.writeCRC()
	return fileMeta{Name: name, N: w.n, Bytes: w.bytes + 4, CRC: w.crc, Off: off}
}

// close writes the CRC, flushes, syncs when asked (files a manifest will
// name) and closes the file.
func (w *recWriter) close(sync bool) (fileMeta, error) {
	m, err := w.fileOut.close(sync)
	m.N = w.n
	return m, err
}

// fileMeta describes a file the search wrote: its name in the directory,
// its records, its size and its CRC.
type fileMeta struct {
	Name  string `json:"name"`
	N     int64  `json:"records"`
	Bytes int64  `json:"bytes"`
	CRC   uint32 `json:"crc"`
	// Off is where a run starts in its file (the runs of a level's
	// buffer follow one another in one file).
	Off int64 `json:"-"`
}

// fileIn is a file of the disk search being read (of records or of
// bits): the CRC of the bytes read.
type fileIn struct {
	f    *os.File // nil for a run of a shared file (openRun)
	r    *bufio.Reader
	path string
	crc  uint32
}

// openChecked opens the file of the disk search at path and checks that
// it has the size m gives it; valid false (m's size cannot be a file of
// its kind) counts as a wrong size.
func openChecked(path string, m fileMeta, valid bool) (*os.File, error) {
	f, err := fileio.OpenRegular(path)
	if err != nil {
		return nil, diskOpenErr(path, err)
	}
	if fi, err := f.Stat(); err != nil || fi.Size() != m.Bytes || !valid {
		f.Close()
		if err != nil {
			return nil, diskFileErr(path, "%v", err)
		}
		return nil, diskFileErr(path, "%d bytes, %d written", fi.Size(), m.Bytes)
	}
	return f, nil
}

// checkCRC reads the CRC at the end of the file and compares it with the
// CRC of the bytes read.
func (r *fileIn) checkCRC() error {
	var c [4]byte
	if _, err := io.ReadFull(r.r, c[:]); err != nil {
		return diskFileErr(r.path, "cut short (%v)", err)
	}
	if binary.LittleEndian.Uint32(c[:]) != r.crc {
		return diskFileErr(r.path, "damaged (CRC mismatch)")
	}
	return nil
}

func (r *fileIn) close() {
	if r.f != nil {
		r.f.Close()
	}
}

// recReader reads the n records of a file and checks its CRC after the
// last.
type recReader struct {
	fileIn
	left    int64
	withSeq bool
	cur     drec
	enc     []byte // the encoding of the record read last
	buf     []byte
}

// createFile creates (or empties) a file of the disk search as os.Create
// does (runs are read back through it), refusing at once a path that is
// not a regular file (a FIFO would block).
func createFile(path string) (*os.File, error) {
	return fileio.CreateRegular(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

// diskOpenErr is the error of a file of the disk search that cannot be
// opened.
func diskOpenErr(path string, err error) error {
	var nr *fileio.NotRegularError
	switch {
	case errors.Is(err, os.ErrNotExist):
		return diskFileErr(path, "missing")
	case errors.As(err, &nr):
		return diskFileErr(path, "not a regular file (%s)", nr.Kind)
	}
	return diskFileErr(path, "%v", err)
}

// diskFileErr is the error of a file of the disk search that cannot be
// read as written.
func diskFileErr(path string, format string, a ...any) error {
	return &CheckpointError{Msg: fmt.Sprintf("disk search: %s: %s", path, fmt.Sprintf(format, a...))}
}

func openRecs(path string, m fileMeta, withSeq bool) (*recReader, error) {
	f, err := openChecked(path, m, true)
	if err != nil {
		return nil, err
	}
	return &recReader{fileIn: fileIn{f: f, r: bufio.NewReaderSize(f, 1<<18), path: path}, left: m.N, withSeq: withSeq}, nil
}

// openRun reads run m of the open file f (not closed with the reader).
func openRun(f *os.File, m fileMeta, size int) *recReader {
	sr := io.NewSectionReader(f, m.Off, m.Bytes)
	return &recReader{fileIn: fileIn{r: bufio.NewReaderSize(sr, size), path: f.Name()}, left: m.N, withSeq: true}
}

func (r *recReader) read(b []byte) error {
	if _, err := io.ReadFull(r.r, b); err != nil {
		return diskFileErr(r.path, "cut short (%v)", err)
	}
	r.crc = crc32.Update(r.crc, crcTable, b)
	return nil
}

// next reads the next record into r.cur (valid until the next call);
// false at the end, once the CRC is checked.
func (r *recReader) next() (bool, error) {
	if r.left == 0 {
		if err := r.checkCRC(); err != nil {
			return false, err
		}
		r.left = -1
		return false, nil
	}
	if r.left < 0 {
		return false, nil
	}
	r.left--
	k, err := r.uvarint()
	if err != nil {
		return false, err
	}
	l, err := r.uvarint()
	if err != nil {
		return false, err
	}
	if k > uint64(len(r.enc)) || l > maxDiskRecord-k {
		return false, diskFileErr(r.path, "damaged (a record of %d+%d bytes after one of %d)", k, l, len(r.enc))
	}
	extra := 0
	if r.withSeq {
		extra = 12
	}
	r.buf = slices.Grow(r.buf[:0], int(l)+extra)[:int(l)+extra]
	if err := r.read(r.buf); err != nil {
		return false, err
	}
	r.enc = append(r.enc[:k], r.buf[:l]...)
	r.cur.enc = r.enc
	if r.withSeq {
		r.cur.seq = binary.LittleEndian.Uint64(r.buf[l:])
		r.cur.code = binary.LittleEndian.Uint32(r.buf[l+8:])
	}
	return true, nil
}

// head is the record read last (sortedIn), valid until the next call.
func (r *recReader) head() drec { return r.cur }

// uvarint reads a uvarint of a record.
func (r *recReader) uvarint() (uint64, error) {
	var lb [binary.MaxVarintLen64]byte
	n := 0
	for {
		c, err := r.r.ReadByte()
		if err != nil {
			return 0, diskFileErr(r.path, "cut short (%v)", err)
		}
		lb[n] = c
		n++
		if c < 0x80 {
			break
		}
		if n == len(lb) {
			return 0, diskFileErr(r.path, "damaged (bad record length)")
		}
	}
	r.crc = crc32.Update(r.crc, crcTable, lb[:n])
	v, _ := binary.Uvarint(lb[:n])
	return v, nil
}

// verifyFile reads a whole file of records (or of fixed records, with
// fixed set) and checks its count and CRC.
func verifyFile(path string, m fileMeta, withSeq, fixed bool) error {
	if fixed {
		f, err := openChecked(path, m, m.Bytes == m.N*8+4)
		if err != nil {
			return err
		}
		defer f.Close()
		h := crc32.New(crcTable)
		br := bufio.NewReader(f)
		if _, err := io.CopyN(h, br, m.Bytes-4); err != nil {
			return diskFileErr(path, "%v", err)
		}
		var c [4]byte
		if _, err := io.ReadFull(br, c[:]); err != nil {
			return diskFileErr(path, "%v", err)
		}
		if binary.LittleEndian.Uint32(c[:]) != h.Sum32() {
			return diskFileErr(path, "damaged (CRC mismatch)")
		}
		return nil
	}
	r, err := openRecs(path, m, withSeq)
	if err != nil {
		return err
	}
	defer r.close()
	for {
		ok, err := r.next()
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
	}
}

// runBuf gathers records in memory up to a bound, then sorts them and
// writes them out as a sorted run (by encoding then sequence key, or by
// sequence key alone), dropping records whose encoding equals the one
// before (keeping the smallest sequence key) when sorting by encoding.
type runBuf struct {
	byEnc  bool
	limit  int // bytes of encodings and index
	arena  []byte
	idx    []bidx
	runs   []fileMeta
	dir    string
	prefix string
	serial *int
	f      *os.File // the runs, one after another
	fw     *bufio.Writer
	off    int64
	peak   int64   // the most memory the buffer held
	pool   *runMem // where its memory comes from and goes back to
	// written counts the bytes of the runs written (DiskInfo).
	written *int64
}

type bidx struct {
	off, n uint32
	seq    uint64
	code   uint32
}

const bidxBytes = 24

func (b *runBuf) add(enc []byte, seq uint64, code uint32) error {
	if b.arena == nil && b.pool != nil {
		b.arena, b.idx = b.pool.arena, b.pool.idx
		b.pool.arena, b.pool.idx = nil, nil
	}
	if len(b.arena)+len(enc)+(len(b.idx)+1)*bidxBytes > b.limit && len(b.idx) > 0 {
		if err := b.spill(); err != nil {
			return err
		}
	}
	// Grown by doubling up to the bound, never past it, so that the
	// memory held stays near the bound and little garbage is left.
	if need := len(b.arena) + len(enc); need > cap(b.arena) {
		na := make([]byte, len(b.arena), max(min(2*cap(b.arena), b.limit), need, 1<<12))
		copy(na, b.arena)
		b.arena = na
	}
	if len(b.idx) == cap(b.idx) {
		ni := make([]bidx, len(b.idx), max(min(2*cap(b.idx), b.limit/bidxBytes), len(b.idx)+1, 1<<8))
		copy(ni, b.idx)
		b.idx = ni
	}
	b.idx = append(b.idx, bidx{off: uint32(len(b.arena)), n: uint32(len(enc)), seq: seq, code: code})
	b.arena = append(b.arena, enc...)
	return nil
}

// runMem is the memory of a run buffer, passed from one buffer to the
// next (one fills at a time), so that it is allocated once.
type runMem struct {
	arena []byte
	idx   []bidx
}

func (b *runBuf) enc(x bidx) []byte { return b.arena[x.off : x.off+x.n] }

// memBytes is the memory the buffer holds.
func (b *runBuf) memBytes() int64 { return int64(cap(b.arena) + cap(b.idx)*bidxBytes) }

// spill sorts the records in memory and writes them as a run.
func (b *runBuf) spill() error {
	b.peak = max(b.peak, b.memBytes())
	if b.byEnc {
		slices.SortFunc(b.idx, func(x, y bidx) int {
			if c := bytes.Compare(b.enc(x), b.enc(y)); c != 0 {
				return c
			}
			return cmpU64(x.seq, y.seq)
		})
	} else {
		slices.SortFunc(b.idx, func(x, y bidx) int { return cmpU64(x.seq, y.seq) })
	}
	if b.f == nil {
		*b.serial++
		f, err := createFile(filepath.Join(b.dir, fmt.Sprintf("%s%d.tmp", b.prefix, *b.serial)))
		if err != nil {
			return err
		}
		b.f, b.fw = f, bufio.NewWriterSize(f, runIOBuf(b.limit))
	}
	w := &recWriter{fileOut: fileOut{w: b.fw}, withSeq: true}
	var prev []byte
	for i, x := range b.idx {
		e := b.enc(x)
		if b.byEnc && i > 0 && bytes.Equal(e, prev) {
			continue
		}
		prev = e
		w.add(drec{enc: e, seq: x.seq, code: x.code})
	}
	m := w.finish(filepath.Base(b.f.Name()), b.off)
	b.off += m.Bytes
	*b.written += m.Bytes
	b.runs = append(b.runs, m)
	b.arena, b.idx = b.arena[:0], b.idx[:0]
	return nil
}

// release returns the buffer's memory.
func (b *runBuf) release() {
	if b.pool != nil && b.arena != nil {
		b.pool.arena, b.pool.idx = b.arena[:0], b.idx[:0]
	}
	b.arena, b.idx = nil, nil
}

// removeRuns deletes the runs written and returns their bytes.
func (b *runBuf) removeRuns() int64 {
	if b.f == nil {
		return 0
	}
	b.f.Close()
	n := b.off
	if os.Remove(b.f.Name()) != nil {
		n = 0
	}
	b.f, b.fw, b.runs, b.off = nil, nil, nil, 0
	return n
}

func cmpU64(x, y uint64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// merged streams the records of a runBuf's runs in order (by encoding,
// then sequence key; or by sequence key), without the records whose
// encoding repeats the one before when ordered by encoding.
type merged struct {
	byEnc bool
	h     mergeHeap
	all   []*recReader
	prev  []byte
	cur   drec
	first bool
}

type mergeHeap struct {
	rs    []*recReader
	byEnc bool
}

func (h *mergeHeap) Len() int { return len(h.rs) }
func (h *mergeHeap) Less(i, j int) bool {
	a, b := &h.rs[i].cur, &h.rs[j].cur
	if h.byEnc {
		if c := bytes.Compare(a.enc, b.enc); c != 0 {
			return c < 0
		}
	}
	return a.seq < b.seq
}
func (h *mergeHeap) Swap(i, j int) { h.rs[i], h.rs[j] = h.rs[j], h.rs[i] }
func (h *mergeHeap) Push(x any)    { h.rs = append(h.rs, x.(*recReader)) }
func (h *mergeHeap) Pop() any {
	x := h.rs[len(h.rs)-1]
	h.rs = h.rs[:len(h.rs)-1]
	return x
}

// merge flushes what b holds in memory as a run and opens its runs for
// merging.
func (b *runBuf) merge() (*merged, error) {
	if len(b.idx) > 0 {
		if err := b.spill(); err != nil {
			return nil, err
		}
	}
	if b.fw != nil {
		if err := b.fw.Flush(); err != nil {
			return nil, err
		}
	}
	m := &merged{byEnc: b.byEnc, first: true}
	m.h.byEnc = b.byEnc
	// The readers' buffers share a bound of the buffer's size.
	size := max(4096, min(runIOBuf(b.limit), b.limit/max(len(b.runs), 1)))
	for _, fm := range b.runs {
		r := openRun(b.f, fm, size)
		m.all = append(m.all, r)
		ok, err := r.next()
		if err != nil {
			m.close()
			return nil, err
		}
		if ok {
			m.h.rs = append(m.h.rs, r)
		}
	}
	heap.Init(&m.h)
	return m, nil
}

// next moves to the next record (m.cur, valid until the next call).
func (m *merged) next() (bool, error) {
	for m.h.Len() > 0 {
		r := m.h.rs[0]
		dup := m.byEnc && !m.first && bytes.Equal(r.cur.enc, m.prev)
		if !dup {
			m.prev = append(m.prev[:0], r.cur.enc...)
			m.cur = drec{enc: m.prev, seq: r.cur.seq, code: r.cur.code}
			m.first = false
		}
		ok, err := r.next()
		if err != nil {
			return false, err
		}
		if ok {
			heap.Fix(&m.h, 0)
		} else {
			heap.Pop(&m.h)
		}
		if !dup {
			return true, nil
		}
	}
	return false, nil
}

func (m *merged) close() {
	for _, r := range m.all {
		r.close()
	}
}
