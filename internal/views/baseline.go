package views

import (
	"fmt"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/judge"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// Baseline is the view of `run -baseline`: the comparison C of a run with
// its baseline (compare.Build), or before the run the pre-run check
// (compare.BuildPlanned).
type Baseline struct {
	C *compare.Comparison
}

// Refusal is the usage error (exit 2) of a baseline measured with other
// settings than this run (before it, or after it for the workload), each
// difference on a line; nil unless the comparison was refused.
func (v Baseline) Refusal() error {
	if !v.C.Refused {
		return nil
	}
	return exit.Usagef("-baseline: the baseline and this run are measured with different settings, so their numbers are not comparable:\n  %s\nmeasure like the baseline, or pass -allow-settings-change to compare anyway",
		JoinDifferences(v.C.Settings, "\n  "))
}

// BaselineWarningLine is the console line of one of the pre-run check's warnings
// (Baseline.PowerWarnings), after "slogate: warning: ": "-baseline:
// decode total_tps: 1 of 1 baseline cells cannot be decided …".
func BaselineWarningLine(w warning.Warning) string { return "-baseline: " + w.String() }

// Notes are the console lines of the comparison, in order: the settings
// that differ when allowed, the server differences ("vLLM 0.26.1 →
// 0.27.2; --max-num-seqs 32 → 64"), how the decisions were made when they
// were not all statistical, and the engine rule's note when the engines
// differ. None when the comparison was refused.
func (v Baseline) Notes() []string {
	c := v.C
	if c.Refused {
		return nil
	}
	var notes []string
	if len(c.Settings) > 0 {
		notes = append(notes, "baseline: settings differ (-allow-settings-change): "+JoinDifferences(c.Settings, "; "))
	}
	if h := ServerHeader(c.Server); h != "" {
		notes = append(notes, "baseline: server "+h)
	}
	if !c.Method.Statistical() {
		notes = append(notes, "baseline: "+MethodNote(c.Method))
	}
	if c.EngineChanged {
		notes = append(notes, "baseline: "+EngineNote(c))
	}
	for _, w := range c.Warnings {
		notes = append(notes, "baseline: warning: "+w.String())
	}
	return notes
}

// JudgeWords are the words of the verdicts package judge makes of a
// comparison with the baseline (judge.Words): each method words one
// verdict from its finding and the comparison it came from, and decides
// nothing.
type JudgeWords struct{}

// BaselineCell words one cell's comparison: per metric the baseline's
// value and this run's, the change with its bounds (or that the
// tolerance alone decided), and the decision; a cross-engine
// comparison's Fail or Inconclusive cell with a line saying it informs
// only (docs/method.md#comparing-engines).
func (JudgeWords) BaselineCell(f result.Finding, cr *compare.CellResult, p compare.Policy, m *compare.MachineChange) judge.Worded {
	ref, tol := cr.Ref, p.Tolerance
	v := judge.Worded{Rule: "within " + numfmt.Percent(tol) + " of the baseline"}
	a, b := cr.A, cr.B
	switch f {
	case result.FindingUnmeasurable:
		which, side := "this run's", b
		if b.Status != vocab.StatusUnmeasurable {
			which, side = "the baseline's", a
		}
		v.Message = "not compared: " + which + " cell is " + side.Status.Unmeasured(side.Reason)
		v.Details = []string{ref.Expr() + ": " + v.Message}
	case result.FindingNotInBaseline:
		v.Message = "not in the baseline"
	case result.FindingBaselineUnmeasured:
		v.Message = "baseline cell not measured: " + a.Status.Unmeasured(a.Reason)
	case result.FindingNotMeasured:
		v.Message = "cell not measured: " + b.Status.Unmeasured(b.Reason)
		v.Details = []string{ref.Expr() + ": " + v.Message + " (the baseline measured it)"}
	case result.FindingLost:
		reason := findingReason(*cr.Lost)
		v.Message = reason
		v.Details = []string{ref.Expr() + ": " + reason + ": the baseline measured this cell, this run did not"}
		if cr.Lost.B.Reason != "" {
			v.Details = append(v.Details, cr.Lost.B.Reason)
		}
	default:
		v.Details, v.Message = metricLines(cr, p)
		if line := rejectedDetail(cr); line != "" {
			v.Details = append(v.Details, line)
		}
		if line := excludedDetail(cr); line != "" {
			v.Details = append(v.Details, line)
		}
	}
	if cr.InformsOnly() {
		v.Details = append(append([]string(nil), v.Details...), "(informs only: "+cr.Decided.String()+" against a baseline of another engine, which never gates)")
	}
	if cr.Confounded {
		v.Details = append(append([]string(nil), v.Details...), ConfoundedLine(cr.Decided, m))
	}
	if cr.Waited != nil {
		v.Details = append(append([]string(nil), v.Details...), WaitedLine(cr.Decided, *cr.Waited))
	}
	return v
}

// metricLines are a measured cell's lines, one per metric, and its message
// naming the metrics that regressed (or could not be decided).
func metricLines(cr *compare.CellResult, p compare.Policy) (details []string, message string) {
	tol := p.Tolerance
	var regressed, beyond, inconclusive []string
	for i := range cr.Metrics {
		m, c := cr.Metrics[i].Metric, &cr.Metrics[i].Cell
		line := fmt.Sprintf("%s: baseline %s, now %s", m.Name, sideValue(c.A), sideValue(c.B))
		if c.A.HasValue && c.B.HasValue && c.Change != compare.Inconclusive {
			line += " (" + deltaOrNA(c.Delta)
			if c.Test != nil {
				line += fmt.Sprintf(", bounds %s at %.1f%% confidence each, %d+%d runs", BoundsText(c), c.Test.Confidence()*100, c.Test.NA, c.Test.NB)
			} else {
				line += fmt.Sprintf(", %d+%d runs: not statistical", c.A.Repeats, c.B.Repeats)
			}
			line += ")"
		}
		switch c.Change {
		case compare.Regressed:
			line += fmt.Sprintf(", regressed beyond %s (%s)", numfmt.Percent(tol), m.Direction())
			regressed = append(regressed, m.Name)
		case compare.Inconclusive:
			line += ": inconclusive, " + InconclusiveText(c, m.HigherIsBetter, tol, p.Inconclusive)
			if c.Outcome == vocab.Fail {
				beyond = append(beyond, m.Name)
			} else {
				inconclusive = append(inconclusive, m.Name)
			}
		case compare.Improved:
			line += ", improved"
		case compare.Unchanged:
			if c.Test != nil {
				line += fmt.Sprintf(", within %s", numfmt.Percent(tol))
			}
		}
		details = append(details, line)
	}
	switch {
	case len(regressed) > 0:
		message = fmt.Sprintf("%s regressed beyond %s against the baseline", joinAnd(regressed), numfmt.Percent(tol))
	case len(beyond) > 0:
		message = fmt.Sprintf("%s inconclusive against the baseline, and estimated beyond %s: fails even with -inconclusive pass", joinAnd(beyond), numfmt.Percent(tol))
	case len(inconclusive) > 0 && cr.Decided == vocab.Inconclusive:
		message = fmt.Sprintf("%s inconclusive against the baseline: neither regressed nor shown within %s; measure more (or -inconclusive pass)", joinAnd(inconclusive), numfmt.Percent(tol))
	}
	return details, message
}

// excludedDetail says how many runs of either side were left out of the
// comparison, unmeasurable or their machine moved
// (docs/method.md#unmeasurable); "" when none was.
func excludedDetail(cr *compare.CellResult) string {
	if len(cr.Metrics) == 0 {
		return ""
	}
	a, b := cr.Metrics[0].Cell.A.Excluded, cr.Metrics[0].Cell.B.Excluded
	if a == 0 && b == 0 {
		return ""
	}
	return fmt.Sprintf("runs left out of the comparison as unmeasurable (or their machine moved): %d of the baseline's, %d of this run's", a, b)
}

func sideValue(s compare.Side) string {
	if !s.HasValue {
		return "n/a"
	}
	return numfmt.Value(s.Value)
}

func deltaOrNA(d float64) string {
	if d != d { // NaN: the baseline value was 0
		return "n/a"
	}
	return numfmt.Delta(d)
}

// joinAnd joins names as "a", "a and b", "a, b and c".
func joinAnd(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	s := names[0]
	for _, n := range names[1 : len(names)-1] {
		s += ", " + n
	}
	return s + " and " + names[len(names)-1]
}

// ConfoundedLine is the line of a verdict the machine rule made
// inconclusive (compare.CellResult.Confounded): what the numbers decided
// and why the machines' difference leaves it undecided
// (docs/method.md#machine-against-the-baseline).
func ConfoundedLine(decided vocab.Outcome, m *compare.MachineChange) string {
	if m == nil {
		return ""
	}
	if m.Slower() {
		return fmt.Sprintf("(not decided: %s on a machine %.2f× slower than the baseline's (CPU calibration %.3g ms against %.3g ms), which alone could make it; compare the builds on one machine with slogate interleave)",
			decidedWord(decided), m.Ratio(), m.NowMs, m.BaselineMs)
	}
	return fmt.Sprintf("(not decided: %s on a machine %.2f× faster than the baseline's (CPU calibration %.3g ms against %.3g ms), which could hide a regression; compare the builds on one machine with slogate interleave)",
		decidedWord(decided), m.Ratio(), m.NowMs, m.BaselineMs)
}

// WaitedLine is the line of a verdict the server-wait rule made
// inconclusive (compare.CellResult.Waited): what the numbers decided, how
// long each run's server waited for a CPU and what that alone explains
// (docs/method.md#server-wait-against-the-baseline).
func WaitedLine(decided vocab.Outcome, w compare.WaitShift) string {
	how := fmt.Sprintf("%.0f %% less CPU time than the baseline's, which alone could make it", 100*w.Lost())
	if w.Lost() < 0 {
		how = fmt.Sprintf("%.0f %% more CPU time than the baseline's, which could hide a regression", -100*w.Lost())
	}
	return fmt.Sprintf("(not decided: %s while the server waited for a CPU %.0f %% of the time it was ready to run, against %.0f %% in the baseline: %s; compare the builds on one machine with slogate interleave)",
		decidedWord(decided), w.NowPct, w.BaselinePct, how)
}

// decidedWord is what a verdict's numbers decided, in ConfoundedLine's
// words.
func decidedWord(o vocab.Outcome) string {
	if o == vocab.Fail {
		return "regressed"
	}
	return "within tolerance"
}
