package report

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"

	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/stats"
	"github.com/slogate/slogate/internal/warning"
)

// correctnessView is one correctness block's section of report.md and
// report.html (docs/method.md#correctness) as figures: the block, how it
// stands against the baseline (against, with the comparison), the
// accuracy's interval and the diverged prompts. Its methods word them:
// what it measured and cost, its accuracy with its interval (beside the
// baseline's), its agreement with the baseline, and each diverged
// prompt: where, both continuations side by side, the top-k there on each
// side.
type correctnessView struct {
	block *result.Correctness
	// comparison is the comparison with the baseline's block of this
	// name; nil without a baseline.
	comparison *result.CorrectnessComparison
	against    againstBaseline
	// accuracyLo and accuracyHi bound the accuracy's 95% interval
	// (Wilson 1927); zero when no item was scored.
	accuracyLo, accuracyHi float64
	// diverged are the compared prompts whose continuations diverged.
	diverged []result.Divergence
}

// againstBaseline is how a correctness block stands against the
// baseline's.
type againstBaseline int

const (
	noBaseline       againstBaseline = iota // no -baseline: its outputs are kept for a later run
	baselineMissing                         // the baseline has no block of this name
	baselineRefused                         // the blocks could not be compared (CorrectnessRefused)
	baselineCompared                        // compared prompt by prompt
)

// promptWidth is the most characters of a prompt a row shows.
const promptWidth = 60

// newCorrectnessViews are the sections of res's correctness blocks, in
// the spec's order.
func newCorrectnessViews(res *result.Results) []correctnessView {
	by := map[string]*result.CorrectnessComparison{}
	if res.Comparison != nil {
		for i := range res.Comparison.Correctness {
			by[res.Comparison.Correctness[i].Name] = &res.Comparison.Correctness[i]
		}
	}
	var out []correctnessView
	for i := range res.Correctness {
		b := &res.Correctness[i]
		cc := by[b.Name]
		v := correctnessView{block: b, comparison: cc}
		switch {
		case cc == nil:
			v.against = noBaseline
		case cc.Missing:
			v.against = baselineMissing
		case cc.WasRefused():
			v.against = baselineRefused
		default:
			v.against, v.diverged = baselineCompared, cc.Diverged
		}
		if b.Scored > 0 {
			v.accuracyLo, v.accuracyHi = stats.Wilson(b.Correct, b.Scored, 0.025)
		}
		out = append(out, v)
	}
	return out
}

// Title is the section's heading: "Correctness: greedy".
func (v correctnessView) Title() string { return "Correctness: " + v.block.Name }

// Lines are the section's sentences: what the block measured and cost,
// its accuracy, and how it stands against the baseline.
func (v correctnessView) Lines() []string {
	b, cc := v.block, v.comparison
	lines := []string{
		fmt.Sprintf("%d prompts of %s to the %s API, greedy (temperature 0, seed %d), max_output %d, top-%d logprobs, %d at a time",
			b.Prompts, b.Dataset, b.Endpoint, b.Seed, b.MaxOutput, b.Logprobs, b.Concurrency),
		fmt.Sprintf("Cost: %ss wall, %s GPU-s, after the speed cells and outside their windows", numfmt.Fixed(b.ElapsedS, 1), numfmt.Fixed(b.GPUSeconds, 1)),
	}
	if b.Errors > 0 {
		lines = append(lines, fmt.Sprintf("%d of %d requests failed (correctness.jsonl records why)", b.Errors, b.Prompts))
	}
	for _, u := range b.Unavailable {
		lines = append(lines, "Could not: "+u)
	}
	if b.Scored > 0 {
		line := "Accuracy: " + accuracyCI(float64(b.Correct)/float64(b.Scored), b.Correct, b.Scored, v.accuracyLo, v.accuracyHi)
		if cc != nil && cc.Accuracy != nil {
			a := cc.Accuracy
			line += fmt.Sprintf("; the baseline %s [%s, %s] on the same %d items", numfmt.Fixed(a.Baseline, 3), numfmt.Fixed(a.BaselineCI[0], 3), numfmt.Fixed(a.BaselineCI[1], 3), a.Items)
		}
		lines = append(lines, line)
	}
	switch v.against {
	case noBaseline:
		return append(lines, "No baseline: the outputs are recorded in correctness.jsonl for a later run to compare with")
	case baselineMissing:
		return append(lines, "The baseline has no block of this name: nothing compared")
	case baselineRefused:
		return append(lines, "Not compared with the baseline: "+CorrectnessRefused(cc))
	}
	lines = append(lines, fmt.Sprintf("Against the baseline (%s): %d of %d prompts agree exactly (%s), %d near ties (%s), %d mismatches (%s; max_mismatch %s)",
		strings.ToUpper(cc.Outcome.String()), cc.Exact, cc.Prompts, numfmt.Percent(cc.AgreementRate), cc.NearTies, numfmt.Percent(cc.NearTieRate),
		cc.Mismatches, numfmt.Percent(cc.MismatchRate), numfmt.Percent(cc.MaxMismatch)))
	if cc.Lossless {
		word := "lossless"
		if cc.Regressed {
			word = "not lossless"
		}
		lines = append(lines, "Speculative decoding is "+word+" under greedy: this run decodes speculatively, the baseline did not")
	}
	if a := cc.Accuracy; a != nil {
		line := fmt.Sprintf("Paired accuracy: %s points [%s, %s], %d right only in the baseline, %d only now, McNemar p = %s: %s",
			signedPoints(a.Change), signedPoints(a.Bounds[0]), signedPoints(a.Bounds[1]), a.Worse, a.Better, numfmt.Fixed(a.PValue, 4), a.Decision)
		if a.Need > 0 {
			line += fmt.Sprintf(" (about %s items would decide it)", numfmt.Int(int64(a.Need)))
		}
		if a.ItemsFor3 > 0 {
			line += fmt.Sprintf("; %s items catch a 3-point drop at power 0.8", numfmt.Int(int64(a.ItemsFor3)))
		}
		lines = append(lines, line)
	}
	return append(lines, warning.Strings(cc.Notes)...)
}

// Header is the diverged prompts' table's header; nil when none diverged.
func (v correctnessView) Header() []string {
	if len(v.diverged) == 0 {
		return nil
	}
	return []string{"Line", "Prompt", "Kind", "Position", "Shared text before", "Baseline continues", "This run continues", "Baseline top-k there", "This run's top-k there", "Why"}
}

// Rows are the diverged prompts' table, a prompt each.
func (v correctnessView) Rows() [][]string {
	var rows [][]string
	for i := range v.diverged {
		d := &v.diverged[i]
		pos := "token " + strconv.Itoa(d.Position)
		if d.ByText {
			pos = "character " + strconv.Itoa(d.Position)
		}
		rows = append(rows, []string{strconv.Itoa(d.Line), clip(d.Prompt, promptWidth), d.Kind, pos, strconv.Quote(d.Before),
			strconv.Quote(d.Baseline), strconv.Quote(d.Now), topText(d.BaselineTop), topText(d.NowTop), DivergenceWhy(d)})
	}
	return rows
}

// accuracyCI is "0.620 (31 of 50; 95% interval 0.482–0.741)": accuracy
// acc, k right of n, its interval lo to hi.
func accuracyCI(acc float64, k, n int, lo, hi float64) string {
	return fmt.Sprintf("%s (%d of %d; 95%% interval %s–%s)", numfmt.Fixed(acc, 3), k, n, numfmt.Fixed(lo, 3), numfmt.Fixed(hi, 3))
}

// signedPoints is a share's change in points with its sign: "+1.2".
func signedPoints(x float64) string {
	s := numfmt.Fixed(100*x, 1)
	if x >= 0 {
		s = "+" + s
	}
	return s
}

// topText is a position's top-k: `" the" -0.10, " a" -0.15`.
func topText(top []result.TopToken) string {
	var parts []string
	for _, t := range top {
		parts = append(parts, strconv.Quote(t.Text)+" "+numfmt.Fixed(t.Logprob, 2))
	}
	return strings.Join(parts, ", ")
}

// clip shortens s to n characters with an ellipsis.
func clip(s string, n int) string {
	r := []rune(strings.Join(strings.Fields(s), " "))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n-1]) + "…"
}

// writeCorrectness writes each correctness block's section of report.md.
func writeCorrectness(b *bufio.Writer, sections []correctnessView) {
	for _, v := range sections {
		fmt.Fprintf(b, "## %s\n\n", mdText(v.Title()))
		for _, l := range v.Lines() {
			fmt.Fprintf(b, "- %s\n", mdText(l))
		}
		b.WriteString("\n")
		if rows := v.Rows(); len(rows) > 0 {
			mdTable(b, v.Header(), func(row func(...string)) {
				for _, r := range rows {
					row(r...)
				}
			})
			b.WriteString("\n")
		}
	}
}

// writeCorrectnessCSV writes each correctness block's rows of the CSV
// export: its prompts, accuracy (with a scorer), wall and GPU time, and,
// against a baseline, the agreement, near-tie and mismatch rates and the
// accuracy's change; samples is the prompts (or items) behind a figure.
func writeCorrectnessCSV(cw *csv.Writer, res *result.Results) {
	by := map[string]*result.CorrectnessComparison{}
	if res.Comparison != nil {
		for i := range res.Comparison.Correctness {
			by[res.Comparison.Correctness[i].Name] = &res.Comparison.Correctness[i]
		}
	}
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for i := range res.Correctness {
		b := &res.Correctness[i]
		status := "measured"
		cc := by[b.Name]
		if cc != nil && !cc.Missing {
			status = cc.Outcome.String()
		}
		row := func(metric string, v float64, unit string, samples int) {
			cw.Write([]string{res.Server.Name, "correctness", b.Name, "", strconv.Itoa(b.Concurrency), "", metric, num(v), unit, status, strconv.Itoa(samples), "1"})
		}
		row("prompts", float64(b.Prompts), "prompts", b.Prompts)
		if b.Scored > 0 {
			row("accuracy", b.Accuracy(), "share", b.Scored)
		}
		row("elapsed_s", b.ElapsedS, "s", b.Prompts)
		row("gpu_seconds", b.GPUSeconds, "GPU-s", b.Prompts)
		if cc == nil || cc.Missing || cc.WasRefused() {
			continue
		}
		row("agreement_rate", cc.AgreementRate, "share", cc.Prompts)
		row("near_tie_rate", cc.NearTieRate, "share", cc.Prompts)
		row("mismatch_rate", cc.MismatchRate, "share", cc.Prompts)
		if a := cc.Accuracy; a != nil {
			row("accuracy_change", a.Change, "share", a.Items)
		}
	}
}

// DivergenceWhy words why diverged prompt d is the near tie or the
// mismatch it is (its Cause; docs/method.md#correctness): "the
// candidate's token \" z\" is not in the baseline's top 2", "both tokens
// in each other's top-k, 0.05 apart in logprob". A divergence recorded
// before Cause held gives its Why.
func DivergenceWhy(d *result.Divergence) string {
	c := d.Cause
	if c == nil {
		return d.Why
	}
	switch c.Rule {
	case result.DivergedNearTie:
		return fmt.Sprintf("both tokens in each other's top-k, %.3g apart in logprob", c.LogprobGap)
	case result.DivergedGapWide:
		return fmt.Sprintf("both tokens in each other's top-k, but %.3g apart in logprob (the near-tie gap is %.3g)", c.LogprobGap, c.NearTieGap)
	case result.DivergedNotInTop:
		side, other := sideNames(c.Side)
		return fmt.Sprintf("%s's token %q is not in %s's top %d", side, c.Token, other, c.TopK)
	case result.DivergedNoLogprobs:
		return "no top-k logprobs to tell a near tie"
	case result.DivergedEnds:
		side, _ := sideNames(c.Side)
		return fmt.Sprintf("%s stops after %d tokens, the other goes on", side, d.Position)
	case result.DivergedTexts:
		return "the texts differ (no tokens to compare)"
	case result.DivergedRequestFailed:
		return "a request failed"
	}
	return string(c.Rule)
}

// sideNames are side (result.SideBaseline or result.SideNow) and the
// other side in words: "the candidate", "the baseline".
func sideNames(side string) (this, other string) {
	if side == result.SideNow {
		return "the candidate", "the baseline"
	}
	return "the baseline", "the candidate"
}

// RefusalText words why correctness block name was not compared with the
// baseline's (docs/method.md#correctness): "max_output differs: 8 in the
// baseline, 16 here".
func RefusalText(name string, r *result.CorrectnessRefusal) string {
	switch r.Rule {
	case result.RefusedNoOutputs:
		return fmt.Sprintf("the baseline has no outputs of block %q (%s missing beside its results.json)", name, result.CorrectnessFile)
	case result.RefusedMaxOutput:
		return fmt.Sprintf("max_output differs: %d in the baseline, %d here", r.BaselineMaxOutput, r.MaxOutput)
	case result.RefusedEndpoint:
		return fmt.Sprintf("the endpoint differs: %s in the baseline, %s here", r.BaselineEndpoint, r.Endpoint)
	case result.RefusedPrompts:
		return fmt.Sprintf("the prompts differ: line %d of the dataset is not the baseline's", r.Line)
	}
	return string(r.Rule)
}

// CorrectnessRefused words why the comparison cc was refused: its
// Refusal, or in results written before it, its Refused ("" when the
// blocks were compared).
func CorrectnessRefused(cc *result.CorrectnessComparison) string {
	if cc.Refusal != nil {
		return RefusalText(cc.Name, cc.Refusal)
	}
	return cc.Refused
}
