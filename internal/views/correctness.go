package views

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/judge"
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

// Correctness words one check of correctness block b (judge.Correctness
// decides which verdicts there are): greedy agreement with its counts and
// each diverged prompt (the first ten), speculative losslessness, the
// paired accuracy; a block the comparison refused; or, with nothing to
// compare, the block as measured with its accuracy and interval. Every
// verdict's details open with what the block measured.
func (w JudgeWords) Correctness(f result.Finding, check string, ch compare.Check, b *result.Correctness, cr *compare.CorrectnessResult, c *compare.Comparison) judge.Worded {
	v := judge.Worded{Details: []string{measuredLine(b)}}
	for _, u := range b.Unavailable {
		v.Details = append(v.Details, "could not: "+u)
	}
	agreeRule := fmt.Sprintf("greedy outputs agree with the baseline's (max_mismatch %s)", numfmt.Percent(b.MaxMismatch))
	switch f {
	case result.FindingUncompared:
		// Nothing to compare with: informational, a Skip that says
		// why, never a Pass (docs/method.md#correctness).
		v.Rule = "measured (no baseline block to compare with)"
		v.Message = fmt.Sprintf("informational, nothing compared: %s; outputs recorded, %d of %d prompts answered",
			nothingToCompare(c, b.Name), b.Prompts-b.Errors, b.Prompts)
		if b.Scored > 0 {
			v.Details = append(v.Details, "accuracy "+accuracyText(b.Correct, b.Scored))
		}
		if ch.Infra {
			v.Message = fmt.Sprintf("%d of %d requests failed", b.Errors, b.Prompts)
		}
		return v
	case result.FindingRefused:
		v.Rule = agreeRule
		v.Message = "not compared: " + report.RefusalText(cr.Name, cr.Refusal)
		return v
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
	switch check {
	case judge.CheckLossless:
		word := "lossless"
		if g.Change == compare.Regressed {
			word = "NOT lossless"
		}
		v.Rule = "speculative decoding is lossless under greedy: its outputs agree with the baseline's, measured without speculation"
		v.Message = fmt.Sprintf("speculative decoding is %s under greedy: against the baseline without speculation, %s", word, agree)
		v.Details = append(v.Details, v.Message)
		if ch.Outcome != vocab.Pass { // the agreement's check: lossless is agreement
			v.Message = w.Correctness(f, judge.CheckAgreement, ch, b, cr, c).Message
		}
		return v
	case judge.CheckAccuracy:
		v.Rule = fmt.Sprintf("accuracy not below the baseline's by %s points", numfmt.Shortest(100*b.Margin))
		line, msg := pairedLines(cr.Accuracy)
		v.Details = append(v.Details, line)
		v.Message = line
		if msg != "" {
			v.Message = msg
		}
		if failed != "" {
			v.Message = failed + "; " + v.Message
		}
		return v
	}
	v.Rule = agreeRule
	v.Details = append(v.Details, agree)
	var msgs []string
	if g.Change == compare.Regressed {
		msgs = append(msgs, fmt.Sprintf("%d of %d prompts mismatch the baseline (%s > max_mismatch %s)", g.Mismatches, g.Prompts,
			numfmt.Percent(g.MismatchRate()), numfmt.Percent(g.MaxMismatch)))
	}
	for i, d := range g.Records {
		if i == maxDivergenceLines {
			v.Details = append(v.Details, fmt.Sprintf("… and %d more (report.md lists them all)", len(g.Records)-i))
			break
		}
		v.Details = append(v.Details, DivergenceLine(d))
	}
	if g.Unpaired > 0 {
		msgs = append(msgs, fmt.Sprintf("%d prompts have no output on a side (a request failed)", g.Unpaired))
	} else if failed != "" {
		msgs = append(msgs, failed)
	}
	v.Details = append(v.Details, warning.Strings(cr.Notes)...)
	if len(msgs) == 0 {
		msgs = append(msgs, agree)
	}
	v.Message = strings.Join(msgs, "; ")
	return v
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
