package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/event"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/lifecycle"
	"github.com/slogate/slogate/internal/measure"
	"github.com/slogate/slogate/internal/plan"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
)

// reboot stops the server and starts it again for boot b of
// measure.boots (docs/method.md#boots): the same stop as at the end of a
// run, so that no process of the last boot is left, and the same start.
// The last boot's log is kept as server.bootN.log.
func (r *run) reboot(ctx context.Context, b int) error {
	r.note(event.Rebooting{Boot: b, Boots: r.boots()})
	if err := r.stopServer(fmt.Sprintf("normal stop, boot %d of %d starts next", b, r.boots())); err != nil {
		return err
	}
	r.client.Close()
	logPath := filepath.Join(r.cfg.OutDir, "server.log")
	if err := os.Rename(logPath, filepath.Join(r.cfg.OutDir, fmt.Sprintf("server.boot%d.log", b-1))); err != nil && !os.IsNotExist(err) {
		return exit.Infraf("keeping the server log of boot %d: %v", b-1, err)
	}
	r.bootNo = b
	return r.boot(ctx)
}

// keepAttemptLog keeps, before a resumed run starts the server, the
// server.log of the run it resumes (why that run ended: a signal, a
// crash) as server.attemptN.log, N the first number free (1 for the
// first resume), instead of letting the new server's log replace it.
func (r *run) keepAttemptLog() error {
	logPath := filepath.Join(r.cfg.OutDir, "server.log")
	if _, err := os.Stat(logPath); err != nil {
		return nil // the run resumed launched no server (or its log is gone)
	}
	for n := 1; ; n++ {
		kept := filepath.Join(r.cfg.OutDir, fmt.Sprintf("server.attempt%d.log", n))
		if _, err := os.Lstat(kept); err == nil {
			continue
		}
		if err := os.Rename(logPath, kept); err != nil {
			return exit.Infraf("-resume: keeping the resumed run's server log: %v", err)
		}
		r.note(event.AttemptLogKept{Path: kept})
		return nil
	}
}

// boot starts the server (or checks the endpoint) and waits until it is
// ready (package lifecycle); its up time counts from the launch.
func (r *run) boot(ctx context.Context) error {
	srv := r.cfg.Server
	if r.cfg.Endpoint != "" {
		r.client = lifecycle.NewClient(r.cfg.Endpoint, srv.APIKey, srv.ServedName()).ForServer(srv)
		r.server = lifecycle.Endpoint(r.client)
		r.note(event.MeasuringEndpoint{Base: r.client.Base()})
		if r.boots() > 1 {
			return endpointBoots(r.boots())
		}
		info, err := r.server.WaitEndpoint(ctx, endpointReadyTimeout)
		if err != nil {
			return err
		}
		r.upSince = time.Now()
		r.maxModelLen = info.MaxModelLen
		return nil
	}
	logPath := filepath.Join(r.cfg.OutDir, "server.log")
	l, err := lifecycle.NewLauncher(lifecycle.LaunchConfig{Server: srv, Sim: r.cfg.Sim, SimExecutable: r.cfg.SimExecutable,
		Boot: r.bootNo, RunID: strings.TrimPrefix(r.runID, "slogate-"), LogPath: logPath, Note: func(n event.LaunchNote) { r.note(n) }, Warn: r.warn})
	if l != nil {
		r.client = l.Client
	}
	if err != nil {
		return err
	}
	r.upSince = time.Now()
	if r.server, err = l.Start(ctx); err != nil {
		return err
	}
	timeout := srv.ReadyTimeout
	if timeout <= 0 { // a server block built without spec.Load
		timeout = spec.DefaultReadyTimeout
	}
	t0 := time.Now()
	info, err := r.server.WaitReady(ctx, timeout, func(n event.LaunchNote) { r.note(n) })
	if err != nil {
		return err
	}
	r.maxModelLen = info.MaxModelLen
	r.startups = append(r.startups, time.Since(t0))
	r.note(event.ServerReady{Startup: time.Since(t0), LogPath: logPath})
	return nil
}

// discover reads the version, KV capacity, max_model_len, GPUs and the
// facts the server states (package lifecycle), and prepares the workload's
// prompt builder.
func (r *run) discover(ctx context.Context) error {
	srv := r.cfg.Server
	facts := &r.results.Server
	kv := r.server.Discover(ctx, srv, facts)
	r.kvPool = plan.KVPool{Tokens: kv.Tokens, Engines: kv.Engines, Slots: kv.Slots}
	r.kvRead = kv.Read
	if kv.Warning.Summary != "" {
		r.warn(kv.Warning)
	}
	prompts, mml, err := measure.NewPrompts(ctx, r.client, r.cfg.Spec.Workload, r.results.Measure.Endpoint == "chat")
	if err != nil {
		return err
	}
	r.prompts = prompts
	statedMaxModelLen := r.maxModelLen // from GET /v1/models; 0: not listed
	if r.maxModelLen == 0 && srv.MaxModelLen != nil {
		r.maxModelLen = *srv.MaxModelLen
	}
	if r.maxModelLen == 0 {
		r.maxModelLen = mml
	}
	facts.MaxModelLen = r.maxModelLen
	warnings, unstated := r.server.ReadStatedFacts(ctx, srv, facts, statedMaxModelLen)
	for _, w := range warnings {
		r.warn(w)
	}
	for _, f := range unstated {
		r.note(event.ServerFact{Server: srv.Name, Fact: f.Fact, Asked: f.Asked})
	}
	r.note(event.ServerFacts{Server: srv.Name, Version: facts.Version, MaxModelLen: r.maxModelLen, KVTokens: r.kvPool.Tokens, KVEngines: r.kvPool.Engines, KVSlots: r.kvPool.Slots, KVSource: facts.KVCacheSource, KVRead: r.kvRead})
	return ctx.Err()
}

// stopServer stops the running server (its process group or container),
// saying why in server.log, and adds its up time to the run's.
func (r *run) stopServer(why string) error {
	err := r.server.Stop(why, r.cfg.StopGrace, r.cfg.ForceStop)
	r.server = nil
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

// cpuServer says the server runs without GPUs: its spec says it is a CPU
// build (device = "cpu"), or its engine has CPU builds
// (engine.Syntax.CPUBuilds: llama.cpp) and discovery found no GPU.
func (r *run) cpuServer() bool {
	return r.cfg.Server.CPUBuild() || r.cfg.Server.SyntaxOf().CPUBuilds && len(r.results.Server.GPUs) == 0
}

// gpuSeconds is d × the plan's GPUs, 0 on a CPU server.
func (r *run) gpuSeconds(d time.Duration) float64 {
	if r.cpuServer() {
		return 0
	}
	return measure.Round(r.cfg.Plan.GPUTime(d).Seconds(), 2)
}

// gpuTime is the run's GPU time (docs/method.md#gpu-time).
func (r *run) gpuTime() *result.GPUTime {
	up := r.serverUp()
	g := &result.GPUTime{GPUs: max(r.cfg.Plan.GPUs, 1), ServerS: measure.Round(up.Seconds(), 2),
		GPUSeconds: r.gpuSeconds(up)}
	if r.cpuServer() {
		g.CPU, g.CPUBuild, g.GPUs = true, r.cfg.Server.CPUBuild(), 0
	}
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
	g.CellsS = measure.Round(cells, 2)
	if r.cfg.Endpoint == "" {
		g.Boots = len(r.startups)
		for _, d := range r.startups {
			g.StartupS = append(g.StartupS, measure.Round(d.Seconds(), 2))
		}
	}
	// A resumed run's cells include those the run it continues measured:
	// its cost is both runs' (cells_s counts every cell kept).
	if p := r.cfg.Previous; r.cfg.Resume != nil && p != nil && p.GPUTime != nil {
		g.ServerS = measure.Round(g.ServerS+p.GPUTime.ServerS, 2)
		g.GPUSeconds = measure.Round(g.GPUSeconds+p.GPUTime.GPUSeconds, 2)
		g.Boots += p.GPUTime.Boots
		g.StartupS = append(slices.Clone(p.GPUTime.StartupS), g.StartupS...)
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
func (r *run) tolerance() float64 { return r.cfg.Policy.Resolved().Tolerance }

func (r *run) alpha() float64 { return r.cfg.Policy.Resolved().Alpha }

// newStopRule is repeat = "auto"'s stopping rule for measure m
// (compare.Sequential, docs/method.md#repeat-auto); a variable so that
// tests can give another.
var newStopRule = func(m result.Measure, tolerance, alpha float64) stopRule {
	return compare.Sequential{Min: max(m.Repeat, spec.MinAutoRepeat), Max: m.MaxRepeat, Alpha: alpha, Tolerance: tolerance}
}
