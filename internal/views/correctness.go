package views

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/report"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/stats"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// maxDivergenceLines is how many diverged prompts a verdict lists (the
// report lists them all).
const maxDivergenceLines = 10

// Correctness checks: the last part of a compared block's verdicts' names,
// "<server>/correctness/<name>/<check>" (docs/method.md#correctness).
const (
	// CheckAgreement is greedy agreement with the baseline.
	CheckAgreement = "agreement"
	// CheckAccuracy is the paired task accuracy against the baseline.
	CheckAccuracy = "accuracy"
	// CheckLossless is speculative decoding's losslessness under greedy:
	// this run decoded speculatively, the baseline did not.
	CheckLossless = "lossless"
)

// CorrectnessVerdicts are the verdicts of res's correctness blocks
// (docs/method.md#correctness). With a comparison (c, from -baseline),
// one verdict per check of each block (compare.CorrectnessResult), named
// "<server>/correctness/<name>/<check>": greedy agreement with its counts
// and each diverged prompt (the first ten); the paired accuracy when both
// blocks have a scorer; speculative losslessness when this run decoded
// speculatively and the baseline did not. A block the comparison refused
// is one Error verdict "<server>/correctness/<name>". Without a
// comparison, or for a block the baseline lacks, one verdict per block,
// the block as measured: informational, a Skip that says there was
// nothing to compare with, with its accuracy and interval (an accuracy
// with nothing to compare is no pass); an Error when a request failed.
func CorrectnessVerdicts(res *result.Results, c *compare.Comparison) []result.Verdict {
	by := map[string]*compare.CorrectnessResult{}
	if c != nil && !c.Refused {
		for i := range c.Correctness {
			by[c.Correctness[i].Name] = &c.Correctness[i]
		}
	}
	var out []result.Verdict
	for i := range res.Correctness {
		b := &res.Correctness[i]
		name := vocab.TestID{Server: res.Server.Name, Kind: vocab.KindCorrectness, Block: b.Name}.Name()
		// Each verdict's outcome is compare's (a compare.Check); this view
		// words it.
		newVerdict := func(test, rule string, check compare.Check) result.Verdict {
			v := result.Verdict{Test: test, Kind: vocab.KindCorrectness, Outcome: check.Outcome, Infra: check.Infra, Rule: rule}
			v.Details = append(v.Details, measuredLine(b))
			for _, u := range b.Unavailable {
				v.Details = append(v.Details, "could not: "+u)
			}
			return v
		}
		cr := by[b.Name]
		if cr == nil || cr.Outcome == vocab.Skip {
			// Nothing to compare with: informational, a Skip that says
			// why, never a Pass (docs/method.md#correctness).
			v := newVerdict(name, "measured (no baseline block to compare with)", compare.UncomparedCheck(b))
			v.Message = fmt.Sprintf("informational, nothing compared: %s; outputs recorded, %d of %d prompts answered",
				nothingToCompare(c, b.Name), b.Prompts-b.Errors, b.Prompts)
			if b.Scored > 0 {
				v.Details = append(v.Details, "accuracy "+accuracyText(b.Correct, b.Scored))
			}
			if v.Infra {
				v.Message = fmt.Sprintf("%d of %d requests failed", b.Errors, b.Prompts)
			}
			out = append(out, v)
			continue
		}
		agreeRule := fmt.Sprintf("greedy outputs agree with the baseline's (max_mismatch %s)", numfmt.Percent(b.MaxMismatch))
		if cr.Refusal != nil {
			v := newVerdict(name, agreeRule, cr.RefusalCheck())
			v.Message = "not compared: " + report.RefusalText(cr.Name, cr.Refusal)
			out = append(out, v)
			continue
		}
		// A failed request leaves a prompt without an output: every check
		// of the block is then an infrastructure Error.
		failed := ""
		if b.Errors > 0 {
			failed = fmt.Sprintf("%d of %d requests failed", b.Errors, b.Prompts)
		}
		g := cr.Greedy
		agree := fmt.Sprintf("%d of %d prompts agree exactly, %d near ties, %d mismatches (%s)", g.Exact, g.Prompts, g.NearTies, g.Mismatches,
			numfmt.Percent(g.MismatchRate()))
		ag := newVerdict(name+"/"+CheckAgreement, agreeRule, cr.AgreementCheck)
		ag.Details = append(ag.Details, agree)
		var msgs []string
		if g.Change == compare.Regressed {
			msgs = append(msgs, fmt.Sprintf("%d of %d prompts mismatch the baseline (%s > max_mismatch %s)", g.Mismatches, g.Prompts,
				numfmt.Percent(g.MismatchRate()), numfmt.Percent(g.MaxMismatch)))
		}
		for i, d := range g.Records {
			if i == maxDivergenceLines {
				ag.Details = append(ag.Details, fmt.Sprintf("… and %d more (report.md lists them all)", len(g.Records)-i))
				break
			}
			ag.Details = append(ag.Details, DivergenceLine(d))
		}
		if g.Unpaired > 0 {
			msgs = append(msgs, fmt.Sprintf("%d prompts have no output on a side (a request failed)", g.Unpaired))
		} else if failed != "" {
			msgs = append(msgs, failed)
		}
		ag.Details = append(ag.Details, warning.Strings(cr.Notes)...)
		if len(msgs) == 0 {
			msgs = append(msgs, agree)
		}
		ag.Message = strings.Join(msgs, "; ")
		out = append(out, ag)
		if cr.Lossless {
			word := "lossless"
			if g.Change == compare.Regressed {
				word = "NOT lossless"
			}
			lv := newVerdict(name+"/"+CheckLossless, "speculative decoding is lossless under greedy: its outputs agree with the baseline's, measured without speculation", cr.AgreementCheck)
			lv.Message = fmt.Sprintf("speculative decoding is %s under greedy: against the baseline without speculation, %s", word, agree)
			lv.Details = append(lv.Details, lv.Message)
			if ag.Outcome != vocab.Pass {
				lv.Message = ag.Message
			}
			out = append(out, lv)
		}
		if p := cr.Accuracy; p != nil {
			av := newVerdict(name+"/"+CheckAccuracy, fmt.Sprintf("accuracy not below the baseline's by %s points", numfmt.Shortest(100*b.Margin)), cr.AccuracyCheck)
			line, msg := pairedLines(p)
			av.Details = append(av.Details, line)
			av.Message = line
			if msg != "" {
				av.Message = msg
			}
			if failed != "" {
				av.Message = failed + "; " + av.Message
			}
			out = append(out, av)
		}
	}
	return out
}

// nothingToCompare says why block name has nothing to compare with: no
// -baseline, a comparison refused, or a baseline without the block.
func nothingToCompare(c *compare.Comparison, name string) string {
	switch {
	case c == nil:
		return "no -baseline to compare with"
	case c.Refused:
		return "the comparison with the baseline was refused"
	}
	return fmt.Sprintf("the baseline has no block %q to compare with", name)
}

// measuredLine says what a block measured and what it cost, apart from
// the speed cells.
func measuredLine(b *result.Correctness) string {
	return fmt.Sprintf("%d prompts, greedy, max_output %d, top-%d logprobs, %d at a time; %ss wall, %s GPU-s (apart from the speed cells)",
		b.Prompts, b.MaxOutput, b.Logprobs, b.Concurrency, numfmt.Fixed(b.ElapsedS, 1), numfmt.Fixed(b.GPUSeconds, 1))
}

// accuracyText is "0.62 (31 of 50; 95% interval 0.48–0.74)".
func accuracyText(k, n int) string {
	lo, hi := stats.Wilson(k, n, 0.025)
	return fmt.Sprintf("%s (%d of %d; 95%% interval %s–%s)", numfmt.Fixed(float64(k)/float64(n), 3), k, n, numfmt.Fixed(lo, 3), numfmt.Fixed(hi, 3))
}

// pairedLines words a paired accuracy comparison: its line, and the
// message when it regressed or is inconclusive.
func pairedLines(p *compare.Paired) (line, msg string) {
	line = fmt.Sprintf("accuracy %s now, %s in the baseline, over %d paired items: %d right only in the baseline, %d only now; change %s points [%s, %s], McNemar p = %s",
		accuracyText(p.BCorrect, p.Items), accuracyText(p.ACorrect, p.Items), p.Items, p.Worse, p.Better,
		signed(100*p.Diff), signed(100*p.Lower), signed(100*p.Upper), numfmt.Fixed(p.PValue, 4))
	switch p.Change {
	case compare.Regressed:
		msg = fmt.Sprintf("accuracy regressed: %s → %s (%s points, a drop the exact McNemar test shows at p = %s)",
			numfmt.Fixed(float64(p.ACorrect)/float64(p.Items), 3), numfmt.Fixed(float64(p.BCorrect)/float64(p.Items), 3), signed(100*p.Diff), numfmt.Fixed(p.PValue, 4))
	case compare.Inconclusive:
		need := "no count of items would, at these rates"
		if p.Need > 0 {
			need = fmt.Sprintf("about %s items would decide it", numfmt.Int(int64(p.Need)))
		}
		msg = fmt.Sprintf("accuracy inconclusive: the change %s points [%s, %s] neither rules out a %s-point drop nor shows one; %s",
			signed(100*p.Diff), signed(100*p.Lower), signed(100*p.Upper), numfmt.Shortest(100*p.Margin), need)
	}
	return line, msg
}

// signed formats a change with its sign, one decimal.
func signed(x float64) string {
	s := numfmt.Fixed(x, 1)
	if x >= 0 {
		s = "+" + s
	}
	return s
}

// DivergenceLine words one diverged prompt, from its record
// (compare.Greedy.Records): "line 7: mismatch at token 3:
// baseline " the cat" | now " zz12 dog" (the candidate's token …)".
func DivergenceLine(d result.Divergence) string {
	where := "token " + strconv.Itoa(d.Position)
	if d.ByText {
		where = "character " + strconv.Itoa(d.Position)
	}
	return fmt.Sprintf("line %d: %s at %s: …%q + baseline %q | now %q (%s)", d.Line, d.Kind, where, d.Before, d.Baseline, d.Now, report.DivergenceWhy(&d))
}

// CorrectnessLines are the diff's lines of the correctness blocks B
// compared with A's (docs/method.md#correctness): per block its decision
// and counts, then each diverged prompt (the first ten) and the paired
// accuracy. None when B has no correctness block.
func CorrectnessLines(c *compare.Comparison) []string {
	var out []string
	for i := range c.Correctness {
		cr := &c.Correctness[i]
		head := fmt.Sprintf("correctness %q: %s", cr.Name, cr.Outcome)
		switch {
		case cr.A == nil:
			out = append(out, head+": not in A, nothing compared")
			continue
		case cr.Refusal != nil:
			out = append(out, head+": not compared: "+report.RefusalText(cr.Name, cr.Refusal))
			continue
		}
		g := cr.Greedy
		out = append(out, fmt.Sprintf("%s: %d of %d prompts agree exactly, %d near ties, %d mismatches (%s; max_mismatch %s)", head,
			g.Exact, g.Prompts, g.NearTies, g.Mismatches, numfmt.Percent(g.MismatchRate()), numfmt.Percent(g.MaxMismatch)))
		if cr.Lossless {
			out = append(out, "  B decodes speculatively and A does not: this is speculative decoding's losslessness under greedy")
		}
		for i, d := range g.Records {
			if i == maxDivergenceLines {
				out = append(out, fmt.Sprintf("  … and %d more", len(g.Records)-i))
				break
			}
			out = append(out, "  "+DivergenceLine(d))
		}
		if p := cr.Accuracy; p != nil {
			line, msg := pairedLines(p)
			out = append(out, "  "+line)
			if msg != "" {
				out = append(out, "  "+msg)
			}
		}
		for _, n := range cr.Notes {
			out = append(out, "  "+n.String())
		}
	}
	return out
}
