package dist

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"lfccheck/explore"
	"lfccheck/model"
	"lfccheck/properties"
	"lfccheck/protocols"
	"lfccheck/protocols/mcast"
	"lfccheck/traces"
)

// runLocal runs a distributed search of n workers in this process, each
// with its own checker, on loopback.
func runLocal(t testing.TB, cfg model.Config, n int, opt explore.Options) (explore.Result, Info, *properties.Checker) {
	t.Helper()
	return runChecks(t, cfg, n, Options{Search: opt})
}

// runChecks is runLocal with o's search options and test settings
// (testSlow, testFront); it returns rank 0's checker too.
func runChecks(t testing.TB, cfg model.Config, n int, o Options) (explore.Result, Info, *properties.Checker) {
	t.Helper()
	ms := make([]explore.Model, n)
	for i := range ms {
		ck, err := properties.Build(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ms[i] = ck
	}
	res, info := runWorkers(t, ms, o)
	return res, info, ms[0].(*properties.Checker)
}

// runWorkers runs a distributed search of len(ms) workers in this
// process, worker i with model ms[i], on loopback, with o's search
// options and test settings; it returns rank 0's result.
func runWorkers(t testing.TB, ms []explore.Model, o Options) (explore.Result, Info) {
	t.Helper()
	n := len(ms)
	lis, peers := loopbackListeners(t, n)
	var (
		wg   sync.WaitGroup
		res  explore.Result
		info Info
		errs = make([]error, n)
	)
	for i := range n {
		wg.Go(func() {
			oi := o
			oi.Rank, oi.Peers, oi.Listener = i, peers, lis[i]
			r, in, err := Run(ms[i], oi)
			errs[i] = err
			if i == 0 {
				res, info = r, in
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("worker %d: %v", i, err)
		}
	}
	return res, info
}

// summary is what must be the same in the two searches.
func summary(r explore.Result, ck *properties.Checker) string {
	s := fmt.Sprintf("%s %d states %d transitions depth %d levels %v partial %v trace %v sleep %+v",
		r.Verdict, r.Stats.States, r.Stats.Transitions, r.Stats.Depth, r.Stats.Levels, r.Stats.LevelPartial, r.Trace, r.Sleep)
	if r.Violation != nil {
		s += " " + r.Violation.PropertyName() + ": " + r.Violation.Error()
	}
	return s + fmt.Sprint(" statistics ", ck.Statistics(), " unreached ", ck.Unreached())
}

// eachClaim runs f on every claim and broken variant of every protocol
// that a distributed search can check and breadth-first search completes
// within limit states, with the configuration and the summary of that
// search; it returns how many.
func eachClaim(t *testing.T, limit int64, f func(t *testing.T, cfg model.Config, want string)) int {
	compared := 0
	for _, d := range protocols.All() {
		for _, cl := range d.AllClaims() {
			cfg := cl.Config.Clone()
			cfg.Protocol = d.Name
			t.Run(d.Name+" "+cl.Name, func(t *testing.T) {
				ck, err := properties.Build(cfg)
				if err != nil {
					t.Fatal(err)
				}
				if err := Check(ck, explore.Options{}); err != nil {
					t.Skip(err)
				}
				r, err := explore.BFS(ck, explore.Options{MaxStates: limit})
				if err != nil {
					t.Fatal(err)
				}
				if r.Verdict == explore.Incomplete {
					t.Skip(r.Reason)
				}
				f(t, cfg, summary(r, ck))
				compared++
			})
		}
	}
	return compared
}

// sameWithFingerprints compares 2 workers with the fingerprint store
// (odd ranks slowed by slow: Options.testSlow) with one process's.
func sameWithFingerprints(t *testing.T, cfg model.Config, limit int64, slow time.Duration) {
	t.Helper()
	fck, _ := properties.Build(cfg)
	fr, err := explore.BFS(fck, explore.Options{MaxStates: limit, Fingerprint: true})
	if err != nil {
		t.Fatal(err)
	}
	fgot, _, fdck := runChecks(t, cfg, 2, Options{Search: explore.Options{Fingerprint: true}, testSlow: slow})
	if s, w := summary(fgot, fdck), summary(fr, fck); s != w || fgot.Stats.CollisionProb != fr.Stats.CollisionProb {
		t.Fatalf("fingerprints, 2 workers (slowed %s):\n%s\nbreadth-first search:\n%s", slow, s, w)
	}
}

// TestSameAsBFS searches every claim and broken variant of every protocol
// (up to a bound on states: 20,000, 5,000 with -short, and a million with
// LFCCHECK_DIST_ALL=1, a run of many minutes) with 1, 2 and 4 workers and
// compares with one process's breadth-first search; counterexamples must
// replay. Owners must have left states to the workers that reached them
// first (delegate) in most searches, some ending in a violation.
func TestSameAsBFS(t *testing.T) {
	limit := int64(20_000)
	ns := []int{1, 2, 4}
	switch {
	case os.Getenv("LFCCHECK_DIST_ALL") != "":
		limit = 1_000_000
	case testing.Short():
		limit, ns = 5_000, []int{2}
	}
	var searches, left, failLeft int
	compared := eachClaim(t, limit, func(t *testing.T, cfg model.Config, want string) {
		sameWithFingerprints(t, cfg, limit, 0)
		for _, n := range ns {
			got, info, dck := runLocal(t, cfg, n, explore.Options{})
			if s := summary(got, dck); s != want {
				t.Fatalf("%d workers:\n%s\nbreadth-first search:\n%s", n, s, want)
			}
			if n == 1 && (info.BytesSent != 0 || info.StatesLeft != 0) {
				t.Errorf("one worker sent %d bytes, and was left %d states", info.BytesSent, info.StatesLeft)
			}
			if n > 1 {
				searches++
				if info.StatesLeft > 0 {
					left++
					if got.Verdict == explore.Fail {
						failLeft++
					}
				}
			}
			if got.Verdict == explore.Fail {
				rck, _ := properties.Build(cfg)
				o, _, err := traces.RunCodes(rck, got.Trace, got.Loop)
				if err != nil {
					t.Fatal(err)
				}
				if o.Violation == nil || o.Violation.Property != got.Violation.PropertyName() {
					t.Fatalf("%d workers: the counterexample replays to %+v, not %q", n, o.Violation, got.Violation.PropertyName())
				}
			}
		}
	})
	if compared < 20 {
		t.Fatalf("compared only %d configurations", compared)
	}
	t.Logf("%d searches with more than one worker, %d with states left to the worker that reached them first, %d of them ending in a violation", searches, left, failLeft)
	if left < searches/2 || failLeft < 5 {
		t.Fatalf("states were left to the worker that reached them first in %d searches (%d ending in a violation) of %d", left, failLeft, searches)
	}
}

// TestDelegateOff: with Options.NoDelegate no worker is left states, and
// the search is the same.
func TestDelegateOff(t *testing.T) {
	cfg := mcast.Config("binary", 3, 1, 1)
	ck, err := properties.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want, err := explore.BFS(ck, explore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, info, dck := runChecks(t, cfg, 2, Options{NoDelegate: true})
	if s, w := summary(got, dck), summary(want, ck); s != w || info.StatesLeft != 0 {
		t.Fatalf("with NoDelegate: %d states left\n%s\nbreadth-first search:\n%s", info.StatesLeft, s, w)
	}
}

// TestSharedSameAsBFS searches every claim and broken variant (up to
// 5,000 states; 2,000 and 2 workers only with -short) with 2 and 3
// workers whose odd ranks pause after each of their own states, so that
// the others take states from them (work sharing), giving away the last
// half of the states they have left or (testFront) the first, whose paths
// come before many the taker has expanded already, and with the
// fingerprint store (which must keep the encodings given away): the
// result must still be breadth-first search's, with the same
// counterexample, and states must have been shared, and left to a worker
// that reached them from a state it took (delegate).
func TestSharedSameAsBFS(t *testing.T) {
	limit, ns := int64(5_000), []int{2, 3}
	if testing.Short() {
		limit, ns = 2_000, []int{2}
	}
	const slow = 20 * time.Microsecond
	var shared, failShared, leftTaken int
	compared := eachClaim(t, limit, func(t *testing.T, cfg model.Config, want string) {
		for _, n := range ns {
			for _, front := range []bool{false, true} {
				got, info, dck := runChecks(t, cfg, n, Options{testSlow: slow, testFront: front})
				if s := summary(got, dck); s != want {
					t.Fatalf("%d workers sharing (the first states left: %v):\n%s\nbreadth-first search:\n%s", n, front, s, want)
				}
				if info.leftTaken > 0 {
					leftTaken++
				}
				if info.StatesShared > 0 {
					shared++
					if got.Verdict == explore.Fail {
						failShared++
					}
				}
			}
		}
		sameWithFingerprints(t, cfg, limit, slow)
	})
	t.Logf("%d configurations, %d searches shared states, %d of them ending in a violation; in %d a worker was left states it reached from one it took", compared, shared, failShared, leftTaken)
	if shared < compared/2 || failShared < 5 || leftTaken < compared/4 {
		t.Fatalf("states were shared in %d searches (%d ending in a violation), and left to a worker that reached them from one it took in %d, of %d configurations", shared, failShared, leftTaken, compared)
	}
}

func TestPaths(t *testing.T) {
	var prev []byte
	for i, p := range [][]uint32{{0, 3}, {0, 254}, {0, 255}, {0, 70000}, {1, 0}, {254, 9}, {255, 0}, {300, 1}} {
		var b []byte
		for _, x := range p {
			b = appendIdx(b, x)
		}
		got, err := pathIdx(b)
		if err != nil || !slices.Equal(got, p) {
			t.Fatalf("%v: %v %v", p, got, err)
		}
		if i > 0 && string(prev) >= string(b) {
			t.Fatalf("%v does not sort after the path before it", p)
		}
		prev = b
		parent, last, err := splitLast(b)
		if err != nil || last != p[len(p)-1] || len(parent) == 0 {
			t.Fatalf("split %v: %v %d %v", p, parent, last, err)
		}
	}
}

// TestCheckpointResume stops a search with checkpoints at every level at a
// depth limit, continues it from the checkpoint, and compares with one
// process's search; a checkpoint of another search is refused.
func TestCheckpointResume(t *testing.T) {
	cfg := mcast.Config("binary", 3, 1, 1)
	ck, err := properties.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := explore.BFS(ck, explore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := summary(r, ck)
	dir := t.TempDir()
	opt := explore.Options{Checkpoint: dir, CheckpointEvery: time.Nanosecond, CheckpointID: "test", MaxDepth: 8}
	got, info, _ := runLocal(t, cfg, 2, opt)
	if got.Verdict != explore.Incomplete || info.Checkpoint == nil || !info.Checkpoint.Kept || info.Checkpoint.Depth != 8 {
		t.Fatalf("%s %s %+v", got.Verdict, got.Reason, info.Checkpoint)
	}
	opt.MaxDepth = 0
	opt.CheckpointID = "other"
	lis, _ := net.Listen("tcp", "127.0.0.1:0")
	if _, _, err := Run(ck, Options{Peers: []string{lis.Addr().String()}, Listener: lis, Search: opt}); err == nil || !strings.Contains(err.Error(), "of another search") {
		t.Fatalf("another search's checkpoint: %v", err)
	}
	opt.CheckpointID = "test"
	got, info, dck := runLocal(t, cfg, 2, opt)
	if s := summary(got, dck); s != want {
		t.Fatalf("resumed:\n%s\nbreadth-first search:\n%s", s, want)
	}
	if !info.Checkpoint.Resumed || info.Checkpoint.Kept {
		t.Fatalf("%+v", info.Checkpoint)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("left in the checkpoint directory: %v", left)
	}
}

// TestCheckpointDamaged loads a worker's checkpoint file changed in
// many ways, each with its CRC made right again (a file written wrong,
// not one damaged on disk, which the CRC catches): every load ends with
// an error that names the file, or loads a search, never a panic or a
// hang; the file as written loads.
func TestCheckpointDamaged(t *testing.T) {
	cfg := mcast.Config("binary", 3, 1, 1)
	dir := t.TempDir()
	opt := explore.Options{Checkpoint: dir, CheckpointEvery: time.Nanosecond, CheckpointID: "test", MaxDepth: 6}
	if got, info, _ := runLocal(t, cfg, 2, opt); got.Verdict != explore.Incomplete || info.Checkpoint == nil || !info.Checkpoint.Kept {
		t.Fatalf("%s %s %+v", got.Verdict, got.Reason, info.Checkpoint)
	}
	path := workerFile(dir, 1, 2, 6)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	load := func(data []byte) error {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		ck, err := properties.Build(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return newWorker(ck, 1, 2).load(dir, 6)
	}
	if err := load(orig); err != nil {
		t.Fatalf("the checkpoint as written: %v", err)
	}
	body := orig[:len(orig)-4]
	sealed := func(b []byte) []byte { return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b)) }
	flipped := slices.Clone(orig)
	flipped[len(flipped)/2] ^= 0x10
	if err := load(flipped); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("a byte changed on disk: %v", err)
	}
	// A file of the format before (lfccheck-dist-1, which had no segment
	// lengths) is refused as such.
	var old enc
	old.str("lfccheck-dist-1")
	if err := load(sealed(append(old.b, body[len(ckptFormat)+1:]...))); err == nil || !strings.Contains(err.Error(), `format "lfccheck-dist-1"`) || !strings.Contains(err.Error(), path) {
		t.Errorf("an old format: %v", err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	errs := 0
	for i := range 300 {
		b := slices.Clone(body)
		switch i % 3 {
		case 0: // a byte changed
			b[rng.IntN(len(b))] = byte(rng.IntN(256))
		case 1: // cut short
			b = b[:rng.IntN(len(b))]
		default: // a huge number where a length or count may be
			at := rng.IntN(len(b))
			b = append(append(b[:at:at], 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f), b[at:]...)
		}
		if err := load(sealed(b)); err != nil {
			errs++
			if !strings.Contains(err.Error(), path) {
				t.Errorf("change %d: the error does not name the file: %v", i, err)
			}
		}
	}
	t.Logf("%d of 300 changed files refused", errs)
	if errs < 150 {
		t.Errorf("only %d of 300 changed files refused", errs)
	}
}
