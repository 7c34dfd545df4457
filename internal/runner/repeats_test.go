package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/event"
	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vllmfake"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// restartGaps and deferred are notes a decode cell may carry.
var (
	restartGaps = warning.New(warning.RestartGaps, "…", "…", map[string]float64{warning.FigActiveAvg: 55.2, warning.FigConcurrency: 64})
	deferred    = warning.New(warning.Deferred, "…", "", map[string]float64{warning.FigDeferred: 3})
)

// specWarning and noMetrics are warnings a decode cell may carry
// (package measure's when speculative decoding did not run, and when
// /metrics could not be read around the window).
var (
	specWarning = warning.New(warning.SpeculativeIdle, "speculative decoding did not run in this cell (vllm:spec_decode_num_drafts_total did not move): check the server's --speculative-config and its log", "", nil)
	noMetrics   = warning.New(warning.NoMetrics, "no /metrics around the window", "server_total_tps not measured", nil)
	// gapA and gapB are cross-checks of one text whose figures differ.
	gapA = warning.New(warning.ServerTPSGap, "server_total_tps 90.0 differs from total_tps 100.0 by -10.0%", "", map[string]float64{warning.FigGap: -0.1})
	gapB = warning.New(warning.ServerTPSGap, "server_total_tps 90.0 differs from total_tps 100.0 by -10.0%", "", map[string]float64{warning.FigGap: -0.1000001})
)

func ptr(v float64) *float64 { return &v }

func ptrInt(v int64) *int64 { return &v }

// TestCombineRepeats: repeats combine every metric of the table by its
// median with [min, max] in Spread; an optional metric only when every run
// has it (else it is dropped, with a note); warnings once each; the
// preemptions summed; an errored run is the result.
func TestCombineRepeats(t *testing.T) {
	tests := []struct {
		name       string
		runs       []result.DecodeCell
		wantRate   *float64
		wantSpread map[string][2]float64 // the entries checked
		wantStatus vocab.Status
		// wantNotes and wantWarnings, when set, are the cell's notes and warnings.
		// Notes are compared by code, subject and figures (textless).
		wantNotes    []warning.Warning
		wantWarnings []warning.Warning
		// wantPreemptions, when set, is the cell's preemption count.
		wantPreemptions *int64
	}{
		{name: "optional metric in every run",
			runs: []result.DecodeCell{
				{Status: vocab.StatusValid, TBTMsP99: 9, SpeculativeAcceptRate: ptr(0.5), OutputTokens: 11},
				{Status: vocab.StatusValid, TBTMsP99: 3, SpeculativeAcceptRate: ptr(0.7), OutputTokens: 12},
				{Status: vocab.StatusValid, TBTMsP99: 5, SpeculativeAcceptRate: ptr(0.6), OutputTokens: 15},
			},
			wantRate:   ptr(0.6),
			wantSpread: map[string][2]float64{"tbt_ms_p99": {3, 9}, "spec_accept_rate": {0.5, 0.7}, "output_tokens": {11, 15}},
			wantStatus: vocab.StatusValid},
		{name: "optional metric missing in one run is dropped, with a note",
			runs: []result.DecodeCell{
				{Status: vocab.StatusValid, SpeculativeAcceptRate: ptr(0.5)},
				{Status: vocab.StatusValid},
			},
			wantRate:   nil,
			wantSpread: map[string][2]float64{"spec_accept_rate": {}},
			wantNotes: []warning.Warning{{Code: warning.MetricDropped, Subject: "spec_accept_rate",
				Figures: map[string]float64{warning.FigReported: 1, warning.FigRepeats: 2}}},
			wantStatus: vocab.StatusValid},
		{name: "a note of every run is kept once, one of some runs names them",
			runs: []result.DecodeCell{
				{Status: vocab.StatusValid, Notes: []warning.Warning{restartGaps}},
				{Status: vocab.StatusValid, Notes: []warning.Warning{restartGaps, deferred}},
			},
			wantNotes: []warning.Warning{restartGaps, inRepeats(deferred, 2, 2)}, wantStatus: vocab.StatusValid},
		{name: "a warning of every run is kept once, one of some runs names them",
			runs: []result.DecodeCell{
				{Status: vocab.StatusValid, Warnings: []warning.Warning{specWarning}},
				{Status: vocab.StatusValid, Warnings: []warning.Warning{specWarning, noMetrics}},
				{Status: vocab.StatusValid, Warnings: []warning.Warning{specWarning}},
			},
			wantWarnings: []warning.Warning{specWarning, inRepeats(noMetrics, 3, 2)},
			wantStatus:   vocab.StatusValid},
		{name: "a warning whose figures are one run's names it: the cell's figures are the median",
			runs: []result.DecodeCell{
				{Status: vocab.StatusValid, TotalTPS: 246.4, Warnings: []warning.Warning{serverGap(197.6, 246.4)}},
				{Status: vocab.StatusValid, TotalTPS: 197.6},
			},
			wantWarnings: []warning.Warning{inRepeats(serverGap(197.6, 246.4), 2, 1)},
			wantStatus:   vocab.StatusValid},
		{name: "a warning of one text whose figures differ is kept once, the first",
			runs: []result.DecodeCell{
				{Status: vocab.StatusValid, Warnings: []warning.Warning{gapA}},
				{Status: vocab.StatusValid, Warnings: []warning.Warning{gapB}},
			},
			wantWarnings: []warning.Warning{gapA},
			wantStatus:   vocab.StatusValid},
		{name: "the preemptions of the runs add up",
			runs: []result.DecodeCell{
				{Status: vocab.StatusValid, Preemptions: ptrInt(2)},
				{Status: vocab.StatusValid, Preemptions: ptrInt(0)},
				{Status: vocab.StatusValid, Preemptions: ptrInt(5)},
			},
			wantPreemptions: ptrInt(7),
			wantStatus:      vocab.StatusValid},
		{name: "an errored run is the result",
			runs: []result.DecodeCell{
				{Status: vocab.StatusValid, TotalTPS: 5},
				{Status: vocab.StatusError, Reason: "stalled"},
			},
			wantStatus: vocab.StatusError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := combineDecode(tc.runs)
			if c.Status != tc.wantStatus {
				t.Fatalf("status %s, want %s", c.Status, tc.wantStatus)
			}
			if diff := cmp.Diff(tc.wantRate, c.SpeculativeAcceptRate); diff != "" {
				t.Errorf("spec_accept_rate (-want +got):\n%s", diff)
			}
			if tc.wantNotes != nil {
				if diff := cmp.Diff(warning.Textless(tc.wantNotes), warning.Textless(c.Notes)); diff != "" {
					t.Errorf("notes (-want +got):\n%s", diff)
				}
			}
			if tc.wantWarnings != nil {
				if diff := cmp.Diff(tc.wantWarnings, c.Warnings); diff != "" {
					t.Errorf("warnings (-want +got):\n%s", diff)
				}
			}
			if tc.wantPreemptions != nil {
				if diff := cmp.Diff(tc.wantPreemptions, c.Preemptions); diff != "" {
					t.Errorf("preemptions (-want +got):\n%s", diff)
				}
			}
			for name, want := range tc.wantSpread {
				if got := c.Spread[name]; got != want {
					t.Errorf("Spread[%s] = %v, want %v", name, got, want)
				}
			}
		})
	}
	if c := combineDecode([]result.DecodeCell{{Status: vocab.StatusValid, TBTMsP99: 9, OutputTokens: 11}, {Status: vocab.StatusValid, TBTMsP99: 3, OutputTokens: 12}}); c.TBTMsP99 != 6 || c.OutputTokens != 12 {
		t.Errorf("two runs: tbt_ms_p99 %v output_tokens %d, want 6 and 12 (the median 11.5 rounded)", c.TBTMsP99, c.OutputTokens)
	}
	p := combinePrefill([]result.PrefillCell{{Status: vocab.StatusValid, TPS: 10, TTFTMs: 300}, {Status: vocab.StatusValid, TPS: 30, TTFTMs: 100}, {Status: vocab.StatusValid, TPS: 20, TTFTMs: 200}})
	if p.TPS != 20 || p.TTFTMs != 200 || p.Repeats != 3 || p.Spread["tps"] != [2]float64{10, 30} || p.Spread["ttft_ms"] != [2]float64{100, 300} {
		t.Errorf("prefill combined = %+v", p)
	}
}

// secondRepeatObserver calls then once, when the second run of a repeated
// decode cell starts its steady-state gate (a warm-up after a window).
type secondRepeatObserver struct {
	nopObserver
	measured bool
	once     sync.Once
	then     func()
}

func (o *secondRepeatObserver) Progress(p event.Progress) {
	switch {
	case p.Stage == result.StageMeasuring:
		o.measured = true
	case p.Stage == result.StageWarmUp && o.measured:
		o.once.Do(o.then)
	}
}

// TestRepeatFailureKeepsMeasuredRuns: when repeat 2 of 3 of a decode cell
// cannot be measured — its streams fail, or the run is interrupted — the
// cell is an error that keeps repeat 1's metrics and samples, in
// results.json and cells.jsonl (docs/method.md#repeats).
func TestRepeatFailureKeepsMeasuredRuns(t *testing.T) {
	tests := []struct {
		name       string
		interrupt  bool
		wantReason string
	}{
		{name: "streams fail", wantReason: "repeat 2 of 3 could not be measured: server error in stream: engine died"},
		{name: "interrupted", interrupt: true, wantReason: "repeat 2 of 3 could not be measured: interrupted"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := vllmfake.Server{Tokens: 100000, Gap: 2 * time.Millisecond}
			s := f.Start(t)
			sp := smallSpec(1)
			sp.Measure.Repeat = 3
			cfg := testConfig(t, s.URL, sp, "decode")
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			cfg.Observer = &secondRepeatObserver{then: func() {
				if tc.interrupt {
					cancel(errors.New("interrupted"))
				} else {
					f.FailNow.Store(true)
				}
			}}
			res, err := Run(ctx, cfg)
			if tc.interrupt != (err != nil) {
				t.Fatalf("err = %v, want an error only when interrupted", err)
			}
			saved, rerr := result.Read(filepath.Join(cfg.OutDir, "results.json"))
			if rerr != nil {
				t.Fatal(rerr)
			}
			for _, r := range []*result.Results{res, saved} {
				if len(r.Decode) != 1 {
					t.Fatalf("decode = %+v, want one cell", r.Decode)
				}
				c := r.Decode[0]
				if c.Status != vocab.StatusError || !strings.HasPrefix(c.Reason, tc.wantReason) || c.Repeats != 1 ||
					len(c.Samples["total_tps"]) != 1 || c.Samples["total_tps"][0] <= 0 || c.TotalTPS != c.Samples["total_tps"][0] {
					t.Errorf("cell = %+v, want an error %q keeping repeat 1's total_tps", c, tc.wantReason)
				}
			}
			fh, err := os.Open(filepath.Join(cfg.OutDir, "cells.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			recs, err := result.ReadCells(fh)
			if err != nil || len(recs) != 2 || recs[1].Decode == nil || len(recs[1].Decode.Samples["total_tps"]) != 1 {
				t.Errorf("cells.jsonl: %d records (%v), want the prefill and the partial decode cell", len(recs), err)
			}
		})
	}
}

// windowOrder records the cell of every window opened, in order, and
// the decode cells' events: "start N", "repeat N k/n", "done N" (N the
// concurrency).
type windowOrder struct {
	nopObserver
	mu     sync.Mutex
	cells  []int // concurrency of each window
	last   vocab.CellRef
	open   bool
	events []string
}

func (o *windowOrder) event(s string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.events = append(o.events, s)
}

func (o *windowOrder) CellStart(ref vocab.CellRef) {
	if ref.Phase == vocab.PhaseDecode {
		o.event(fmt.Sprintf("start %d", ref.Concurrency))
	}
}

func (o *windowOrder) Note(n event.Note) {
	if r, ok := n.(event.RepeatMeasured); ok {
		o.event(fmt.Sprintf("repeat %d %d/%d", r.Cell.Concurrency, r.Repeat, r.Of))
	}
}

func (o *windowOrder) DecodeDone(c result.DecodeCell, _ time.Duration) {
	o.event(fmt.Sprintf("done %d", c.Concurrency))
}

func (o *windowOrder) Progress(p event.Progress) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case p.Stage == result.StageMeasuring && (!o.open || p.Cell != o.last):
		o.cells = append(o.cells, p.Cell.Concurrency)
		o.last, o.open = p.Cell, true
	case p.Stage != result.StageMeasuring:
		o.open = false
	}
}

// TestRepeatsInterleave: the repeats of a context's decode cells run in
// rounds, cell 1, cell 2, cell 1, cell 2, not back to back, each repeat
// told as a note and each cell told once, when done (never started at its
// first repeat); each cell keeps every repeat's samples and its busy time
// (docs/method.md#repeats).
func TestRepeatsInterleave(t *testing.T) {
	f := vllmfake.Server{Tokens: 100000, Gap: 2 * time.Millisecond}
	s := f.Start(t)
	sp := smallSpec(1, 2)
	sp.Measure.Duration = 300 * time.Millisecond
	sp.Measure.Repeat = 2
	cfg := testConfig(t, s.URL, sp, "decode")
	obs := &windowOrder{}
	cfg.Observer = obs
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{1, 2, 1, 2}, obs.cells); diff != "" {
		t.Errorf("windows by concurrency (-want +got):\n%s", diff)
	}
	// No cell is announced at its first repeat: each repeat is a note, and
	// a cell's test is told whole once its repeats are taken, so that its
	// start and end pair up on the console.
	if diff := cmp.Diff([]string{"repeat 1 1/2", "repeat 2 1/2", "repeat 1 2/2", "done 1", "repeat 2 2/2", "done 2"}, obs.events); diff != "" {
		t.Errorf("decode events (-want +got):\n%s", diff)
	}
	for _, c := range res.Decode {
		if c.Repeats != 2 || len(c.Samples["total_tps"]) != 2 || c.ElapsedS < 0.6 || c.GPUSeconds != c.ElapsedS {
			t.Errorf("cell %s: repeats %d, samples %v, elapsed %v s, GPU %v s: want 2 repeats of ≥ 0.3 s each, GPU time = elapsed × 1 GPU",
				c.Ref().Name(), c.Repeats, c.Samples["total_tps"], c.ElapsedS, c.GPUSeconds)
		}
	}
	if g := res.GPUTime; g == nil || g.GPUs != 1 || g.GPUSeconds != g.ServerS || g.CellsS > g.ServerS || g.CellsS <= 0 {
		t.Errorf("gpu_time = %+v, want server_s × 1 GPU, cells within it", g)
	}
}

// untilRule stops a cell after want[1] repeats when it has a baseline
// (the baseline measured conc 1 only), after want[2] alone, noting the
// baselines it was shown.
type untilRule struct {
	want      map[int]int
	baselines [][]float64
}

func (u *untilRule) Look(baseline, candidate []float64, higherIsBetter bool) compare.Look {
	u.baselines = append(u.baselines, baseline)
	if baseline != nil {
		return compare.Look{Stop: len(candidate) >= u.want[1], Rule: "enough", Repeats: len(candidate)}
	}
	return compare.Look{Stop: len(candidate) >= u.want[2], Rule: "enough", Repeats: len(candidate)}
}

// enough are the looks of untilRule at n repeats, one a gated decode
// metric, as a cell records them.
func enough(n int) []result.MetricLook {
	var out []result.MetricLook
	for _, m := range []string{"total_tps", "ttft_ms", "tbt_ms"} {
		out = append(out, result.MetricLook{Metric: m, Rule: "enough", Repeats: n})
	}
	return out
}

// TestRepeatAuto: with repeat = "auto" every cell gets the minimum, then
// more rounds only while the stop rule wants them, up to max_repeat and
// within max_gpu_time; each records its repeats and why it stopped, and
// the rule sees the baseline's samples of the cell.
func TestRepeatAuto(t *testing.T) {
	tests := []struct {
		name      string
		maxRepeat int
		budget    float64 // max_gpu_time in seconds
		want      map[int]int
		wantReps  map[int]int
		wantStop  map[int]result.RepeatStop // its rule and figures; of Looks, each metric and rule
	}{
		{name: "a clear cell stops at the minimum, a noisy one goes on", maxRepeat: 20, want: map[int]int{1: 6, 2: 4},
			wantReps: map[int]int{1: 6, 2: 4},
			wantStop: map[int]result.RepeatStop{1: {Rule: result.StopLooks, Looks: enough(6)}, 2: {Rule: result.StopLooks, Looks: enough(4)}}},
		{name: "max_repeat bounds it", maxRepeat: 5, want: map[int]int{1: 9, 2: 4},
			wantReps: map[int]int{1: 5, 2: 4}, wantStop: map[int]result.RepeatStop{1: {Rule: result.StopMaxRepeat, MaxRepeat: 5}}},
		{name: "max_gpu_time bounds it past the minimum", maxRepeat: 20, budget: 0.5, want: map[int]int{1: 9, 2: 9},
			wantReps: map[int]int{1: 4, 2: 4}, wantStop: map[int]result.RepeatStop{1: {Rule: result.StopBudget, BudgetS: 0.5}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := vllmfake.Server{Tokens: 100000, Gap: 2 * time.Millisecond}
			s := f.Start(t)
			sp := smallSpec(1, 2)
			sp.Measure.Duration = 200 * time.Millisecond
			sp.Measure.Repeat, sp.Measure.RepeatAuto, sp.Measure.MaxRepeat = 4, true, tc.maxRepeat
			sp.Measure.MaxGPUTime = time.Duration(tc.budget * float64(time.Second))
			cfg := testConfig(t, s.URL, sp, "decode")
			cfg.Baseline = &result.Results{Decode: []result.DecodeCell{{Matrix: "decode", Context: 1000, Concurrency: 1, Status: vocab.StatusValid,
				TotalTPS: 7, Samples: map[string][]float64{"total_tps": {7, 8, 9}}}}}
			rule := &untilRule{want: tc.want}
			defer func(old func(result.Measure, float64, float64) stopRule) { newStopRule = old }(newStopRule)
			newStopRule = func(result.Measure, float64, float64) stopRule { return rule }
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			// No run here can be left out: the fake server's token counter
			// agrees with what it streams, it states no per-request rate,
			// and the tests' machine never moves (takeMachine).
			for _, c := range res.Decode {
				if c.Repeats != tc.wantReps[c.Concurrency] || len(c.Samples["total_tps"]) != c.Repeats || len(c.Excluded) > 0 {
					t.Errorf("conc %d: %d repeats (%d samples, %+v left out), want %d", c.Concurrency, c.Repeats, len(c.Samples["total_tps"]), c.Excluded, tc.wantReps[c.Concurrency])
				}
				if want, ok := tc.wantStop[c.Concurrency]; ok {
					if c.Design == nil || c.Design.Stop == nil {
						t.Errorf("conc %d: design %+v, want it stopped by %s", c.Concurrency, c.Design, want.Rule)
					} else if got := *c.Design.Stop; got.Rule != want.Rule || got.MaxRepeat != want.MaxRepeat || got.BudgetS != want.BudgetS ||
						!slices.Equal(got.Looks, want.Looks) || (want.Rule == result.StopBudget && got.SpentS < want.BudgetS-1) {
						t.Errorf("conc %d: stopped by %+v, want %+v", c.Concurrency, got, want)
					}
				}
			}
			if tc.budget == 0 {
				var sawBaseline bool
				for _, b := range rule.baselines {
					if cmp.Equal(b, []float64{7, 8, 9}) {
						sawBaseline = true
					}
				}
				if !sawBaseline {
					t.Errorf("the rule never saw the baseline's total_tps samples: %v", rule.baselines)
				}
			}
		})
	}
}

// TestShare: the repeats of a fixed design split over the boots as evenly
// as can be, the first boots taking one more.
func TestShare(t *testing.T) {
	tests := []struct {
		name         string
		total, boots int
		want         []int
	}{
		{name: "one boot", total: 5, boots: 1, want: []int{5}},
		{name: "even", total: 6, boots: 3, want: []int{2, 2, 2}},
		{name: "uneven", total: 7, boots: 3, want: []int{3, 2, 2}},
		{name: "one each", total: 2, boots: 2, want: []int{1, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			for b := 1; b <= tc.boots; b++ {
				got = append(got, share(tc.total, tc.boots, b))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("shares (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCombinePolling: a repeated cell's scrapes are every run's: the mean
// weighted by each run's scrapes, the longest of all.
func TestCombinePolling(t *testing.T) {
	runs := []result.DecodeCell{
		{Polling: &result.Polling{Scrapes: 10, MeanMs: 1, MaxMs: 3}},
		{},
		{Polling: &result.Polling{Scrapes: 30, MeanMs: 3, MaxMs: 12}},
	}
	want := &result.Polling{Scrapes: 40, MeanMs: 2.5, MaxMs: 12}
	if got := combineDecode(runs).Polling; got == nil || *got != *want {
		t.Errorf("combined polling = %+v, want %+v", got, want)
	}
	if got := combinePolling([]result.DecodeCell{{}, {}}); got != nil {
		t.Errorf("no scrapes: %+v, want nil", got)
	}
}

// TestCombineRejections: a repeated cell's refused requests are every
// run's (docs/method.md#rejections): the client's and the server's counts
// summed, by reason too; rejected is the median of the runs, kept with its
// samples only when some run refused.
func TestCombineRejections(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	tests := []struct {
		name         string
		runs         []result.DecodeCell
		want         *result.Rejections
		wantRejected int
		wantSamples  bool
	}{
		{name: "no run refused", runs: []result.DecodeCell{{Status: vocab.StatusValid}, {Status: vocab.StatusValid}}},
		{name: "runs refused, the server's counts summed",
			runs: []result.DecodeCell{
				{Status: vocab.StatusQueued, Rejected: 4, Rejections: &result.Rejections{Client: 6, Server: n(6), ByReason: map[string]int64{"max_num_queued_reqs": 6}}},
				{Status: vocab.StatusValid},
				{Status: vocab.StatusQueued, Rejected: 9, Rejections: &result.Rejections{Client: 10, Unanswered: 1, Server: n(11), ByReason: map[string]int64{"max_num_queued_reqs": 11}}},
			},
			want:         &result.Rejections{Client: 16, Unanswered: 1, Server: n(17), ByReason: map[string]int64{"max_num_queued_reqs": 17}},
			wantRejected: 4, wantSamples: true},
		{name: "a server without the counter: the client's count only",
			runs: []result.DecodeCell{
				{Status: vocab.StatusQueued, Rejected: 2, Rejections: &result.Rejections{Client: 2}},
				{Status: vocab.StatusQueued, Rejected: 3, Rejections: &result.Rejections{Client: 5}},
			},
			want: &result.Rejections{Client: 7}, wantRejected: 3, wantSamples: true}, // the median 2.5, a count rounded
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := combineDecode(tc.runs)
			if diff := cmp.Diff(tc.want, c.Rejections); diff != "" {
				t.Errorf("rejections (-want +got):\n%s", diff)
			}
			if _, has := c.Samples[metric.Rejected]; c.Rejected != tc.wantRejected || has != tc.wantSamples {
				t.Errorf("rejected %d (samples %v), want %d (samples %v)", c.Rejected, has, tc.wantRejected, tc.wantSamples)
			}
		})
	}
}

// inRepeats is w as a combined cell keeps a warning only repeats of of
// carried (warning.OfRepeats).
func inRepeats(w warning.Warning, of int, repeats ...int) warning.Warning {
	w.Repeats, w.Of = repeats, of
	return w
}

// serverGap is the server_tps_gap warning of one run's figures.
func serverGap(server, client float64) warning.Warning {
	return warning.New(warning.ServerTPSGap, fmt.Sprintf("server_total_tps %.1f differs from total_tps %.1f", server, client), "",
		map[string]float64{warning.FigServerTotalTPS: server, warning.FigTotalTPS: client})
}

// cancelAtWindow is windowOrder that calls cancel once the first window
// opens.
type cancelAtWindow struct {
	windowOrder
	once   sync.Once
	cancel func()
}

func (o *cancelAtWindow) Progress(p event.Progress) {
	o.windowOrder.Progress(p)
	if p.Stage == result.StageMeasuring {
		o.once.Do(o.cancel)
	}
}

// TestRepeatedCellEndedAtFirstRepeat: a repeated cell is announced when
// its repeats are done, so one whose first repeat the run's end cuts
// short is announced then, for the run's end to report it unmeasured
// (views' RunObserver.Abort ends the cells announced and not ended).
func TestRepeatedCellEndedAtFirstRepeat(t *testing.T) {
	f := vllmfake.Server{Tokens: 100000, Gap: 2 * time.Millisecond}
	s := f.Start(t)
	sp := smallSpec(1, 2)
	sp.Measure.Repeat = 2
	cfg := testConfig(t, s.URL, sp, "decode")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	obs := &cancelAtWindow{cancel: func() { cancel(errors.New("interrupted")) }}
	cfg.Observer = obs
	if _, err := Run(ctx, cfg); err == nil {
		t.Fatal("the run was not cut short")
	}
	if diff := cmp.Diff([]string{"start 1"}, obs.events); diff != "" {
		t.Errorf("decode events (-want +got):\n%s", diff)
	}
}

// TestGatedMetricsFollowPolicy: repeat = "auto" stops on the metrics the
// comparison decides on: the Policy's when it names some (bisect
// -metric server_itl_ms_mean), of the cell's phase only; the defaults
// otherwise.
func TestGatedMetricsFollowPolicy(t *testing.T) {
	tests := []struct {
		name    string
		metrics []string
		phase   vocab.Phase
		want    []string
	}{
		{name: "defaults, decode", phase: vocab.PhaseDecode, want: []string{metric.TotalTPS, metric.TTFTMs, metric.TBTMs}},
		{name: "defaults, prefill", phase: vocab.PhasePrefill, want: []string{metric.TPS}},
		{name: "a server metric, decode", metrics: []string{metric.ServerITLMsMean}, phase: vocab.PhaseDecode, want: []string{metric.ServerITLMsMean}},
		{name: "a decode metric, prefill", metrics: []string{metric.ServerITLMsMean}, phase: vocab.PhasePrefill, want: nil},
		{name: "one of each", metrics: []string{metric.TPS, metric.TBTMs}, phase: vocab.PhasePrefill, want: []string{metric.TPS}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &run{cfg: Config{Policy: compare.Policy{Metrics: tt.metrics}}}
			var got []string
			for _, m := range r.gatedMetrics(tt.phase) {
				got = append(got, m.Name)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("gated metrics (-want +got):\n%s", diff)
			}
		})
	}
}
