package plan

import (
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/workload"
)

func pf(v float64) *float64 { return &v }
func pi64(v int64) *int64   { return &v }

func dec(m string, ctx, c int) vocab.CellRef {
	return vocab.CellRef{Phase: vocab.PhaseDecode, Matrix: m, Context: ctx, Concurrency: c}
}

func testSpec() *spec.Spec {
	return &spec.Spec{
		Filename: "t.hcl",
		Measure:  &spec.Measure{Duration: 2 * time.Second, MaxOutput: 1024, Repeat: 1},
		Prefill:  &spec.Prefill{Contexts: []int{16384, 8192, 262144}},
		Matrices: []*spec.Matrix{
			{Label: "decode", Contexts: []int{16384, 8192}, Concurrency: []int{1, 64, 8}},
			{Label: "long", Contexts: []int{8192}, Concurrency: []int{2}},
		},
		Asserts: []*spec.Assert{
			{Name: "d8k64", Cells: []vocab.CellRef{dec("decode", 8192, 64)}},
			{Name: "pre32k", Cells: []vocab.CellRef{{Phase: vocab.PhasePrefill, Context: 32768}}},
		},
		Expects: []*spec.Expect{
			{Name: "tps", Metric: "total_tps", Rows: []spec.ExpectRow{
				{Context: 8192, Values: []*float64{pf(1), nil, pf(3)}},
				{Context: 16384, Values: []*float64{pf(1), pf(2), pf(3)}},
			}},
		},
	}
}

func TestNew(t *testing.T) {
	srv := &spec.Server{Name: "qwen"}
	tests := []struct {
		name    string
		run     string
		steps   []Step
		asserts []string
		expects int
	}{
		{
			name: "everything, contexts ascending, concurrency ascending, matrices in spec order",
			steps: []Step{
				{Context: 8192, Prefill: true, Decode: []vocab.CellRef{dec("decode", 8192, 1), dec("decode", 8192, 8), dec("decode", 8192, 64), dec("long", 8192, 2)}},
				{Context: 16384, Prefill: true, Decode: []vocab.CellRef{dec("decode", 16384, 1), dec("decode", 16384, 8), dec("decode", 16384, 64)}},
				{Context: 32768, Prefill: true},
				{Context: 262144, Prefill: true},
			},
			asserts: []string{"d8k64", "pre32k"},
			expects: 1,
		},
		{
			name:  "a kept decode cell keeps its context's prefill",
			run:   "decode/ctx=16K/conc=8",
			steps: []Step{{Context: 16384, Prefill: true, Decode: []vocab.CellRef{dec("decode", 16384, 8)}}},
		},
		{
			name:    "unanchored, not split at slashes",
			run:     "conc=64",
			steps:   []Step{{Context: 8192, Prefill: true, Decode: []vocab.CellRef{dec("decode", 8192, 64)}}, {Context: 16384, Prefill: true, Decode: []vocab.CellRef{dec("decode", 16384, 64)}}},
			expects: 1, // tps/ctx=16K/conc=64 (the 8K row has no value at 64)
		},
		{
			name:    "a kept assertion adds the cells it reads",
			run:     "assert/pre32k",
			steps:   []Step{{Context: 32768, Prefill: true}},
			asserts: []string{"pre32k"},
		},
		{
			name:    "expect cells are their own tests",
			run:     "expect/tps/ctx=8K/conc=8",
			steps:   []Step{{Context: 8192, Prefill: true, Decode: []vocab.CellRef{dec("decode", 8192, 8)}}},
			expects: 1,
		},
		{
			name:  "prefill only",
			run:   "prefill/ctx=256K",
			steps: []Step{{Context: 262144, Prefill: true}},
		},
		{
			name: "nothing matches",
			run:  "nope",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var keep *regexp.Regexp
			if tc.run != "" {
				keep = regexp.MustCompile(tc.run)
			}
			p := New(testSpec(), srv, keep)
			if diff := cmp.Diff(tc.steps, p.Steps); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			var got []string
			for _, a := range p.Asserts {
				got = append(got, a.Name)
			}
			if diff := cmp.Diff(tc.asserts, got); diff != "" {
				t.Errorf("asserts (-want +got):\n%s", diff)
			}
			if len(p.Expects) != tc.expects {
				t.Errorf("got %d expects, want %d", len(p.Expects), tc.expects)
			}
		})
	}
}

func TestExpectPartiallyKept(t *testing.T) {
	p := New(testSpec(), &spec.Server{Name: "qwen"}, regexp.MustCompile(`expect/tps/ctx=16K/conc=(1|64)$`))
	if len(p.Expects) != 1 {
		t.Fatalf("got %d expects", len(p.Expects))
	}
	e := p.Expects[0]
	want := []vocab.CellRef{dec("decode", 16384, 1), dec("decode", 16384, 64)}
	if diff := cmp.Diff(want, ExpectCells(testSpec(), e)); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	// The spec's own block is untouched.
	if n := len(ExpectCells(testSpec(), testSpec().Expects[0])); n != 5 {
		t.Errorf("original expect has %d cells, want 5", n)
	}
}

func TestCells(t *testing.T) {
	p := New(testSpec(), &spec.Server{Name: "q"}, regexp.MustCompile("ctx=8K"))
	var names []string
	for _, c := range p.Cells() {
		names = append(names, c.Name())
	}
	want := []string{"prefill/ctx=8K", "decode/ctx=8K/conc=1", "decode/ctx=8K/conc=8", "decode/ctx=8K/conc=64", "long/ctx=8K/conc=2"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
}

func TestEstimate(t *testing.T) {
	sp := testSpec()
	tests := []struct {
		name string
		run  string
		kv   *int64
		rep  int
		// auto sets repeat = "auto" with max_repeat auto.
		auto     int
		distinct bool // workload { distinct = true }
		want     time.Duration
		wantMax  time.Duration // 0: want
	}{
		{name: "one 20K-token prefill", run: "prefill/ctx=16K", want: time.Duration(16384.0 / 20000 * float64(time.Second))},
		// 8 streams over a cached 16K prompt: 0.25 s + 8 × 16,384 tokens at
		// 1M tok/s = 0.381 s to their first tokens.
		{name: "decode cell adds warm-up, hold and window", run: "decode/ctx=16K/conc=8",
			want: time.Duration(16384.0/20000*float64(time.Second)) + 381072*time.Microsecond + SteadyHold + 2*time.Second},
		{name: "distinct prompts prefill each stream's", run: "decode/ctx=16K/conc=8", distinct: true,
			want: time.Duration(16384.0/20000*float64(time.Second)) + 250*time.Millisecond + time.Duration(8*16384.0/20000*float64(time.Second)) + SteadyHold + 2*time.Second},
		{name: "repeat multiplies", run: "decode/ctx=16K/conc=8", rep: 3,
			want: 3 * (time.Duration(16384.0/20000*float64(time.Second)) + 381072*time.Microsecond + SteadyHold + 2*time.Second)},
		{name: "repeat auto: the minimum, and max_repeat at most", run: "decode/ctx=16K/conc=8", rep: 4, auto: 10,
			want:    4 * (time.Duration(16384.0/20000*float64(time.Second)) + 381072*time.Microsecond + SteadyHold + 2*time.Second),
			wantMax: 10 * (time.Duration(16384.0/20000*float64(time.Second)) + 381072*time.Microsecond + SteadyHold + 2*time.Second)},
		{name: "over capacity by the spec's kv_cache_tokens costs nothing", run: "decode/ctx=16K/conc=64", kv: pi64(100000),
			want: time.Duration(16384.0 / 20000 * float64(time.Second))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := *sp.Measure
			if tc.rep > 0 {
				m.Repeat = tc.rep
			}
			if tc.auto > 0 {
				m.RepeatAuto, m.MaxRepeat = true, tc.auto
			}
			s := *sp
			s.Measure = &m
			if tc.distinct {
				s.Workload = &spec.Workload{Options: workload.Options{Distinct: true}}
			}
			p := New(&s, &spec.Server{Name: "q", KVCacheTokens: tc.kv}, regexp.MustCompile(tc.run))
			if p.Estimated != tc.want {
				t.Errorf("Estimated = %v, want %v", p.Estimated, tc.want)
			}
			wantMax := tc.wantMax
			if wantMax == 0 {
				wantMax = tc.want
			}
			if p.EstimatedMax != wantMax {
				t.Errorf("EstimatedMax = %v, want %v", p.EstimatedMax, wantMax)
			}
		})
	}
}

func trf(label string, ctx int, rate float64) vocab.CellRef {
	return vocab.CellRef{Phase: vocab.PhaseTraffic, Matrix: label, Context: ctx, Rate: rate}
}

// TestTrafficCells: a traffic block's rates are cells of its context's
// step, rates ascending, after the decode cells; -run selects them by
// their test names; a kept assert adds the traffic cells it reads; the
// estimate counts warm-up, window and drain per cell.
func TestTrafficCells(t *testing.T) {
	sp := &spec.Spec{
		Measure:  &spec.Measure{Duration: 2 * time.Second, MaxOutput: 64, Repeat: 1},
		Matrices: []*spec.Matrix{{Label: "decode", Contexts: []int{1024}, Concurrency: []int{1}}},
		Traffic: []*spec.Traffic{
			{Label: "steady", Context: 1024, Rates: []float64{4, 0.5, 2}, Duration: 5 * time.Second, WarmUp: time.Second},
			{Label: "long", Context: 8192, Rates: []float64{1}, Duration: 5 * time.Second, WarmUp: time.Second},
			{Label: "replay", Concurrency: []int{32, 8}, Duration: 5 * time.Second, WarmUp: time.Second},
		},
		Asserts: []*spec.Assert{{Name: "good", Cells: []vocab.CellRef{trf("long", 8192, 1)}}},
	}
	replay := func(conc int) vocab.CellRef {
		return vocab.CellRef{Phase: vocab.PhaseTraffic, Matrix: "replay", Concurrency: conc}
	}
	srv := &spec.Server{Name: "qwen"}
	tests := []struct {
		name  string
		run   string
		steps []Step
	}{
		{name: "everything", steps: []Step{
			{Context: 0, Traffic: []vocab.CellRef{replay(8), replay(32)}},
			{Context: 1024, Decode: []vocab.CellRef{dec("decode", 1024, 1)}, Traffic: []vocab.CellRef{trf("steady", 1024, 0.5), trf("steady", 1024, 2), trf("steady", 1024, 4)}},
			{Context: 8192, Traffic: []vocab.CellRef{trf("long", 8192, 1)}},
		}},
		{name: "a closed-loop cell without context by name", run: `traffic/replay/conc=8$`, steps: []Step{
			{Context: 0, Traffic: []vocab.CellRef{replay(8)}},
		}},
		{name: "one rate by name", run: `traffic/steady/ctx=1K/rate=0\.5$`, steps: []Step{
			{Context: 1024, Traffic: []vocab.CellRef{trf("steady", 1024, 0.5)}},
		}},
		{name: "an assert adds what it reads", run: `assert/good`, steps: []Step{
			{Context: 8192, Traffic: []vocab.CellRef{trf("long", 8192, 1)}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var keep *regexp.Regexp
			if tt.run != "" {
				keep = regexp.MustCompile(tt.run)
			}
			p := New(sp, srv, keep)
			if d := cmp.Diff(tt.steps, p.Steps); d != "" {
				t.Errorf("steps (-want +got):\n%s", d)
			}
		})
	}
	p := New(sp, srv, regexp.MustCompile(`traffic/long/`))
	coldPrefill := time.Duration(8192.0 / estimatePrefillRate * float64(time.Second))
	// The drain: a first token and max_output's 64 tokens at 10 ms.
	if want := coldPrefill + time.Second + 5*time.Second + 250*time.Millisecond + 640*time.Millisecond; p.Estimated != want {
		t.Errorf("estimate of one traffic cell = %v, want cold prefill + warm-up + window + drain = %v", p.Estimated, want)
	}
	// A named workload's output_tokens sets the drain: 128 tokens.
	named := *sp
	named.Traffic = []*spec.Traffic{{Label: "chat", Workload: "chat", Concurrency: []int{4}, Duration: 2 * time.Second}}
	named.Workloads = []*spec.Workload{{Name: "chat", Options: workload.Options{OutputTokens: workload.FixedLength(128)}}}
	if got, want := estimateDrain(&named, named.Traffic[0]), 250*time.Millisecond+1280*time.Millisecond; got != want {
		t.Errorf("drain of a 128-token workload = %v, want %v", got, want)
	}
	if got := trf("steady", 1024, 0.5).TestName("qwen"); got != "qwen/traffic/steady/ctx=1K/rate=0.5" {
		t.Errorf("test name %q", got)
	}
	if got := replay(8).TestName("qwen"); got != "qwen/traffic/replay/conc=8" {
		t.Errorf("test name %q", got)
	}
}

// TestRemaining: a resumed run counts and estimates only the cells left;
// a context whose decode cells are all done costs nothing more, one with a
// decode cell left its cold prefill request again.
func TestRemaining(t *testing.T) {
	sp := testSpec()
	p := New(sp, &spec.Server{Name: "q"}, regexp.MustCompile("ctx=8K"))
	cell := func(conc int) time.Duration { return estimateWarmUp(conc, 8192, false) + SteadyHold + 2*time.Second }
	prefill8K := time.Duration(8192.0 / 20000 * float64(time.Second))
	pre := vocab.CellRef{Phase: vocab.PhasePrefill, Context: 8192}
	tests := []struct {
		name      string
		done      []vocab.CellRef
		wantCells int
		wantEst   time.Duration
	}{
		{name: "nothing done", wantCells: 5, wantEst: p.Estimated},
		{name: "prefill and two decode cells done", done: []vocab.CellRef{pre, dec("decode", 8192, 1), dec("decode", 8192, 8)},
			wantCells: 2, wantEst: prefill8K + cell(64) + cell(2)},
		{name: "everything done", done: p.Cells(), wantCells: 0, wantEst: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			done := map[vocab.CellRef]bool{}
			for _, r := range tc.done {
				done[r] = true
			}
			cells, est := p.Remaining(sp, done)
			if cells != tc.wantCells || est != tc.wantEst {
				t.Errorf("Remaining = %d cells, %v; want %d, %v", cells, est, tc.wantCells, tc.wantEst)
			}
		})
	}
}
