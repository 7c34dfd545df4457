package views

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/judge"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/ratesearch"
	"github.com/slogate/slogate/internal/report"
	"github.com/slogate/slogate/internal/result"
)

// CapacityNote heads the rate searches compared (docs/method.md#capacity-lost).
const CapacityNote = "Capacity (rate searches' answers with their bounds, docs/method.md#capacity-lost):"

// CapacityLines are the rate searches compared, one line each: the
// decision, both answers with their bounds, and why, then, when both
// runs can be priced (server.price_per_gpu_hour), the cost at both
// answers (report.CostAtAnswers)
// (`search "capacity": regressed: baseline 10 req/s [9.6, 10.4], now
// 6.6 req/s [6.3, 6.9]: capacity lost: …`).
func CapacityLines(c *compare.Comparison) []string {
	var out []string
	for i := range c.Capacity {
		out = append(out, CapacityLine(&c.Capacity[i], c.Policy.Tolerance))
		if c.A != nil && c.B != nil {
			if cost := report.CostAtAnswers(c.A, c.B, c.Capacity[i].Name); cost != "" {
				out = append(out, fmt.Sprintf("search %q cost: %s", c.Capacity[i].Name, cost))
			}
		}
	}
	return out
}

// CapacityLine is one rate search compared at the policy's tolerance
// (CapacityLines).
func CapacityLine(r *compare.CapacityResult, tolerance float64) string {
	s := fmt.Sprintf("search %q: %s: baseline %s, now %s: %s", r.Name, r.Decision(), answerText(r.A), answerText(r.B), CapacityReason(r, tolerance))
	if r.InformsOnly() {
		s += " (informs only: " + r.Decided.String() + " against a baseline of another engine, which never gates)"
	}
	return s
}

// answerText is a search's answer with its bounds: "10 req/s [9.6, 10.4]",
// "none met at 2 req/s", an unbounded end "…".
func answerText(s *result.Search) string {
	if !s.Found {
		t := "none met at " + numfmt.Value(s.RateRange[0]) + " req/s"
		if s.RateUpper > 0 {
			t += " (upper bound " + numfmt.Value(s.RateUpper) + ")"
		}
		return t
	}
	lo, hi := "…", "…"
	if s.RateLower > 0 {
		lo = numfmt.Value(s.RateLower)
	}
	if s.RateUpper > 0 {
		hi = numfmt.Value(s.RateUpper)
	}
	t := fmt.Sprintf("%s req/s [%s, %s]", numfmt.Value(s.Rate), lo, hi)
	if s.ClientLimit > 0 {
		t += ", client limit " + numfmt.Value(s.ClientLimit) + " req/s"
	}
	return t
}

// Capacity words a rate search's verdict of -baseline (named
// "<server>/baseline/search/<name>"): why it was decided as it was, and
// both answers.
func (JudgeWords) Capacity(r *compare.CapacityResult, p compare.Policy) judge.Worded {
	v := judge.Worded{
		Rule:    "capacity within " + numfmt.Percent(p.Tolerance) + " of the baseline's",
		Message: CapacityReason(r, p.Tolerance),
		Details: []string{"baseline " + answerText(r.A), "now " + answerText(r.B)},
	}
	if r.InformsOnly() {
		v.Details = append(v.Details, "(informs only: "+r.Decided.String()+" against a baseline of another engine, which never gates)")
	}
	return v
}

// capacitySummary counts the searches by decision, in a fixed order:
// "1 regressed, 2 within, 1 inconclusive" (the counts that are not 0).
func capacitySummary(rs []compare.CapacityResult) string {
	n := map[string]int{}
	for i := range rs {
		n[rs[i].Decision()]++
	}
	var parts []string
	for _, k := range []string{"regressed", "within", "inconclusive", "skipped", "error"} {
		if n[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[k], k))
		}
	}
	return strings.Join(parts, ", ")
}

// CapacityReason words why a rate search compared was decided as it was
// (r.Reason, its rule and figures; r.NoPaired), and for an inconclusive
// one what would decide it (docs/method.md#capacity-lost).
func CapacityReason(r *compare.CapacityResult, tolerance float64) string {
	d := r.Reason
	switch d.Rule {
	case compare.SearchStopped:
		return "the candidate's search stopped: " + r.B.Error
	case compare.BaselineStopped:
		return "the baseline's search stopped: " + r.A.Error
	case compare.SearchesDiffer:
		return "the searches differ (traffic block or objective): their answers are not comparable"
	case ratesearch.PairedWorse, ratesearch.PairedAsGood, ratesearch.PairedUndecided, ratesearch.PairedNoMetric:
		return pairedReason(r, tolerance)
	}
	why := boundsReason(r, tolerance)
	if r.NoPaired != "" {
		why += " (no paired check: " + noPairedText(r, tolerance) + ")"
	}
	return why
}

// boundsReason words a decision on the two searches' bounds
// (ratesearch.Capacity).
func boundsReason(r *compare.CapacityResult, tolerance float64) string {
	d, a, b := r.Reason, r.A, r.B
	var why string
	switch d.Rule {
	case ratesearch.NoBaselineAnswer:
		return "the baseline's search met its objective at no rate: no capacity to lose"
	case ratesearch.BoundsBelow:
		return fmt.Sprintf("capacity lost: the candidate's upper bound %s req/s is below the baseline's lower bound %s req/s by more than the tolerance %s",
			numfmt.Value(b.RateUpper), numfmt.Value(a.RateLower), sharePct(tolerance))
	case ratesearch.BoundsWithin:
		return fmt.Sprintf("within tolerance: the candidate's lower bound %s req/s is within %s of the baseline's %s req/s",
			numfmt.Value(b.RateLower), sharePct(tolerance), numfmt.Value(a.Rate))
	case ratesearch.NoRateMet:
		why = fmt.Sprintf("the candidate met its objective at no rate, but not with confidence below the baseline's lower bound %s req/s less %s",
			numfmt.Value(a.RateLower), sharePct(tolerance))
	case ratesearch.BoundsStraddle:
		why = fmt.Sprintf("the candidate's bounds [%s, %s] req/s reach both sides of the tolerance line %s req/s (the baseline's %s less %s)",
			numfmt.Value(b.RateLower), upperRate(b.RateUpper), numfmt.Value(d.Line), numfmt.Value(a.Rate), sharePct(tolerance))
	default: // a rule this build does not know: its code
		return string(d.Rule)
	}
	if d.DecidingPrecision > 0 {
		return fmt.Sprintf("%s: a precision of %s (the searches' is %s) or longer windows would decide it", why, sharePct(d.DecidingPrecision), sharePct(d.SearchPrecision))
	}
	return why + ": longer windows (narrower bounds at each probe) would decide it"
}

// pairedReason words a decision of the paired check
// (ratesearch.PairedCapacity).
func pairedReason(r *compare.CapacityResult, tolerance float64) string {
	d, ivs := r.Reason, r.Paired
	if d.Rule == ratesearch.PairedNoMetric {
		return "the paired check read no metric"
	}
	at := fmt.Sprintf("at %s req/s (the baseline's %s req/s less %s), on the baseline's %s,",
		numfmt.Value(d.Rate), numfmt.Value(d.BaselineRate), sharePct(tolerance), windowsText(ivs[0].Windows))
	switch d.Rule {
	case ratesearch.PairedWorse:
		return fmt.Sprintf("capacity lost: %s the candidate's %s is worse than the baseline's at its answer: %s", at, ivs[d.Worse].Metric, pairedText(ivs[d.Worse]))
	case ratesearch.PairedAsGood:
		return fmt.Sprintf("within tolerance: %s the candidate does at least as well as the baseline at its answer: %s", at, pairedTexts(ivs))
	}
	why := fmt.Sprintf("%s neither worse nor at least as good with confidence: %s", at, pairedTexts(ivs))
	switch {
	case ivs[0].Windows < 2:
		return why + ": two windows a side at least would bound it (check_windows)"
	case d.NeedWindows > 0:
		return fmt.Sprintf("%s: about %d windows a side (check_windows) would decide it at this spread", why, d.NeedWindows)
	}
	return why + ": more windows a side (check_windows) would decide it"
}

// noPairedText words why no paired check decided (compare.NoPairedCheck).
func noPairedText(r *compare.CapacityResult, tolerance float64) string {
	switch r.NoPaired {
	case compare.NoBaselineCheck:
		return "the baseline's search has no check windows"
	case compare.NotReplayed:
		return "the baseline's search has check windows, but this run replayed none (was it run with -baseline?)"
	case compare.ReplayedOtherAnswer:
		return fmt.Sprintf("this run replayed a baseline answer of %s req/s, not this baseline's %s req/s",
			numfmt.Value(r.B.Replay.BaselineRate), numfmt.Value(r.A.Check.Rate))
	case compare.ReplayedOtherTolerance:
		return fmt.Sprintf("this run replayed the check at a tolerance of %s, not the %s asked now",
			numfmt.Value(r.B.Replay.Tolerance), numfmt.Value(tolerance))
	case compare.NoObjectiveMetric:
		return "the check windows hold no metric of the objective"
	}
	return string(r.NoPaired)
}

// pairedText is one metric of a paired check with its bounds:
// "goodput_share worse by 0.05667 (−0.06091 to −0.05242 at one-sided 5%)".
func pairedText(iv ratesearch.PairedInterval) string {
	word := "better by"
	if iv.Mean < 0 {
		word = "worse by"
	}
	return fmt.Sprintf("%s %s %s (%s to %s at one-sided %s)", iv.Metric, word, numfmt.Value(math.Abs(iv.Mean)),
		signedBound(iv.Lower), signedBound(iv.Upper), sharePct(iv.Alpha))
}

// pairedTexts are the paired check's metrics, "; " between them.
func pairedTexts(ivs []ratesearch.PairedInterval) string {
	parts := make([]string, len(ivs))
	for i, iv := range ivs {
		parts[i] = pairedText(iv)
	}
	return strings.Join(parts, "; ")
}

// signedBound is a bound with its sign ("+0.02", "−0.06"), or "unbounded".
func signedBound(v float64) string {
	if math.IsInf(v, 0) {
		return "unbounded"
	}
	if v >= 0 {
		return "+" + numfmt.Value(v)
	}
	return "−" + numfmt.Value(-v)
}

// upperRate is an upper bound in req/s, "unbounded" when 0.
func upperRate(r float64) string {
	if r == 0 {
		return "unbounded"
	}
	return numfmt.Value(r)
}

// windowsText is n windows in words: "1 window", "24 windows".
func windowsText(n int) string {
	if n == 1 {
		return "1 window"
	}
	return strconv.Itoa(n) + " windows"
}

// sharePct is a fraction as a percentage to two significant digits:
// "5%", "1.2%".
func sharePct(f float64) string { return strconv.FormatFloat(100*f, 'g', 2, 64) + "%" }
