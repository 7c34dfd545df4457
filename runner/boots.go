package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/slogate/slogate/compare"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/result"
	"github.com/slogate/slogate/spec"
)

// reboot stops the server and starts it again for boot b of
// measure.boots (docs/method.md#boots): the same stop as at the end of a
// run, so that no process of the last boot is left, and the same start.
// The last boot's log is kept as server.bootN.log.
func (r *run) reboot(ctx context.Context, b int) error {
	r.logf("boot %d of %d: restarting the server (measure.boots = %d)", b, r.boots(), r.boots())
	if err := r.stopServer(); err != nil {
		return err
	}
	r.client.close()
	logPath := filepath.Join(r.cfg.OutDir, "server.log")
	if err := os.Rename(logPath, filepath.Join(r.cfg.OutDir, fmt.Sprintf("server.boot%d.log", b-1))); err != nil && !os.IsNotExist(err) {
		return exit.Infraf("keeping the server log of boot %d: %v", b-1, err)
	}
	r.bootNo = b
	return r.boot(ctx)
}

// stopServer stops the running server (its process group or container)
// and adds its up time to the run's.
func (r *run) stopServer() error {
	err := r.server.stop(r.cfg.StopGrace, r.cfg.ForceStop)
	r.server, r.serverProcess = nil, nil
	if !r.upSince.IsZero() {
		r.upBefore += time.Since(r.upSince)
		r.upSince = time.Time{}
	}
	return err
}

// serverUp is the time the server has been up for this run so far, over
// every boot.
func (r *run) serverUp() time.Duration {
	up := r.upBefore
	if !r.upSince.IsZero() {
		up += time.Since(r.upSince)
	}
	return up
}

// gpuTime is the run's GPU time (docs/method.md#gpu-time).
func (r *run) gpuTime() *result.GPUTime {
	up := r.serverUp()
	g := &result.GPUTime{GPUs: max(r.cfg.Plan.GPUs, 1), ServerS: round(up.Seconds(), 2),
		GPUSeconds: round(r.cfg.Plan.GPUTime(up).Seconds(), 2)}
	var cells float64
	for _, c := range r.results.Prefill {
		cells += c.ElapsedS
	}
	for _, c := range r.results.Decode {
		cells += c.ElapsedS
	}
	for _, c := range r.results.Traffic {
		cells += c.ElapsedS
	}
	g.CellsS = round(cells, 2)
	if r.cfg.Endpoint == "" {
		g.Boots = len(r.startups)
		for _, d := range r.startups {
			g.StartupS = append(g.StartupS, round(d.Seconds(), 2))
		}
	}
	return g
}

// bootCost is a boot's cost for the boot-level sizing: the mean time a
// start took to become ready.
func (r *run) bootCost() time.Duration {
	if len(r.startups) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range r.startups {
		sum += d
	}
	return sum / time.Duration(len(r.startups))
}

// tolerance and alpha are the comparison's (-tolerance, -alpha), or
// compare's defaults.
func (r *run) tolerance() float64 {
	if r.cfg.Tolerance > 0 {
		return r.cfg.Tolerance
	}
	return compare.DefaultTolerance
}

func (r *run) alpha() float64 {
	if r.cfg.Alpha > 0 {
		return r.cfg.Alpha
	}
	return compare.DefaultAlpha
}

// newStopRule is repeat = "auto"'s stopping rule for measure m
// (compare.Sequential, docs/method.md#repeat-auto); a variable so that
// tests can give another.
var newStopRule = func(m result.Measure, tolerance, alpha float64) stopRule {
	return compare.Sequential{Min: max(m.Repeat, spec.MinAutoRepeat), Max: m.MaxRepeat, Alpha: alpha, Tolerance: tolerance}
}
