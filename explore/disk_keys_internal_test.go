package explore

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSipHashVectors checks SipHash-2-4 against the reference vectors of
// its paper (key 00 01 ... 0f; the empty message and 00 01 ... 0e).
func TestSipHashVectors(t *testing.T) {
	const k0, k1 = 0x0706050403020100, 0x0f0e0d0c0b0a0908
	msg := make([]byte, 15)
	for i := range msg {
		msg[i] = byte(i)
	}
	if got := sipHash24(k0, k1, nil); got != 0x726fdb47dd0e0e31 {
		t.Errorf("empty message: %#x", got)
	}
	if got := sipHash24(k0, k1, msg); got != 0xa129ca6149be45e5 {
		t.Errorf("15 bytes: %#x", got)
	}
	if diskFingerprint(msg) == diskFingerprint(msg[:14]) || diskFingerprint(msg) != diskFingerprint(slices.Clone(msg)) {
		t.Error("fingerprints do not tell the messages apart, or differ for equal ones")
	}
}

// TestFPFileRoundTrip writes sorted fingerprints (random, at the ends of
// the range, one, none, across block bounds) and reads them back; the
// random ones take about log2(2^64/n)+2 bits each.
func TestFPFileRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	for _, n := range []int{0, 1, 2, 1023, 1024, 1025, 20000} {
		set := map[uint64]bool{}
		for len(set) < n {
			set[rng.Uint64()] = true
		}
		fps := make([]uint64, 0, n+2)
		for fp := range set {
			fps = append(fps, fp)
		}
		if n >= 2 {
			fps = append(fps, 0, math.MaxUint64)
		}
		slices.Sort(fps)
		fps = slices.Compact(fps)
		path := filepath.Join(dir, "f.fps")
		w, err := createFPs(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, fp := range fps {
			w.add(fp)
		}
		m, err := w.close(false)
		if err != nil {
			t.Fatal(err)
		}
		r, err := openFPs(path, m, 4096)
		if err != nil {
			t.Fatal(err)
		}
		var got []uint64
		for {
			ok, err := r.next()
			if err != nil {
				t.Fatalf("n=%d: %v", n, err)
			}
			if !ok {
				break
			}
			got = append(got, r.cur)
		}
		r.close()
		if !slices.Equal(got, fps) {
			t.Fatalf("n=%d: read back %d fingerprints, not the %d written", n, len(got), len(fps))
		}
		if n == 20000 {
			perBits := float64(8*m.Bytes) / float64(len(fps))
			if want := math.Log2(math.Pow(2, 64)/float64(len(fps))) + 2.1; perBits > want {
				t.Errorf("%.2f bits per fingerprint, more than %.2f", perBits, want)
			}
			t.Logf("%d fingerprints: %.2f bits each", len(fps), perBits)
			testDamaged(t, path, m, func() error { return verifyBits(path, m, false) })
		}
	}
}

// testDamaged changes bytes of a file one by one, and cuts it short: the
// check fails each time, without a panic.
func testDamaged(t *testing.T, path string, m fileMeta, check func() error) {
	t.Helper()
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, off := range []int{0, 1, len(orig) / 3, len(orig) / 2, len(orig) - 5, len(orig) - 1} {
		b := slices.Clone(orig)
		b[off] ^= 0x24
		os.WriteFile(path, b, 0o644)
		if err := check(); err == nil {
			t.Errorf("byte %d of %d changed: no error", off, len(b))
		}
	}
	os.WriteFile(path, orig[:len(orig)-3], 0o644)
	if err := check(); err == nil {
		t.Error("cut short: no error")
	}
	os.WriteFile(path, orig, 0o644)
	if err := check(); err != nil {
		t.Errorf("restored: %v", err)
	}
}

// TestParentsFileRoundTrip writes parent records (non-decreasing parents,
// small and large successor indexes) and reads them back.
func TestParentsFileRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	path := filepath.Join(t.TempDir(), "p.parents")
	w, err := createParents(path)
	if err != nil {
		t.Fatal(err)
	}
	type rec struct {
		p uint64
		j uint32
	}
	var want []rec
	p := uint64(0)
	for i := range 5000 {
		p += uint64(rng.IntN(3))
		j := uint32(rng.IntN(12))
		if i == 4000 {
			p, j = p+100000, 1<<31
		}
		want = append(want, rec{p, j})
		w.add(p, j)
	}
	m, err := w.close(false)
	if err != nil {
		t.Fatal(err)
	}
	r, err := openParents(path, m)
	if err != nil {
		t.Fatal(err)
	}
	var got []rec
	for {
		ok, err := r.next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		got = append(got, rec{r.p, r.j})
	}
	r.close()
	if !slices.Equal(got, want) {
		t.Fatalf("read back %d records, not the %d written", len(got), len(want))
	}
	t.Logf("%d parent records: %.2f bits each", len(want), float64(8*m.Bytes)/float64(len(want)))
	testDamaged(t, path, m, func() error { return verifyBits(path, m, true) })
}
