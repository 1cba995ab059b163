package irx

// What the protocols that run I_rx's go-back-N streams share besides
// the window arithmetic (gbn.go): the receiver's state as text and in
// encodings, the properties, and the go-back-N parameters. I_rx and H_rx
// (this package's Machine) and I_mc and H_mc (protocols/imc) use these,
// one implementation each.

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols/ucast"
)

// RecvString renders a receiver's state per source s for which show(s)
// holds: the wire number it expects next (of the packet numbered
// expect[s] in the stream, numbers modulo mod) and what it owes.
func RecvString(expect []uint16, ackDue, nackDue []bool, mod int, show func(s int) bool) string {
	var parts []string
	for s := range expect {
		if show(s) {
			p := fmt.Sprintf("[from %d: expect s%d", s, Wire(expect[s], mod))
			if ackDue[s] {
				p += " ack due"
			}
			if nackDue[s] {
				p += " nack due"
			}
			parts = append(parts, p+"]")
		}
	}
	return strings.Join(parts, " ")
}

// DueBits packs a receiver's two flags for one source into a byte of an
// encoding; DueFlags unpacks them.
func DueBits(ack, nack bool) byte {
	var x byte
	if ack {
		x |= 1
	}
	if nack {
		x |= 2
	}
	return x
}

// DueFlags unpacks a byte written by DueBits.
func DueFlags(x byte) (ack, nack bool) { return x&1 != 0, x&2 != 0 }

// AppendLogs appends the encoding of a host's stream logs.
func AppendLogs(buf []byte, logs []model.StreamLog) []byte {
	for _, l := range logs {
		buf = binary.AppendUvarint(buf, uint64(l.Last))
		buf = binary.AppendUvarint(buf, uint64(l.Base))
		buf = binary.AppendUvarint(buf, l.Mask)
	}
	return buf
}

// DecodeLogs reads the logs AppendLogs wrote into logs.
func DecodeLogs(d *model.Decoder, logs []model.StreamLog) {
	for i := range logs {
		logs[i] = model.StreamLog{Last: uint16(d.Uvarint()), Base: uint16(d.Uvarint()), Mask: d.Uvarint()}
	}
}

// Streams is what the shared properties (StreamProps) read of a machine
// whose nodes run go-back-N streams and log what their hosts deliver.
type Streams interface {
	// Window is W; Buffers the receive buffers of a node.
	Window() int
	Buffers() int
	// Unacked is how many packets node n has to destination d sent and
	// not yet acknowledged.
	Unacked(n model.Node, d int) int
	// Held is how many received packets node n holds against its
	// receive buffers.
	Held(n model.Node) int
	// Logs is host n's log of each source's stream; Want how many
	// packets host h is to be delivered from each source.
	Logs(n model.Node) []model.StreamLog
	Want(h int) []int
	// Remaining says what is left undone in w (nil when all is done).
	Remaining(w *model.World) error
	// Side names who runs the windows in messages (ni or host); Holder
	// who holds the buffers (ni, node or host).
	Side() string
	Holder() string
}

// PropDocs are the texts of the shared properties that name a
// protocol's parts.
type PropDocs struct {
	Window, Buffers, Delivery string
}

// StreamProps are the properties of a protocol whose machine is a
// Streams: deadlock, window, buffer-bound, fifo, exactly-once and
// eventual-delivery, with the given texts.
func StreamProps(docs PropDocs) []model.Property {
	st := func(w *model.World) Streams { return w.Sys.M.(Streams) }
	window := model.Property{Name: "window", Doc: docs.Window,
		Local: func(w *model.World, i int) error {
			m := st(w)
			for d := 0; d < len(w.Nodes); d++ {
				if out := m.Unacked(w.Nodes[i], d); out > m.Window() {
					return fmt.Errorf("%s %d has %d packets to %d unacknowledged, window %d", m.Side(), i, out, d, m.Window())
				}
			}
			return nil
		}}
	window.State = allNodes(window.Local)
	buffers := model.Property{Name: "buffer-bound", Doc: docs.Buffers,
		Local: func(w *model.World, i int) error {
			m := st(w)
			if h := m.Held(w.Nodes[i]); h > m.Buffers() {
				return fmt.Errorf("%s %d holds %d received packets in %d buffers", m.Holder(), i, h, m.Buffers())
			}
			return nil
		}}
	buffers.State = allNodes(buffers.Local)
	remaining := func(w *model.World) error { return st(w).Remaining(w) }
	return []model.Property{
		properties.Deadlock(remaining, nil),
		window,
		buffers,
		properties.FIFO,
		properties.ExactlyOnce(func(w *model.World, h int) []model.StreamLog { return st(w).Logs(w.Nodes[h]) },
			func(w *model.World, h int) []int { return st(w).Want(h) }),
		{Name: "eventual-delivery", Doc: docs.Delivery,
			Live: model.Eventually, Goal: func(w *model.World, _ int) bool { return remaining(w) == nil }},
	}
}

func allNodes(local func(w *model.World, i int) error) func(w *model.World) error {
	return func(w *model.World) error {
		for i := range w.Nodes {
			if err := local(w, i); err != nil {
				return err
			}
		}
		return nil
	}
}

// GBNParams are the go-back-N parameters every protocol on I_rx's
// streams takes: the window, the sequence number space and the receive
// buffers, and at the host level the retransmission timer's rule.
type GBNParams struct {
	Window, SeqMod, RecvBuffers *int
	Timer                       *string // nil: no --timer (the NI level)
}

// Set applies one go-back-N setting and reports whether key is one.
func (g GBNParams) Set(key, v string) (bool, error) {
	var err error
	switch key {
	case "window":
		*g.Window, err = ucast.IntIn(v, 1, 16)
	case "seq-mod":
		*g.SeqMod, err = ucast.IntIn(v, 2, 64)
	case "recv-buffers":
		*g.RecvBuffers, err = ucast.IntIn(v, 1, 16)
	case "timer":
		if g.Timer == nil {
			return false, nil
		}
		if v != TimerRoundTrip && v != TimerLinks {
			return true, fmt.Errorf("timer %q: want %s or %s", v, TimerRoundTrip, TimerLinks)
		}
		*g.Timer = v
		if v == TimerRoundTrip {
			*g.Timer = ""
		}
	default:
		return false, nil
	}
	return true, err
}

// Settings returns the go-back-N settings that differ from the default
// window and buffers (the timer's after the others': see AppendTimer).
func (g GBNParams) Settings(window, buffers int) []model.Setting {
	var s []model.Setting
	if *g.Window != window {
		s = append(s, model.Setting{Key: "window", Value: strconv.Itoa(*g.Window)})
	}
	if *g.SeqMod != 0 {
		s = append(s, model.Setting{Key: "seq-mod", Value: strconv.Itoa(*g.SeqMod)})
	}
	if *g.RecvBuffers != buffers {
		s = append(s, model.Setting{Key: "recv-buffers", Value: strconv.Itoa(*g.RecvBuffers)})
	}
	return s
}

// AppendTimer appends the timer's setting if it is not the default.
func (g GBNParams) AppendTimer(s []model.Setting) []model.Setting {
	if g.Timer != nil && *g.Timer != "" {
		s = append(s, model.Setting{Key: "timer", Value: *g.Timer})
	}
	return s
}

// TimerText renders the timer's rule for Describe ("" at the NI level).
func (g GBNParams) TimerText() string {
	if g.Timer == nil {
		return ""
	}
	if *g.Timer == "" {
		return " timer=" + TimerRoundTrip
	}
	return " timer=" + *g.Timer
}

// Mod is the sequence number space: SeqMod, or Window+1 if none is
// given.
func (g GBNParams) Mod() int {
	if *g.SeqMod == 0 {
		return *g.Window + 1
	}
	return *g.SeqMod
}

// Check refuses a sequence number space go-back-N cannot work with.
func (g GBNParams) Check() error {
	if *g.SeqMod != 0 && *g.SeqMod <= *g.Window {
		return fmt.Errorf("seq-mod %d must exceed the window %d: go-back-N cannot tell a retransmission from a new packet otherwise", *g.SeqMod, *g.Window)
	}
	return nil
}

// GBNSpecs declares the go-back-N parameters: the window, the sequence
// number space and the receive buffers (whose text, and default, the
// protocol gives); TimerSpec the host level's timer.
func GBNSpecs(windowDoc, buffersDoc, buffersDefault string) []model.ParamSpec {
	return []model.ParamSpec{
		{Key: "window", Doc: windowDoc, Default: "2"},
		{Key: "seq-mod", Doc: "sequence numbers on the wire are 0..seq-mod-1 and wrap (at least window+1)", Default: "window + 1"},
		{Key: "recv-buffers", Doc: buffersDoc, Default: buffersDefault},
	}
}

// TimerSpec declares the host level's --timer.
var TimerSpec = model.ParamSpec{Key: "timer", Doc: "when the retransmission timer may expire: round-trip (nothing from or to the host on a link or waiting in a receive buffer for its host: longer than any round trip, as the polling watchdog of §3.7 makes it in the thesis's setting) or links (nothing on a link; packets may still wait for a host that polls late)", Default: TimerRoundTrip}
