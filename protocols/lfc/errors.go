package lfc

import (
	"errors"
	"fmt"
)

// ErrClosed is returned by calls on a closed cluster.
var ErrClosed = errors.New("lfc: cluster closed")

// ErrInUpcall is returned by calls made from inside a handler that would
// wait for that handler (see the package doc's Goroutines).
var ErrInUpcall = errors.New("lfc: called from inside a handler, where it would wait for the handler itself")

// ErrNoNode is returned by every method of a nil *Node, which
// Cluster.Node returns for an id out of range.
var ErrNoNode = errors.New("lfc: no such node")

// Misuse errors: the calls return them wrapped, with the node and the
// numbers, so test them with errors.Is.
var (
	// ErrPayloadTooLarge: a payload longer than Options.MaxPayload.
	ErrPayloadTooLarge = errors.New("lfc: payload too large")
	// ErrKeepLimit: Packet.Keep when the node already keeps Options.Keep
	// packets.
	ErrKeepLimit = errors.New("lfc: keep limit reached")
	// ErrDoubleFree: Kept.Free of a packet already freed.
	ErrDoubleFree = errors.New("lfc: packet freed twice")
	// ErrUnknownGroup: Multicast to a group the topology does not have.
	ErrUnknownGroup = errors.New("lfc: no such group")
)

// HandlerPanic is the error of a cluster whose handler panicked: the
// library recovers the panic, stops the cluster, and from then on every
// call returns it (wrapped or as it is: test with errors.As), Close
// included. The packet whose handler panicked is not counted as
// delivered: the Report lists it in flight.
type HandlerPanic struct {
	Node  int    // the node whose handler panicked
	From  int    // the packet's sender
	Seq   int    // the packet's number in its stream
	Group string // the packet's multicast group ("" for unicast)
	Value any    // the value passed to panic
	Stack []byte // the handler's goroutine's stack when it panicked
}

func (e *HandlerPanic) Error() string {
	what := fmt.Sprintf("%d->%d #%d", e.From, e.Node, e.Seq)
	if e.Group != "" {
		what = fmt.Sprintf("%d to group %q #%d", e.From, e.Group, e.Seq)
	}
	return fmt.Sprintf("lfc: the handler of node %d panicked on packet %s: %v", e.Node, what, e.Value)
}

// Unwrap returns the panic value when it is an error (panic(err)), so
// errors.Is and errors.As reach it.
func (e *HandlerPanic) Unwrap() error {
	if err, ok := e.Value.(error); ok {
		return err
	}
	return nil
}
