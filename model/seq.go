package model

import "strconv"

// Sequence numbers are modular: a stream numbers its packets 1, 2, ...,
// SeqSpace and starts again at 1 (0 numbers nothing: a StreamLog's "none
// yet"). Order between two numbers is the shorter way round the cycle:
// b follows a when it is at most SeqWindow steps ahead of it, so a
// stream's order is well defined as long as fewer than SeqWindow of its
// packets are in flight at once (a window the credits bound far below).
const (
	SeqSpace  = 65535
	SeqWindow = SeqSpace / 2
)

// LogWindow is how far ahead of its contiguous prefix a StreamLog records
// numbers handed over out of order.
const LogWindow = 64

// SeqNext is the number after s (1 after SeqSpace; 1 after 0).
func SeqNext(s uint16) uint16 {
	if s >= SeqSpace {
		return 1
	}
	return s + 1
}

// SeqAhead is how many steps b is ahead of a going round the cycle
// 1..SeqSpace (0 stands for the position before 1, which is SeqSpace's):
// 0 when they are equal, 1 when b is SeqNext(a), up to SeqSpace-1.
func SeqAhead(a, b uint16) int {
	x, y := int(a)%SeqSpace, int(b)%SeqSpace
	return (y - x + SeqSpace) % SeqSpace
}

// SeqAfter reports whether b follows a in stream order: b is 1 to
// SeqWindow steps ahead of a.
func SeqAfter(a, b uint16) bool {
	d := SeqAhead(a, b)
	return d >= 1 && d <= SeqWindow
}

// SeqOf is the number the n-th packet of a stream gets (n >= 1), and 0
// for n = 0.
func SeqOf(n int) uint16 {
	if n <= 0 {
		return 0
	}
	return uint16((n-1)%SeqSpace + 1)
}

// String renders the log as the numbers handed over: "1..Base" and the
// ones recorded out of order.
func (l StreamLog) String() string {
	s := "nothing"
	if l.Base != 0 {
		s = "packets ..#" + strconv.Itoa(int(l.Base))
	}
	for i := 0; i < LogWindow; i++ {
		if l.Mask&(1<<i) != 0 {
			s += " #" + strconv.Itoa(int(SeqOf(int(l.Base)+1+i)))
		}
	}
	return s
}
