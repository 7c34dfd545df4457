package views

// This file writes what an assert's condition read (result.Reading) as
// the lines of its verdict's details and of a search probe's objective,
// k6-style.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/report"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// AssertWords are the words assert.Evaluate's verdicts quote (its
// assert.Words): the readings' lines and why a correctness block was not
// compared.
type AssertWords struct{}

// ReadingLines are readings rs' lines (ReadingLines).
func (AssertWords) ReadingLines(rs []result.Reading) []string { return ReadingLines(rs) }

// CorrectnessRefused says why correctness comparison cc was refused
// (report.CorrectnessRefused).
func (AssertWords) CorrectnessRefused(cc *result.CorrectnessComparison) string {
	return report.CorrectnessRefused(cc)
}

// UnknownRead says why a figure an assert's condition read has no value
// (result.UnknownRead): "search \"capacity\" was not run", "correctness
// [\"greedy\"].agreement_rate is measured against the baseline's block,
// and no baseline was given (-baseline): skipped", ….
func (AssertWords) UnknownRead(u result.UnknownRead) string {
	switch u.Rule {
	case result.SearchNotRun:
		return fmt.Sprintf("search %q was not run", u.Name)
	case result.SearchNoAnswer:
		return fmt.Sprintf("search %q has no answer: %s", u.Name, u.Text)
	case result.SearchNoConcurrency:
		return fmt.Sprintf("search %q found no concurrency in [%d, %d] that meets the objective, so it has no cell", u.Name, int(u.Lo), int(u.Hi))
	case result.SearchNoRate:
		return fmt.Sprintf("search %q found no rate in [%s, %s] that meets the objective, so it has no cell", u.Name, vocab.FormatRate(u.Lo), vocab.FormatRate(u.Hi))
	case result.SearchLoUndecided:
		return fmt.Sprintf("search %q has no cell at an answer: its probe at lo = %s req/s was not decided with confidence (%s), so whether any rate meets the objective is not known",
			u.Name, vocab.FormatRate(u.Lo), u.Decision)
	case result.SearchTopMet:
		return fmt.Sprintf("search %q met the objective at the top of its range (%s req/s), so its capacity has no upper bound", u.Name, vocab.FormatRate(u.Hi))
	case result.SearchNoneFailed:
		return fmt.Sprintf("search %q decided no probe failed with confidence (%s), so its capacity has no upper bound it can tell", u.Name, undecidedText(u))
	case result.SearchUndecidedHolds:
		return fmt.Sprintf("undecided: search %q decided %s (%s confidence; %s), and the condition holds at a capacity in that range: longer windows, or more of them a probe (max_windows), would decide it",
			u.Name, decidedCapacity(u), confidenceShare(u.Confidence), undecidedText(u))
	case result.CorrectnessNotMeasured:
		return fmt.Sprintf("correctness %q was not measured", u.Name)
	case result.CorrectnessUnscored:
		return fmt.Sprintf("correctness[%q].%s: the block scored no output (it has no scorer)", u.Name, u.Field)
	case result.CorrectnessBaselineUnscored:
		return fmt.Sprintf("correctness[%q].%s: the baseline's block scored no output (it has no scorer)", u.Name, u.Field)
	}
	against := fmt.Sprintf("correctness[%q].%s is measured against the baseline's block, and ", u.Name, u.Field)
	switch u.Rule {
	case result.CorrectnessBaselineMissing:
		return against + fmt.Sprintf("the baseline has no correctness block %q: skipped", u.Name)
	case result.CorrectnessNotCompared:
		return against + "the blocks were not compared: " + u.Text
	}
	return against + "no baseline was given (-baseline): skipped"
}

// ExpectWhy says why an expect test is not a pass (result.ExpectWhy):
// "total_tps at decode/ctx=8K/conc=64 is below the expected 6018.4 by
// more than 5%", ….
func (AssertWords) ExpectWhy(e result.ExpectWhy) string {
	switch e.Rule {
	case result.ExpectUnknownMetric:
		return fmt.Sprintf("expect %s: %q is not a %s metric", e.Block, e.Metric, e.Phase)
	case result.ExpectNoMatrix:
		return fmt.Sprintf("expect %s: the spec has no matrix %q to line the values up with", e.Block, e.Matrix)
	case result.ExpectRowTooLong:
		return fmt.Sprintf("row %s has %d values but matrix %q has %d concurrency levels", vocab.FormatTokens(e.Context), e.Values, e.Matrix, e.Levels)
	case result.ExpectNotReported:
		return fmt.Sprintf("%s was not reported for this cell (the server exposes no such metric)", e.Metric)
	}
	dir := "below"
	if e.Above {
		dir = "above"
	}
	return fmt.Sprintf("%s at %s is %s the expected %s by more than %s", e.Metric, e.Cell.Name(), dir, numfmt.Value(e.Expected), numfmt.Percent(e.Tolerance))
}

// undecidedText is how many of a rate search's probes were not decided
// with confidence: "4 of 5 probes undecided or unmeasurable".
func undecidedText(u result.UnknownRead) string {
	return fmt.Sprintf("%d of %d probes undecided or unmeasurable", u.Undecided, u.Probes)
}

// decidedCapacity is what a rate search's confident decisions say of its
// capacity: "its capacity only to be at least 4 req/s and below 9 req/s",
// or "nothing of its capacity (…)".
func decidedCapacity(u result.UnknownRead) string {
	var known []string
	if u.Lower > 0 {
		known = append(known, "at least "+vocab.FormatRate(u.Lower)+" req/s")
	}
	if u.Upper > 0 {
		known = append(known, "below "+vocab.FormatRate(u.Upper)+" req/s")
	}
	if len(known) == 0 {
		return "nothing of its capacity (no probe met or failed with confidence)"
	}
	return "its capacity only to be " + strings.Join(known, " and ")
}

// confidenceShare is a search's confidence as a percentage, 95% when it
// recorded none: "95%".
func confidenceShare(c float64) string {
	if c == 0 {
		c = 0.95
	}
	return strconv.FormatFloat(100*c, 'f', -1, 64) + "%"
}

// ReadingLines are the detail lines of readings rs, one each.
func ReadingLines(rs []result.Reading) []string {
	if rs == nil {
		return nil
	}
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = ReadingLine(r)
	}
	return out
}

// ReadingLine is one reading's line: a comparison as
//
//	decode["8K"][64].total_tps = 5421.3, want >= 6000 (-9.6% from the threshold)
//	decode["8K"][64].ttft_ms.p95 = 180, want < 2 * prefill["8K"].ttft_ms (2 * prefill["8K"].ttft_ms): ok
//
// an expect's as
//
//	total_tps = 5421.3, want >= 5717.5 (6018.4 - 5%) (-9.9% from expected)
//
// and a value read outside one as `name = value`.
func ReadingLine(r result.Reading) string {
	if r.Op == "" {
		return r.Subject + " = " + r.Value
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s = %s, want %s %s", r.Subject, r.Value, r.Op, r.Threshold)
	if r.Against != "" {
		fmt.Fprintf(&b, " (%s)", r.Against)
	}
	switch {
	case r.FromExpected:
		fmt.Fprintf(&b, " (%s from expected)", numfmt.Delta(r.Gap))
	case r.Held:
		b.WriteString(": ok")
	case r.HasGap:
		fmt.Fprintf(&b, " (%s from the threshold)", numfmt.Delta(r.Gap))
	}
	return b.String()
}
