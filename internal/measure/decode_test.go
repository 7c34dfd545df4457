package measure

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/lifecycle"
	"github.com/slogate/slogate/internal/report"
	"github.com/slogate/slogate/internal/requests"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vllmfake"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// TestStreamsThatDoNotStopMakeAnError: when a cell's streams do not end
// within the exit timeout after the window, their goroutines may still be
// writing their stats: the cell is an error and the stats are not read
// (with -race, reading them would be a data race).
func TestStreamsThatDoNotStopMakeAnError(t *testing.T) {
	defer func(d time.Duration) { streamsExitTimeout = d }(streamsExitTimeout)
	streamsExitTimeout = 50 * time.Millisecond
	f := vllmfake.Server{Tokens: 100000, Gap: 2 * time.Millisecond}
	s := f.Start(t)
	m := testMeter(s.URL)
	m.Record = holdCancelled(t)
	c, err := m.Decode(context.Background(), decodeRef(1000, 2), testBodies(m, 1000), 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != vocab.StatusError || c.Reason != "streams did not stop within 50ms" || c.OutputTokens != 0 {
		t.Fatalf("decode = %+v, want an error cell without numbers", c)
	}
}

// TestGateTimeout: a steady-state gate that times out makes the cell
// queued only when its polls showed the server making requests wait
// (docs/method.md#statuses); otherwise — here the server runs all C but
// the streams are not past their first token — the cell is not queued (valid
// by the gate; unmeasurable here, its window holding no token), with a
// note saying the gate timed out and why.
func TestGateTimeout(t *testing.T) {
	defer func(d time.Duration) { steadyBase = d }(steadyBase)
	steadyBase = 500 * time.Millisecond
	tests := []struct {
		name    string
		waiting float64
		want    vocab.Status
		// wantWhy is in the queued cell's reason; a valid cell has a
		// gate_timed_out note instead.
		wantWhy string
	}{
		// Valid by the gate, but its window held no token (the first comes
		// after 2 s): unmeasurable (docs/method.md#unmeasurable), with
		// the gate's note all the same.
		{name: "no sign of waiting", want: vocab.StatusUnmeasurable},
		{name: "waiting requests", waiting: 1, want: vocab.StatusQueued, wantWhy: "; server running 2, waiting 1); the server made requests wait for "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := vllmfake.Server{Tokens: 100000, Gap: 2 * time.Millisecond, FirstDelay: 2 * time.Second, Waiting: tc.waiting}
			s := f.Start(t)
			m := testMeter(s.URL)
			c, err := m.Decode(context.Background(), decodeRef(1000, 2), testBodies(m, 1000), 0, false)
			if err != nil {
				t.Fatal(err)
			}
			if c.Status != tc.want {
				t.Fatalf("cell %s %q, notes %+v; want %s", c.Status, c.Reason, c.Notes, tc.want)
			}
			if tc.want == vocab.StatusQueued {
				if !strings.Contains(c.Reason, "steady state not reached within 1s (0 of 2 streams decoding") || !strings.Contains(c.Reason, tc.wantWhy) || warning.Has(c.Notes, warning.GateTimedOut) {
					t.Errorf("queued cell %q, notes %+v; want the reason saying %q and no gate note", c.Reason, c.Notes, tc.wantWhy)
				}
				return
			}
			// The server ran both requests, none waiting, and no stream
			// was past its first token when the 1 s timeout passed.
			i := slices.IndexFunc(c.Notes, func(w warning.Warning) bool { return w.Code == warning.GateTimedOut })
			if i < 0 {
				t.Fatalf("notes %+v lack a gate_timed_out note", c.Notes)
			}
			want := map[string]float64{warning.FigTimeoutS: 1, warning.FigDecoding: 0, warning.FigConcurrency: 2, warning.FigRunning: 2, warning.FigWaiting: 0, warning.FigHeldS: 0}
			got := c.Notes[i].Figures
			if observed := got[warning.FigObservedS]; observed <= 0 {
				t.Errorf("gate note observed_s %v, want > 0 (the gauges were read)", observed)
			}
			got = maps.Clone(got)
			delete(got, warning.FigObservedS)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("gate note figures (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTrafficRequestsThatDoNotStopMakeAnError: the same for a traffic
// cell — requests still running past the exit timeout may still be writing
// their times, so the cell is an error and they are not read.
func TestTrafficRequestsThatDoNotStopMakeAnError(t *testing.T) {
	defer func(d time.Duration) { streamsExitTimeout = d }(streamsExitTimeout)
	streamsExitTimeout = 50 * time.Millisecond
	f := vllmfake.Server{Tokens: 100000, Gap: 2 * time.Millisecond}
	s := f.Start(t)
	m := testMeter(s.URL)
	m.Record = holdCancelled(t)
	m.MaxOutput = 100 // 200 ms a request: some are always running when the cell closes
	tr := &spec.Traffic{Label: "steady", Context: 1000, Rates: []float64{20}, Arrivals: "constant",
		Duration: 300 * time.Millisecond, DurationText: "300ms", WarmUp: 100 * time.Millisecond, MaxOutstanding: 64}
	ref := vocab.CellRef{Phase: vocab.PhaseTraffic, Matrix: "steady", Context: 1000, Rate: 20}
	c, err := m.Traffic(context.Background(), ref, tr, testBodies(m, 1000))
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != vocab.StatusError || c.Reason != "requests did not stop within 50ms" || c.Launched != 0 {
		t.Fatalf("traffic = %+v, want an error cell without numbers", c)
	}
}

// TestTotalTPSOverMeasuredWindow: total_tps divides the window's tokens by
// the window as measured, not by the nominal duration. The cell's clock
// runs twice as fast as real time, so the measured window is at least
// twice the nominal 500 ms: over the nominal one total_tps would come out
// at least twice as high as output_tokens ÷ measured_s.
func TestTotalTPSOverMeasuredWindow(t *testing.T) {
	f := vllmfake.Server{Tokens: 100000, PerChunk: 2, Gap: 2 * time.Millisecond}
	s := f.Start(t)
	m := testMeter(s.URL)
	m.clock = func(l *load) func() int64 { return func() int64 { return 2 * int64(time.Since(l.origin)) } }
	c, err := m.Decode(context.Background(), decodeRef(1000, 2), testBodies(m, 1000), 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if c.MeasuredS < 1 {
		t.Fatalf("measured_s %v, want ≥ 1 (twice the 500 ms window on the doubled clock)", c.MeasuredS)
	}
	want := float64(c.OutputTokens) / c.MeasuredS
	if c.TotalTPS < 0.99*want || c.TotalTPS > 1.01*want {
		t.Errorf("total_tps %v, want output_tokens %d ÷ measured_s %v = %.1f (over the nominal 0.5 s it would be %.1f)",
			c.TotalTPS, c.OutputTokens, c.MeasuredS, want, float64(c.OutputTokens)/0.5)
	}
}

// testMeter measures the fake at url with short windows: 500 ms, a 100 ms
// hold, a 2 s inactivity timeout, max_output 4096 on /v1/completions.
func testMeter(url string) *Meter {
	return &Meter{Server: lifecycle.Endpoint(lifecycle.NewClient(url, "", "qwen")), Spec: &spec.Server{Name: "q"},
		Prompts: &Prompts{fields: completionsFields}, Window: 500 * time.Millisecond, MaxOutput: 4096,
		SteadyHold: 100 * time.Millisecond, StreamIdleTimeout: 2 * time.Second, ReasonText: report.CellReasonText, WarningText: report.WarningText}
}

// holdCancelled is a Record hook that keeps every request slogate
// cancelled from ending until the test ends: its stream's goroutine waits
// in the hook, so the streams truly do not stop in time, however fast the
// machine or however its goroutines are scheduled.
func holdCancelled(t *testing.T) func(*result.RequestRecord) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	return func(rec *result.RequestRecord) {
		if rec.Status == result.RequestCancelled {
			<-release
		}
	}
}

// decodeRef names the decode cell at ctx and conc of the matrix "decode".
func decodeRef(ctx, conc int) vocab.CellRef {
	return vocab.CellRef{Phase: vocab.PhaseDecode, Matrix: "decode", Context: ctx, Concurrency: conc}
}

// testBodies is the decode request body of one shared prompt of n tokens.
func testBodies(m *Meter, n int) [][]byte {
	return [][]byte{m.Prompts.fields.body(requests.Prompt{Tokens: make([]int, n)}, m.MaxOutput, m.MaxOutput, "salt")}
}

// TestSpeculativeIdleNamesTheEngine: a decode cell whose server has a
// speculative block but whose /metrics show no drafting warns in the
// terms of the server's engine (its own metric and launch flag), never
// another engine's (an SGLang cell named vLLM's counter and
// --speculative-config). The fake's /metrics has no draft counter and no
// acceptance gauge, so speculation shows as idle on both.
func TestSpeculativeIdleNamesTheEngine(t *testing.T) {
	for _, tc := range []struct {
		name, engine, want, other string
	}{
		{"vllm", spec.EngineVLLM, "vllm:spec_decode_num_drafts_total did not move): check the server's --speculative-config", "sglang:"},
		{"sglang", spec.EngineSGLang, "sglang:spec_accept_length was 0 or absent after the window): check the server's --speculative-algorithm", "vllm:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := vllmfake.Server{Tokens: 100000, PerChunk: 2, Gap: 2 * time.Millisecond}
			s := f.Start(t)
			m := testMeter(s.URL)
			m.Spec = &spec.Server{Name: "q", Engine: tc.engine, Speculative: &spec.Speculative{Method: "eagle3"}}
			m.Server.Client.ForServer(m.Spec)
			c, err := m.Decode(context.Background(), decodeRef(1000, 1), testBodies(m, 1000), 0, false)
			if err != nil {
				t.Fatal(err)
			}
			var warned []string
			for _, w := range c.Warnings {
				if w.Code == warning.SpeculativeIdle {
					warned = append(warned, w.String())
				}
			}
			if len(warned) != 1 || !strings.Contains(warned[0], tc.want) || strings.Contains(warned[0], tc.other) {
				t.Fatalf("speculation warnings %q, want one containing %q and no %q (all warnings: %q)", warned, tc.want, tc.other, c.Warnings)
			}
		})
	}
}

// TestBurstIsOneChunk: a stream whose tokens come in bursts of chunks,
// one token each, written back to back every 5 ms (a speculative step's
// accepted tokens as llama-server sends them) has a TBT of the burst's gap
// ÷ its tokens and an ITL of the gap between bursts, as vLLM's one chunk
// of several tokens would (docs/method.md#bursts), never the microseconds
// between a burst's chunks; one chunk per token every 5 ms is 5 ms each.
// The figures are read on the real clock, so they are checked as ratios of
// each other (ITL ÷ TBT is the tokens a chunk carries) and against the
// fake's gap with a margin a loaded machine cannot break: a late reader
// stretches or shortens single gaps, not the median's burst structure.
func TestBurstIsOneChunk(t *testing.T) {
	tests := []struct {
		name             string
		burst            int
		usage            string
		ratioLo, ratioHi float64 // itl_ms ÷ tbt_ms, both medians
	}{
		{name: "bursts of 5 with per-chunk usage", burst: 5, ratioLo: 4, ratioHi: 7},
		{name: "bursts of 5 with only a final usage", burst: 5, usage: "final", ratioLo: 4, ratioHi: 7},
		{name: "one chunk per token", burst: 1, ratioLo: 0.8, ratioHi: 1.25},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := vllmfake.Server{Tokens: 100000, Gap: 5 * time.Millisecond, Burst: tc.burst, Usage: tc.usage}
			s := f.Start(t)
			m := testMeter(s.URL)
			c, err := m.Decode(context.Background(), decodeRef(1000, 1), testBodies(m, 1000), 0, false)
			if err != nil {
				t.Fatal(err)
			}
			itl := c.Stats["itl_ms"]
			// Unmerged, a burst's chunks would be microseconds apart: both
			// medians far below the 5 ms gap and their ratio near 1.
			if c.OutputTokens == 0 || c.TBTMs <= 0 || itl < 2.5 || itl/c.TBTMs < tc.ratioLo || itl/c.TBTMs > tc.ratioHi {
				t.Errorf("%s (%s), %d tokens: tbt_ms %v, itl_ms %v (want ≥ 2.5, half the fake's 5 ms gap), itl ÷ tbt %.2f (want %v to %v)",
					c.Status, c.Reason, c.OutputTokens, c.TBTMs, itl, itl/c.TBTMs, tc.ratioLo, tc.ratioHi)
			}
		})
	}
}
