package explore

import (
	"os"
	"strconv"
	"strings"
)

// DefaultMemoryLimit is 60% of the memory available to the process: the
// smaller of physical memory and a cgroup (v2 or v1) limit; 0 (no limit)
// if neither is known. A search too big for the machine then ends as
// incomplete instead of being killed.
func DefaultMemoryLimit() uint64 {
	avail := physicalMemory(readFile("/proc/meminfo"))
	for _, c := range []uint64{
		cgroupLimit(readFile("/sys/fs/cgroup/memory.max")),
		cgroupLimit(readFile("/sys/fs/cgroup/memory/memory.limit_in_bytes")),
	} {
		if c > 0 && (avail == 0 || c < avail) {
			avail = c
		}
	}
	return avail / 10 * 6
}

func readFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}

// physicalMemory reads MemTotal from /proc/meminfo's contents.
func physicalMemory(meminfo string) uint64 {
	for _, line := range strings.Split(meminfo, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "MemTotal:" {
			if kb, err := strconv.ParseUint(f[1], 10, 64); err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}

// cgroupLimit reads a cgroup memory limit file's contents; "max" and the
// huge values that mean "no limit" give 0.
func cgroupLimit(s string) uint64 {
	v, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil || v == 0 || v >= 1<<60 {
		return 0
	}
	return v
}
