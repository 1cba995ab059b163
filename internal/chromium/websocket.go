package chromium

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// maxFrame bounds a message from the browser (a screenshot is a few MB).
const maxFrame = 64 << 20

// wsConn is a client WebSocket connection (RFC 6455): masked text frames
// out, text frames in. A write that fails, or a read that fails inside a
// frame, may leave the stream cut in the middle of a frame: the
// connection is then broken, and every later operation returns that first
// error. A read interrupted between frames, or a write interrupted before
// its first byte, leaves it whole.
type wsConn struct {
	conn   net.Conn
	r      *bufio.Reader
	broken error
}

// dial opens a WebSocket connection to the ws:// address raw; ctx bounds
// the connection and the handshake.
func dial(ctx context.Context, raw string) (*wsConn, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "ws" {
		return nil, fmt.Errorf("%s: not a ws:// address", raw)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, err
	}
	c := &wsConn{conn: conn, r: bufio.NewReader(conn)}
	err = c.bounded(ctx, 0, func() error {
		var key [16]byte
		rand.Read(key[:])
		req := "GET " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
			"Sec-WebSocket-Key: " + base64.StdEncoding.EncodeToString(key[:]) + "\r\nSec-WebSocket-Version: 13\r\n\r\n"
		if _, err := io.WriteString(conn, req); err != nil {
			return err
		}
		resp, err := http.ReadResponse(c.r, nil)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusSwitchingProtocols {
			return fmt.Errorf("websocket upgrade refused: %s", resp.Status)
		}
		return nil
	})
	if err != nil {
		conn.Close()
		return nil, err
	}
	return c, nil
}

// bounded runs op, which reads or writes the connection, within ctx and,
// when timeout > 0, within timeout: past either, the connection's
// deadline interrupts op.
func (c *wsConn) bounded(ctx context.Context, timeout time.Duration, op func() error) error {
	if c.broken != nil {
		return fmt.Errorf("the connection to Chromium is broken by an earlier error: %w", c.broken)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	deadline, ok := ctx.Deadline()
	own := false // the deadline is timeout's, not ctx's
	if timeout > 0 && (!ok || time.Now().Add(timeout).Before(deadline)) {
		deadline, ok, own = time.Now().Add(timeout), true, true
	}
	if !ok {
		deadline = time.Time{}
	}
	c.conn.SetDeadline(deadline)
	// When ctx ends, its function moves the deadline into the past; if
	// it has started by the time op returns, wait for it to finish, or it
	// could move the deadline of the next call instead.
	interrupted := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(interrupted)
		c.conn.SetDeadline(time.Unix(1, 0))
	})
	err := op()
	if !stop() {
		<-interrupted
	}
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
		if !own {
			// ctx's deadline, reached by the connection a moment
			// before ctx notices.
			return context.DeadlineExceeded
		}
		return fmt.Errorf("no answer from Chromium within %v: %w", timeout, err)
	}
	return err
}

// send writes msg as one masked text frame.
func (c *wsConn) send(msg []byte) error {
	frame := []byte{0x81} // final frame, text
	switch n := len(msg); {
	case n < 126:
		frame = append(frame, 0x80|byte(n))
	case n <= 0xffff:
		frame = append(frame, 0x80|126)
		frame = binary.BigEndian.AppendUint16(frame, uint16(n))
	default:
		frame = append(frame, 0x80|127)
		frame = binary.BigEndian.AppendUint64(frame, uint64(n))
	}
	var mask [4]byte
	rand.Read(mask[:])
	frame = append(frame, mask[:]...)
	for i, b := range msg {
		frame = append(frame, b^mask[i&3])
	}
	if n, err := c.conn.Write(frame); err != nil {
		// A write stopped by the deadline before its first byte (the
		// deadline passed between the context's check and the write)
		// leaves the stream whole; one cut inside the frame does not.
		if n > 0 {
			c.broken = err
		}
		return err
	}
	return nil
}

// recv reads one message, joining its fragments and skipping pings and
// pongs; a close frame gives io.EOF.
func (c *wsConn) recv() ([]byte, error) {
	var msg []byte
	for first := true; ; first = false {
		b0, err := c.r.ReadByte()
		if err != nil {
			if !first {
				c.broken = err
			}
			return nil, err
		}
		fin, op, data, err := c.frame(b0)
		if err != nil {
			c.broken = err
			return nil, err
		}
		switch op {
		case 0x8:
			return nil, io.EOF
		case 0x9, 0xa:
			continue
		}
		if uint64(len(msg))+uint64(len(data)) > maxFrame {
			c.broken = fmt.Errorf("a websocket message of more than %d bytes", maxFrame)
			return nil, c.broken
		}
		msg = append(msg, data...)
		if fin {
			return msg, nil
		}
	}
}

// frame reads the rest of a frame whose first byte is b0.
func (c *wsConn) frame(b0 byte) (fin bool, op byte, data []byte, err error) {
	b1, err := c.r.ReadByte()
	if err != nil {
		return false, 0, nil, err
	}
	size := uint64(b1 & 0x7f)
	switch size {
	case 126:
		var ext [2]byte
		if _, err := io.ReadFull(c.r, ext[:]); err != nil {
			return false, 0, nil, err
		}
		size = uint64(binary.BigEndian.Uint16(ext[:]))
	case 127:
		var ext [8]byte
		if _, err := io.ReadFull(c.r, ext[:]); err != nil {
			return false, 0, nil, err
		}
		size = binary.BigEndian.Uint64(ext[:])
	}
	if size > maxFrame {
		return false, 0, nil, fmt.Errorf("a websocket frame of %d bytes", size)
	}
	data = make([]byte, size)
	if _, err := io.ReadFull(c.r, data); err != nil {
		return false, 0, nil, err
	}
	return b0&0x80 != 0, b0 & 0x0f, data, nil
}

func (c *wsConn) close() error { return c.conn.Close() }
