package main

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// cgroupMemoryFiles are where a process learns its memory limit: cgroup v2's memory.max ("max" or a
// number of bytes) and cgroup v1's memory.limit_in_bytes (a number, huge when there is no limit).
var cgroupMemoryFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// memorySettings is how stdiff tunes the garbage collector.
type memorySettings struct {
	// tune is false when the user set GOGC or GOMEMLIMIT: the runtime has read them, and stdiff
	// changes nothing (not even for commands that read many files).
	tune bool
	// softLimit is, when tune, the heap size up to which stdiff does not collect garbage.
	softLimit int64
}

// maxSoftLimit is the largest soft limit: what a header-only command may hold without collecting.
const maxSoftLimit = 512 << 20

// decideMemory decides how to tune the collector from the values of GOGC and GOMEMLIMIT ("" when
// unset) and the contents of the cgroup memory limit files (cgroupMemoryFiles; "" when absent). When
// either variable is set, nothing is tuned. Otherwise the soft limit is 512 MiB, or 3/4 of the
// tightest cgroup limit when that is less, so that the process collects before the container's
// limit kills it.
func decideMemory(gogc, gomemlimit string, cgroupLimits []string) memorySettings {
	if gogc != "" || gomemlimit != "" {
		return memorySettings{}
	}
	limit := int64(maxSoftLimit)
	for _, c := range cgroupLimits {
		n, err := strconv.ParseInt(strings.TrimSpace(c), 10, 64)
		if err != nil || n <= 0 { // "max", absent, unreadable
			continue
		}
		limit = min(limit, n/4*3)
	}
	return memorySettings{tune: true, softLimit: max(limit, 1)}
}

// readMemorySettings decides from this process's environment and cgroup.
func readMemorySettings() memorySettings {
	var limits []string
	for _, f := range cgroupMemoryFiles {
		if b, err := os.ReadFile(f); err == nil {
			limits = append(limits, string(b))
		}
	}
	return decideMemory(os.Getenv("GOGC"), os.Getenv("GOMEMLIMIT"), limits)
}

// apply sets the collector as s says: no collection until the heap nears the soft limit, or, when s
// does not tune, nothing at all.
func (s memorySettings) apply() {
	gcTuned = s.tune
	if !s.tune {
		return
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(s.softLimit)
}

// gcTuned is false when the user's GOGC or GOMEMLIMIT govern the collector (see memoryPolicy).
var gcTuned = true
