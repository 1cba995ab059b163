package dist

import (
	"os"
	"strconv"
	"syscall"
	"testing"
	"unsafe"
)

// TestPinCPU binds the test process to its first CPU, checks every
// thread's mask, and gives the threads their mask back.
func TestPinCPU(t *testing.T) {
	var saved cpuMask
	if err := getAffinity(&saved); err != nil {
		t.Skip("no affinity:", err)
	}
	restore := func() {
		tasks, _ := os.ReadDir("/proc/self/task")
		for _, ts := range tasks {
			if tid, err := strconv.Atoi(ts.Name()); err == nil {
				_ = setAffinity(tid, &saved)
			}
		}
	}
	defer restore()
	if cpu := pinCPU(0, 1<<20); cpu != -1 {
		t.Fatalf("pinCPU with more workers than CPUs bound the process to CPU %d", cpu)
	}
	cpu := pinCPU(0, 1)
	if cpu < 0 || saved[cpu/64]&(1<<(cpu%64)) == 0 {
		t.Fatalf("pinCPU(0, 1) = %d, not one of the CPUs allowed", cpu)
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var want cpuMask
	want[cpu/64] = 1 << (cpu % 64)
	for _, ts := range tasks {
		tid, err := strconv.Atoi(ts.Name())
		if err != nil {
			continue
		}
		var m cpuMask
		if _, _, e := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, uintptr(tid), unsafe.Sizeof(m), uintptr(unsafe.Pointer(&m))); e != 0 {
			continue // (the thread ended)
		}
		if m != want {
			t.Errorf("thread %d: mask %x, want %x", tid, m[0], want[0])
		}
	}
}
