package views

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/google/go-cmp/cmp"
	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// TestTraffic: traffic cells are matched on their key (label, context when
// the block has one, rate or concurrency); without per-request records
// each is decided on its values, saying so, its headline first and then a
// line per metric: the rule, then the value (docs/method.md#comparing-traffic).
func TestTraffic(t *testing.T) {
	cell := func(label string, ctx int, rate float64, conc int, ttftP99 float64) result.TrafficCell {
		return result.TrafficCell{Traffic: label, Context: ctx, Rate: rate, Concurrency: conc, Status: vocab.StatusValid,
			AchievedRPS: 4, GoodputRPS: 3, GoodputShare: 0.75, Launched: 400, Completed: 400, TTFTMs: 50, TTFTMsP99: ttftP99,
			TBTMs: 6, TBTMsP99: 7, E2EMs: 500, E2EMsP99: 600}
	}
	errored := cell("replay", 0, 0, 8, 0)
	errored.Status, errored.Reason = vocab.StatusError, "stream stalled"
	idle := cell("steady", 8192, 0.5, 0, 0)
	idle.Completed, idle.AchievedRPS, idle.GoodputRPS, idle.GoodputShare = 0, 0, 0, 0
	few := func(c result.TrafficCell) result.TrafficCell { c.Launched, c.Completed = 42, 42; return c }
	const values = "unpaired, on the cells' values alone (not statistical): the baseline has no per-request records (no requests.jsonl beside its results.json)"
	tests := []struct {
		name string
		a, b []result.TrafficCell
		// headlines only, unless all
		all  bool
		want []string
	}{
		{name: "the same key on both sides, every line", all: true,
			a: []result.TrafficCell{cell("steady", 8192, 4, 0, 100)},
			b: []result.TrafficCell{cell("steady", 8192, 4, 0, 150)},
			want: []string{"traffic/steady/ctx=8K/rate=4: regressed (ttft_ms_p99); " + values,
				"  achieved_rps: 4 → 4 req/s (0.0%)",
				"  goodput_rps within 5%: 0.0% (3 → 3 req/s, values only): unchanged",
				"  goodput_share within 5%: 0.0% (0.75 → 0.75, values only): unchanged",
				"  ttft_ms within 5%: 0.0% (50 → 50 ms, values only): unchanged",
				"  ttft_ms_p99 within 5%: +50.0% (100 → 150 ms, values only): regressed",
				"  tbt_ms within 5%: 0.0% (6 → 6 ms, values only): unchanged",
				"  tbt_ms_p99 within 5%: 0.0% (7 → 7 ms, values only): unchanged",
				"  e2e_ms within 5%: 0.0% (500 → 500 ms, values only): unchanged",
				"  e2e_ms_p99 within 5%: 0.0% (600 → 600 ms, values only): unchanged"}},
		{name: "a p99 of 42 requests is undecidable, a p90 and medians decided", all: true,
			a: []result.TrafficCell{few(cell("steady", 8192, 4, 0, 100))},
			b: []result.TrafficCell{few(cell("steady", 8192, 4, 0, 150))},
			want: []string{"traffic/steady/ctx=8K/rate=4: inconclusive (ttft_ms_p99, tbt_ms_p99, e2e_ms_p99); " + values,
				"  achieved_rps: 4 → 4 req/s (0.0%)",
				"  goodput_rps within 5%: 0.0% (3 → 3 req/s, values only): unchanged",
				"  goodput_share within 5%: 0.0% (0.75 → 0.75, values only): unchanged",
				"  ttft_ms within 5%: 0.0% (50 → 50 ms, values only): unchanged",
				"  ttft_ms_p99 within 5%: +50.0% (100 → 150 ms, values only): inconclusive (ttft_ms_p99 from 42 requests: a p99 needs ≥ 299)",
				"  tbt_ms within 5%: 0.0% (6 → 6 ms, values only): unchanged",
				"  tbt_ms_p99 within 5%: 0.0% (7 → 7 ms, values only): inconclusive (tbt_ms_p99 from 42 requests: a p99 needs ≥ 299)",
				"  e2e_ms within 5%: 0.0% (500 → 500 ms, values only): unchanged",
				"  e2e_ms_p99 within 5%: 0.0% (600 → 600 ms, values only): inconclusive (e2e_ms_p99 from 42 requests: a p99 needs ≥ 299)"}},
		{name: "without a context, by concurrency",
			a:    []result.TrafficCell{cell("replay", 0, 0, 8, 100), cell("replay", 0, 0, 16, 100)},
			b:    []result.TrafficCell{cell("replay", 0, 0, 16, 90), cell("replay", 0, 0, 32, 100)},
			want: []string{"traffic/replay/conc=8: only A (not measured by B): valid: lost", "traffic/replay/conc=16: within tolerance; " + values, "traffic/replay/conc=32: only B (no baseline cell): valid"}},
		{name: "a rate is not a concurrency, a context not its absence",
			a:    []result.TrafficCell{cell("replay", 0, 8, 0, 100), cell("steady", 8192, 4, 0, 100)},
			b:    []result.TrafficCell{cell("replay", 0, 0, 8, 100), cell("steady", 0, 4, 0, 100)},
			want: []string{"traffic/replay/rate=8: only A (not measured by B): valid: lost", "traffic/steady/ctx=8K/rate=4: only A (not measured by B): valid: lost", "traffic/replay/conc=8: only B (no baseline cell): valid", "traffic/steady/rate=4: only B (no baseline cell): valid"}},
		{name: "an errored side has no numbers",
			a:    []result.TrafficCell{cell("replay", 0, 0, 8, 100)},
			b:    []result.TrafficCell{errored},
			want: []string{"traffic/replay/conc=8: valid → error: stream stalled"}},
		{name: "a side without requests has no latencies", all: true,
			a: []result.TrafficCell{cell("steady", 8192, 0.5, 0, 100)},
			b: []result.TrafficCell{idle},
			want: []string{"traffic/steady/ctx=8K/rate=0.5: regressed (goodput_rps, goodput_share); " + values + " (completed 400 → 0: no latencies to compare)",
				"  achieved_rps: 4 → 0 req/s (-100.0%)",
				"  goodput_rps within 5%: -100.0% (3 → 0 req/s, values only): regressed",
				"  goodput_share within 5%: -100.0% (0.75 → 0, values only): regressed"}},
	}
	strict, loose := cell("replay", 0, 0, 4, 100), cell("replay", 0, 0, 4, 100)
	l300, l500 := 300.0, 500.0
	strict.SLO, loose.SLO = &result.TrafficSLO{TTFTMs: &l300}, &result.TrafficSLO{TTFTMs: &l500}
	tests = append(tests, struct {
		name string
		a, b []result.TrafficCell
		all  bool
		want []string
	}{name: "the SLOs differ", a: []result.TrafficCell{strict}, b: []result.TrafficCell{loose},
		want: []string{"traffic/replay/conc=4: within tolerance; " + values + " (the SLOs differ, each side's goodput judged by its own: ttft_ms 300 → 500)"}})
	chat := cell("replay", 0, 0, 16, 100)
	chat.Workload, chat.Prompts = "replay", "one user message on /v1/chat/completions, templated by the server"
	raw := chat
	raw.Prompts = "raw text on /v1/completions, untemplated"
	tests = append(tests, struct {
		name string
		a, b []result.TrafficCell
		all  bool
		want []string
	}{name: "what was sent differs", a: []result.TrafficCell{raw}, b: []result.TrafficCell{chat},
		want: []string{`traffic/replay/conc=16: within tolerance; ` + values + ` (sent differently: workload "replay", raw text on /v1/completions, untemplated → workload "replay", one user message on /v1/chat/completions, templated by the server)`}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, l := range TrafficLines(compare.Traffic(&result.Results{Traffic: tt.a}, &result.Results{Traffic: tt.b}, compare.Policy{Tolerance: 0.05}, false), 0.05) {
				if tt.all || !strings.HasPrefix(l, "  ") {
					got = append(got, l)
				}
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("lines (-want +got):\n%s", d)
			}
		})
	}
}

// pairedRuns are two runs of one traffic cell "replay" at rate 4 of one
// schedule, 600 window requests each: request i's latencies are its
// latent size (the same on both sides) times each side's own noise, and
// B's TTFT is ttftSlow times A's.
func pairedRuns(ttftSlow float64) (a, b *result.Results) {
	run := func(noise uint64, slow float64) *result.Results {
		latent := rand.New(rand.NewPCG(7, 7))
		own := rand.New(rand.NewPCG(noise, 3))
		limit := 250.0
		c := result.TrafficCell{Traffic: "replay", Rate: 4, Arrivals: "poisson", Status: vocab.StatusValid, Launched: 600, Completed: 600,
			MeasuredS: 150, AchievedRPS: 4, SLO: &result.TrafficSLO{TTFTMs: &limit},
			Schedule: (&result.Schedule{Arrivals: "poisson", Rate: 4, WarmUpS: 10, WindowS: 150}).Seal()}
		for i := range 600 {
			l, e := math.Exp(0.5*latent.NormFloat64()), math.Exp(0.02*own.NormFloat64())
			ttft, tbt := 100*l*e*slow, 10*e
			c.Requests = append(c.Requests, result.RequestRecord{Cell: "traffic/replay/rate=4", Phase: vocab.PhaseTraffic, Index: &i,
				TTFTMs: &ttft, TPOTMs: &tbt, E2EMs: ttft + 63*tbt, OutputTokens: 64, Status: result.RequestFinished, InWindow: true})
		}
		// The cells' own figures are what measure would have recorded;
		// the comparison recomputes them from the requests.
		c.TTFTMs, c.TTFTMsP99, c.TBTMs, c.TBTMsP99, c.E2EMs, c.E2EMsP99, c.GoodputRPS, c.GoodputShare = 100*slow, 300*slow, 10, 10.5, 730, 950, 3.9, 0.97
		return &result.Results{Schema: result.Schema, Server: result.Server{Name: "qwen"}, Traffic: []result.TrafficCell{c}, RequestsRead: true}
	}
	return run(1, 1), run(2, ttftSlow)
}

// TestTrafficGolden compares diff's text and Markdown of a paired traffic
// regression (TTFT 20 % slower) with testdata/traffic-diff.golden, and
// validates its JSON against docs/diff.schema.json. Regenerate with:
//
//	go test ./internal/views -run TestTrafficGolden -update
func TestTrafficGolden(t *testing.T) {
	a, b := pairedRuns(1.2)
	d := Diff{PathA: "baseline.json", PathB: "candidate.json", C: compare.Build(a, b, compare.Policy{Tolerance: 0.05})}
	var buf bytes.Buffer
	if err := d.Text(&buf); err != nil {
		t.Fatal(err)
	}
	buf.WriteString("\n---- markdown ----\n\n")
	if err := d.Markdown(&buf); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "traffic-diff.golden")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/views -run TestTrafficGolden -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), buf.String()); diff != "" {
		t.Errorf("the diff differs from %s (-want +got); if intended, run go test ./internal/views -run TestTrafficGolden -update:\n%s", golden, diff)
	}
	// Whatever it is regenerated to: paired, TTFT regressed, exit 1.
	for _, s := range []string{"traffic/replay/rate=4: regressed (ttft_ms, ttft_ms_p99, e2e_ms", "; paired, 600 requests\n", "    ttft_ms within 5%: +"} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("the diff lacks %q", s)
		}
	}
	if d.C.ExitCode() != 1 {
		t.Errorf("exit %d, want 1", d.C.ExitCode())
	}
	schema, err := jsonschema.NewCompiler().Compile(filepath.Join("..", "..", "docs", "diff.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	if err := d.JSON(&buf); err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(doc); err != nil {
		t.Fatalf("the document does not fit docs/diff.schema.json: %v\n%s", err, buf.String())
	}
	var got struct {
		Traffic []struct {
			Mode     string
			Requests int
			Outcome  vocab.Outcome
			Values   []struct {
				Metric, Decision string
				Lower, Upper     *float64
			}
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Traffic) != 1 || got.Traffic[0].Mode != "paired" || got.Traffic[0].Requests != 600 || got.Traffic[0].Outcome != vocab.Fail {
		t.Fatalf("traffic %+v; want one paired cell of 600 requests, failed", got.Traffic)
	}
	for _, v := range got.Traffic[0].Values {
		if v.Metric == "ttft_ms" && (v.Decision != "regressed" || v.Lower == nil || *v.Lower < 0.15 || *v.Upper > 0.25) {
			t.Errorf("ttft_ms %s [%v, %v]; want regressed, bounds around +20%%", v.Decision, v.Lower, v.Upper)
		}
	}
}
