// Package live runs a model.System's protocol as an in-process
// implementation: one goroutine per NI and one per host, Go channels as the
// links, and the very same node-local steps (model.System.LaunchAt,
// ReceiveAt, CopyAt) and protocol handlers that the explorer searches.
//
// Every step is recorded, in a global order, as the model action it is, so a
// run can be replayed through the model step by step; the model accepting
// the recording is the evidence that the runtime did nothing the model does
// not allow.
//
// # Why the recorded order is a valid model execution
//
// A goroutine performs a step on state it alone owns, appends the step to
// the recording under a lock, and only then sends the step's effects
// (packets, freed send packets, freed host buffers) on channels. A step that
// consumes an effect is recorded after it receives it, so it is recorded
// after the step that produced it. Each NI's inbox is one channel fed by all
// its peers; a Go channel keeps each sender's order, so the packets of link
// i->j are received in transmission order, as the model's FIFO link requires.
//
// Channel capacities are sized from the flow-control bounds (at most C data
// packets and C credit-carrying packets per ordered pair, at most S send and
// H host buffers), so no send on a channel ever blocks.
package live

import (
	"context"
	"fmt"
	"sync"

	"lfccheck/model"
)

type evKind uint8

const (
	evPacket   evKind = iota + 1 // a packet arrived from a peer
	evLaunch                     // the host launches its next packet
	evHostFree                   // the host freed a host receive buffer
)

type event struct {
	kind evKind
	from model.NodeID
	pkt  model.Packet
	item model.WorkItem
}

// Result is what a live run did.
type Result struct {
	// Actions is the recording of every step, in a valid global order.
	Actions []model.Action
	// Delivered lists, per host, the data packets it processed, in order.
	Delivered [][]model.Packet
	// NIs holds each NI's state when the run ended.
	NIs []model.NI
}

type recorder struct {
	mu   sync.Mutex
	acts []model.Action
}

func (r *recorder) record(a model.Action) {
	r.mu.Lock()
	r.acts = append(r.acts, a)
	r.mu.Unlock()
}

func (r *recorder) snapshot() []model.Action {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]model.Action(nil), r.acts...)
}

// Run executes sys's workload until every host has launched its packets and
// processed every packet addressed to it, or until ctx ends. On ctx's end it
// returns the partial result and an error.
func Run(ctx context.Context, sys *model.System) (*Result, error) {
	P := sys.P
	cfg := sys.Cfg
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	inbox := make([]chan event, P)
	deliv := make([]chan model.Packet, P)
	sendTok := make([]chan struct{}, P)
	for n := 0; n < P; n++ {
		inbox[n] = make(chan event, (P-1)*2*cfg.Credits+cfg.SendBuffers+cfg.HostBuffers+1)
		deliv[n] = make(chan model.Packet, cfg.HostBuffers)
		sendTok[n] = make(chan struct{}, cfg.SendBuffers)
		for i := 0; i < cfg.SendBuffers; i++ {
			sendTok[n] <- struct{}{}
		}
	}
	rec := &recorder{}
	res := &Result{Delivered: make([][]model.Packet, P), NIs: make([]model.NI, P)}

	var nis sync.WaitGroup
	for n := 0; n < P; n++ {
		nis.Add(1)
		go func(id model.NodeID) {
			defer nis.Done()
			res.NIs[id] = runNI(ctx, sys, id, inbox, deliv[id], sendTok[id], rec)
		}(model.NodeID(n))
	}
	var hosts sync.WaitGroup
	for n := 0; n < P; n++ {
		hosts.Add(1)
		go func(id model.NodeID) {
			defer hosts.Done()
			res.Delivered[id] = runHost(ctx, sys, id, inbox[id], deliv[id], sendTok[id], rec)
		}(model.NodeID(n))
	}
	hosts.Wait()
	err := ctx.Err()
	cancel()
	nis.Wait()
	res.Actions = rec.snapshot()
	if err != nil {
		return res, fmt.Errorf("live run stopped before completion after %d steps: %w", len(res.Actions), err)
	}
	return res, nil
}

func runNI(ctx context.Context, sys *model.System, id model.NodeID, inbox []chan event,
	deliv chan<- model.Packet, sendTok chan<- struct{}, rec *recorder) model.NI {
	ni := sys.NewNI(id)
	hostFree := sys.Cfg.HostBuffers
	var out model.Outbox
	emit := func(a model.Action) {
		rec.record(a)
		for _, t := range out.Sends {
			inbox[t.To] <- event{kind: evPacket, from: id, pkt: t.Pkt}
		}
		for i := 0; i < out.SendFreed; i++ {
			sendTok <- struct{}{}
		}
	}
	for {
		select {
		case <-ctx.Done():
			return ni
		case ev := <-inbox[id]:
			out.Reset()
			switch ev.kind {
			case evLaunch:
				sys.LaunchAt(&ni, ev.item, &out)
				emit(model.Action{Kind: model.ActLaunch, Node: id})
			case evPacket:
				sys.ReceiveAt(&ni, ev.from, ev.pkt, &out)
				emit(model.Action{Kind: model.ActDeliver, Node: id, From: ev.from})
			case evHostFree:
				hostFree++
			}
		}
		// Copy to the host whatever the free host buffers allow.
		for hostFree > 0 {
			out.Reset()
			pkt, ok := sys.CopyAt(&ni, &out)
			if !ok {
				break
			}
			hostFree--
			emit(model.Action{Kind: model.ActCopy, Node: id})
			deliv <- pkt
		}
	}
}

func runHost(ctx context.Context, sys *model.System, id model.NodeID, niInbox chan<- event,
	deliv <-chan model.Packet, sendTok <-chan struct{}, rec *recorder) []model.Packet {
	work := sys.Work[id]
	want := 0
	for _, n := range sys.Expect[id] {
		want += int(n)
	}
	var got []model.Packet
	next := 0
	for next < len(work) || len(got) < want {
		var tok <-chan struct{}
		if next < len(work) {
			tok = sendTok
		}
		select {
		case <-ctx.Done():
			return got
		case <-tok:
			// The NI records the launch when it handles the request.
			niInbox <- event{kind: evLaunch, item: work[next]}
			next++
		case p := <-deliv:
			rec.record(model.Action{Kind: model.ActProcess, Node: id})
			got = append(got, p)
			niInbox <- event{kind: evHostFree}
		}
	}
	return got
}
