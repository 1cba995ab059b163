package irx

// The go-back-N arithmetic, shared with the protocols that run I_rx's
// streams on other workloads (protocols/imc): pure functions of counts.

// Wire is the sequence number on the wire of the packet numbered k (from
// 0) in its stream, with numbers modulo mod.
func Wire(k uint16, mod int) uint16 { return uint16(int(k) % mod) }

// WindowOpen reports whether a sender with out packets unacknowledged to
// one destination may transmit another within window w; offByOne is the
// broken variant window-off-by-one (<= instead of <).
func WindowOpen(out, w int, offByOne bool) bool {
	if offByOne {
		return out <= w
	}
	return out < w
}

// AckAdvance is how many packets the cumulative acknowledgement a (the
// wire number the receiver expects next) acknowledges, when acked
// packets of the stream are acknowledged so far and out more are
// outstanding: 0 unless a lies 1..out numbers beyond the oldest
// unacknowledged packet.
func AckAdvance(a, acked uint16, out, mod int) int {
	adv := (int(a) - int(Wire(acked, mod)) + mod) % mod
	if adv > out {
		return 0
	}
	return adv
}
