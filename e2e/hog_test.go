package e2e

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// cpuHog starts, after the given time, one busy loop per CPU in this
// process: other work taking the machine. The returned func stops it
// (and a hog not yet started).
func cpuHog(t *testing.T, after time.Duration) (stop func()) {
	return cpuHogLoops(t, after, runtime.NumCPU())
}

// cpuHogLoops is cpuHog with loops busy loops.
func cpuHogLoops(t *testing.T, after time.Duration, loops int) (stop func()) {
	var done atomic.Bool
	timer := time.AfterFunc(after, func() {
		t.Logf("CPU hog starts: %d busy loops", loops)
		for range loops {
			go func() {
				x := 0
				for !done.Load() {
					x++
				}
				_ = x
			}()
		}
	})
	return func() { timer.Stop(); done.Store(true) }
}
