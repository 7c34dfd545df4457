package views

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/warning"
)

// TrafficTail is what `run -baseline`'s pre-run check found of a traffic
// block (warning.TrafficTailUndecidable): at Rates (those short, in the
// block's order) its Window holds fewer requests than the Need a
// comparison decides a p99 from; at the lowest of them, Lowest, it holds
// about Held (docs/method.md#undecidable-percentiles).
type TrafficTail struct {
	Label        string
	Window       time.Duration
	Rates        []float64
	Lowest, Held float64
	Need         int
}

// Words are the warning's summary and detail: "traffic steady: at 4
// req/s its 30s window holds about 120 requests, and a p99 needs 299 to
// be compared", "the p99s of its cells at 10, 4 req/s will be
// inconclusive against the baseline; a window of 74.8s or more at 4 req/s
// decides them" (the window rounded up to a tenth of a second).
func (t TrafficTail) Words() (summary, detail string) {
	rates := make([]string, len(t.Rates))
	for i, r := range t.Rates {
		rates[i] = numfmt.Value(r)
	}
	return fmt.Sprintf("traffic %s: at %s req/s its %s window holds about %s requests, and a p99 needs %d to be compared", t.Label, numfmt.Value(t.Lowest), t.Window, numfmt.Value(t.Held), t.Need),
		fmt.Sprintf("the p99s of its cells at %s req/s will be inconclusive against the baseline; a window of %ss or more at %s req/s decides them", strings.Join(rates, ", "), numfmt.Value(math.Ceil(float64(t.Need)/t.Lowest*10)/10), numfmt.Value(t.Lowest))
}

// CoarseSearch is what `run -baseline`'s pre-run check found of a rate
// search (warning.SearchPrecisionCoarse): its Precision is more than half
// the Tolerance; File and Line are where the spec declares it
// (docs/method.md#capacity-lost).
type CoarseSearch struct {
	Name                 string
	Precision, Tolerance float64
	File                 string
	Line                 int
}

// Words are the warning's summary and detail: "search capacity:
// precision 5% is more than half the tolerance 5%", "a capacity change of
// the tolerance cannot be told from the search's precision: set precision
// = "2.5%" or less at spec.hcl:12".
func (s CoarseSearch) Words() (summary, detail string) {
	return fmt.Sprintf("search %s: precision %s is more than half the tolerance %s", s.Name, numfmt.Percent(s.Precision), numfmt.Percent(s.Tolerance)),
		fmt.Sprintf("a capacity change of the tolerance cannot be told from the search's precision: set precision = %q or less at %s:%d", numfmt.Percent(s.Tolerance/2), s.File, s.Line)
}

// PowerShortfallWords are the summary and detail of a -baseline pre-run
// power shortfall (compare.PowerShortfall): "decode total_tps", "1 of 1
// baseline cells cannot be decided within 5% with power 0.9 against 5
// repeats; the noisiest, decode/ctx=8K/conc=64, has noise 5.0% over 5
// repeats: 9 baseline repeats would be needed, or a wider -tolerance".
func PowerShortfallWords(s compare.PowerShortfall) (summary, detail string) {
	need := fmt.Sprintf("%d baseline repeats would be needed", s.Need)
	if s.Need == 0 {
		need = fmt.Sprintf("more than %d baseline repeats would be needed", compare.MaxRepeatsEstimate)
	}
	capped := ""
	if s.Capped {
		capped = ", and no number of candidate repeats would (the baseline caps the power)"
	}
	return fmt.Sprintf("%s %s", s.Phase, s.Metric),
		fmt.Sprintf("%d of %d baseline cells cannot be decided within %s with power 0.9 against %d repeats%s; the noisiest, %s, has noise %s over %d repeats: %s, or a wider -tolerance",
			s.Cells, s.Of, numfmt.Percent(s.Tolerance), s.Candidate, capped, s.Noisiest.Name(), noiseText(s.Noise), s.Repeats, need)
}

// PowerWarnings are the pre-run check's power shortfalls (C.Power) as
// warnings, worded (PowerShortfallWords).
func (v Baseline) PowerWarnings() []warning.Warning {
	var out []warning.Warning
	for _, s := range v.C.Power {
		out = append(out, s.Warning(PowerShortfallWords(s)))
	}
	return out
}
