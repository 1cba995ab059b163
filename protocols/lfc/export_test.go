package lfc

import "lfccheck/model"

// WithTamper returns opt with the live transport's fault hook set
// (live.Options.Tamper): tests inject reordered, lost and duplicated
// packets to show that conformance catches them.
func WithTamper(opt Options, f func(from, to model.NodeID, pkt model.Packet) []model.Packet) Options {
	opt.tamper = f
	return opt
}
