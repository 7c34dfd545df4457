package compare

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/stats"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// tok is a generated token with its logprob and top-k (text, logprob pairs).
func tok(id int, text string, lp float64, top ...any) result.Token {
	t := result.Token{ID: id, Text: text, Logprob: lp}
	for i := 0; i+3 <= len(top); i += 3 {
		t.Top = append(t.Top, result.TopToken{ID: top[i].(int), Text: top[i+1].(string), Logprob: top[i+2].(float64)})
	}
	return t
}

func out(line int, toks ...result.Token) result.CorrectnessOutput {
	o := result.CorrectnessOutput{Block: "g", Line: line, Tokens: toks}
	for _, t := range toks {
		o.Text += t.Text
	}
	return o
}

// TestAgree: how two greedy outputs agree, and the rule and figures that
// made a divergence a near tie or a mismatch (report's TestDivergenceWhy
// words them).
func TestAgree(t *testing.T) {
	the := tok(1, "the", -0.1, 1, "the", -0.1, 2, "a", -0.15)
	a2 := tok(2, "a", -0.15, 2, "a", -0.15, 1, "the", -0.16)
	cat := tok(3, " cat", -0.2, 3, " cat", -0.2, 4, " dog", -2.0)
	far := tok(2, "a", -0.1, 2, "a", -0.1, 1, "the", -0.9)                     // "the" in top-k, 0.8 apart
	outside := tok(9, "zz", -0.1, 9, "zz", -0.1, 8, "yy", -0.2, 7, "xx", -0.3) // a top-3 against the others' top-2
	zzInTop := tok(1, "the", -0.1, 1, "the", -0.1, 9, "zz", -0.3)              // "zz" in its top-k, "the" not in zz's
	bare := result.Token{ID: 2, Text: "a", Logprob: -0.1}
	tests := []struct {
		name string
		a, b result.CorrectnessOutput
		kind Agreement
		pos  int
		why  result.DivergenceCause
	}{
		{name: "same tokens", a: out(1, the, cat), b: out(1, the, cat), kind: Exact, pos: -1},
		{name: "near tie: each in the other's top-k, within the gap", a: out(1, cat, the), b: out(1, cat, a2), kind: NearTie, pos: 1,
			why: result.DivergenceCause{Rule: result.DivergedNearTie, LogprobGap: 0.05}},
		{name: "the candidate's token outside the baseline's top-k", a: out(1, the), b: out(1, outside), kind: Mismatch, pos: 0,
			why: result.DivergenceCause{Rule: result.DivergedNotInTop, Side: result.SideNow, Token: "zz", TopK: 2}},
		{name: "the baseline's token outside the candidate's top-k", a: out(1, zzInTop), b: out(1, outside), kind: Mismatch, pos: 0,
			why: result.DivergenceCause{Rule: result.DivergedNotInTop, Side: result.SideBaseline, Token: "the", TopK: 3}},
		{name: "in top-k but beyond the gap", a: out(1, the), b: out(1, far), kind: Mismatch, pos: 0,
			why: result.DivergenceCause{Rule: result.DivergedGapWide, LogprobGap: 0.8, NearTieGap: DefaultNearTieGap}},
		{name: "no logprobs", a: out(1, the), b: out(1, bare), kind: Mismatch, pos: 0, why: result.DivergenceCause{Rule: result.DivergedNoLogprobs}},
		{name: "candidate stops early", a: out(1, the, cat), b: out(1, the), kind: Mismatch, pos: 1,
			why: result.DivergenceCause{Rule: result.DivergedEnds, Side: result.SideNow}},
		{name: "baseline stops early", a: out(1, the), b: out(1, the, cat), kind: Mismatch, pos: 1,
			why: result.DivergenceCause{Rule: result.DivergedEnds, Side: result.SideBaseline}},
		{name: "no tokens, same text", a: result.CorrectnessOutput{Text: "abc"}, b: result.CorrectnessOutput{Text: "abc"}, kind: Exact, pos: -1},
		{name: "no tokens, texts differ", a: result.CorrectnessOutput{Text: "abc"}, b: result.CorrectnessOutput{Text: "abd"}, kind: Mismatch, pos: 2,
			why: result.DivergenceCause{Rule: result.DivergedTexts}},
		{name: "a failed request", a: out(1, the), b: result.CorrectnessOutput{Error: "HTTP 500"}, kind: Unpaired, pos: -1,
			why: result.DivergenceCause{Rule: result.DivergedRequestFailed}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Agree(tt.a, tt.b, DefaultNearTieGap)
			if got.Kind != tt.kind || got.Position != tt.pos {
				t.Fatalf("Agree = %v at %d (%+v), want %v at %d", got.Kind, got.Position, got.Why, tt.kind, tt.pos)
			}
			if diff := cmp.Diff(tt.why, got.Why, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("why (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompareGreedy(t *testing.T) {
	the := tok(1, "the", -0.1, 1, "the", -0.1, 2, "a", -0.15)
	a2 := tok(2, "a", -0.15, 2, "a", -0.15, 1, "the", -0.16)
	zz := tok(9, "zz", -0.1, 9, "zz", -0.1)
	var a, b []result.CorrectnessOutput
	for line := 1; line <= 100; line++ {
		a = append(a, out(line, the))
		switch {
		case line <= 3: // near ties
			b = append(b, out(line, a2))
		case line <= 5: // mismatches
			b = append(b, out(line, zz))
		default:
			b = append(b, out(line, the))
		}
	}
	tests := []struct {
		name        string
		maxMismatch float64
		want        Change
	}{
		{name: "max_mismatch 0: two mismatches regress", maxMismatch: 0, want: Regressed},
		{name: "max_mismatch 0.02 allows two of 100", maxMismatch: 0.02, want: Unchanged},
		{name: "max_mismatch 0.019 allows one of 100", maxMismatch: 0.019, want: Regressed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := CompareGreedy(a, b, DefaultNearTieGap, tt.maxMismatch)
			if g.Prompts != 100 || g.Exact != 95 || g.NearTies != 3 || g.Mismatches != 2 {
				t.Fatalf("counts = %d prompts, %d exact, %d near ties, %d mismatches; want 100, 95, 3, 2", g.Prompts, g.Exact, g.NearTies, g.Mismatches)
			}
			if g.Change != tt.want {
				t.Errorf("change = %v, want %v", g.Change, tt.want)
			}
			if g.AgreementRate() != 0.95 || g.NearTieRate() != 0.03 || g.MismatchRate() != 0.02 {
				t.Errorf("rates = %v %v %v", g.AgreementRate(), g.NearTieRate(), g.MismatchRate())
			}
			if len(g.Diverged) != 5 || g.Diverged[0].Line != 1 || g.Diverged[4].Line != 5 {
				t.Errorf("diverged = %d prompts", len(g.Diverged))
			}
			// Each diverged prompt, near ties too, has its record, in the
			// same order: the record, the verdicts and the diff read it.
			if len(g.Records) != len(g.Diverged) {
				t.Fatalf("%d records of %d diverged prompts", len(g.Records), len(g.Diverged))
			}
			for i, p := range g.Diverged {
				if r := g.Records[i]; r.Line != p.Line || r.Kind != p.Kind.String() || r.Position != p.Position {
					t.Errorf("record %d = line %d, %s at %d; its prompt is line %d, %s at %d", i, r.Line, r.Kind, r.Position, p.Line, p.Kind, p.Position)
				}
			}
			if g.Records[0].Kind != NearTie.String() || g.Records[4].Kind != Mismatch.String() {
				t.Errorf("records' kinds %q … %q, want a near tie first and a mismatch last", g.Records[0].Kind, g.Records[4].Kind)
			}
		})
	}
}

func TestComparePaired(t *testing.T) {
	tests := []struct {
		name         string
		items, worse int
		better       int
		margin       float64
		want         Change
		pvalue       float64 // checked when > 0
		needs        bool
	}{
		{name: "no discordant pair: identical", items: 50, want: Unchanged},
		// 12 discordant, 2 B's way: P(X ≤ 2 | 12, ½) = 79/4096.
		{name: "a drop shown", items: 200, worse: 10, better: 2, margin: 0.01, want: Regressed, pvalue: 79.0 / 4096},
		{name: "balanced discordance among many items", items: 20000, worse: 100, better: 100, margin: 0.01, want: Unchanged},
		{name: "too few items to tell", items: 100, worse: 6, better: 4, margin: 0.01, want: Inconclusive, needs: true},
		{name: "a significant gain", items: 1000, worse: 5, better: 60, margin: 0.01, want: Improved},
		{name: "nothing scored", items: 0, want: Inconclusive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := ComparePaired(tt.items, 0, 0, tt.worse, tt.better, tt.margin, DefaultAlpha)
			if p.Change != tt.want {
				t.Fatalf("change = %v (diff %.4f, [%.4f, %.4f], p %.4f), want %v", p.Change, p.Diff, p.Lower, p.Upper, p.PValue, tt.want)
			}
			if tt.pvalue > 0 && math.Abs(p.PValue-tt.pvalue) > 1e-9 {
				t.Errorf("p-value = %v, want %v", p.PValue, tt.pvalue)
			}
			if (p.Need > tt.items) != tt.needs {
				t.Errorf("need = %d items, want more than the %d measured: %v", p.Need, tt.items, tt.needs)
			}
		})
	}
}

func TestItemsFor(t *testing.T) {
	tests := []struct {
		name string
		base float64
	}{
		{name: "accuracy 0.5", base: 0.5},
		{name: "accuracy 0.7", base: 0.7},
		{name: "accuracy 0.9", base: 0.9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := ItemsFor(tt.base, AccuracyDrop, DefaultAlpha, AccuracyPower)
			if DropPower(n, tt.base, AccuracyDrop, DefaultAlpha) < AccuracyPower || DropPower(n-1, tt.base, AccuracyDrop, DefaultAlpha) >= AccuracyPower {
				t.Errorf("ItemsFor = %d: power there %.4f, one fewer %.4f", n, DropPower(n, tt.base, AccuracyDrop, DefaultAlpha), DropPower(n-1, tt.base, AccuracyDrop, DefaultAlpha))
			}
			// The normal approximation of the unpaired sizing, TensorRT-LLM's
			// (z_α + z_β)² · (p₁(1−p₁) + p₂(1−p₂)) ÷ θ², agrees within 10%:
			// independent errors are what an unpaired test assumes.
			z := stats.NormalQuantile(0.95) + stats.NormalQuantile(0.8)
			p2 := tt.base - AccuracyDrop
			approx := z * z * (tt.base*(1-tt.base) + p2*(1-p2)) / (AccuracyDrop * AccuracyDrop)
			if float64(n) > approx*1.1 || float64(n) < approx*0.9 {
				t.Errorf("ItemsFor = %d, the normal sizing says %.0f", n, approx)
			}
			r := RecommendedItems(tt.base, DefaultAlpha)
			if r%100 != 0 || r < n || DropPower(r, tt.base, AccuracyDrop, DefaultAlpha) < 0.81 {
				t.Errorf("RecommendedItems = %d (ItemsFor %d)", r, n)
			}
		})
	}
}

// corrRun is a run with one correctness block "greedy" of n prompts, each
// output the token "the"; right answers where right(line).
func corrRun(n int, right func(line int) bool) *result.Results {
	the := tok(1, "the", -0.1, 1, "the", -0.1, 2, "a", -0.15)
	c := result.Correctness{Name: "greedy", Endpoint: "completions", MaxOutput: 8, Logprobs: 5, Concurrency: 1, Scorer: "exact",
		Margin: DefaultMargin, NearTieGap: DefaultNearTieGap, Prompts: n}
	for line := 1; line <= n; line++ {
		o := out(line, the)
		o.Prompt = "p"
		r := right(line)
		o.Correct = &r
		c.Outputs = append(c.Outputs, o)
	}
	return &result.Results{Schema: result.Schema, Server: result.Server{Name: "qwen"}, Correctness: []result.Correctness{c}}
}

// TestCorrectnessRefusal: the rule, with its figures, that refuses to
// compare two correctness blocks; nil when they compare (report's
// TestRefusalText words them).
func TestCorrectnessRefusal(t *testing.T) {
	tests := []struct {
		name   string
		change func(a, b *result.Correctness)
		want   *result.CorrectnessRefusal
	}{
		{name: "the same settings and prompts", change: func(a, b *result.Correctness) {}},
		{name: "no baseline outputs", change: func(a, b *result.Correctness) { a.Outputs = nil },
			want: &result.CorrectnessRefusal{Rule: result.RefusedNoOutputs}},
		{name: "max_output differs", change: func(a, b *result.Correctness) { b.MaxOutput = 16 },
			want: &result.CorrectnessRefusal{Rule: result.RefusedMaxOutput, BaselineMaxOutput: 8, MaxOutput: 16}},
		{name: "the endpoint differs", change: func(a, b *result.Correctness) { b.Endpoint = "chat" },
			want: &result.CorrectnessRefusal{Rule: result.RefusedEndpoint, BaselineEndpoint: "completions", Endpoint: "chat"}},
		{name: "a prompt differs", change: func(a, b *result.Correctness) { b.Outputs[6].Prompt = "q" },
			want: &result.CorrectnessRefusal{Rule: result.RefusedPrompts, Line: 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := corrRun(10, func(int) bool { return true }).Correctness[0], corrRun(10, func(int) bool { return true }).Correctness[0]
			tt.change(&a, &b)
			if diff := cmp.Diff(tt.want, correctnessRefusal(&a, &b)); diff != "" {
				t.Errorf("refusal (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildCorrectness(t *testing.T) {
	half := func(line int) bool { return line%2 == 0 }
	tests := []struct {
		name    string
		change  func(b *result.Results)
		inconc  InconclusivePolicy
		outcome string
		exit    int
		check   func(t *testing.T, r CorrectnessResult)
		// notes are the block's notes by code and figures (none: nil).
		notes []warning.Warning
		// allow is -allow-settings-change (an engine change is a setting).
		allow bool
	}{
		{name: "identical builds pass", change: func(*result.Results) {}, outcome: "pass", exit: 0,
			check: func(t *testing.T, r CorrectnessResult) {
				if r.Greedy.Exact != 400 || r.Accuracy.Change != Unchanged {
					t.Errorf("greedy %+v accuracy %v", r.Greedy.Exact, r.Accuracy.Change)
				}
			}},
		{name: "one mismatch fails with max_mismatch 0", change: func(b *result.Results) {
			b.Correctness[0].Outputs[7].Tokens = []result.Token{tok(9, "zz", -0.1, 9, "zz", -0.1)}
		}, outcome: "fail", exit: 1, check: func(t *testing.T, r CorrectnessResult) {
			if r.Greedy.Mismatches != 1 || r.Greedy.Diverged[0].Line != 8 {
				t.Errorf("greedy = %+v", r.Greedy)
			}
		}},
		{name: "an accuracy drop fails", change: func(b *result.Results) {
			for i := range 40 { // 40 of the 200 right answers turn wrong
				no := false
				b.Correctness[0].Outputs[2*i+1].Correct = &no
			}
		}, outcome: "fail", exit: 1, check: func(t *testing.T, r CorrectnessResult) {
			if r.Accuracy.Change != Regressed || r.Accuracy.Worse != 40 {
				t.Errorf("accuracy = %+v", r.Accuracy)
			}
		}},
		{name: "a small accuracy change is inconclusive", change: func(b *result.Results) {
			flip(b, 8, 4) // 8 right answers turn wrong, 4 wrong ones right
		}, outcome: "inconclusive", exit: 4, check: func(t *testing.T, r CorrectnessResult) {
			if r.Accuracy.Change != Inconclusive || r.Accuracy.Need <= 400 {
				t.Errorf("accuracy = %+v", r.Accuracy)
			}
		}},
		{name: "-inconclusive pass accepts it", inconc: InconclusivePass, change: func(b *result.Results) {
			flip(b, 8, 4) // 8 right answers turn wrong, 4 wrong ones right
		}, outcome: "pass", exit: 0},
		{name: "max_output differs: not compared", change: func(b *result.Results) { b.Correctness[0].MaxOutput = 16 },
			outcome: "error", exit: 3, check: func(t *testing.T, r CorrectnessResult) {
				want := &result.CorrectnessRefusal{Rule: result.RefusedMaxOutput, BaselineMaxOutput: 8, MaxOutput: 16}
				if diff := cmp.Diff(want, r.Refusal); diff != "" {
					t.Errorf("refusal (-want +got):\n%s", diff)
				}
			}},
		{name: "other prompts: not compared", change: func(b *result.Results) { b.Correctness[0].Outputs[3].Prompt = "q" },
			outcome: "error", exit: 3, check: func(t *testing.T, r CorrectnessResult) {
				if diff := cmp.Diff(&result.CorrectnessRefusal{Rule: result.RefusedPrompts, Line: 4}, r.Refusal); diff != "" {
					t.Errorf("refusal (-want +got):\n%s", diff)
				}
			}},
		{name: "a block the baseline lacks is skipped", change: func(b *result.Results) { b.Correctness[0].Name = "other" },
			outcome: "pass", exit: 0, check: func(t *testing.T, r CorrectnessResult) {
				if r.Outcome.String() != "skip" || r.Greedy != nil {
					t.Errorf("outcome = %v", r.Outcome)
				}
			}},
		{name: "other concurrency: compared, with a note", change: func(b *result.Results) { b.Correctness[0].Concurrency = 4 },
			outcome: "pass", exit: 0, notes: []warning.Warning{{Code: warning.CorrectnessConcurrency,
				Figures: map[string]float64{warning.FigBaselineConcurrency: 1, warning.FigConcurrency: 4}}}},
		{name: "no logprobs on a side: compared, with a note", change: func(b *result.Results) { b.Correctness[0].Logprobs = 0 },
			outcome: "pass", exit: 0, notes: []warning.Warning{{Code: warning.CorrectnessNoLogprobs,
				Figures: map[string]float64{warning.FigBaselineLogprobs: 5, warning.FigLogprobs: 0}}}},
		{name: "logprobs the server refused: compared, with a note", change: func(b *result.Results) { b.Correctness[0].Unavailable = []string{"refused"} },
			outcome: "pass", exit: 0, notes: []warning.Warning{{Code: warning.CorrectnessNoLogprobs,
				Figures: map[string]float64{warning.FigBaselineLogprobs: 5, warning.FigLogprobs: 5}}}},
		{name: "a mismatch against another engine informs only, with a note", change: func(b *result.Results) {
			b.Server.Engine = "sglang"
			b.Correctness[0].Outputs[7].Tokens = []result.Token{tok(9, "zz", -0.1, 9, "zz", -0.1)}
		}, allow: true, outcome: "pass", exit: 0, notes: []warning.Warning{{Code: warning.EnginesDiffer}}},
		{name: "speculative against a baseline without: the losslessness check", change: func(b *result.Results) { b.Correctness[0].Speculative = true },
			outcome: "pass", exit: 0, check: func(t *testing.T, r CorrectnessResult) {
				if !r.Lossless {
					t.Error("not marked as the losslessness check")
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := corrRun(400, half), corrRun(400, half)
			tt.change(b)
			c := Build(a, b, Policy{Tolerance: DefaultTolerance, Inconclusive: tt.inconc, AllowSettingsChange: tt.allow})
			if len(c.Correctness) != 1 {
				t.Fatalf("%d correctness results", len(c.Correctness))
			}
			if c.Outcome.String() != tt.outcome || c.ExitCode() != tt.exit {
				t.Errorf("outcome %v exit %d, want %s exit %d", c.Outcome, c.ExitCode(), tt.outcome, tt.exit)
			}
			if tt.check != nil {
				tt.check(t, c.Correctness[0])
			}
			if diff := cmp.Diff(warning.Textless(tt.notes), warning.Textless(c.Correctness[0].Notes)); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
}

// flip turns worse of b's right answers wrong and better wrong ones right.
func flip(b *result.Results, worse, better int) {
	for i, o := range b.Correctness[0].Outputs {
		v := *o.Correct
		switch {
		case v && worse > 0:
			worse--
		case !v && better > 0:
			better--
		default:
			continue
		}
		v = !v
		b.Correctness[0].Outputs[i].Correct = &v
	}
}

// TestCorrectnessChecks pins each correctness verdict's decision, which
// the views only word: a failed request or an unpaired prompt is the
// infrastructure's Error, never a wrong output; an inconclusive accuracy
// gates only under -inconclusive fail; nothing compared is a Skip.
func TestCorrectnessChecks(t *testing.T) {
	pass, fail := Check{Outcome: vocab.Pass}, Check{Outcome: vocab.Fail}
	infra := Check{Outcome: vocab.Error, Infra: true}
	tests := []struct {
		name          string
		greedy        Greedy
		accuracy      *Paired
		errors        int
		inconclusive  InconclusivePolicy
		wantAgreement Check
		wantAccuracy  Check
	}{
		{name: "agree, no scorer", greedy: Greedy{Change: Unchanged}, wantAgreement: pass},
		{name: "mismatch", greedy: Greedy{Change: Regressed}, accuracy: &Paired{Change: Unchanged}, wantAgreement: fail, wantAccuracy: pass},
		{name: "unpaired prompt", greedy: Greedy{Change: Regressed, Unpaired: 1}, accuracy: &Paired{Change: Unchanged}, wantAgreement: infra, wantAccuracy: pass},
		{name: "a request failed", greedy: Greedy{Change: Unchanged}, accuracy: &Paired{Change: Regressed}, errors: 2, wantAgreement: infra, wantAccuracy: infra},
		{name: "accuracy dropped", greedy: Greedy{Change: Unchanged}, accuracy: &Paired{Change: Regressed}, wantAgreement: pass, wantAccuracy: fail},
		{name: "accuracy undecided", greedy: Greedy{Change: Unchanged}, accuracy: &Paired{Change: Inconclusive}, wantAgreement: pass, wantAccuracy: Check{Outcome: vocab.Inconclusive}},
		{name: "accuracy undecided, -inconclusive pass", greedy: Greedy{Change: Unchanged}, accuracy: &Paired{Change: Inconclusive}, inconclusive: InconclusivePass, wantAgreement: pass, wantAccuracy: pass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &CorrectnessResult{Greedy: &tt.greedy, Accuracy: tt.accuracy}
			agreement, accuracy := checks(r, &result.Correctness{Errors: tt.errors}, tt.inconclusive)
			if agreement != tt.wantAgreement || accuracy != tt.wantAccuracy {
				t.Errorf("agreement %+v, accuracy %+v; want %+v, %+v", agreement, accuracy, tt.wantAgreement, tt.wantAccuracy)
			}
		})
	}
	if got := UncomparedCheck(&result.Correctness{}); got != (Check{Outcome: vocab.Skip}) {
		t.Errorf("nothing compared: %+v, want a Skip", got)
	}
	if got := UncomparedCheck(&result.Correctness{Errors: 1}); got != infra {
		t.Errorf("nothing compared, a request failed: %+v, want an infrastructure Error", got)
	}
	if got := (&CorrectnessResult{Outcome: vocab.Error}).RefusalCheck(); got != infra {
		t.Errorf("refused: %+v, want an infrastructure Error", got)
	}
}

// TestCellCheck: a cell this run errored where the baseline measured it
// is the infrastructure's Error; a lost or unmeasurable one is not.
func TestCellCheck(t *testing.T) {
	tests := []struct {
		name string
		cr   CellResult
		want Check
	}{
		{name: "errored", cr: CellResult{A: Side{Present: true, Status: vocab.StatusValid}, B: Side{Present: true, Status: vocab.StatusError}, Decided: vocab.Error, Outcome: vocab.Error},
			want: Check{Outcome: vocab.Error, Infra: true}},
		{name: "lost", cr: CellResult{A: Side{Present: true, Status: vocab.StatusValid}, Decided: vocab.Fail, Outcome: vocab.Fail}, want: Check{Outcome: vocab.Fail}},
		{name: "the baseline unmeasurable", cr: CellResult{A: Side{Present: true, Status: vocab.StatusUnmeasurable}, B: Side{Present: true, Status: vocab.StatusError}, Decided: vocab.Error, Outcome: vocab.Error},
			want: Check{Outcome: vocab.Error}},
		{name: "regressed", cr: CellResult{A: Side{Present: true, Status: vocab.StatusValid}, B: Side{Present: true, Status: vocab.StatusValid}, Decided: vocab.Fail, Outcome: vocab.Fail},
			want: Check{Outcome: vocab.Fail}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.cr.Check(); got != tt.want {
				t.Errorf("Check = %+v, want %+v", got, tt.want)
			}
		})
	}
}
