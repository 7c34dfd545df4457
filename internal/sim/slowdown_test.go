package sim

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestParseSlowdown: --sim-slowdown takes a factor in [0.1, 100].
func TestParseSlowdown(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want float64
		err  bool
	}{
		{name: "20 % slower", in: "1.2", want: 1.2},
		{name: "faster", in: "0.5", want: 0.5},
		{name: "zero", in: "0", err: true},
		{name: "negative", in: "-1.2", err: true},
		{name: "not a number", in: "20%", err: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parseServe([]string{"m", "--sim-slowdown", tc.in})
			if tc.err {
				if err == nil || !strings.Contains(err.Error(), "want a factor on the time per step in [0.1, 100]") {
					t.Fatalf("--sim-slowdown %s: %v, want the usage error", tc.in, err)
				}
				return
			}
			if err != nil || cfg.Slowdown != tc.want {
				t.Fatalf("--sim-slowdown %s: %v, %v; want %v", tc.in, cfg.Slowdown, err, tc.want)
			}
		})
	}
}

// TestSlowdownScalesEveryStep: with --sim-slowdown F every step takes F×
// as long: a cold prefill, a warm first token and a decode step with flat
// timings exactly so.
func TestSlowdownScalesEveryStep(t *testing.T) {
	for _, f := range []float64{1, 1.2, 2} {
		e := newEngine(engineParams{numBlocks: 1 << 20, runCap: 16, prefixCache: true, acceptLen: 1, stepScale: 1, profAccept: 1,
			tbt: time.Millisecond, ttft: 5 * time.Millisecond, prefillTPS: 100_000, seed: 1, slowdown: f})
		e.virtual = true
		scaled := func(d time.Duration) time.Duration { return time.Duration(float64(d) * f) }
		cold := newRequest(10_000, 1000, 7)
		e.submit(cold)
		if got, want := ttftOf(t, e, cold), scaled(100*time.Millisecond); got != want {
			t.Errorf("F=%v: cold TTFT %v, want %v (10,000 tokens at 100,000 tok/s, ×F)", f, got, want)
		}
		warm := newRequest(10_000, 1000, 7)
		e.submit(warm)
		if got, want := ttftOf(t, e, warm), scaled(5*time.Millisecond); got != want {
			t.Errorf("F=%v: warm TTFT %v, want %v", f, got, want)
		}
		if got, want := e.stepTime([]*request{cold, warm}), scaled(time.Millisecond); got != want {
			t.Errorf("F=%v: decode step %v, want %v", f, got, want)
		}
	}
}

// TestSlowdownOnTheSeedProfile: on the Qwen seed's fitted profile, a 1.2
// slowdown makes a decode cell 1/1.2 as fast in total tok/s and its TTFT
// 1.2× as long, at low and high concurrency: the "20 % slower upgrade" of
// `make demo`. The streams of a cell start together and restart together,
// so a window catches a phase of their cycle (maxOut tokens: seconds at
// 8K × 64); windows of many cycles average that out.
func TestSlowdownOnTheSeedProfile(t *testing.T) {
	slowed := func(f string) *settings {
		cfg, err := parseServe(append(append([]string(nil), seedArgv["qwen"]...), "--sim-slowdown", f))
		if err != nil {
			t.Fatal(err)
		}
		s, err := settle(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	base, slow := slowed("1"), slowed("1.2")
	for _, cell := range []struct{ ctx, conc int }{{8192, 1}, {8192, 64}, {32768, 16}} {
		a := simulateCell(t, base, cell.ctx, cell.conc, 1024, 3*time.Second, 300*time.Second)
		b := simulateCell(t, slow, cell.ctx, cell.conc, 1024, 3*time.Second, 300*time.Second)
		if r := b.totalTPS / a.totalTPS; math.Abs(r-1/1.2) > 0.01 {
			t.Errorf("%d × %d: total tok/s %.1f → %.1f (×%.3f), want ×%.3f", cell.ctx, cell.conc, a.totalTPS, b.totalTPS, r, 1/1.2)
		}
		if r := float64(b.ttft) / float64(a.ttft); math.Abs(r-1.2) > 0.02 {
			t.Errorf("%d × %d: TTFT %v → %v (×%.3f), want ×1.2", cell.ctx, cell.conc, a.ttft, b.ttft, r)
		}
	}
}
