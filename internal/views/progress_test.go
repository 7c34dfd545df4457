package views

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/event"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/report"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// recordStream records TestStream calls as lines.
type recordStream struct{ lines []string }

func (r *recordStream) Run(test string)          { r.lines = append(r.lines, "RUN "+test) }
func (r *recordStream) Output(test, line string) { r.lines = append(r.lines, "  "+line) }
func (r *recordStream) End(test string, o vocab.Outcome, _ time.Duration) {
	r.lines = append(r.lines, "END "+o.String()+" "+test)
}
func (r *recordStream) Log(line string)                         { r.lines = append(r.lines, "LOG "+line) }
func (r *recordStream) Progress(report.Progress)                {}
func (r *recordStream) Finish(o vocab.Outcome, _ time.Duration) {}

// runsAnd is the recorded lines that start a test or that keep says to.
func (r *recordStream) runsAnd(keep func(line string) bool) []string {
	var got []string
	for _, l := range r.lines {
		if strings.HasPrefix(l, "RUN ") || keep(l) {
			got = append(got, l)
		}
	}
	return got
}

func TestObserver(t *testing.T) {
	rs := &recordStream{}
	o := NewRunObserver(rs, "q", false)
	pre := result.PrefillCell{Context: 8192, Status: vocab.StatusValid, TPS: 46712.3, TTFTMs: 175.4}
	o.CellStart(pre.Ref())
	o.PrefillDone(pre, time.Second)
	valid := result.DecodeCell{Matrix: "decode", Context: 8192, Concurrency: 64, Status: vocab.StatusValid,
		TotalTPS: 6018.4, PerRequestTPS: 95.9, TTFTMs: 1027, TBTMs: 10.4, Warnings: []warning.Warning{warning.New(warning.NoMetrics, "w", "", nil)}}
	o.CellStart(valid.Ref())
	o.DecodeDone(valid, time.Second)
	over := result.DecodeCell{Matrix: "decode", Context: 257024, Concurrency: 128, Status: vocab.StatusOverCapacity, Reason: "too big"}
	o.CellStart(over.Ref())
	o.DecodeDone(over, 0)
	errCell := result.DecodeCell{Matrix: "decode", Context: 8192, Concurrency: 1, Status: vocab.StatusError, Reason: "stream stalled"}
	o.CellStart(errCell.Ref())
	o.DecodeDone(errCell, 0)
	o.CellStart(vocab.CellRef{Phase: vocab.PhaseDecode, Matrix: "decode", Context: 1024, Concurrency: 2})
	o.Abort(exit.Infraf("the server exited during the run\nlog lines"))
	want := []string{
		"RUN q/prefill/ctx=8K", "  46,712.3 tok/s prefill · TTFT 175 ms (cold)", "END pass q/prefill/ctx=8K",
		"RUN q/decode/ctx=8K/conc=64", "  6,018.4 tok/s total · 95.9 tok/s/request · TTFT 1,027 ms · TBT 10.4 ms · valid", "  warning: w", "END pass q/decode/ctx=8K/conc=64",
		"RUN q/decode/ctx=251K/conc=128", "  over capacity, not run: too big", "END skip q/decode/ctx=251K/conc=128",
		"RUN q/decode/ctx=8K/conc=1", "  error: stream stalled", "END error q/decode/ctx=8K/conc=1",
		"RUN q/decode/ctx=1K/conc=2", "  not measured: the server exited during the run", "END error q/decode/ctx=1K/conc=2",
	}
	if diff := cmp.Diff(want, rs.lines); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestObserverWarningsOnce: the console prints each warning once per
// server, under the first cell that carries it; a later cell repeating it
// word for word gets one line naming that cell and counting the cells
// (each dataset cell repeated its dataset's two warnings in full).
func TestObserverWarningsOnce(t *testing.T) {
	rs := &recordStream{}
	o := NewRunObserver(rs, "q", false)
	cell := func(conc int, ws ...string) result.TrafficCell {
		var typed []warning.Warning
		for _, w := range ws {
			typed = append(typed, warning.New(warning.DatasetCounts, w, "", nil))
		}
		return result.TrafficCell{Traffic: "chat", Concurrency: conc, Status: vocab.StatusValid, Launched: 1, Completed: 1, MeasuredS: 1, Warnings: typed}
	}
	for _, c := range []result.TrafficCell{cell(4, "reused", "counts"), cell(8, "reused", "counts", "only here"), cell(16, "counts", "counts")} {
		o.CellStart(c.Ref())
		o.TrafficDone(c, time.Second)
	}
	got := rs.runsAnd(func(l string) bool { return strings.HasPrefix(l, "  warning: ") })
	want := []string{
		"RUN q/traffic/chat/conc=4", "  warning: reused", "  warning: counts",
		"RUN q/traffic/chat/conc=8", "  warning: as under q/traffic/chat/conc=4 (the 2nd cell with it)",
		"  warning: as under q/traffic/chat/conc=4 (the 2nd cell with it)", "  warning: only here",
		"RUN q/traffic/chat/conc=16", "  warning: as under q/traffic/chat/conc=4 (the 3rd cell with it)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestObserverSettled: a cell that first waited for the server to finish
// an earlier cell's closed requests says how long under its summary; one
// that did not wait says nothing of it.
func TestObserverSettled(t *testing.T) {
	rs := &recordStream{}
	o := NewRunObserver(rs, "q", false)
	waited := result.TrafficCell{Traffic: "chat", Rate: 2, Status: vocab.StatusValid, Launched: 4, Completed: 4, MeasuredS: 2, SettleS: 2.24}
	at := waited
	at.Rate, at.SettleS = 4, 0
	dec := result.DecodeCell{Matrix: "decode", Context: 1024, Concurrency: 2, Status: vocab.StatusValid, SettleS: 0.96}
	for _, c := range []result.TrafficCell{waited, at} {
		o.CellStart(c.Ref())
		o.TrafficDone(c, time.Second)
	}
	o.CellStart(dec.Ref())
	o.DecodeDone(dec, time.Second)
	got := rs.runsAnd(func(l string) bool { return strings.Contains(l, "waited") })
	want := []string{
		"RUN q/traffic/chat/rate=2", "  waited 2.2 s before its first request for the server to finish those an earlier cell had closed",
		"RUN q/traffic/chat/rate=4",
		"RUN q/decode/ctx=1K/conc=2", "  waited 1.0 s before its first request for the server to finish those an earlier cell had closed",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestOrdinalCells(t *testing.T) {
	for _, tt := range []struct {
		name string
		n    int
		want string
	}{{"2", 2, "the 2nd cell with it"}, {"3", 3, "the 3rd cell with it"}, {"4", 4, "the 4th cell with it"}, {"11", 11, "the 11th cell with it"},
		{"12", 12, "the 12th cell with it"}, {"21", 21, "the 21st cell with it"}, {"112", 112, "the 112th cell with it"}} {
		if got := ordinalCells(tt.n); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestObserverRateSearch: a rate probe's test is its traffic cell's line,
// the windows pooled and its decision with the bounds behind it; it passes
// when the search took it as meeting the objective and is skipped, saying
// why, when not (here undecided, taken as missing); an unmeasurable probe
// is skipped; the search's summary gives the answer and
// its bounds, or "none meets it at lo".
func TestObserverRateSearch(t *testing.T) {
	cell := func(rate float64) *result.TrafficCell {
		return &result.TrafficCell{Traffic: "chat", Search: "capacity", Context: 1024, Rate: rate, Status: vocab.StatusValid,
			Launched: 40, Completed: 40, AchievedRPS: rate, GoodputRPS: rate, GoodputShare: 1, MeasuredS: 10, TTFTMsP99: 70, E2EMs: 420, ConcurrencyAvg: 2}
	}
	lagged := &result.TrafficCell{Traffic: "chat", Search: "capacity", Context: 1024, Rate: 64, Status: vocab.StatusError, Reason: "the client fell behind its schedule"}
	rs := &recordStream{}
	o := NewRunObserver(rs, "q", false)
	met := &result.ProbeJudgement{Rule: result.ProbeMet, Intervals: []result.ProbeInterval{{Metric: "goodput_share", Point: 1, Lower: 0.93, Upper: 1, DesignEffect: 1}}}
	o.ProbeDone(result.SearchProbe{Rate: 4, Traffic: cell(4), Decision: result.DecisionMet, Passed: true, Windows: 1, Judgement: met}, time.Second)
	// A probe recorded before judgements were: its reason.
	o.ProbeDone(result.SearchProbe{Rate: 8, Traffic: cell(8), Decision: result.DecisionUndecided, Windows: 4, Reason: "undecided after 4 windows"}, time.Second)
	o.ProbeDone(result.SearchProbe{Rate: 64, Traffic: lagged, Decision: result.DecisionUnmeasurable, Windows: 1, Reason: lagged.Reason}, time.Second)
	o.SearchDone(result.Search{Name: "capacity", Traffic: "chat", RateRange: [2]float64{2, 64}, Found: true, Monotone: true, Rate: 7.071067811865476,
		RateLower: 4, RateUpper: 8.4, Confidence: 0.95, ClientLimit: 64, ElapsedS: 30,
		Probes: []result.SearchProbe{{Windows: 1}, {Windows: 4}, {Windows: 1}}})
	o.SearchDone(result.Search{Name: "capacity", Traffic: "chat", RateRange: [2]float64{2, 64}, Monotone: true, Confidence: 0.95, ElapsedS: 5,
		Probes: []result.SearchProbe{{Windows: 1}}})
	// No upper bound: the whole range met it, or the top was undecided
	// (vLLM's CPU build under its queue limit: 40 req/s undecided, taken as failing).
	o.SearchDone(result.Search{Name: "capacity", Traffic: "open", RateRange: [2]float64{2, 40}, Found: true, Monotone: true, Rate: 40,
		RateLower: 18.9, Confidence: 0.95, ElapsedS: 60, Probes: []result.SearchProbe{{Rate: 2, Passed: true, Windows: 3}, {Rate: 40, Passed: true, Windows: 3}}})
	o.SearchDone(result.Search{Name: "capacity", Traffic: "open", RateRange: [2]float64{2, 40}, Found: true, Monotone: true, Rate: 33.2,
		RateLower: 18.9, Confidence: 0.95, ElapsedS: 112, Probes: []result.SearchProbe{{Rate: 2, Passed: true, Windows: 3}, {Rate: 40, Windows: 4}, {Rate: 33.2, Passed: true, Windows: 4}}})
	want := []string{
		"RUN q/search/capacity/rate=4", "  " + report.TrafficSummary(cell(4)), "  objective met: met even at the pessimistic bounds: goodput_share 1 (0.93 to 1)", "END pass q/search/capacity/rate=4",
		"RUN q/search/capacity/rate=8", "  " + report.TrafficSummary(cell(8)), "  4 windows pooled (the line above is the last)", "  objective undecided: undecided after 4 windows",
		"  skipped, not failed: a search takes a probe that misses its objective as a bound (docs/method.md#search)", "END skip q/search/capacity/rate=8",
		"RUN q/search/capacity/rate=64", "  unmeasurable: the client fell behind its schedule", "END skip q/search/capacity/rate=64",
		"LOG search q/search/capacity: 7.07 req/s meets the objective (95% bounds 4 to 8.4 req/s; 3 probes, 6 windows in 30s); the client could not drive 64 req/s: the answer is within the rates it could",
		"LOG search q/search/capacity: none meets the objective at lo = 2 req/s (rates [2, 64] searched; 1 probes, 1 windows in 5s)",
		"LOG search q/search/capacity: 40 req/s meets the objective: the whole range [2, 40] req/s meets it (95% lower bound 18.9 req/s, no upper bound; 2 probes, 6 windows in 1m0s)",
		"LOG search q/search/capacity: 33.2 req/s meets the objective (95% lower bound 18.9 req/s; no upper bound: the probe at 40 req/s was not shown to meet it; 3 probes, 11 windows in 1m52s)",
	}
	if diff := cmp.Diff(want, rs.lines); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestObserverProbeOutcome: a concurrency probe's test passes only when it
// met the objective; one that missed it is skipped with the reason and
// why a miss is no failure; over capacity it is skipped as not run; one
// not measured is an error (docs/method.md#search).
func TestObserverProbeOutcome(t *testing.T) {
	cell := func(conc int, st vocab.Status) result.DecodeCell {
		return result.DecodeCell{Search: "users", Context: 1024, Concurrency: conc, Status: st, Reason: "why",
			TotalTPS: 100, PerRequestTPS: 50, TTFTMs: 30, TBTMs: 10}
	}
	missed := "  skipped, not failed: a search takes a probe that misses its objective as a bound (docs/method.md#search)"
	tests := []struct {
		name  string
		probe result.SearchProbe
		want  []string
	}{
		{name: "met", probe: result.SearchProbe{Concurrency: 2, Cell: cell(2, vocab.StatusValid), Passed: true},
			want: []string{"RUN q/search/users/conc=2", "  objective met", "END pass q/search/users/conc=2"}},
		{name: "missed", probe: result.SearchProbe{Concurrency: 8, Cell: cell(8, vocab.StatusQueued), Reason: "ttft_ms = 900, want < 500"},
			want: []string{"RUN q/search/users/conc=8", "  objective not met: ttft_ms = 900, want < 500", missed, "END skip q/search/users/conc=8"}},
		{name: "over capacity", probe: result.SearchProbe{Concurrency: 64, Cell: cell(64, vocab.StatusOverCapacity)},
			want: []string{"RUN q/search/users/conc=64", "  over capacity, not run: why", "  objective not met: over capacity", "END skip q/search/users/conc=64"}},
		{name: "not measured", probe: result.SearchProbe{Concurrency: 4, Cell: cell(4, vocab.StatusError)},
			want: []string{"RUN q/search/users/conc=4", "  error: why", "END error q/search/users/conc=4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := &recordStream{}
			o := NewRunObserver(rs, "q", false)
			o.CellStart(tt.probe.Cell.Ref())
			o.ProbeDone(tt.probe, time.Second)
			got := rs.runsAnd(func(l string) bool {
				return !strings.HasPrefix(l, "  ") || strings.Contains(l, "objective") || strings.HasPrefix(l, "  skipped") ||
					strings.HasPrefix(l, "  over") || strings.HasPrefix(l, "  error")
			})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestObserverRepeatsPairUp: cells measured more than once, their repeats
// interleaved, print each repeat's own figures as a line of the run, then
// each cell's test whole, its RUN line followed by its own result before
// the next RUN (as go test prints one test after another); a warning only
// one repeat carried is printed as the warning package words it, naming
// its repeat, so that its figures are not taken for the median above it.
func TestObserverRepeatsPairUp(t *testing.T) {
	run := func(conc int, tps float64) result.DecodeCell {
		return result.DecodeCell{Matrix: "decode", Context: 1024, Concurrency: conc, Status: vocab.StatusValid, TotalTPS: tps, PerRequestTPS: 200, TTFTMs: 26, TBTMs: 5.2}
	}
	gap := warning.New(warning.ServerTPSGap, "server_total_tps 197.6 differs from total_tps 246.4 by -19.8%", "",
		map[string]float64{warning.FigServerTotalTPS: 197.6, warning.FigTotalTPS: 246.4})
	gap.Repeats, gap.Of = []int{1}, 2
	one := run(1, 222)
	one.Repeats, one.Warnings = 2, []warning.Warning{gap}
	two := run(2, 391.6)
	two.Repeats = 2
	rs := &recordStream{}
	o := NewRunObserver(rs, "q", false)
	o.Note(event.RepeatMeasured{Server: "q", Cell: run(1, 246.4), Repeat: 1, Of: 2, Max: 2})
	o.Note(event.RepeatMeasured{Server: "q", Cell: run(2, 392.1), Repeat: 1, Of: 2, Max: 2})
	o.Note(event.RepeatMeasured{Server: "q", Cell: run(1, 197.6), Repeat: 2, Of: 2, Max: 2})
	o.DecodeDone(one, time.Second)
	o.Note(event.RepeatMeasured{Server: "q", Cell: result.DecodeCell{Matrix: "decode", Context: 1024, Concurrency: 2, Status: vocab.StatusError, Reason: "stream stalled"},
		Repeat: 5, Of: 4, Max: 20})
	o.DecodeDone(two, time.Second)
	want := []string{
		"LOG q/decode/ctx=1K/conc=1: repeat 1 of 2: 246.4 tok/s total · 200.0 tok/s/request · TTFT 26 ms · TBT 5.2 ms · valid",
		"LOG q/decode/ctx=1K/conc=2: repeat 1 of 2: 392.1 tok/s total · 200.0 tok/s/request · TTFT 26 ms · TBT 5.2 ms · valid",
		"LOG q/decode/ctx=1K/conc=1: repeat 2 of 2: 197.6 tok/s total · 200.0 tok/s/request · TTFT 26 ms · TBT 5.2 ms · valid",
		"RUN q/decode/ctx=1K/conc=1", "  222.0 tok/s total · 200.0 tok/s/request · TTFT 26 ms · TBT 5.2 ms · valid",
		"  warning", "END pass q/decode/ctx=1K/conc=1",
		"LOG q/decode/ctx=1K/conc=2: repeat 5 (auto, 4 to 20): error: stream stalled",
		"RUN q/decode/ctx=1K/conc=2", "  391.6 tok/s total · 200.0 tok/s/request · TTFT 26 ms · TBT 5.2 ms · valid", "END pass q/decode/ctx=1K/conc=2",
	}
	// The warning's words are package warning's (its TestString); here,
	// where it is printed.
	var got []string
	for _, l := range rs.lines {
		if strings.HasPrefix(l, "  warning: ") {
			l = "  warning"
		}
		got = append(got, l)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestObserverPrefillLeftOut: a prefill cell none of whose runs counted
// ends inconclusive, its figures not gated and its reason last; one that
// left runs out says which (docs/method.md#unmeasurable).
func TestObserverPrefillLeftOut(t *testing.T) {
	tests := []struct {
		name string
		cell result.PrefillCell
		want []string
	}{
		{name: "unmeasurable", cell: result.PrefillCell{Context: 8192, Status: vocab.StatusUnmeasurable, TPS: 20000, TTFTMs: 409.6,
			Reason: "the client's ttft_ms 409.6 is 2.00× the server's own 204.8 ms (timings.prompt_ms), beyond the 1.5× bound: the client read the first token late"},
			want: []string{"RUN q/prefill/ctx=8K", "  not gated: 20,000.0 tok/s prefill · TTFT 410 ms (cold)",
				"  unmeasurable: the client's ttft_ms 409.6 is 2.00× the server's own 204.8 ms (timings.prompt_ms), beyond the 1.5× bound: the client read the first token late",
				"END inconclusive q/prefill/ctx=8K"}},
		{name: "a run left out", cell: result.PrefillCell{Context: 8192, Status: vocab.StatusValid, TPS: 40000, TTFTMs: 204.8, Repeats: 3,
			Excluded: []result.ExcludedRun{{Repeat: 2, Status: vocab.StatusValid, Reason: "the machine moved: …"}}},
			want: []string{"RUN q/prefill/ctx=8K", "  40,000.0 tok/s prefill · TTFT 205 ms (cold)", "  1 of 4 runs left out: run 2: the machine moved: …",
				"END pass q/prefill/ctx=8K"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := &recordStream{}
			o := NewRunObserver(rs, "q", false)
			o.CellStart(tt.cell.Ref())
			o.PrefillDone(tt.cell, time.Second)
			if diff := cmp.Diff(tt.want, rs.lines); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestObserverSaturated: a traffic cell stopped as saturated fails its
// test (the judge's outcome of the saturated finding): its figures of
// the part run are not gated, its evidence is worded last.
func TestObserverSaturated(t *testing.T) {
	rs := &recordStream{}
	o := NewRunObserver(rs, "q", false)
	c := result.TrafficCell{Traffic: "steady", Rate: 60, Status: vocab.StatusSaturated, Launched: 40, Completed: 12, MeasuredS: 0.05,
		Reasons: []result.CellReason{{Code: result.ReasonSaturated, Figures: map[string]float64{
			result.FigRate: 60, result.FigWaitingStart: 0, result.FigWaitingEnd: 38, result.FigOutstandingStart: 0, result.FigOutstandingEnd: 43,
			result.FigObservedS: 1, result.FigSlopePerS: 42.6, result.FigFit: 0.97, result.FigSaturationAfterS: 1, result.FigSavedS: 2.95, result.FigWindowS: 3}}}}
	o.CellStart(c.Ref())
	o.TrafficDone(c, time.Second)
	got := rs.runsAnd(func(l string) bool { return strings.HasPrefix(l, "  saturated: ") || strings.HasPrefix(l, "END ") })
	want := []string{
		"RUN q/traffic/steady/rate=60",
		"  saturated: past the server's capacity at 60 req/s: its waiting requests grew from 0 to 38 over 1s (42.6 a second, fit 0.97; outstanding 0 to 43); stopped after its saturation_after of 1s, 2.95s of its 3s window saved",
		"END fail q/traffic/steady/rate=60",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestSaturationSavedLine: the run's end says the windows its saturated
// cells and probes did not run, as GPU time; nothing when none stopped.
func TestSaturationSavedLine(t *testing.T) {
	saturated := func(saved float64) result.TrafficCell {
		return result.TrafficCell{Traffic: "steady", Rate: 60, Status: vocab.StatusSaturated,
			Reasons: []result.CellReason{{Code: result.ReasonSaturated, Figures: map[string]float64{result.FigSavedS: saved}}}}
	}
	probe := saturated(27)
	tests := []struct {
		name string
		res  result.Results
		want string
	}{
		{name: "none stopped", res: result.Results{GPUTime: &result.GPUTime{GPUs: 2}, Traffic: []result.TrafficCell{{Status: vocab.StatusValid}}}},
		{name: "a cell and a probe", res: result.Results{GPUTime: &result.GPUTime{GPUs: 2}, Traffic: []result.TrafficCell{saturated(30)},
			Search: []result.Search{{Probes: []result.SearchProbe{{Traffic: &probe}}}}},
			want: "q: saturation saved 57.0 s of windows not run (0.032 GPU-hours on 2 GPUs)"},
		{name: "a CPU server", res: result.Results{GPUTime: &result.GPUTime{CPU: true}, Traffic: []result.TrafficCell{saturated(30)}},
			want: "q: saturation saved 30.0 s of windows not run (server time; a CPU server)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := SaturationSavedLine("q", &tc.res); got != tc.want {
				t.Errorf("SaturationSavedLine = %q, want %q", got, tc.want)
			}
		})
	}
}
