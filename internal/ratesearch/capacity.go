package ratesearch

import (
	"fmt"
	"strconv"

	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/vocab"
)

// Bounds are one side's answer of a rate search, as Capacity compares them.
type Bounds struct {
	// Found is false when none met the objective at lo.
	Found bool
	// Rate is the answer; Lower and Upper its confidence bounds (0: not
	// bounded, Upper when hi met and Lower when no rate was met with
	// confidence).
	Rate, Lower, Upper float64
	// Precision is the search's relative precision.
	Precision float64
}

// Capacity decides whether the candidate b lost capacity against the
// baseline a (issue 31 item 3, docs/method.md#capacity-lost), with a
// relative tolerance: Fail (regressed) when b's upper bound is below a's
// lower bound by more than the tolerance, b.Upper < a.Lower·(1 −
// tolerance); Pass (within tolerance) when b's lower bound is within the
// tolerance of a's answer, b.Lower ≥ a.Rate·(1 − tolerance); else
// Inconclusive. The sentence says which and why, and for Inconclusive
// what would decide it. A baseline with no answer is a Skip.
func Capacity(a, b Bounds, tolerance float64) (vocab.Outcome, string) {
	if !a.Found {
		return vocab.Skip, "the baseline's search met its objective at no rate: no capacity to lose"
	}
	line := a.Rate * (1 - tolerance)
	if b.Upper > 0 && a.Lower > 0 && b.Upper < a.Lower*(1-tolerance) {
		return vocab.Fail, fmt.Sprintf("capacity lost: the candidate's upper bound %s req/s is below the baseline's lower bound %s req/s by more than the tolerance %s",
			rate(b.Upper), rate(a.Lower), pct(tolerance))
	}
	if b.Found && b.Lower > 0 && b.Lower >= line {
		return vocab.Pass, fmt.Sprintf("within tolerance: the candidate's lower bound %s req/s is within %s of the baseline's %s req/s",
			rate(b.Lower), pct(tolerance), rate(a.Rate))
	}
	// Neither: say what would decide it. The bounds are as wide as a
	// probe's windows leave them; the answers' gap from the tolerance line
	// is what a finer search must resolve.
	gap := 0.0
	if a.Rate > 0 {
		gap = (b.Rate - line) / a.Rate
		if gap < 0 {
			gap = -gap
		}
	}
	prec := max(a.Precision, b.Precision)
	why := fmt.Sprintf("the candidate's bounds [%s, %s] req/s reach both sides of the tolerance line %s req/s (the baseline's %s less %s)",
		rate(b.Lower), upper(b.Upper), rate(line), rate(a.Rate), pct(tolerance))
	if !b.Found {
		why = fmt.Sprintf("the candidate met its objective at no rate, but not with confidence below the baseline's lower bound %s req/s less %s", rate(a.Lower), pct(tolerance))
	}
	if gap > 0 && gap/2 < prec {
		return vocab.Inconclusive, fmt.Sprintf("%s: a precision of %s (the searches' is %s) or longer windows would decide it", why, pct(gap/2), pct(prec))
	}
	return vocab.Inconclusive, why + ": longer windows (narrower bounds at each probe) would decide it"
}

func rate(r float64) string { return numfmt.Value(r) }

func upper(r float64) string {
	if r == 0 {
		return "unbounded"
	}
	return rate(r)
}

// pct is a fraction as a percentage to two significant digits: "5%", "1.2%".
func pct(f float64) string { return strconv.FormatFloat(100*f, 'g', 2, 64) + "%" }
