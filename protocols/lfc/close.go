package lfc

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"lfccheck/properties"
	"lfccheck/protocols/mcast"
	"lfccheck/traces"
)

// wakeOnEnd wakes every waiter when ctx ends (a waiter rechecks its
// context); the returned func stops that.
func (c *Cluster) wakeOnEnd(ctx context.Context) func() bool {
	return context.AfterFunc(ctx, func() {
		c.mu.Lock()
		c.gen++
		c.cond.Broadcast()
		c.mu.Unlock()
	})
}

// Drain waits until every packet sent so far has been handed to its
// destinations' handlers (in Polling mode, programs must keep polling),
// or until ctx ends. From inside a handler it returns ErrInUpcall; once
// the cluster is closed, ErrClosed (or the *HandlerPanic that stopped it).
func (c *Cluster) Drain(ctx context.Context) error {
	if u := c.upcallNode(); u != nil {
		return fmt.Errorf("lfc: Drain from the handler of node %d: %w", u.id, ErrInUpcall)
	}
	defer c.wakeOnEnd(ctx)()
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.handled < c.expected && !c.closed && ctx.Err() == nil {
		c.cond.Wait()
	}
	switch {
	case c.closed:
		return c.closedErr()
	case c.handled >= c.expected:
		return nil
	}
	return fmt.Errorf("lfc: drain: %d of %d deliveries done: %w", c.handled, c.expected, ctx.Err())
}

// Report is what a cluster did, as Close returns it.
type Report struct {
	Sent      int // packets sent (multicasts count once)
	Delivered int // deliveries handed to handlers (a multicast counts once per destination)
	// InFlight lists the deliveries still owed when the cluster closed,
	// as "origin->destination #seq" (unicast) or "origin tree T #seq to
	// N destinations" (multicast), sorted.
	InFlight []string
	Steps    int // protocol steps the nodes took
	// Checked is how many of those steps the model replayed and checked
	// (Options.Record): every step when the run conforms; 0 for a cluster
	// that does not record or monitor itself.
	Checked int
	Kept    int // packets kept and not freed
	// Statistics are the protocol's statistics over the run (see
	// Recording.Statistics: RECOV's recoveries and recovery-channel
	// packets, MCAST's forwarded packets), when the cluster records
	// itself and the run conforms; nil otherwise.
	Statistics []properties.StatValue
	// FetchAndAddAbandoned are the values of fetch-and-add calls that
	// gave up (their context ended, or Close came) before their reply,
	// which the server's NI sent all the same: no call got them. Sorted.
	FetchAndAddAbandoned []uint32
	// FetchAndAddUnanswered counts the calls that gave up whose request
	// had not been answered when the cluster closed.
	FetchAndAddUnanswered int
}

// Close is CloseContext without a deadline: it waits as long as a
// handler that is running takes to return.
func (c *Cluster) Close() (*Report, error) {
	return c.CloseContext(context.Background())
}

// CloseContext stops the cluster: no packet is handed to a handler from
// now on, and every call waiting in the cluster (sends, fetch-and-adds,
// polls, Drain) returns ErrClosed, as does every later call. It then
// waits until the handlers running return (the cluster's goroutines end
// only then) or until ctx ends, and returns the report of what was still
// in flight. Call Drain first for a clean end.
//
// If ctx ends first, CloseContext returns a report without the run's
// steps (Steps and Checked are 0) and an error wrapping ctx's; the
// cluster stays stopped, and a later Close or CloseContext waits again.
// Once the cluster's goroutines have ended, a recording cluster checks
// its run against the model and returns a *ConformanceError if it does
// not conform; a cluster whose handler panicked returns the
// *HandlerPanic. Every call after that returns the same report and
// error. From inside a handler it returns ErrInUpcall and does not close
// the cluster.
func (c *Cluster) CloseContext(ctx context.Context) (*Report, error) {
	if u := c.upcallNode(); u != nil {
		return nil, fmt.Errorf("lfc: Close from the handler of node %d: %w", u.id, ErrInUpcall)
	}
	c.mu.Lock()
	c.closed = true
	for _, n := range c.nodes {
		// The calls still waiting give up: their tickets' values, if
		// they come, are accounted as abandoned.
		open := make([]int, 0, len(n.faOpen))
		for t := range n.faOpen {
			open = append(open, t)
		}
		sort.Ints(open)
		n.faAbandoned = append(n.faAbandoned, open...)
		clear(n.faOpen)
	}
	c.gen++
	c.cond.Broadcast()
	c.mu.Unlock()
	c.cancel()
	select {
	case <-c.done:
	case <-ctx.Done():
		select {
		case <-c.done: // both ready: the run has ended
		default:
			return c.report(false), fmt.Errorf("lfc: close: a handler has not returned, so the cluster's goroutines have not ended: %w", ctx.Err())
		}
	}
	c.closeOnce.Do(func() { c.closeRep, c.closeErr = c.finish() })
	return c.closeRep, c.closeErr
}

// finish is the end of Close once the run has ended: the report, and the
// run's verdict.
func (c *Cluster) finish() (*Report, error) {
	r := c.report(true)
	c.mu.Lock()
	failure := c.failure
	c.mu.Unlock()
	if failure != nil {
		return r, failure
	}
	if c.runErr != nil && !errors.Is(c.runErr, context.Canceled) {
		return r, c.runErr
	}
	if c.mon != nil {
		c.mu.Lock()
		bases := make([]int, len(c.nodes))
		for i, n := range c.nodes {
			bases[i] = n.launchBase
		}
		c.mu.Unlock()
		ce, stats := c.mon.finish(c.res, bases)
		r.Checked = c.mon.steps
		if ce != nil {
			return r, ce
		}
		if ce := c.faVerdict(); ce != nil {
			return r, ce
		}
		r.Statistics = stats
	}
	if c.record {
		rec, err := c.recording()
		if err != nil {
			return r, err
		}
		v, stats, err := rec.verify()
		if v != nil || err != nil {
			rec.name()
			ce := &ConformanceError{Recording: rec, Violation: v, Err: err}
			var se *traces.StepError
			if errors.As(err, &se) {
				ce.Step = se.Step
			}
			return r, ce
		}
		if ce := c.faVerdict(); ce != nil {
			rec.name()
			ce.Recording = rec
			return r, ce
		}
		r.Statistics, r.Checked = stats, r.Steps
	}
	return r, nil
}

// faVerdict is FACallers at Close.
func (c *Cluster) faVerdict() *ConformanceError {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.faFinal()
}

// ConformanceError says that a recorded run is not a model execution (Err:
// the model does not allow a step) or violates a property (Violation).
// Recording.TraceFile writes the run for `lfccheck replay`.
type ConformanceError struct {
	Recording *Recording
	Violation *properties.Violation
	Err       error
	// Step is the step of the recording at which the model rejected the
	// run (1-based; 0: a property, or the end state).
	Step int
	// Recent names the last steps up to the failure (at most 32), when
	// the online monitor (RecordMonitor) found it: it keeps no
	// recording, so Recording is nil.
	Recent []string
}

// Conformance returns the online monitor's verdict so far
// (RecordMonitor): its *ConformanceError once the run has stopped
// conforming, nil while it conforms, and for clusters that do not
// monitor themselves. It does not wait for the monitor to catch up; Close
// does.
func (c *Cluster) Conformance() error {
	if c.mon == nil {
		return nil
	}
	if ce := c.mon.failed.Load(); ce != nil {
		return ce
	}
	return nil
}

func (e *ConformanceError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("lfc: the run does not conform to the model: %v", e.Err)
	}
	return fmt.Sprintf("lfc: the run violates %s: %s", e.Violation.Property, e.Violation.Message)
}

// report builds the report; ended says the run has ended (c.done), so
// that its steps may be read.
func (c *Cluster) report(ended bool) *Report {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := &Report{Delivered: c.handled}
	for _, n := range c.nodes {
		r.Sent += n.posted
		r.Kept += n.kept
		for _, t := range n.faAbandoned {
			if t < len(n.values) {
				r.FetchAndAddAbandoned = append(r.FetchAndAddAbandoned, n.values[t])
			} else {
				r.FetchAndAddUnanswered++
			}
		}
	}
	sort.Slice(r.FetchAndAddAbandoned, func(a, b int) bool { return r.FetchAndAddAbandoned[a] < r.FetchAndAddAbandoned[b] })
	if !ended {
		return r.sorted(c)
	}
	if c.res != nil {
		r.Steps = c.res.Steps
	}
	if c.mon != nil {
		select {
		case <-c.mon.done: // the monitor's count is final
			r.Checked = c.mon.steps
		default:
		}
	}
	return r.sorted(c)
}

// sorted fills in the deliveries in flight (c.mu held).
func (r *Report) sorted(c *Cluster) *Report {
	for k, p := range c.payloads {
		if k.tag == mcast.TagMulticast {
			r.InFlight = append(r.InFlight, fmt.Sprintf("%d tree %d #%d to %d destinations", k.origin, k.to, k.seq, p.left))
		} else {
			r.InFlight = append(r.InFlight, fmt.Sprintf("%d->%d #%d", k.origin, k.to, k.seq))
		}
	}
	sort.Strings(r.InFlight)
	return r
}

// String renders the report in one line.
func (r *Report) String() string {
	s := fmt.Sprintf("%d packets sent, %d deliveries, %d steps", r.Sent, r.Delivered, r.Steps)
	if r.Kept > 0 {
		s += fmt.Sprintf(", %d kept", r.Kept)
	}
	if len(r.InFlight) > 0 {
		s += fmt.Sprintf("; %d in flight: %s", len(r.InFlight), strings.Join(r.InFlight, ", "))
	}
	for i, v := range r.Statistics {
		sep := ", "
		if i == 0 {
			sep = "; statistics: "
		}
		s += fmt.Sprintf("%s%s %d", sep, v.Name, v.Value)
	}
	return s
}
