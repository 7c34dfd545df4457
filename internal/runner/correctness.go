package runner

import (
	"context"
	"fmt"

	"github.com/slogate/slogate/internal/event"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/measure"
	"github.com/slogate/slogate/internal/warning"
)

// correctness measures the plan's correctness blocks on the run's last
// boot, after every cell (outside every timed window;
// docs/method.md#correctness): each block's outputs go to
// correctness.jsonl beside results.json, its settings, figures and cost
// to results.json. A block already in the results (a resumed run that
// measured it) is kept.
func (r *run) correctness(ctx context.Context) error {
	blocks := r.cfg.Plan.Correctness
	if len(blocks) == 0 || r.client == nil {
		return nil
	}
	gpus := max(r.cfg.Plan.GPUs, 1)
	for _, c := range blocks {
		if r.results.CorrectnessBlock(c.Name) != nil {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		r.note(event.CorrectnessStarting{Server: r.cfg.Server.Name, Block: c.Name, Prompts: len(c.Items.Items), Concurrency: c.Concurrency})
		rec := measure.Correctness(ctx, r.client, c)
		for _, u := range rec.UnavailableReasons {
			_, words := r.because(u)
			rec.Unavailable = append(rec.Unavailable, words)
		}
		rec.Unfinished = ctx.Err() != nil
		rec.Speculative = r.cfg.Server.Speculative != nil
		rec.GPUSeconds = measure.Round(rec.ElapsedS*float64(gpus), 2)
		if r.cpuServer() { // no GPU: its cost is the server time
			rec.GPUSeconds = 0
		}
		for _, u := range rec.Unavailable {
			r.warn(warning.New(warning.CorrectnessUnavailable, fmt.Sprintf("correctness %q", c.Name), u, nil))
		}
		if rec.Errors > 0 {
			r.warn(r.worded(warning.New(warning.CorrectnessErrors, "", "",
				map[string]float64{warning.FigRequests: float64(rec.Prompts), warning.FigFailed: float64(rec.Errors)}).About(c.Name)))
		}
		r.results.Correctness = append(r.results.Correctness, rec)
		if err := r.results.WriteCorrectness(r.cfg.OutDir); err != nil {
			return exit.Infraf("writing correctness.jsonl: %v", err)
		}
		if err := r.writeResults(); err != nil {
			return err
		}
		if rec.Unfinished { // kept, and measured again on -resume
			return context.Cause(ctx)
		}
		spent := rec.GPUSeconds
		if r.cpuServer() {
			spent = rec.ElapsedS
		}
		r.note(event.CorrectnessDone{Server: r.cfg.Server.Name, Block: c.Name, Outputs: rec.Prompts - rec.Errors,
			ElapsedS: rec.ElapsedS, Spent: spent, CPU: r.cpuServer()})
	}
	return nil
}

// correctnessPending reports whether a correctness block of the spec is
// still to be measured.
func (r *run) correctnessPending() bool {
	for _, c := range r.cfg.Plan.Correctness {
		if r.results.CorrectnessBlock(c.Name) == nil {
			return true
		}
	}
	return false
}
