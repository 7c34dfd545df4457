package runner

import (
	"context"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/engine"
	"github.com/slogate/slogate/internal/engine/registry"
	"github.com/slogate/slogate/internal/event"
	"github.com/slogate/slogate/internal/measure"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// meter is what measuring a cell now needs (package measure), from the
// run's state: the server of this boot, what discovery learned, the spec's
// measure block, and the run's requests.jsonl, warnings and observer.
func (r *run) meter() *measure.Meter {
	m := r.measure()
	return &measure.Meter{Server: r.server, Spec: r.cfg.Server, Workload: r.cfg.Spec.Workload, Prompts: r.prompts,
		Window: r.window(), MaxOutput: m.MaxOutput, Percentiles: m.PercentilesOf(), MaxModelLen: r.maxModelLen,
		KVTokens: r.kvPool.Tokens, KVSource: r.results.Server.KVCacheSource, KVBlock: r.results.Server.BlockSize,
		SteadyHold: r.cfg.SteadyHold, StreamIdleTimeout: r.cfg.StreamIdleTimeout,
		Record: r.requests.write, Progress: r.progress, Warn: r.warn, Note: func(n event.MeterNote) { r.note(n) },
		ReasonText: r.cfg.ReasonText, WarningText: r.cfg.WarningText}
}

// progress tells the observer a cell's live state, with where the run is.
func (r *run) progress(p event.CellProgress) {
	r.observer.Progress(event.Progress{CellProgress: p, CellsDone: r.cellsDone, Cells: r.cellsTotal, ETA: r.eta()})
}

// decodeOnce measures decode cell ref once (measure.Meter.Decode), with the
// KV cross-check in the first cell of one stream of each context that
// gives one (docs/method.md#kv-capacity). repeat is the run's number for
// requests.jsonl (0 when the cell runs once).
func (r *run) decodeOnce(ctx context.Context, ref vocab.CellRef, bodies [][]byte, repeat int) (result.DecodeCell, error) {
	c, err := r.meter().Decode(ctx, ref, bodies, repeat, !r.kvChecked[ref.Context])
	if c.KVUsageCheck != nil {
		r.kvChecked[ref.Context] = true
	}
	return c, err
}

// trafficCell measures one traffic cell (measure.Meter.Traffic) with the
// context's decode request bodies; saturated while its server was
// starved, it is unmeasurable (unlessStarved).
func (r *run) trafficCell(ctx context.Context, ref vocab.CellRef, bodies [][]byte) (result.TrafficCell, error) {
	r.observer.CellStart(ref)
	var c result.TrafficCell
	var err error
	starved := r.starvedDuring(func() { c, err = r.meter().Traffic(ctx, ref, r.cfg.Spec.TrafficBlock(ref.Matrix), bodies) })
	r.unlessStarved(&c, starved)
	return c, err
}

// decode measures one decode cell, repeat times back to back, or skips it
// as over capacity: a search's probe, decided before the next is chosen
// (the matrix cells' repeats are interleaved instead: repeats.go). bodies
// are the context's request bodies by stream (one when the prompt is
// shared).
func (r *run) decode(ctx context.Context, ref vocab.CellRef, bodies [][]byte) (result.DecodeCell, error) {
	r.observer.CellStart(ref)
	start := time.Now()
	m := r.measure()
	base := result.DecodeCell{Matrix: ref.MatrixLabel(), Context: ref.Context, Concurrency: ref.Concurrency}
	if status, reasons, reason, ok := r.unrunnable(ref); ok {
		c := base
		c.Status, c.Reasons, c.Reason = status, reasons, reason
		if status == vocab.StatusError {
			c.ElapsedS = measure.Round(time.Since(start).Seconds(), 2)
		}
		return c, nil
	}
	repeat := max(m.Repeat, 1)
	var runs []result.DecodeCell
	for i := 0; i < repeat; i++ {
		c, err := r.decodeOnce(ctx, ref, bodies, repeatNumber(i, repeat))
		if err != nil || c.Status == vocab.StatusError {
			if len(runs) == 0 {
				return c, err
			}
			// The runs measured before are kept (docs/method.md#repeats).
			why := c.Reason
			if err != nil {
				why = firstLine(err.Error())
			}
			p := r.partialRepeats(runs, i+1, repeat, why)
			p.Matrix, p.Context, p.Concurrency = base.Matrix, base.Context, base.Concurrency
			p.ElapsedS = measure.Round(time.Since(start).Seconds(), 2)
			return p, err
		}
		runs = append(runs, c)
	}
	c := combineDecode(runs)
	c.Matrix, c.Context, c.Concurrency = base.Matrix, base.Context, base.Concurrency
	c.ElapsedS = measure.Round(time.Since(start).Seconds(), 2)
	return c, nil
}

// repeatNumber is run i's (0-based) number of n in requests.jsonl: 1-based,
// 0 when the cell runs once.
func repeatNumber(i, n int) int {
	if n <= 1 {
		return 0
	}
	return i + 1
}

// partialRepeats is a decode cell whose repeat k of n could not be
// measured (why): an error, which keeps the combined metrics, spread and
// samples of the runs measured before it, so nothing measured is lost
// (docs/method.md#repeats).
func (r *run) partialRepeats(runs []result.DecodeCell, k, n int, why string) result.DecodeCell {
	c := mergeDecodeRuns(runs)
	c.Status = vocab.StatusError
	c.Reasons, c.Reason = r.because(repeatFailed(k, n, len(runs), why))
	return c
}

// repeatFailed is the reason of a cell whose repeat k of n could not be
// measured (why), the kept runs measured before it kept.
func repeatFailed(k, n, kept int, why string) result.CellReason {
	return result.CellReason{Code: result.ReasonRepeatFailed,
		Figures: map[string]float64{result.FigRepeat: float64(k), result.FigOf: float64(n), result.FigKept: float64(kept)},
		Names:   map[string]string{result.NameCause: why}}
}

// because is reasons and the sentence they make (Config.ReasonText; their
// codes without it), a cell's Reasons and Reason.
func (r *run) because(reasons ...result.CellReason) ([]result.CellReason, string) {
	if r.cfg.ReasonText != nil {
		return reasons, r.cfg.ReasonText(reasons, "")
	}
	codes := make([]string, len(reasons))
	for i, x := range reasons {
		codes[i] = string(x.Code)
	}
	return reasons, strings.Join(codes, "; ")
}

// firstLine is s up to its first newline.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// unrunnable says whether the decode cell ref cannot be run on this server,
// with the status and reason to record instead of measuring it: over
// capacity when its requests cannot all fit in the KV cache
// (docs/method.md#over-capacity), an error when a request cannot fit in
// max_model_len; the reasons as values where they are (nil over
// capacity) and the sentence.
func (r *run) unrunnable(ref vocab.CellRef) (vocab.Status, []result.CellReason, string, bool) {
	maxOutput := r.measure().MaxOutput
	if r.kvPool.OverCapacity(ref.Concurrency, ref.Context, maxOutput) {
		return vocab.StatusOverCapacity, nil, r.kvPool.Arithmetic(ref.Concurrency, ref.Context, maxOutput, nil), true
	}
	status, why, ok := beyondContext(ref, maxOutput, r.maxModelLen, r.engineStatus())
	if !ok {
		return "", nil, "", false
	}
	reasons, reason := r.because(why)
	return status, reasons, reason, true
}

// engineStatus is what the status rules take from the server's engine
// (vLLM's without a server).
func (r *run) engineStatus() *engine.Status {
	if r.server == nil || r.server.Client == nil {
		return registry.For("").Status()
	}
	return r.server.Client.Engine().Status()
}

// beyondContext says whether a cell's requests cannot fit in max_model_len
// (0: unknown), and with which status: over capacity where the engine's
// max_model_len is one slot's context (engine.Status.ContextIsSlot), else
// an error.
func beyondContext(ref vocab.CellRef, maxOutput, maxModelLen int, st *engine.Status) (vocab.Status, result.CellReason, bool) {
	if maxModelLen <= 0 || ref.Context+maxOutput <= maxModelLen {
		return "", result.CellReason{}, false
	}
	status := vocab.StatusError
	if st.ContextIsSlot {
		status = vocab.StatusOverCapacity
	}
	return status, result.CellReason{Code: result.ReasonContextTooLong, Figures: map[string]float64{
		result.FigContext: float64(ref.Context), result.FigMaxOutput: float64(maxOutput), result.FigMaxModelLen: float64(maxModelLen)}}, true
}
