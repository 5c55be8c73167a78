package values

import (
	"runtime"
	"syscall"
	"testing"
)

// cpuClock measures the CPU time of the calling goroutine's thread, so that benchmarks on a busy
// machine still say how fast the code is: b.Loop's wall-clock MB/s falls when other processes take
// the cores, the thread's CPU time does not.
type cpuClock struct{ start int64 }

func threadCPU() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func startCPU() cpuClock {
	runtime.LockOSThread()
	return cpuClock{threadCPU()}
}

// report adds a "cpu-MB/s" metric: bytes per iteration over the thread's CPU time per iteration.
func (c cpuClock) report(b *testing.B, bytes int64) {
	ns := threadCPU() - c.start
	runtime.UnlockOSThread()
	if ns > 0 && c.start > 0 {
		b.ReportMetric(float64(bytes)*float64(b.N)/float64(ns)*1e3, "cpu-MB/s")
	}
}
