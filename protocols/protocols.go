// Package protocols registers the protocols lfccheck implements, in the
// order in which lists, the suite and help show them, and builds checkers
// for configurations. A new protocol is a new subpackage that builds a
// model.Def, plus one line here.
package protocols

import (
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols/fa"
	"lfccheck/protocols/gsb"
	"lfccheck/protocols/hmc"
	"lfccheck/protocols/hrx"
	"lfccheck/protocols/imc"
	"lfccheck/protocols/intr"
	"lfccheck/protocols/irx"
	"lfccheck/protocols/mcast"
	"lfccheck/protocols/panda"
	"lfccheck/protocols/recov"
	"lfccheck/protocols/ucast"
)

func init() {
	model.Register(ucast.Def)
	model.Register(mcast.Def)
	model.Register(recov.Def)
	model.Register(fa.Def)
	model.Register(intr.Def)
	model.Register(gsb.Def)
	model.Register(panda.Def)
	model.Register(irx.Def)
	model.Register(hrx.Def)
	model.Register(imc.Def)
	model.Register(hmc.Def)
}

// All lists the registered protocols.
func All() []*model.Def { return model.Registered() }

// Lookup finds a protocol by name.
func Lookup(name string) (*model.Def, error) { return model.Lookup(name) }

// Build resolves cfg and builds the checker for it (see properties.Build).
func Build(cfg model.Config) (*properties.Checker, error) { return properties.Build(cfg) }
