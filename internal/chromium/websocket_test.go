package chromium

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// A write that the deadline stops before its first byte leaves the
// connection usable; one cut inside a frame breaks it.
func TestWriteBeforeDeadline(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	defer server.Close()
	c := &wsConn{conn: client, r: bufio.NewReader(client)}
	client.SetDeadline(time.Unix(1, 0))
	if err := c.send([]byte("late")); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a write past the deadline: %v", err)
	}
	if c.broken != nil {
		t.Fatalf("a write that wrote nothing breaks the connection: %v", c.broken)
	}
	client.SetDeadline(time.Time{})
	got := make(chan []byte, 1)
	go func() {
		b := make([]byte, 2+4+len("again"))
		io.ReadFull(server, b)
		got <- b
	}()
	if err := c.send([]byte("again")); err != nil {
		t.Fatalf("the next write: %v", err)
	}
	if b := <-got; b[0] != 0x81 || int(b[1]&0x7f) != len("again") {
		t.Errorf("the next frame starts % x", b[:2])
	}

	// A frame cut in the middle: the reader takes two bytes and stops.
	go func() {
		b := make([]byte, 2)
		io.ReadFull(server, b)
	}()
	client.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	if err := c.send([]byte("cut in the middle")); err == nil {
		t.Fatal("a frame nobody reads to its end is sent")
	}
	if c.broken == nil {
		t.Error("a frame cut in the middle leaves the connection whole")
	}
}
