package main

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestDecideMemory: GOGC or GOMEMLIMIT, when set, leave the collector to the runtime; otherwise the
// soft limit is 512 MiB or 3/4 of the cgroup's memory limit, whichever is less.
func TestDecideMemory(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name, gogc, gomemlimit string
		cgroup                 []string
		want                   memorySettings
	}{
		{"nothing set, no cgroup", "", "", nil, memorySettings{true, 512 * mib}},
		{"GOGC", "100", "", nil, memorySettings{}},
		{"GOGC off", "off", "", []string{"268435456\n"}, memorySettings{}},
		{"GOMEMLIMIT", "", "8MiB", nil, memorySettings{}},
		{"both", "50", "1GiB", nil, memorySettings{}},
		{"cgroup v2 without a limit", "", "", []string{"max\n"}, memorySettings{true, 512 * mib}},
		{"cgroup v2 of 256 MiB", "", "", []string{"268435456\n"}, memorySettings{true, 192 * mib}},
		{"cgroup v2 of 4 GiB", "", "", []string{"4294967296\n"}, memorySettings{true, 512 * mib}},
		{"cgroup v1 without a limit", "", "", []string{"9223372036854771712\n"}, memorySettings{true, 512 * mib}},
		{"cgroup v1 of 128 MiB", "", "", []string{"134217728\n"}, memorySettings{true, 96 * mib}},
		{"the tighter of two", "", "", []string{"268435456\n", "134217728\n"}, memorySettings{true, 96 * mib}},
		{"unreadable content", "", "", []string{"", "junk", "-1", "0"}, memorySettings{true, 512 * mib}},
		{"a tiny limit", "", "", []string{"1"}, memorySettings{true, 1}},
	} {
		if got := decideMemory(c.gogc, c.gomemlimit, c.cgroup); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestMemorySettingsApplied: main's settings turn collection off below the soft limit only when stdiff
// tunes; with GOGC or GOMEMLIMIT set, the runtime's settings (and those commands that read many files
// would get) stay as they are.
func TestMemorySettingsApplied(t *testing.T) {
	gc, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	defer func() { debug.SetGCPercent(gc); debug.SetMemoryLimit(limit); gcTuned = true }()

	decideMemory("75", "", nil).apply()
	memoryPolicy(&dupesCmd{})
	if got, lim := debug.SetGCPercent(100), debug.SetMemoryLimit(-1); got != 100 || lim != math.MaxInt64 {
		t.Errorf("with GOGC set: GC percent %d, memory limit %d; want the runtime's 100 and none", got, lim)
	}
	decideMemory("", "", []string{"268435456"}).apply()
	if got, lim := debug.SetGCPercent(100), debug.SetMemoryLimit(-1); got != -1 || lim != 192<<20 {
		t.Errorf("unset, in a 256 MiB cgroup: GC percent %d, memory limit %d; want -1 and 192 MiB", got, lim)
	}
}
