package compare

import (
	"fmt"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/stats"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// The decisions of a correctness block against the baseline's
// (docs/method.md#correctness): greedy agreement per prompt, exact and not
// statistical, and the accuracy of the same items, paired.

// DefaultNearTieGap is the logprob gap (nats) within which a divergence
// whose tokens are each in the other side's top-k is a near tie.
const DefaultNearTieGap = 0.1

// DefaultMargin is the accuracy comparison's non-inferiority margin: a
// drop of less than one point of accuracy is within tolerance.
const DefaultMargin = 0.01

// Agreement is how one prompt's greedy output compares with the
// baseline's.
type Agreement int

// Agreements.
const (
	// Exact: the same tokens (or, without tokens, the same text).
	Exact Agreement = iota
	// NearTie: the outputs diverge at a position where each side's token
	// is in the other's top-k and their logprobs are within the gap on
	// both sides: two nearly equal choices (vLLM's check_logprobs_close).
	NearTie
	// Mismatch: any other divergence.
	Mismatch
	// Unpaired: a side has no output for the prompt (its request failed):
	// not decided.
	Unpaired
)

var agreementNames = [...]string{"exact", "near tie", "mismatch", "unpaired"}

// String names the agreement: "exact", "near tie", "mismatch", "unpaired".
func (a Agreement) String() string {
	if a < 0 || int(a) >= len(agreementNames) {
		return fmt.Sprintf("agreement(%d)", int(a))
	}
	return agreementNames[a]
}

// PromptAgreement is one prompt's comparison.
type PromptAgreement struct {
	// Line is the prompt's dataset line; A and B are both sides' outputs.
	Line int
	A, B result.CorrectnessOutput
	Kind Agreement
	// Position is the first token position where the outputs differ
	// (0-based); with ByText, the first differing character (the outputs
	// have no tokens); -1 when exact.
	Position int
	ByText   bool
	// Why is the rule that made a divergence a mismatch or a near tie (or
	// the prompt unpaired), with the figures it read; the reports word it.
	Why result.DivergenceCause
}

// Agree compares b's greedy output for a prompt with a's
// (docs/method.md#correctness): exact when their tokens are the same;
// else, at the first position where the tokens differ, a near tie when
// b's token is in a's top-k there and a's in b's (the rule of vLLM's
// tests/models/utils.py check_logprobs_close) and, on each side, the two
// tokens' logprobs differ by at most gap; any other divergence (a token
// outside the other's top-k, a gap too wide, no logprobs to tell, one
// output ending where the other goes on) is a mismatch. Outputs without
// tokens compare by text.
func Agree(a, b result.CorrectnessOutput, gap float64) PromptAgreement {
	p := PromptAgreement{Line: a.Line, A: a, B: b, Position: -1}
	if a.Error != "" || b.Error != "" {
		p.Kind, p.Why = Unpaired, result.DivergenceCause{Rule: result.DivergedRequestFailed}
		return p
	}
	if len(a.Tokens) == 0 || len(b.Tokens) == 0 {
		if a.Text == b.Text {
			return p
		}
		p.Kind, p.ByText, p.Position = Mismatch, true, firstDiff(a.Text, b.Text)
		p.Why = result.DivergenceCause{Rule: result.DivergedTexts}
		return p
	}
	n := min(len(a.Tokens), len(b.Tokens))
	for i := range n {
		ta, tb := a.Tokens[i], b.Tokens[i]
		if ta.Same(tb.ID, tb.Text) {
			continue
		}
		p.Position = i
		p.Kind, p.Why = nearTie(ta, tb, gap)
		return p
	}
	if len(a.Tokens) != len(b.Tokens) {
		p.Position, p.Kind = n, Mismatch
		p.Why = result.DivergenceCause{Rule: result.DivergedEnds, Side: result.SideBaseline}
		if len(b.Tokens) < len(a.Tokens) {
			p.Why.Side = result.SideNow
		}
	}
	return p
}

// nearTie classifies a divergence of token ta (the baseline's) and tb
// (the candidate's) at one position, with the rule that did.
func nearTie(ta, tb result.Token, gap float64) (Agreement, result.DivergenceCause) {
	if len(ta.Top) == 0 || len(tb.Top) == 0 {
		return Mismatch, result.DivergenceCause{Rule: result.DivergedNoLogprobs}
	}
	bInA, okA := inTop(ta.Top, tb)
	aInB, okB := inTop(tb.Top, ta)
	switch {
	case !okA:
		return Mismatch, result.DivergenceCause{Rule: result.DivergedNotInTop, Side: result.SideNow, Token: tb.Text, TopK: len(ta.Top)}
	case !okB:
		return Mismatch, result.DivergenceCause{Rule: result.DivergedNotInTop, Side: result.SideBaseline, Token: ta.Text, TopK: len(tb.Top)}
	}
	gapA := ta.Logprob - bInA // ≥ 0 under greedy: ta is a's choice
	gapB := tb.Logprob - aInB
	w := max(math.Abs(gapA), math.Abs(gapB))
	if w > gap {
		return Mismatch, result.DivergenceCause{Rule: result.DivergedGapWide, LogprobGap: w, NearTieGap: gap}
	}
	return NearTie, result.DivergenceCause{Rule: result.DivergedNearTie, LogprobGap: w}
}

// inTop returns the logprob of token t in top, and whether it is there.
func inTop(top []result.TopToken, t result.Token) (float64, bool) {
	for _, x := range top {
		if t.Same(x.ID, x.Text) {
			return x.Logprob, true
		}
	}
	return 0, false
}

// firstDiff is the first character (rune) index where a and b differ.
func firstDiff(a, b string) int {
	i := 0
	for len(a) > 0 && len(b) > 0 {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			return i
		}
		a, b, i = a[na:], b[nb:], i+1
	}
	return i
}

// Greedy is a block's greedy agreement with the baseline: per prompt,
// then the counts and the decision, exact rather than statistical: a run
// with no more mismatches than MaxMismatch × the prompts compared passes
// however few the prompts, one with more is regressed.
type Greedy struct {
	// Prompts are the prompts compared (both sides answered); Exact,
	// NearTies and Mismatches count them by kind; Unpaired counts the
	// prompts a side has no output for.
	Prompts, Exact, NearTies, Mismatches, Unpaired int
	// Diverged are the prompts that are not exact, in dataset order;
	// Records the same as results.json records them (where the outputs
	// part, the text about it, the top-k there), made once for the record,
	// the verdicts and the diff.
	Diverged []PromptAgreement
	Records  []result.Divergence
	// MaxMismatch is the share accepted (the block's max_mismatch); Gap
	// the near-tie gap used.
	MaxMismatch, Gap float64
	// Change is Regressed when the mismatch share is above MaxMismatch,
	// else Unchanged.
	Change Change
}

// AgreementRate, NearTieRate and MismatchRate are the shares of the
// prompts compared; 0 when none were.
func (g *Greedy) AgreementRate() float64 { return share(g.Exact, g.Prompts) }

// NearTieRate is the share of prompts that diverged at a near tie.
func (g *Greedy) NearTieRate() float64 { return share(g.NearTies, g.Prompts) }

// MismatchRate is the share of prompts that mismatched.
func (g *Greedy) MismatchRate() float64 { return share(g.Mismatches, g.Prompts) }

func share(k, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(k) / float64(n)
}

// CompareGreedy compares each of b's outputs with a's output for the same
// dataset line (Agree) and decides: Regressed when more than maxMismatch
// of the prompts compared mismatch. A near tie never counts as a
// mismatch.
func CompareGreedy(a, b []result.CorrectnessOutput, gap, maxMismatch float64) Greedy {
	g := Greedy{MaxMismatch: maxMismatch, Gap: gap}
	byLine := map[int]result.CorrectnessOutput{}
	for _, o := range a {
		byLine[o.Line] = o
	}
	for _, ob := range b {
		oa, ok := byLine[ob.Line]
		if !ok {
			g.Unpaired++
			continue
		}
		p := Agree(oa, ob, gap)
		switch p.Kind {
		case Exact:
			g.Exact++
		case NearTie:
			g.NearTies++
		case Mismatch:
			g.Mismatches++
		case Unpaired:
			g.Unpaired++
			continue
		}
		g.Prompts++
		if p.Kind != Exact {
			g.Diverged = append(g.Diverged, p)
			g.Records = append(g.Records, divergenceRecord(p))
		}
	}
	// Allowed mismatches: the share of the prompts, rounded down, so that
	// max_mismatch = 0.01 over 150 prompts allows 1 (the rate is printed
	// beside it).
	if float64(g.Mismatches) > maxMismatch*float64(g.Prompts)+1e-9 {
		g.Change = Regressed
	}
	return g
}

// CorrectnessResult is one correctness block of the new run compared
// with the baseline's block of the same name: greedy agreement, paired
// accuracy, and what the two could not compare.
type CorrectnessResult struct {
	// Name is the block's; A is the baseline's block (nil when the
	// baseline has none: nothing is compared), B the new run's.
	Name string
	A, B *result.Correctness
	// Refusal is why the blocks are not compared (nil when they are):
	// they were measured with different settings (max_output, endpoint)
	// or other prompts, or the baseline kept no outputs.
	Refusal *result.CorrectnessRefusal
	// Greedy is the greedy agreement; nil when refused or without A.
	Greedy *Greedy
	// Accuracy is the paired accuracy of the items both runs scored; nil
	// without a scorer on both sides.
	Accuracy *Paired
	// Lossless is set when B ran with speculative decoding and A without:
	// the greedy agreement is then the check that speculative decoding is
	// lossless under greedy (docs/method.md#correctness).
	Lossless bool
	// Notes are what the comparison could not see or should be read with
	// (logprobs missing on a side, other concurrency, another engine):
	// typed notes (warning.CorrectnessConcurrency, …).
	Notes []warning.Warning
	// Outcome is the block's effect on the gate: Skip without a baseline
	// block, Error when refused or when a request of B failed, Fail when
	// the greedy agreement or the accuracy regressed, Inconclusive when
	// the accuracy is (Pass with -inconclusive pass), else Pass.
	Outcome vocab.Outcome
	// AgreementCheck is the greedy agreement's verdict (and the lossless
	// check's, which is the same comparison): Fail when it regressed, an
	// infrastructure Error when a prompt has no output on a side or a
	// request of B failed, else Pass. AccuracyCheck is the paired
	// accuracy's: Fail when it regressed, Inconclusive when it is (Pass
	// with -inconclusive pass), an infrastructure Error when a request of
	// B failed. Both zero when refused or without A.
	AgreementCheck, AccuracyCheck Check
}

// Check is the decision of one verdict: its outcome, and whether it is
// the infrastructure's (a request failed, a cell was not measured), so
// that an errored server is never reported as a slow or wrong one.
type Check struct {
	Outcome vocab.Outcome
	Infra   bool
}

// RefusalCheck is the verdict of a block the comparison refused: an
// infrastructure Error (r.Outcome).
func (r *CorrectnessResult) RefusalCheck() Check { return Check{Outcome: r.Outcome, Infra: true} }

// UncomparedCheck is the verdict of correctness block b with nothing to
// compare with (no -baseline, a comparison refused, a baseline without
// the block): informational, a Skip, never a Pass; an infrastructure
// Error when a request of b failed (docs/method.md#correctness).
func UncomparedCheck(b *result.Correctness) Check {
	if b.Errors > 0 {
		return Check{Outcome: vocab.Error, Infra: true}
	}
	return Check{Outcome: vocab.Skip}
}

// buildCorrectness compares each of b's correctness blocks with a's of
// the same name, under p (its Alpha and Inconclusive; the block's own
// max_mismatch, margin and near-tie gap, as b recorded them).
func buildCorrectness(a, b *result.Results, p Policy) []CorrectnessResult {
	var out []CorrectnessResult
	for i := range b.Correctness {
		cb := &b.Correctness[i]
		r := CorrectnessResult{Name: cb.Name, B: cb, A: a.CorrectnessBlock(cb.Name), Outcome: vocab.Skip}
		if r.A == nil {
			out = append(out, r)
			continue
		}
		ca := r.A
		r.Refusal = correctnessRefusal(ca, cb)
		if r.Refusal != nil {
			r.Outcome = vocab.Error
			out = append(out, r)
			continue
		}
		if ca.Concurrency != cb.Concurrency {
			r.Notes = append(r.Notes, warning.New(warning.CorrectnessConcurrency,
				fmt.Sprintf("the baseline sent %d requests at a time, this run %d", ca.Concurrency, cb.Concurrency),
				"batching can change a kernel's arithmetic, and so the greedy tokens",
				map[string]float64{warning.FigBaselineConcurrency: float64(ca.Concurrency), warning.FigConcurrency: float64(cb.Concurrency)}))
		}
		if ca.Logprobs == 0 || cb.Logprobs == 0 || len(ca.Unavailable)+len(cb.Unavailable) > 0 {
			r.Notes = append(r.Notes, warning.New(warning.CorrectnessNoLogprobs, "a side has no top-k logprobs",
				"every divergence counts as a mismatch (no near tie can be told)",
				map[string]float64{warning.FigBaselineLogprobs: float64(ca.Logprobs), warning.FigLogprobs: float64(cb.Logprobs)}))
		}
		g := CompareGreedy(ca.Outputs, cb.Outputs, cb.NearTieGap, cb.MaxMismatch)
		r.Greedy = &g
		r.Lossless = cb.Speculative && !ca.Speculative
		r.Outcome = vocab.Pass
		if g.Change == Regressed {
			r.Outcome = vocab.Fail
		}
		if ca.Scorer != "" && cb.Scorer != "" {
			pa := pairAccuracy(ca.Outputs, cb.Outputs, cb.Margin, p.Resolved().Alpha)
			r.Accuracy = &pa
			switch pa.Change {
			case Regressed:
				r.Outcome = vocab.Worst(r.Outcome, vocab.Fail)
			case Inconclusive:
				if p.Inconclusive == InconclusiveFail {
					r.Outcome = vocab.Worst(r.Outcome, vocab.Inconclusive)
				}
			}
		}
		if cb.Errors > 0 || g.Unpaired > 0 {
			r.Outcome = vocab.Worst(r.Outcome, vocab.Error)
		}
		r.AgreementCheck, r.AccuracyCheck = checks(&r, cb, p.Inconclusive)
		out = append(out, r)
	}
	return out
}

// checks are r's agreement and accuracy verdicts (CorrectnessResult's
// AgreementCheck and AccuracyCheck), b being this run's block.
func checks(r *CorrectnessResult, b *result.Correctness, inconclusive InconclusivePolicy) (agreement, accuracy Check) {
	agreement.Outcome = vocab.Pass
	if r.Greedy.Change == Regressed {
		agreement.Outcome = vocab.Fail
	}
	if r.Greedy.Unpaired > 0 || b.Errors > 0 {
		agreement = Check{Outcome: vocab.Error, Infra: true}
	}
	if p := r.Accuracy; p != nil {
		accuracy.Outcome = vocab.Pass
		switch p.Change {
		case Regressed:
			accuracy.Outcome = vocab.Fail
		case Inconclusive:
			if inconclusive == InconclusiveFail {
				accuracy.Outcome = vocab.Inconclusive
			}
		}
		if b.Errors > 0 {
			accuracy = Check{Outcome: vocab.Error, Infra: true}
		}
	}
	return agreement, accuracy
}

// correctnessRefusal is why blocks a and b cannot be compared, with the
// figures the rule read: nil when they can.
func correctnessRefusal(a, b *result.Correctness) *result.CorrectnessRefusal {
	switch {
	case len(a.Outputs) == 0:
		return &result.CorrectnessRefusal{Rule: result.RefusedNoOutputs}
	case a.MaxOutput != b.MaxOutput:
		return &result.CorrectnessRefusal{Rule: result.RefusedMaxOutput, BaselineMaxOutput: a.MaxOutput, MaxOutput: b.MaxOutput}
	case a.Endpoint != b.Endpoint:
		return &result.CorrectnessRefusal{Rule: result.RefusedEndpoint, BaselineEndpoint: a.Endpoint, Endpoint: b.Endpoint}
	}
	prompts := map[int]string{}
	for _, o := range a.Outputs {
		prompts[o.Line] = o.Prompt
	}
	for _, o := range b.Outputs {
		if p, ok := prompts[o.Line]; ok && p != o.Prompt {
			return &result.CorrectnessRefusal{Rule: result.RefusedPrompts, Line: o.Line}
		}
	}
	return nil
}

// pairAccuracy pairs the scored outputs of a and b by dataset line and
// decides the change (ComparePaired).
func pairAccuracy(a, b []result.CorrectnessOutput, margin, alpha float64) Paired {
	right := map[int]bool{}
	for _, o := range a {
		if o.Correct != nil {
			right[o.Line] = *o.Correct
		}
	}
	var items, ac, bc, worse, better int
	for _, o := range b {
		x, ok := right[o.Line]
		if !ok || o.Correct == nil {
			continue
		}
		y := *o.Correct
		items++
		if x {
			ac++
		}
		if y {
			bc++
		}
		switch {
		case x && !y:
			worse++
		case y && !x:
			better++
		}
	}
	return ComparePaired(items, ac, bc, worse, better, margin, alpha)
}

// contextTokens is how many tokens a divergence's record shows on each
// side of its position.
const contextTokens = 8

// correctnessRecord is the record of one block's comparison in
// results.json (Comparison.Record), what the reports show.
func correctnessRecord(cr *CorrectnessResult, alpha float64) result.CorrectnessComparison {
	r := result.CorrectnessComparison{Name: cr.Name, Outcome: cr.Outcome, Missing: cr.A == nil, Refusal: cr.Refusal,
		Lossless: cr.Lossless, Notes: cr.Notes}
	if g := cr.Greedy; g != nil {
		r.Prompts, r.Exact, r.NearTies, r.Mismatches, r.Unpaired = g.Prompts, g.Exact, g.NearTies, g.Mismatches, g.Unpaired
		r.AgreementRate, r.NearTieRate, r.MismatchRate = g.AgreementRate(), g.NearTieRate(), g.MismatchRate()
		r.MaxMismatch, r.Regressed = g.MaxMismatch, g.Change == Regressed
		r.Diverged = slices.Clone(g.Records)
	}
	if p := cr.Accuracy; p != nil {
		a := &result.AccuracyComparison{Items: p.Items, Worse: p.Worse, Better: p.Better, Change: p.Diff,
			Bounds: [2]float64{p.Lower, p.Upper}, PValue: p.PValue, Margin: p.Margin, Need: p.Need}
		if p.Items > 0 {
			a.Baseline, a.Now = float64(p.ACorrect)/float64(p.Items), float64(p.BCorrect)/float64(p.Items)
		}
		lo, hi := stats.Wilson(p.ACorrect, p.Items, 0.025)
		a.BaselineCI = [2]float64{lo, hi}
		lo, hi = stats.Wilson(p.BCorrect, p.Items, 0.025)
		a.NowCI = [2]float64{lo, hi}
		switch p.Change {
		case Unchanged:
			a.Decision = "within"
		case Improved:
			a.Decision = "improved"
		case Regressed:
			a.Decision = "regressed"
		default:
			a.Decision = "inconclusive"
		}
		if p.Items > 0 {
			a.ItemsFor3 = RecommendedItems(min(max(a.Baseline, AccuracyDrop+0.01), 0.99), alpha)
		}
		r.Accuracy = a
	}
	return r
}

// divergenceRecord records where prompt p's outputs part: the shared
// text just before, each side's text from there (8 tokens), each side's
// top-k there.
func divergenceRecord(p PromptAgreement) result.Divergence {
	why := p.Why
	d := result.Divergence{Line: p.Line, Prompt: p.B.Prompt, Kind: p.Kind.String(), Position: p.Position, ByText: p.ByText, Cause: &why}
	if p.ByText {
		ra, rb := []rune(p.A.Text), []rune(p.B.Text)
		from := max(0, p.Position-40)
		d.Before = string(ra[from:min(p.Position, len(ra))])
		d.Baseline = string(ra[min(p.Position, len(ra)):min(p.Position+40, len(ra))])
		d.Now = string(rb[min(p.Position, len(rb)):min(p.Position+40, len(rb))])
		return d
	}
	text := func(toks []result.Token, from, to int) string {
		var s string
		for _, t := range toks[max(0, min(from, len(toks))):max(0, min(to, len(toks)))] {
			s += t.Text
		}
		return s
	}
	d.Before = text(p.A.Tokens, p.Position-contextTokens, p.Position)
	d.Baseline = text(p.A.Tokens, p.Position, p.Position+contextTokens)
	d.Now = text(p.B.Tokens, p.Position, p.Position+contextTokens)
	if p.Position < len(p.A.Tokens) {
		d.BaselineTop = p.A.Tokens[p.Position].Top
	}
	if p.Position < len(p.B.Tokens) {
		d.NowTop = p.B.Tokens[p.Position].Top
	}
	return d
}
