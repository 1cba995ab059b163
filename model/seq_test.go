package model

import "testing"

func TestSeqArithmeticWraps(t *testing.T) {
	for _, c := range []struct {
		a, b  uint16
		ahead int
		after bool
	}{
		{0, 1, 1, true}, {1, 2, 1, true}, {SeqSpace, 1, 1, true}, {0, SeqSpace, 0, false}, // 0 is the position of SeqSpace
		{SeqSpace - 1, 2, 3, true}, {5, 5, 0, false}, {5, 4, SeqSpace - 1, false},
		{1, 1 + SeqWindow, SeqWindow, true}, {1, 2 + SeqWindow, SeqWindow + 1, false},
	} {
		if got := SeqAhead(c.a, c.b); got != c.ahead {
			t.Errorf("SeqAhead(%d, %d) = %d, want %d", c.a, c.b, got, c.ahead)
		}
		if got := SeqAfter(c.a, c.b); got != c.after {
			t.Errorf("SeqAfter(%d, %d) = %v, want %v", c.a, c.b, got, c.after)
		}
	}
	for n, want := range map[int]uint16{0: 0, 1: 1, SeqSpace: SeqSpace, SeqSpace + 1: 1, 3*SeqSpace + 7: 7} {
		if got := SeqOf(n); got != want {
			t.Errorf("SeqOf(%d) = %d, want %d", n, got, want)
		}
	}
}

// TestStreamLogAcrossTheWrap hands a log 200,000 numbers in order (three
// wraps) with a few out of order, and checks what it says at each point.
func TestStreamLogAcrossTheWrap(t *testing.T) {
	var l StreamLog
	const n = 200000
	for k := 1; k <= n; k++ {
		s := SeqOf(k)
		if k%50000 == 0 && k < n { // hand k+1 first, then k
			s1 := SeqOf(k + 1)
			l.Add(s1)
			if !l.Has(s1) || l.Has(s) || l.Complete(k) {
				t.Fatalf("k=%d: after %d out of order: %s", k, s1, l)
			}
			l.Add(s)
			if !l.Complete(k+1) || l.Mask != 0 {
				t.Fatalf("k=%d: %s, want a prefix to %d", k, l, SeqOf(k+1))
			}
			k++
			continue
		}
		if l.Has(s) {
			t.Fatalf("k=%d: number %d before it was handed over", k, s)
		}
		l.Add(s)
		if !l.Has(s) || !l.Complete(k) {
			t.Fatalf("k=%d: %s after handing %d", k, l, s)
		}
	}
	if !l.Complete(n) || l.Complete(n-1) || l.Complete(n+1) {
		t.Fatalf("end: %s", l)
	}
	// Behind the prefix (a duplicate) and ahead beyond the window.
	if !l.Has(SeqOf(n-100)) || l.Has(SeqOf(n+1)) {
		t.Fatalf("%s: Has is wrong around the prefix", l)
	}
	far := l
	far.Add(SeqOf(n + LogWindow + 1))
	if far.Base != l.Base || far.Mask != 0 {
		t.Fatalf("a number beyond the window was recorded: %s", far)
	}
	var fresh StreamLog
	if fresh.Has(SeqSpace) || fresh.Has(0) || !fresh.Complete(0) || fresh.Complete(SeqSpace) {
		t.Fatalf("an empty log: %s", fresh)
	}
}
