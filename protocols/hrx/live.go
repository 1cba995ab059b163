package hrx

import (
	"context"

	"lfccheck/protocols/irx"
)

// RunLive runs a live H_rx cluster: irx.RunLive at the host level
// (opt.Level is set to irx.Host). Each host checks as packets reach it
// that every sender's packets arrive exactly once and in order; the
// retransmission timer follows opt.Timer as in the model (by default
// round-trip: it does not expire while a packet from or to the host is
// on a link or waits in another host's receive buffers, model.Holder,
// which the live runtime honours).
func RunLive(ctx context.Context, opt irx.LiveOptions) (*irx.LiveReport, error) {
	opt.Level = irx.Host
	return irx.RunLive(ctx, opt)
}
