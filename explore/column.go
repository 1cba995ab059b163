package explore

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"lfccheck/internal/fileio"
)

// column is an append-only array of unsigned values of a fixed width (4
// or 8 bytes) that the search writes once and reads back only to rebuild
// a trace: the parent id and the key of every state. Its values are kept
// in memory until the first 64 KiB are full; from then on it writes them
// to a temporary file that is unlinked as soon as it is created (so
// nothing is left behind, whatever happens to the process), and keeps
// only the last, unwritten 64 KiB in memory. If no temporary file can
// be made, or writing to it fails (a full disk), the values from then on
// stay in memory.
//
// A search that keeps checkpoints gives its columns a path instead (see
// checkpoint.go): the file is made there, kept, and flushed and synced at
// every checkpoint.
type column struct {
	width   int
	path    string   // the file to write, kept (checkpoints); "" for a temporary file
	tried   bool     // a temporary file was asked for
	f       *os.File // the file, open for reading
	name    string   // the file's name if it could not be unlinked
	failed  bool     // writing to f failed: no more writes
	written int64    // bytes in the file (whole chunks)
	chunks  [][]byte // in memory: full chunks after the file's
	buf     []byte   // the values after the chunks
	n       int
	crc     uint32 // with a path: the CRC-32 of what the file holds
	openErr error  // why the file at path could not be made
}

const colChunk = 1 << 16 // a multiple of every width

func newColumn(width int) *column { return &column{width: width} }

// add appends v (which must fit the width).
func (c *column) add(v uint64) {
	if c.buf == nil {
		c.buf = make([]byte, 0, colChunk)
	}
	if c.width == 4 {
		c.buf = binary.LittleEndian.AppendUint32(c.buf, uint32(v))
	} else {
		c.buf = binary.LittleEndian.AppendUint64(c.buf, v)
	}
	c.n++
	if len(c.buf) == colChunk {
		c.spill()
	}
}

// spill moves the full buffer to the file (made on first use) or, if
// there is none, to the in-memory chunks.
func (c *column) spill() {
	c.open()
	if c.f != nil && !c.failed && len(c.chunks) == 0 {
		if _, err := c.f.Write(c.buf); err == nil {
			c.sum(c.buf)
			c.written += int64(len(c.buf))
			c.buf = c.buf[:0]
			return
		}
		c.failed = true
	}
	c.chunks = append(c.chunks, c.buf)
	c.buf = make([]byte, 0, colChunk)
}

// open makes the column's file, once: a temporary one that is unlinked at
// once, or, with a path, that file (emptied).
func (c *column) open() {
	if c.tried {
		return
	}
	c.tried = true
	if c.path != "" {
		f, err := fileio.CreateRegular(c.path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
		c.f, c.openErr = f, err
		return
	}
	if f, err := os.CreateTemp("", "lfccheck-search-*"); err == nil {
		c.f = f
		if os.Remove(f.Name()) != nil {
			c.name = f.Name()
		}
	}
}

// flush writes every value to the file and syncs it (checkpoints): the
// file then holds exactly the column's n values.
func (c *column) flush() error {
	c.open()
	if c.openErr != nil {
		return c.openErr
	}
	if c.f == nil || c.failed || len(c.chunks) > 0 {
		return fmt.Errorf("cannot write %s", c.path)
	}
	if _, err := c.f.Write(c.buf); err != nil {
		c.failed = true
		return err
	}
	c.sum(c.buf)
	c.written += int64(len(c.buf))
	c.buf = c.buf[:0]
	return c.f.Sync()
}

// sum adds what was written to the file to its CRC (kept files only).
func (c *column) sum(p []byte) {
	if c.path != "" {
		c.crc = crc32.Update(c.crc, crc32.IEEETable, p)
	}
}

// reopen continues the column in the file at c.path, which holds at least
// n values (a checkpoint's), the first n with CRC-32 crc: any after them
// are dropped.
func (c *column) reopen(n int, crc uint32) error {
	f, err := fileio.CreateRegular(c.path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	size := int64(n) * int64(c.width)
	if fi, err := f.Stat(); err != nil || fi.Size() < size {
		f.Close()
		return fmt.Errorf("%s holds fewer than the checkpoint's %d values", c.path, n)
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return err
	}
	h := crc32.NewIEEE()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, size)); err != nil {
		f.Close()
		return err
	}
	if h.Sum32() != crc {
		f.Close()
		return fmt.Errorf("%s is corrupt: its checksum does not match", c.path)
	}
	if _, err := f.Seek(size, 0); err != nil {
		f.Close()
		return err
	}
	c.f, c.tried, c.n, c.written, c.crc = f, true, n, size, crc
	return nil
}

// at returns value i.
func (c *column) at(i int) (uint64, error) {
	if i < 0 || i >= c.n {
		return 0, fmt.Errorf("explore: column index %d out of range [0, %d)", i, c.n)
	}
	off := int64(i) * int64(c.width)
	var b []byte
	switch inMem := off - c.written; {
	case inMem < 0:
		b = make([]byte, c.width)
		if _, err := c.f.ReadAt(b, off); err != nil {
			return 0, fmt.Errorf("explore: reading the search's temporary file: %w", err)
		}
	case inMem < int64(len(c.chunks))*colChunk:
		b = c.chunks[inMem/colChunk][inMem%colChunk:]
	default:
		b = c.buf[inMem-int64(len(c.chunks))*colChunk:]
	}
	if c.width == 4 {
		return uint64(binary.LittleEndian.Uint32(b)), nil
	}
	return binary.LittleEndian.Uint64(b), nil
}

// memBytes is the memory the column holds; diskBytes what it wrote.
func (c *column) memBytes() int64  { return int64(len(c.chunks))*colChunk + int64(cap(c.buf)) }
func (c *column) diskBytes() int64 { return c.written }

// close removes the file.
func (c *column) close() {
	if c.f != nil {
		c.f.Close()
		if c.name != "" {
			os.Remove(c.name)
		}
		c.f = nil
	}
}
