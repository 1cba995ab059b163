//go:build !linux

package segsearch

// hugePages does nothing here (a hint on Linux).
func hugePages(tab []uint64) {}
