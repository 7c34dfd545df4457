package views

import (
	"fmt"
	"strings"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/report"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
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
		out = append(out, CapacityLine(&c.Capacity[i]))
		if c.A != nil && c.B != nil {
			if cost := report.CostAtAnswers(c.A, c.B, c.Capacity[i].Name); cost != "" {
				out = append(out, fmt.Sprintf("search %q cost: %s", c.Capacity[i].Name, cost))
			}
		}
	}
	return out
}

// CapacityLine is one rate search compared (CapacityLines).
func CapacityLine(r *compare.CapacityResult) string {
	s := fmt.Sprintf("search %q: %s: baseline %s, now %s: %s", r.Name, r.Decision(), answerText(r.A), answerText(r.B), r.Reason)
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

// capacityVerdicts are -baseline's verdicts of the rate searches compared,
// one per search, named "<server>/baseline/search/<name>", Skip ones
// included (they say why nothing was decided).
func capacityVerdicts(server string, c *compare.Comparison) []result.Verdict {
	var out []result.Verdict
	for i := range c.Capacity {
		r := &c.Capacity[i]
		check := r.Check() // compare decides; this view words it
		v := result.Verdict{
			Test:    vocab.TestID{Server: server, Kind: vocab.KindBaseline, Block: vocab.KindSearch + "/" + r.Name}.Name(),
			Kind:    vocab.KindBaseline,
			Rule:    "capacity within " + numfmt.Percent(c.Policy.Tolerance) + " of the baseline's",
			Outcome: check.Outcome,
			Infra:   check.Infra,
			Message: r.Reason,
			Details: []string{"baseline " + answerText(r.A), "now " + answerText(r.B)},
		}
		if r.InformsOnly() {
			v.Details = append(v.Details, "(informs only: "+r.Decided.String()+" against a baseline of another engine, which never gates)")
		}
		out = append(out, v)
	}
	return out
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
