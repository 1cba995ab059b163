package lfc

import (
	"fmt"
	"sync"
	"sync/atomic"

	"lfccheck/model"
	"lfccheck/model/live"
	"lfccheck/properties"
	"lfccheck/protocols/ucast"
)

// The online monitor (RecordMonitor) replays a running cluster through
// the model step by step, as the live runtime records the steps, without
// keeping them: a model state of its own, with a machine of its own whose
// workload grows as the programs post sends (the very items the live
// nodes launch) and drops what it launched, and a window of the last
// steps for the error. Its memory does not grow with the run.
//
// What it checks is what Close's replay of a recording checks: every step
// enabled in the model's state, every delivery taking off its link the
// very packet the live node received, every property of the protocol
// after every step (FIFO and exactly-once over the model's modular
// sequence numbers), and at Close the live run's last state, and the
// properties of end states when nothing is left to do.

// monitorQueue is how many steps may wait for the monitor: the run waits
// for it beyond that.
const monitorQueue = 4096

// monitorWindow is how many of the last steps a ConformanceError from the
// monitor names.
const monitorWindow = 32

type event struct {
	a       model.Action
	arrived model.Packet
}

type monitor struct {
	c   *Cluster
	ck  *properties.Checker
	um  *ucast.Machine
	sys *model.System
	w   *model.World
	out model.Outbox

	// The steps the monitor has yet to take: the live run's Monitor
	// callback appends, the monitor takes them all at once.
	bmu   sync.Mutex
	bcond *sync.Cond
	queue []event
	ended bool // the live run has returned

	mu      sync.Mutex         // guards pending
	pending [][]ucast.WorkItem // per node: posted items the monitor's machine has not taken yet
	npend   atomic.Int32

	// The monitor goroutine's own:
	steps  int
	base   []int // items dropped from each node's workload (DropLaunched)
	recent [monitorWindow]model.Action
	launch int // the launch kind
	// fa-values, incrementally: the values the model's hosts got so far
	// (a set kept across steps) and how many each host got.
	faValues bool
	faSeen   bitset
	faLen    []int

	failed atomic.Pointer[ConformanceError] // the first failure
	done   chan struct{}                    // the monitor goroutine has ended
}

func newMonitor(c *Cluster) (*monitor, error) {
	m, um, _, err := newMachine(c.cfg, c.opt)
	if err != nil {
		return nil, err
	}
	ck, err := properties.BuildFor(c.cfg, m)
	if err != nil {
		return nil, fmt.Errorf("lfc: the monitor's model: %v", err)
	}
	if !sameKinds(ck.Sys, c.sys) {
		return nil, fmt.Errorf("lfc: the monitor's model numbers its steps unlike the cluster's")
	}
	mon := &monitor{c: c, ck: ck, um: um, sys: ck.Sys, w: ck.Sys.Initial(),
		pending: make([][]ucast.WorkItem, c.cfg.Nodes), base: make([]int, c.cfg.Nodes), done: make(chan struct{}), launch: -1}
	for i, k := range ck.Sys.Kinds {
		if k.Name == "launch" {
			mon.launch = i
		}
	}
	// fa-values, as the checker states it, reads every value handed out
	// so far after every step: the monitor checks it incrementally
	// instead (faStep), and keeps its Final.
	for i := range ck.Props {
		if ck.Props[i].Name == ucast.FAValues.Name && um.FetchAdd {
			ck.Props = append([]properties.Property(nil), ck.Props...) // not the definition's
			ck.Props[i].State = nil
			mon.faValues = true
			mon.faLen = make([]int, c.cfg.Nodes)
			break
		}
	}
	mon.bcond = sync.NewCond(&mon.bmu)
	if err := ck.CheckState(mon.w); err != nil {
		return nil, fmt.Errorf("lfc: the monitor's initial state: %v", err)
	}
	go mon.run()
	return mon, nil
}

// post hands the monitor an item that node id's program posted (before
// the live node can launch it).
func (m *monitor) post(id model.NodeID, it ucast.WorkItem) {
	m.mu.Lock()
	m.pending[id] = append(m.pending[id], it)
	m.mu.Unlock()
	m.npend.Add(1)
}

// observe is the live run's Monitor callback: it queues the step (waiting
// while the monitor is monitorQueue steps behind).
func (m *monitor) observe(a model.Action, arrived model.Packet) {
	m.bmu.Lock()
	for len(m.queue) >= monitorQueue {
		m.bcond.Wait()
	}
	m.queue = append(m.queue, event{a, arrived})
	if len(m.queue) == 1 {
		m.bcond.Broadcast() // the monitor may be waiting for a step
	}
	m.bmu.Unlock()
}

// end tells the monitor that the live run has returned: no step follows.
func (m *monitor) end() {
	m.bmu.Lock()
	m.ended = true
	m.bcond.Broadcast()
	m.bmu.Unlock()
}

func (m *monitor) run() {
	defer close(m.done)
	var mine []event
	for {
		m.bmu.Lock()
		for len(m.queue) == 0 && !m.ended {
			m.bcond.Wait()
		}
		if len(m.queue) == 0 {
			m.bmu.Unlock()
			return
		}
		mine, m.queue = m.queue, mine[:0]
		m.bcond.Broadcast() // room for the run
		m.bmu.Unlock()
		for _, ev := range mine {
			if m.failed.Load() == nil {
				m.step(ev)
			}
		}
	}
}

// take moves the posted items into the monitor machine's workload.
func (m *monitor) take() {
	if m.npend.Load() == 0 {
		return
	}
	m.mu.Lock()
	for id, items := range m.pending {
		for _, it := range items {
			m.um.AppendWork(id, it)
		}
		m.npend.Add(-int32(len(items)))
		m.pending[id] = items[:0]
	}
	m.mu.Unlock()
}

// step replays one live step.
func (m *monitor) step(ev event) {
	m.take()
	m.recent[m.steps%monitorWindow] = ev.a
	m.steps++
	w := m.w
	w.ClearChanges()
	if err := w.Apply(ev.a, &m.out); err != nil {
		why := "not enabled in the model"
		if ev.arrived != (model.Packet{}) && len(w.Link(ev.a.Peer, ev.a.Node)) == 0 {
			why = fmt.Sprintf("the live run delivered %s, but the model's link is empty (a packet duplicated on the link)", ev.arrived)
		}
		m.fail(nil, fmt.Errorf("step %d (%s): %s", m.steps, m.sys.ActionName(ev.a), why), m.steps)
		return
	}
	if ev.arrived != (model.Packet{}) && m.out.Arrival && !ev.arrived.SameData(m.out.Arrived) {
		m.fail(nil, fmt.Errorf("step %d (%s): the live run delivered %s, but %s heads the model's link (a packet reordered, lost or duplicated on the link)",
			m.steps, m.sys.ActionName(ev.a), ev.arrived, m.out.Arrived), m.steps)
		return
	}
	if err := m.ck.CheckNextStep(w, ev.a, &m.out); err != nil {
		v := properties.AsViolation(err)
		v.Message = fmt.Sprintf("step %d (%s): %s", m.steps, m.sys.ActionName(ev.a), v.Message)
		m.fail(v, nil, 0)
		return
	}
	if err := m.faStep(w); err != nil {
		v := properties.AsViolation(err)
		v.Message = fmt.Sprintf("step %d (%s): %s", m.steps, m.sys.ActionName(ev.a), v.Message)
		m.fail(v, nil, 0)
		return
	}
	if int(ev.a.Kind) == m.launch {
		if u := m.um.NodeOf(w.Nodes[ev.a.Node]); u.Next >= compactAt {
			m.base[ev.a.Node] += m.um.DropLaunched(u)
		}
	}
}

// faStep checks fa-values in w, the state after a step, given that it held
// before: every value a host got in the step is new (not in the set of
// the values got before) and above the host's previous one. It costs
// what the step changed, not the run's length; the checker's State finds
// the same violations in the same step (the property is Stable).
func (m *monitor) faStep(w *model.World) error {
	if !m.faValues {
		return nil
	}
	for i := range w.Nodes {
		g := m.um.NodeOf(w.Nodes[i]).FA.Got
		for k := m.faLen[i]; k < len(g); k++ {
			v := g[k]
			if m.faSeen.add(v) {
				h := -1
				for j := range w.Nodes { // a violation: its message only
					for _, x := range m.um.NodeOf(w.Nodes[j]).FA.Got[:m.faLen[j]] {
						if x == v && h < 0 {
							h = j
						}
					}
				}
				if h < 0 {
					h = i
				}
				return &properties.Violation{Property: ucast.FAValues.Name, Message: fmt.Sprintf("value %d was handed to host %d and to host %d", v, h, i)}
			}
			if k > 0 && v <= g[k-1] {
				return &properties.Violation{Property: ucast.FAValues.Name, Message: fmt.Sprintf("host %d got %d after %d", i, v, g[k-1])}
			}
			m.faLen[i] = k + 1
		}
	}
	return nil
}

// fail records the monitor's first failure: a property's violation v, or
// err at step (0: at the end).
func (m *monitor) fail(v *properties.Violation, err error, step int) {
	ce := &ConformanceError{Violation: v, Err: err, Step: step}
	n := min(m.steps, monitorWindow)
	for i := m.steps - n; i < m.steps; i++ {
		ce.Recent = append(ce.Recent, m.sys.ActionName(m.recent[i%monitorWindow]))
	}
	m.failed.CompareAndSwap(nil, ce)
}

// finish waits for the monitor to replay every step of the ended run and
// returns its verdict: the first failure, or the comparison of the
// model's last state with the live run's (and the properties of end
// states, when nothing is left to do).
func (m *monitor) finish(res *live.Result, launchBase []int) (*ConformanceError, []properties.StatValue) {
	<-m.done
	if ce := m.failed.Load(); ce != nil {
		return ce, nil
	}
	m.take()
	if res != nil && res.Final != nil {
		if err := sameEnd(m.w, res.Final, m.base, launchBase); err != nil {
			m.fail(nil, fmt.Errorf("after the last step (%d): %v", m.steps, err), 0)
			return m.failed.Load(), nil
		}
	}
	if len(m.w.Enabled(nil)) == 0 {
		if err := m.ck.CheckFinal(m.w); err != nil {
			m.fail(properties.AsViolation(err), nil, 0)
			return m.failed.Load(), nil
		}
	}
	return nil, m.ck.Statistics()
}

// FACallers is the property the library's conformance check (RecordOn,
// RecordMonitor) adds to the model's: fetch-and-add per caller. The model
// checks the values the NIs hand to each host (fa-values); this checks the
// host library's matching of replies to calls: no two calls get the same
// value, and at the end the values handed to calls and those of calls
// that gave up are exactly 0..N-1, N the values the hosts got.
const FACallers = "fa-callers"

// faLedger is fetch-and-add's per-caller check, guarded by c.mu: the set
// of values handed to calls, kept across calls (one bit a value; a
// check costs the same at any length of the run).
//
// A value that the NIs handed to two hosts' requests (a broken
// protocol, which the model's fa-values catches) is not the library's
// fault: once the hosts got a value twice, the ledger leaves the verdict
// to the model.
type faLedger struct {
	handed bitset
	n      int    // values handed to calls
	got    bitset // values the hosts got
	gotDup bool   // some value twice
	failed *ConformanceError
}

// faGot records (c.mu held) that a host got value v from its NI.
func (c *Cluster) faGot(v uint32) {
	if l := c.faCheck; l != nil && l.got.add(v) {
		l.gotDup = true
	}
}

// bitset is a set of small numbers (fetch-and-add values are 0..N-1).
type bitset []uint64

// add adds v and reports whether it was there already.
func (b *bitset) add(v uint32) bool {
	i := int(v / 64)
	if i >= len(*b) {
		*b = append(*b, make([]uint64, i+1-len(*b))...)
	}
	m := uint64(1) << (v % 64)
	had := (*b)[i]&m != 0
	(*b)[i] |= m
	return had
}

// faHanded records (c.mu held) that the call of n's ticket takes value v;
// a value handed before is a violation of FACallers.
func (c *Cluster) faHanded(n *Node, ticket int, v uint32) {
	l := c.faCheck
	if l == nil {
		return
	}
	l.n++
	if l.handed.add(v) && !l.gotDup {
		c.faFail(fmt.Sprintf("value %d was handed to two calls (the second: node %d's call %d)", v, n.id, ticket+1))
	}
}

// faFail records (c.mu held) a violation of FACallers: the monitor's
// verdict, or the recording cluster's for Close.
func (c *Cluster) faFail(msg string) {
	ce := &ConformanceError{Violation: &properties.Violation{Property: FACallers, Message: msg}}
	if c.faCheck.failed == nil {
		c.faCheck.failed = ce
	}
	if c.mon != nil {
		c.mon.failed.CompareAndSwap(nil, ce) // Conformance reports it at once
	}
}

// faFinal is FACallers at the end of the run (c.mu held, every node
// stopped, every call's ticket taken or given up): the values handed out
// and those of calls that gave up are exactly 0..N-1.
func (c *Cluster) faFinal() *ConformanceError {
	l := c.faCheck
	if l == nil {
		return nil
	}
	if l.failed != nil || l.gotDup {
		return l.failed
	}
	total, k := 0, l.n
	all := append(bitset(nil), l.handed...)
	for _, n := range c.nodes {
		total += len(n.values)
		for _, t := range n.faAbandoned {
			if t < len(n.values) {
				k++
				if all.add(n.values[t]) {
					c.faFail(fmt.Sprintf("value %d, of node %d's abandoned call %d, was handed to another call", n.values[t], n.id, t+1))
					return l.failed
				}
			}
		}
	}
	if k != total {
		c.faFail(fmt.Sprintf("the hosts got %d values, but calls took %d and calls that gave up account for %d", total, l.n, k-l.n))
		return l.failed
	}
	for v := 0; v < total; v++ {
		if v/64 >= len(all) || all[v/64]&(1<<(v%64)) == 0 {
			c.faFail(fmt.Sprintf("value %d of 0..%d went to no call", v, total-1))
			return l.failed
		}
	}
	return nil
}
