//go:build !linux

package dist

// pinCPU binds the process to a CPU on Linux only; elsewhere it does nothing.
func pinCPU(i, n int) int { return -1 }
