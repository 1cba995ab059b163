package dist

import (
	"math/bits"
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// cpuMask is a CPU affinity mask as the kernel takes it (1024 CPUs).
type cpuMask [16]uint64

func getAffinity(m *cpuMask) error {
	_, _, e := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, 0, unsafe.Sizeof(*m), uintptr(unsafe.Pointer(m)))
	if e != 0 {
		return e
	}
	return nil
}

func setAffinity(tid int, m *cpuMask) error {
	_, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, uintptr(tid), unsafe.Sizeof(*m), uintptr(unsafe.Pointer(m)))
	if e != 0 {
		return e
	}
	return nil
}

// pinCPU binds this process to the i-th of the CPUs it may run on, if it
// may run on at least n (one per worker process of the machine): every
// thread it has now, and so every thread they start. It returns the CPU,
// or -1 if it left the process as it was.
func pinCPU(i, n int) int {
	var allowed cpuMask
	if getAffinity(&allowed) != nil {
		return -1
	}
	count := 0
	for _, w := range allowed {
		count += bits.OnesCount64(w)
	}
	if count < n || i >= count {
		return -1
	}
	cpu := -1
	for c, k := 0, 0; c < len(allowed)*64; c++ {
		if allowed[c/64]&(1<<(c%64)) == 0 {
			continue
		}
		if k == i {
			cpu = c
			break
		}
		k++
	}
	var one cpuMask
	one[cpu/64] = 1 << (cpu % 64)
	// Twice: a thread started while the first pass ran may have been
	// missed (one started after a thread was pinned is pinned too).
	for range 2 {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return -1
		}
		for _, t := range tasks {
			if tid, err := strconv.Atoi(t.Name()); err == nil {
				_ = setAffinity(tid, &one) // (a thread may have ended)
			}
		}
	}
	return cpu
}
