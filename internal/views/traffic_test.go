package views

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// TestTraffic: traffic cells are matched on their key (label, context when
// the block has one, rate or concurrency) and set side by side, never
// decided (docs/method.md#comparing-traffic).
func TestTraffic(t *testing.T) {
	cell := func(label string, ctx int, rate float64, conc int, ttftP99 float64) result.TrafficCell {
		return result.TrafficCell{Traffic: label, Context: ctx, Rate: rate, Concurrency: conc, Status: vocab.StatusValid,
			AchievedRPS: 4, GoodputRPS: 3, Launched: 8, Completed: 8, TTFTMsP99: ttftP99, E2EMs: 500, TBTMs: 6}
	}
	errored := cell("replay", 0, 0, 8, 0)
	errored.Status, errored.Reason = vocab.StatusError, "stream stalled"
	idle := cell("steady", 8192, 0.5, 0, 0)
	idle.Completed, idle.AchievedRPS, idle.GoodputRPS = 0, 0, 0
	tests := []struct {
		name string
		a, b []result.TrafficCell
		want []string
	}{
		{name: "the same key on both sides",
			a:    []result.TrafficCell{cell("steady", 8192, 4, 0, 100)},
			b:    []result.TrafficCell{cell("steady", 8192, 4, 0, 150)},
			want: []string{"traffic/steady/ctx=8K/rate=4: achieved_rps 4 → 4 req/s (0.0%), goodput_rps 3 → 3 req/s (0.0%), ttft_ms_p99 100 → 150 ms (+50.0%), e2e_ms 500 → 500 ms (0.0%), tbt_ms 6 → 6 ms (0.0%)"}},
		{name: "without a context, by concurrency",
			a:    []result.TrafficCell{cell("replay", 0, 0, 8, 100), cell("replay", 0, 0, 16, 100)},
			b:    []result.TrafficCell{cell("replay", 0, 0, 16, 90), cell("replay", 0, 0, 32, 100)},
			want: []string{"traffic/replay/conc=8: only A (not measured by B): valid", "traffic/replay/conc=16: achieved_rps 4 → 4 req/s (0.0%), goodput_rps 3 → 3 req/s (0.0%), ttft_ms_p99 100 → 90 ms (-10.0%), e2e_ms 500 → 500 ms (0.0%), tbt_ms 6 → 6 ms (0.0%)", "traffic/replay/conc=32: only B (no baseline cell): valid"}},
		{name: "a rate is not a concurrency, a context not its absence",
			a:    []result.TrafficCell{cell("replay", 0, 8, 0, 100), cell("steady", 8192, 4, 0, 100)},
			b:    []result.TrafficCell{cell("replay", 0, 0, 8, 100), cell("steady", 0, 4, 0, 100)},
			want: []string{"traffic/replay/rate=8: only A (not measured by B): valid", "traffic/steady/ctx=8K/rate=4: only A (not measured by B): valid", "traffic/replay/conc=8: only B (no baseline cell): valid", "traffic/steady/rate=4: only B (no baseline cell): valid"}},
		{name: "an errored side has no numbers",
			a:    []result.TrafficCell{cell("replay", 0, 0, 8, 100)},
			b:    []result.TrafficCell{errored},
			want: []string{"traffic/replay/conc=8: valid → error: stream stalled"}},
		{name: "a side without requests has no latencies",
			a:    []result.TrafficCell{cell("steady", 8192, 0.5, 0, 100)},
			b:    []result.TrafficCell{idle},
			want: []string{"traffic/steady/ctx=8K/rate=0.5: achieved_rps 4 → 0 req/s (-100.0%), goodput_rps 3 → 0 req/s (-100.0%) (completed 8 → 0: no latencies to compare)"}},
	}
	chat := cell("replay", 0, 0, 16, 100)
	chat.Workload, chat.Prompts = "replay", "one user message on /v1/chat/completions, templated by the server"
	raw := chat
	raw.Prompts = "raw text on /v1/completions, untemplated"
	tests = append(tests, struct {
		name string
		a, b []result.TrafficCell
		want []string
	}{name: "what was sent differs", a: []result.TrafficCell{raw}, b: []result.TrafficCell{chat},
		want: []string{`traffic/replay/conc=16: achieved_rps 4 → 4 req/s (0.0%), goodput_rps 3 → 3 req/s (0.0%), ttft_ms_p99 100 → 100 ms (0.0%), e2e_ms 500 → 500 ms (0.0%), tbt_ms 6 → 6 ms (0.0%) (sent differently: workload "replay", raw text on /v1/completions, untemplated → workload "replay", one user message on /v1/chat/completions, templated by the server)`}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TrafficLines(compare.Traffic(&result.Results{Traffic: tt.a}, &result.Results{Traffic: tt.b}))
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("lines (-want +got):\n%s", d)
			}
		})
	}
}
