//go:build linux

package segsearch

import (
	"syscall"
	"unsafe"
)

// hugePages asks the kernel to back tab with huge pages (a hint; the
// visited set's random probes then miss the TLB less: about 7% faster
// in alternating benchmark runs, docs/results.md).
func hugePages(tab []uint64) {
	if len(tab) == 0 {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&tab[0])), len(tab)*8)
	_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE)
}
